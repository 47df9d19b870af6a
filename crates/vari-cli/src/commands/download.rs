//! `vari download`: the wheels `vari select` would choose, downloaded in parallel into a
//! directory, each checked against the index's hash while it streams and written atomically
//! (a mismatch or a broken transfer leaves no file). Prints the paths.

use std::io::IsTerminal;
use std::process::ExitCode;

use futures_util::future::join_all;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use vari_client::{Downloaded, IndexClient, IndexFile};
use vari_select::Outcome;

use crate::cli::DownloadArgs;
use crate::error::CliError;
use crate::explain::nothing_fits;
use crate::output;
use crate::settings::{runtime, FromIndexes};

/// Selects and downloads.
pub(super) fn run(args: &DownloadArgs) -> Result<ExitCode, CliError> {
    let session = FromIndexes::resolve(
        &args.requirements,
        &args.index,
        &args.target,
        &args.selection,
        false,
    )?;
    let runtime = runtime()?;
    let outcomes = session.select_all(&runtime);
    let mut files: Vec<IndexFile> = Vec::new();
    for (request, outcome) in session.requests.iter().zip(outcomes) {
        match outcome.map_err(|e| CliError::Other(e.to_string()))? {
            Outcome::Skipped { marker } => tracing::debug!("{request}: skipped ({marker})"),
            Outcome::Resolved(resolution) => {
                for warning in &resolution.warnings {
                    output::warn(warning);
                }
                match resolution.chosen {
                    Some(chosen) => {
                        if !files.iter().any(|f| f.filename == chosen.file.filename) {
                            files.push(chosen.file);
                        }
                    }
                    None => {
                        return Err(CliError::Other(nothing_fits(
                            request,
                            &resolution,
                            session.target(),
                        )));
                    }
                }
            }
        }
    }
    std::fs::create_dir_all(&args.dest).map_err(|e| CliError::io(&args.dest, e))?;
    let results = runtime.block_on(download_all(&session.client, &files, &args.dest));
    let mut paths = String::new();
    let mut first_error = None;
    for result in results {
        match result {
            Ok(done) => {
                if done.verified_with.is_none() {
                    output::note(&format!(
                        "{}: the index gives no hash; its sha256 is {}",
                        done.path.display(),
                        done.sha256
                    ));
                }
                paths.push_str(&format!("{}\n", done.path.display()));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    output::print_data(&paths)?;
    match first_error {
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// Downloads every file at once (the client bounds how many requests run together), with one
/// progress bar each on a terminal.
async fn download_all(
    client: &IndexClient,
    files: &[IndexFile],
    dest: &std::path::Path,
) -> Vec<Result<Downloaded, CliError>> {
    let bars = MultiProgress::with_draw_target(match std::io::stderr().is_terminal() {
        true => ProgressDrawTarget::stderr(),
        false => ProgressDrawTarget::hidden(),
    });
    let style = ProgressStyle::with_template(
        "{msg:40!} {bar:30} {bytes:>10}/{total_bytes:10} {bytes_per_sec:>12}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    let tasks = files.iter().map(|file| {
        let bar = bars.add(ProgressBar::new(file.size.unwrap_or(0)));
        bar.set_style(style.clone());
        bar.set_message(file.filename.clone());
        let path = dest.join(&file.filename);
        async move {
            let progress = |done: u64, total: Option<u64>| {
                if let Some(total) = total {
                    bar.set_length(total);
                }
                bar.set_position(done);
            };
            let result = client.download(file, &path, &progress).await;
            bar.finish_and_clear();
            result.map_err(|e| CliError::Other(e.to_string()))
        }
    });
    join_all(tasks).await
}
