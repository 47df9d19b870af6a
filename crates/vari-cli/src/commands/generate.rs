//! `vari generate-reference DIR` and `vari generate-man DIR` (hidden): the documentation
//! generated from the code (issue 31). The reference pages are committed under
//! `docs/reference/`, and a test fails when they differ from what this writes.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::GenerateArgs;
use crate::error::CliError;
use crate::output;

/// Writes every generated reference page into the directory.
pub(crate) fn reference(args: &GenerateArgs) -> Result<ExitCode, CliError> {
    create_dir(&args.dir)?;
    use crate::reference::{commands, environment, json, limits, profiles, providers, settings};
    let cli = crate::help::command();
    let pages = [
        (commands::PAGE, commands::page(&cli)),
        (settings::PAGE, settings::page()),
        (environment::PAGE, environment::page(&cli)),
        (limits::PAGE, limits::page()),
        (providers::PAGE, providers::page()),
        (profiles::PAGE, profiles::page()),
        (json::PAGE, json::page(&cli)),
    ];
    for (name, text) in pages {
        output::write_atomically(&args.dir.join(name), text.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the man pages: `vari.1` and one per visible command (`vari-wheel-slim.1`).
pub(crate) fn man(args: &GenerateArgs) -> Result<ExitCode, CliError> {
    create_dir(&args.dir)?;
    clap_mangen::generate_to(crate::help::command(), &args.dir)
        .map_err(|e| CliError::io(&args.dir, e))?;
    Ok(ExitCode::SUCCESS)
}

fn create_dir(dir: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, e))
}
