//! One module per command; [`run`] dispatches the parsed command line to it.

mod cache;
mod config;
mod detect;
mod detect_class;
mod download;
mod export;
mod families;
mod generate;
mod help;
mod index;
mod install;
mod list;
mod lock;
mod metadata;
mod mirror;
mod proxy;
mod rank;
mod scan;
mod select;
mod slim;
mod snapshot;
mod sync;
mod wheel;

use std::process::ExitCode;

use crate::cli::{
    CacheCommand, Command, ConfigCommand, FamiliesCommand, IndexCommand, MetadataCommand,
    WheelCommand,
};
use crate::error::CliError;

/// Runs the command; `Ok` carries the exit status of a command that completed (validation may
/// complete and still report invalid files with status 1). `verbose` is the global `-v` (some human outputs list more with it).
pub(crate) fn run(command: Command, verbose: bool) -> Result<ExitCode, CliError> {
    crate::settings::apply_file_limits()?;
    match command {
        Command::Detect(args) if !args.classes.is_empty() => detect_class::run(&args),
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
        // `vari install -r pylock.toml` installs the lock as `vari sync` does.
        Command::Install(args) if args.lock.is_some() => sync::install_lock(&args),
        Command::Install(args) => install::run(&args),
        Command::Lock(args) => lock::run(&args),
        Command::Sync(args) => sync::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Mirror(args) => mirror::run(&args),
        Command::Cache(CacheCommand::Dir) => cache::dir(),
        Command::Cache(CacheCommand::Info(args)) => cache::info(&args),
        Command::Cache(CacheCommand::Clean(args)) => cache::clean(&args),
        Command::Cache(CacheCommand::Prune(args)) => cache::prune(&args),
        Command::Families(args) => match &args.command {
            None => families::list(&args),
            Some(FamiliesCommand::Show(show)) => families::show(show),
            Some(FamiliesCommand::Check(check)) => families::check(check),
        },
        Command::Help(args) => help::run(&args),
        Command::GenerateReference(args) => generate::reference(&args),
        Command::GenerateMan(args) => generate::man(&args),
    }
}
