//! The command-line grammar: every subcommand, option and help text.
//!
//! Only parsing lives here; each command's behaviour is in [`crate::commands`]. Values that have a
//! grammar of their own (properties, labels, patterns, schema generations) are parsed by their
//! `FromStr` implementations in `vari-core`, so a malformed value is a usage error (exit 2) that
//! clap reports before any work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use vari_core::metadata::SchemaGeneration;
use vari_core::ordering::Pattern;
use vari_core::{Namespace, Property, VariantLabel};

/// vari: wheel variants (PEP 817 / PEP 825) without Python.
///
/// Detect what this machine supports, rank the variants of a release for it, and check, combine
/// and convert variant metadata.
#[derive(Debug, Parser)]
#[command(name = "vari", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// Print diagnostics on stderr (-v: debug, -vv: trace). `RUST_LOG` takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the properties this machine (or a profile, or a snapshot) supports.
    Detect(DetectArgs),
    /// Order the variants of a release for this machine (or a profile).
    Rank(RankArgs),
    /// Copy the files detection reads (/proc, /sys, …) into a directory, for `--sysroot`.
    Snapshot(SnapshotArgs),
    /// Work with variant wheels.
    #[command(subcommand)]
    Wheel(WheelCommand),
    /// Check, combine and convert variant metadata.
    #[command(subcommand)]
    Metadata(MetadataCommand),
}

/// Where the target's supported properties come from.
#[derive(Debug, Args)]
pub struct ProfileArg {
    /// A target profile instead of this machine: `vari-profile/1` JSON (as printed by
    /// `vari detect --json`), or a `.toml` file of hardware facts.
    #[arg(long, value_name = "FILE", env = "VARI_PROFILE")]
    pub profile: Option<PathBuf>,

    /// The target Python environment whose installed packages `abi_dependency` reports: an
    /// interpreter or an environment directory [default: the active `VIRTUAL_ENV`, else
    /// `CONDA_PREFIX`].
    #[arg(long, value_name = "PATH", env = "VARI_PYTHON")]
    pub python: Option<PathBuf>,
}

impl ProfileArg {
    /// `--python`, else the environment a `pip install` would go to: the active virtual
    /// environment, else the active conda environment. `None` when there is none.
    pub fn target_python(&self) -> Option<PathBuf> {
        let active = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        self.python
            .clone()
            .or_else(|| active("VIRTUAL_ENV"))
            .or_else(|| active("CONDA_PREFIX"))
    }
}

/// `vari detect`.
#[derive(Debug, Args)]
pub struct DetectArgs {
    #[command(flatten)]
    pub profile: ProfileArg,

    /// Read /proc, /sys and /dev under DIR (a `vari snapshot`) instead of this machine.
    #[arg(long, value_name = "DIR", conflicts_with = "profile")]
    pub sysroot: Option<PathBuf>,

    /// Query every provider again instead of using the cached result.
    #[arg(long)]
    pub no_cache: bool,

    /// Print a `vari-profile/1` JSON document.
    #[arg(long)]
    pub json: bool,
}

/// The options that change which variants may be selected and in which order.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Put a namespace, feature or property first: NS, NS::FEATURE or NS::FEATURE::VALUE
    /// (repeatable; earlier wins).
    #[arg(long, value_name = "PATTERN")]
    pub prefer: Vec<Pattern>,

    /// Never select variants using a namespace, feature or property (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub forbid: Vec<Pattern>,

    /// Select only this variant label (if the target supports it).
    #[arg(long, value_name = "LABEL", conflicts_with = "no_variants")]
    pub variant: Option<VariantLabel>,

    /// Select no variant at all (non-variant wheels only).
    #[arg(long)]
    pub no_variants: bool,

    /// Turn on an optional provider namespace (repeatable).
    #[arg(long, value_name = "NS")]
    pub enable_optional: Vec<Namespace>,

    /// The target Python version (X.Y) that providers' `enable-if` markers see
    /// [default: that of the `python3` on PATH, else 3.12].
    #[arg(long, value_name = "X.Y")]
    pub python_version: Option<String>,
}

/// `vari rank`.
#[derive(Debug, Args)]
pub struct RankArgs {
    /// A `*-variants.json`, a `variant.json`, a wheel, or a directory of wheels.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub profile: ProfileArg,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Print `{"order": […], "variants": […]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari snapshot`.
#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// The directory to create (it must not exist, unless --replace).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    /// Replace an earlier snapshot at DIR.
    #[arg(long)]
    pub replace: bool,
}

/// `vari wheel …`.
#[derive(Debug, Subcommand)]
pub enum WheelCommand {
    /// Print the default label of a set of properties.
    Label(LabelArgs),
    /// Show a wheel's filename parts, label, properties and providers, and check its RECORD.
    Inspect(InspectArgs),
}

/// `vari wheel label`.
#[derive(Debug, Args)]
pub struct LabelArgs {
    /// A property `ns::feature::value` (repeatable).
    #[arg(short = 'p', long = "property", value_name = "PROP")]
    pub properties: Vec<Property>,

    /// More properties, given without `-p`.
    #[arg(value_name = "PROP")]
    pub positional: Vec<Property>,
}

/// `vari wheel inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The wheel file.
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// Print `{"name", "version", "label", "properties", "metadata"}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari metadata …`.
#[derive(Debug, Subcommand)]
pub enum MetadataCommand {
    /// Check pyproject.toml `[variant]`, variant.json, *-variants.json files and wheels.
    Validate(ValidateArgs),
    /// Combine the metadata of several files (conflicts are errors) into one *-variants.json.
    Merge(MergeArgs),
    /// Rewrite a metadata file in another schema generation.
    Convert(ConvertArgs),
}

/// `vari metadata validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The files to check.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Print `{"files": [{"path", "ok", "errors"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari metadata merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The files to combine: *-variants.json, variant.json, wheels.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Where to write the combined metadata.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// The schema generation to write (0.0.2, 0.0.3, 0.1.x, 0.2.0) [default: the inputs'].
    #[arg(long, value_name = "GENERATION")]
    pub schema: Option<SchemaGeneration>,
}

/// `vari metadata convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The metadata file to convert.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The schema generation to write [default: the input's].
    #[arg(long, value_name = "GENERATION")]
    pub schema: Option<SchemaGeneration>,

    /// Where to write the result [default: stdout].
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn grammar_is_consistent() {
        Cli::command().debug_assert();
    }
}
