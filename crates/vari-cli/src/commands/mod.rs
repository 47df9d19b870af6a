//! One module per command; [`run`] dispatches the parsed command line to it.

mod detect;
mod metadata;
mod rank;
mod snapshot;
mod target;
mod wheel;

use std::process::ExitCode;

use crate::cli::{Cli, Command, MetadataCommand, WheelCommand};
use crate::error::CliError;

/// Runs the command; `Ok` carries the exit status of a command that completed (validation may
/// complete and still report invalid files with status 1).
pub fn run(cli: Cli) -> Result<ExitCode, CliError> {
    match cli.command {
        Command::Detect(args) => detect::run(&args),
        Command::Rank(args) => rank::run(&args),
        Command::Snapshot(args) => snapshot::run(&args),
        Command::Wheel(WheelCommand::Label(args)) => wheel::label(&args),
        Command::Wheel(WheelCommand::Inspect(args)) => wheel::inspect(&args),
        Command::Metadata(MetadataCommand::Validate(args)) => metadata::validate(&args),
        Command::Metadata(MetadataCommand::Merge(args)) => metadata::merge(&args),
        Command::Metadata(MetadataCommand::Convert(args)) => metadata::convert(&args),
    }
}

/// Serialises a JSON value for stdout: pretty, with a trailing newline.
fn json_text(value: &serde_json::Value) -> String {
    // Serialising a `serde_json::Value` cannot fail (all keys are strings).
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
