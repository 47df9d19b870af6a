//! Target options → `vari_select::TargetSettings`, and target errors → one-line CLI errors with
//! the command line's own hints.

use vari_select::{Target, TargetError, TargetSettings};

use crate::cli::TargetArgs;
use crate::error::CliError;

/// The settings the target options describe, with the process's environment.
pub(super) fn settings(args: &TargetArgs) -> Result<TargetSettings, CliError> {
    let mut settings = TargetSettings::from_process_env();
    settings.profile = args.profile.clone();
    settings.sysroot = args.sysroot.clone();
    settings.python.python = args.python.clone();
    if let Some(version) = &args.python_version {
        settings.python.version = Some(
            version
                .parse()
                .map_err(|e| CliError::Other(format!("--python-version {version}: {e}")))?,
        );
    }
    if let Some(platform) = &args.python_platform {
        settings.python.platform = Some(
            platform
                .parse()
                .map_err(|e| CliError::Other(format!("--python-platform {platform}: {e}")))?,
        );
    }
    Ok(settings)
}

/// Resolves the target the options describe, with the configured profile (`vari.toml`,
/// `[tool.vari]`, `VARI_CONFIG`) when the command line names none; `-v` says which Python and
/// why.
pub(super) fn resolve(args: &TargetArgs, config: &vari_config::Config) -> Result<Target, CliError> {
    let mut settings = settings(args)?;
    if settings.profile.is_none() && settings.sysroot.is_none() {
        settings.profile = config.profile().map(std::path::Path::to_path_buf);
    }
    let target = Target::resolve(&settings).map_err(target_error)?;
    tracing::debug!(
        "target Python: {} ({})",
        target.python.version.full(),
        target.python.origin
    );
    Ok(target)
}

/// A target error as the CLI words it: with the flag that would help.
pub(super) fn target_error(error: TargetError) -> CliError {
    match error {
        TargetError::Input(e) => CliError::Invalid {
            path: e.path,
            key: e.key,
            message: e.message,
        },
        TargetError::ProfileIsDirectory(path) => CliError::invalid(
            &path,
            None,
            "is a directory, not a profile; to detect from a snapshot directory, use --sysroot",
        ),
        TargetError::Python(e) => CliError::Other(format!("{e} (see --python)")),
        other => CliError::Other(other.to_string()),
    }
}
