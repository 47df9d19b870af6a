//! `vari download`: the wheels `vari select` would choose, downloaded in parallel into a
//! directory, each checked against the index's hash while it streams and written atomically
//! (a mismatch or a broken transfer leaves no file). Prints the paths (with `--json`, the
//! choices in `vari select --json`'s shape, each with its `path`).

use std::process::ExitCode;

use futures_util::future::join_all;
use serde_json::{json, Value};
use vari_client::{Downloaded, IndexFile};

use crate::cli::DownloadArgs;
use crate::error::CliError;
use crate::explain::{Choice, Choices};
use crate::output;
use crate::settings::{runtime, FromIndexes};

/// Selects and downloads what was chosen; the requirements that failed get an `error:` line
/// each, and make the command fail.
pub(super) fn run(args: &DownloadArgs) -> Result<ExitCode, CliError> {
    let mut session = FromIndexes::resolve(
        &args.requirements,
        &args.index,
        &args.target,
        &args.selection,
        false,
    )?;
    let runtime = runtime()?;
    // A request on a build family's name downloads the build the family chooses, from where
    // that build lives (as `vari select` chooses it).
    for step in session.through_families(&runtime)? {
        if let Some(chosen) = &step.choice.chosen {
            output::note(&format!(
                "{}: family {} chooses build {} ({} {})",
                step.requirement,
                step.choice.family,
                chosen.build,
                chosen.requirement,
                chosen.version
            ));
        }
    }
    let outcomes = session.select_all(&runtime);
    let choices = Choices::new(&session.requests, outcomes, session.target());
    for (request, choice) in &choices.items {
        if let Choice::Skipped { marker } = choice {
            tracing::debug!("{request}: skipped ({marker})");
        }
    }
    // Each file with the position of the request it was chosen for (its source's client
    // downloads it).
    let mut files: Vec<(IndexFile, usize)> = Vec::new();
    for (position, (_, choice)) in choices.items.iter().enumerate() {
        if let Choice::Chosen(resolution) = choice {
            if let Some(chosen) = &resolution.chosen {
                if !files
                    .iter()
                    .any(|(f, _)| f.filename == chosen.file.filename)
                {
                    files.push((chosen.file.clone(), position));
                }
            }
        }
    }
    if !files.is_empty() {
        std::fs::create_dir_all(&args.dest).map_err(|e| CliError::io(&args.dest, e))?;
    }
    let results = runtime.block_on(download_all(&session, &files, &args.dest));
    let mut paths = String::new();
    let mut written: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut first_error = None;
    for ((file, _), result) in files.iter().zip(results) {
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
                written.push((file.filename.clone(), done.path));
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if args.json {
        // `vari select --json`'s shape, with the path each chosen wheel was written to.
        let selections: Vec<Value> = choices
            .items
            .iter()
            .map(|(request, choice)| {
                let mut value = choice.json(request, session.target());
                if let Some(object) = value.as_object_mut() {
                    let path = object
                        .get("filename")
                        .and_then(Value::as_str)
                        .and_then(|name| written.iter().find(|(f, _)| f == name))
                        .map(|(_, path)| path.display().to_string());
                    object.insert("path".to_owned(), json!(path));
                }
                value
            })
            .collect();
        output::print_data(&output::json_text(&json!({ "selections": selections })))?;
    } else {
        output::print_data(&paths)?;
    }
    let status = choices.status();
    match first_error {
        Some(e) => Err(e),
        None => Ok(status),
    }
}

/// Downloads every file at once (the client bounds how many requests run together), with one
/// progress bar each on a terminal.
async fn download_all(
    session: &FromIndexes,
    files: &[(IndexFile, usize)],
    dest: &std::path::Path,
) -> Vec<Result<Downloaded, CliError>> {
    let bars = crate::progress::group();
    let tasks = files.iter().map(|(file, position)| {
        let client = session.client_for(*position);
        let bar = crate::progress::Bytes::in_group(&bars, &file.filename, file.size);
        let path = dest.join(&file.filename);
        async move {
            let progress = |done: u64, total: Option<u64>| {
                if let Some(total) = total {
                    bar.set_total(total);
                }
                bar.set_position(done);
            };
            let result = client.download(file, &path, &progress).await;
            bar.finish();
            result.map_err(CliError::from)
        }
    });
    join_all(tasks).await
}
