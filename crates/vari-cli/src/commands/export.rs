//! placeholder
use crate::cli::ExportArgs;
use crate::error::CliError;
use std::process::ExitCode;
pub(super) fn run(_args: &ExportArgs) -> Result<ExitCode, CliError> {
    Err(CliError::Other("todo".into()))
}
