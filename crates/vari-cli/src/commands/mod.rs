//! One module per command; [`run`] dispatches the parsed command line to it.

mod cache;
mod config;
mod detect;
mod download;
mod index;
mod index_source;
mod install;
mod list;
mod metadata;
mod proxy;
mod rank;
mod scan;
mod select;
mod slim;
mod snapshot;
mod target;
mod wheel;

use std::process::ExitCode;

use crate::cli::{
    CacheCommand, Command, ConfigCommand, IndexCommand, MetadataCommand, WheelCommand,
};
use crate::error::CliError;

/// Runs the command; `Ok` carries the exit status of a command that completed (validation may
/// complete and still report invalid files with status 1). `verbose` is the global `-v` (some human outputs list more with it).
pub(crate) fn run(command: Command, verbose: bool) -> Result<ExitCode, CliError> {
    apply_wheel_limits()?;
    match command {
        Command::Detect(args) => detect::run(&args, verbose),
        Command::Rank(args) => rank::run(&args),
        Command::Snapshot(args) => snapshot::run(&args),
        Command::Wheel(WheelCommand::Label(args)) => wheel::label(&args),
        Command::Wheel(WheelCommand::Inspect(args)) => wheel::inspect(&args),
        Command::Wheel(WheelCommand::MakeVariant(args)) => wheel::make_variant(&args),
        Command::Wheel(WheelCommand::Unmake(args)) => wheel::unmake(&args),
        Command::Wheel(WheelCommand::Validate(args)) => wheel::validate(&args),
        Command::Wheel(WheelCommand::Repack(args)) => wheel::repack(&args),
        Command::Wheel(WheelCommand::Scan(args)) => scan::run(&args),
        Command::Wheel(WheelCommand::Slim(args)) => slim::slim(&args),
        Command::Wheel(WheelCommand::Split(args)) => slim::split(&args),
        Command::Metadata(MetadataCommand::Validate(args)) => metadata::validate(&args),
        Command::Metadata(MetadataCommand::Merge(args)) => metadata::merge(&args),
        Command::Metadata(MetadataCommand::Convert(args)) => metadata::convert(&args),
        Command::Index(IndexCommand::Build(args)) => index::build(&args),
        Command::Index(IndexCommand::Validate(args)) => index::validate(&args),
        Command::List(args) => list::run(&args),
        Command::Config(ConfigCommand::Show(args)) => config::show(&args),
        Command::Select(args) => select::run(&args),
        Command::Download(args) => download::run(&args),
        Command::Proxy(args) => proxy::run(&args),
        Command::Install(args) => install::run(&args),
        Command::Cache(CacheCommand::Dir) => cache::dir(),
        Command::Cache(CacheCommand::Info(args)) => cache::info(&args),
        Command::Cache(CacheCommand::Clean(args)) => cache::clean(&args),
        Command::Cache(CacheCommand::Prune(args)) => cache::prune(&args),
    }
}

/// The file ceilings, applied once for every command: `max-input-bytes` and
/// `max-inflate-ratio` from vari.toml, then `VARI_MAX_INFLATE_RATIO` over the ratio (vari-wheel
/// reads no environment itself; empty counts as unset; `VARI_MAX_INPUT_BYTES` is read by
/// vari-fs, the larger of it and the file's value counting). A configuration that cannot be
/// read sets nothing here: the commands that use it report why.
fn apply_wheel_limits() -> Result<(), CliError> {
    if let Ok(config) = vari_config::Config::from_process_env() {
        let limits = config.file_limits();
        if let Some(bytes) = limits.max_input_bytes {
            vari_fs::raise_input_limit(bytes);
        }
        if let Some(ratio) = limits.max_inflate_ratio {
            vari_wheel::set_max_inflate_ratio(ratio);
        }
    }
    let value = std::env::var_os(vari_wheel::MAX_INFLATE_RATIO_ENV)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !value.trim().is_empty() {
        let ratio = vari_wheel::parse_inflate_ratio(&value).map_err(CliError::Other)?;
        vari_wheel::set_max_inflate_ratio(ratio);
    }
    Ok(())
}

/// Serialises a JSON value for stdout: pretty, with a trailing newline.
fn json_text(value: &serde_json::Value) -> String {
    // Serialising a `serde_json::Value` cannot fail (all keys are strings).
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
