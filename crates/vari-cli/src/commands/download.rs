//! `vari download`: the wheels `vari select` would choose, downloaded in parallel into a
//! directory, each checked against the index's hash while it streams and written atomically
//! (a mismatch or a broken transfer leaves no file). Prints the paths (with `--json`, the
//! choices in `vari select --json`'s shape, each with its `path`).

use std::process::ExitCode;

use futures_util::future::join_all;
use serde_json::{json, Value};
use vari_client::{Downloaded, IndexClient, IndexFile};

use crate::cli::DownloadArgs;
use crate::error::CliError;
use crate::explain::{Choice, Choices};
use crate::output;
use crate::settings::{runtime, FromIndexes};

/// Selects and downloads what was chosen; the requirements that failed get an `error:` line
/// each, and make the command fail.
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
    let choices = Choices::new(&session.requests, outcomes, session.target());
    for (request, choice) in &choices.items {
        if let Choice::Skipped { marker } = choice {
            tracing::debug!("{request}: skipped ({marker})");
        }
    }
    let mut files: Vec<IndexFile> = Vec::new();
    for (_, resolution) in choices.chosen() {
        if let Some(chosen) = &resolution.chosen {
            if !files.iter().any(|f| f.filename == chosen.file.filename) {
                files.push(chosen.file.clone());
            }
        }
    }
    if !files.is_empty() {
        std::fs::create_dir_all(&args.dest).map_err(|e| CliError::io(&args.dest, e))?;
    }
    let results = runtime.block_on(download_all(&session.client, &files, &args.dest));
    let mut paths = String::new();
    let mut written: Vec<(String, std::path::PathBuf)> = Vec::new();
    let mut first_error = None;
    for (file, result) in files.iter().zip(results) {
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
    client: &IndexClient,
    files: &[IndexFile],
    dest: &std::path::Path,
) -> Vec<Result<Downloaded, CliError>> {
    let bars = crate::progress::group();
    let tasks = files.iter().map(|file| {
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
            result.map_err(|e| CliError::Other(e.to_string()))
        }
    });
    join_all(tasks).await
}
