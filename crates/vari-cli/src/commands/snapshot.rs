//! `vari snapshot`: copies the files detection reads, so `vari detect --sysroot DIR` can
//! reproduce this machine elsewhere.

use std::process::ExitCode;

use vari_detect::snapshot::{write_snapshot_with, SnapshotError, SnapshotOptions, SnapshotSummary};
use vari_detect::{DetectContext, Sysroot};

use crate::cli::SnapshotArgs;
use crate::error::CliError;
use crate::output;

/// Writes the snapshot and prints what it holds.
pub(super) fn run(args: &SnapshotArgs) -> Result<ExitCode, CliError> {
    let options = SnapshotOptions {
        replace: args.replace,
        // The driver libraries' answers cannot be read back from a file tree, so the snapshot
        // keeps what they said here.
        record_providers: true,
    };
    let context = DetectContext::from_process_env(Sysroot::host());
    let summary = write_snapshot_with(&args.output, &context, &options).map_err(|e| match e {
        SnapshotError::ExistingSnapshot(path) => CliError::invalid(
            path,
            None,
            "already holds a snapshot: give --replace to replace it, or choose a new directory",
        ),
        SnapshotError::NotASnapshot { path, what } => CliError::invalid(
            path,
            None,
            format!("is {what}, not a snapshot, and will not be replaced: choose a new directory"),
        ),
        SnapshotError::Io { path, source } => CliError::io(path, source),
    })?;
    output::print(&summary_text(&summary))?;
    Ok(ExitCode::SUCCESS)
}

fn summary_text(summary: &SnapshotSummary) -> String {
    let m = &summary.manifest;
    let recorded: Vec<&str> = m.recorded.iter().map(|r| r.namespace.as_str()).collect();
    let mut text = format!(
        "snapshot of {} ({} {}) written to {}\n  {} files copied, {} device markers",
        m.host,
        m.os,
        m.arch,
        summary.dest.display(),
        m.copied.len(),
        m.markers.len(),
    );
    if !recorded.is_empty() {
        text.push_str(&format!(
            ", driver answers recorded for {}",
            recorded.join(", ")
        ));
    }
    text.push_str(&format!(
        "\nuse it with: vari detect --sysroot {}\n",
        summary.dest.display()
    ));
    text
}
