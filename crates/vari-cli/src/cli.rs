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
#[command(
    name = "vari",
    disable_version_flag = true,
    disable_help_subcommand = true,
    max_term_width = 100
)]
pub(crate) struct Cli {
    /// Print diagnostics on stderr (-v: debug, -vv: trace). `RUST_LOG` takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Draw no progress on stderr (it is drawn only on a terminal, and never with --json).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print the version, the commit it was built from and the target triple, and exit.
    #[arg(short = 'V', long)]
    pub version: bool,

    /// With --version: print `{"name", "version", "commit", "target"}` as JSON.
    #[arg(long, requires = "version")]
    pub json: bool,

    /// The command to run (every invocation but `vari --version` names one).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    /// Build and check static package indexes with variant metadata.
    #[command(subcommand)]
    Index(IndexCommand),
    /// List the distributions installed in a Python environment, with the variant label and
    /// properties of each (from `*.dist-info/variant.json`).
    List(ListArgs),
    /// Lasting preferences: vari.toml, pyproject.toml `[tool.vari]`, VARI_CONFIG.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Choose the wheel each requirement resolves to for this machine (or a target), from
    /// package indexes and find-links sources, and say why.
    Select(SelectArgs),
    /// Download the wheels `vari select` chooses, checking the index's hashes.
    Download(DownloadArgs),
    /// Serve a local simple index that shows pip, uv and other installers only the variant
    /// that fits this machine (or a target), under an ordinary wheel name.
    Proxy(ProxyArgs),
    /// Install with pip or uv through the proxy, then say which variant each package was
    /// installed as, and why.
    Install(InstallArgs),
    /// Lock requirements or a project for several machine classes at once: one pylock.toml
    /// (PEP 751) listing every variant wheel the targets can use, with hashes.
    Lock(LockArgs),
    /// Install a pylock.toml (PEP 751) here (or on a target): per package the variant that
    /// fits, only the dependencies that variant calls for, every file checked against the
    /// lock's hash and size; packages the lock does not list are removed.
    Sync(SyncArgs),
    /// Write what one machine class installs from a pylock.toml: a requirements file with
    /// pinned files and hashes, or a pylock.toml with only that class's files.
    Export(ExportArgs),
    /// Mirror what a fleet's machine classes install, from requirements or a lock, into a
    /// static index: each class's chosen variants, their fallbacks and dependencies, hashes
    /// checked.
    Mirror(MirrorArgs),
    /// Show, empty or trim vari's cache: HTTP responses, interpreter answers, the detection
    /// result, the proxy's rewritten wheels.
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Build families: today's split GPU packages (per-CUDA indexes, `-cu12` names, `[cuda12]`
    /// extras) read as the builds of one project. Without a subcommand, list them.
    Families(FamiliesArgs),
    /// Print a command's help, or explain a topic: `vari help lock`, `vari help labels`;
    /// `vari help topics` lists the topics.
    Help(HelpArgs),
    /// Write the reference pages (Markdown) generated from the code into DIR (for vari's
    /// documentation; `docs/reference/`).
    #[command(hide = true)]
    GenerateReference(GenerateArgs),
    /// Write the man pages (`vari.1`, `vari-COMMAND.1`, …) generated from the command-line
    /// definition into DIR.
    #[command(hide = true)]
    GenerateMan(GenerateArgs),
}

/// `vari help`.
#[derive(Debug, Args)]
pub(crate) struct HelpArgs {
    /// A command (`lock`, `wheel slim`), a topic (`labels`), or `topics` [default: vari's own
    /// help].
    #[arg(value_name = "COMMAND|TOPIC")]
    pub names: Vec<String>,
}

/// `vari generate-reference`, `vari generate-man` (hidden).
#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    /// The directory to write to (created when missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// `vari families`.
#[derive(Debug, Args)]
pub(crate) struct FamiliesArgs {
    #[command(subcommand)]
    pub command: Option<FamiliesCommand>,

    #[command(flatten)]
    pub catalog: FamilyFileArgs,

    /// Print `{"enabled", "families": [{"name", "origin", "summary", "docs", "same_name",
    /// "layouts", "builds", "groups"}], "groups": [{"name", "origin", "families"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari families` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum FamiliesCommand {
    /// One family's builds, and which fits this machine (or a profile) and why the others do
    /// not.
    Show(Box<FamiliesShowArgs>),
    /// Validate a catalog file (over the built-in one); one line naming the key on error.
    Check(FamiliesCheckArgs),
}

/// `vari families show`.
#[derive(Debug, Args)]
pub(crate) struct FamiliesShowArgs {
    /// The family's name (or any of its builds' distribution names).
    #[arg(value_name = "NAME")]
    pub name: String,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Print `{"family": {…}, "target", "best", "builds": [{"build", "fits", "verdict", …}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari families check`.
#[derive(Debug, Args)]
pub(crate) struct FamiliesCheckArgs {
    /// The catalog file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print `{"file", "valid", "families", "groups", "error": {"key", "message"}}`.
    #[arg(long)]
    pub json: bool,
}

/// The target a selecting command chooses for: its hardware and its Python environment.
#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// A target profile instead of this machine: `vari-profile/1` JSON (as printed by
    /// `vari detect --json`), or a `.toml` file of hardware facts.
    #[arg(
        long,
        value_name = "FILE",
        env = "VARI_PROFILE",
        conflicts_with = "sysroot"
    )]
    pub profile: Option<PathBuf>,

    /// Detect from the files under DIR (a `vari snapshot` of another machine) instead of this
    /// machine.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,

    /// The target Python: an interpreter or an environment directory [default: the active
    /// `VIRTUAL_ENV`, else `CONDA_PREFIX`, else the `python3` on PATH].
    #[arg(long, value_name = "PATH", env = "VARI_PYTHON")]
    pub python: Option<PathBuf>,

    /// The target Python version (X.Y or X.Y.Z), for a target that is not here or to override
    /// the interpreter's.
    #[arg(long, value_name = "X.Y")]
    pub python_version: Option<String>,

    /// The target platform, with uv's names: `x86_64-manylinux_2_28`, `aarch64-apple-darwin`,
    /// `x86_64-pc-windows-msvc`, `x86_64-unknown-linux-musl`, …
    #[arg(long, value_name = "NAME")]
    pub python_platform: Option<String>,
}

/// `vari detect`.
#[derive(Debug, Args)]
pub(crate) struct DetectArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Query every provider again instead of using the cached result.
    #[arg(long)]
    pub no_cache: bool,

    /// Say which machine class this machine (or the --profile or --sysroot given) matches, of
    /// [NAME=]PROFILE (repeatable; a profile or facts file, or a snapshot directory, named
    /// after its file without NAME) or, given without a value, of `[proxy.targets]` in vari.toml:
    /// of the classes whose platform and preferred value of each feature (the CUDA version, the
    /// GPU architecture, the x86-64 level its profile names first) this machine has, the one
    /// declaring the most properties. Prints the name; exits 1 when no class matches.
    #[arg(long = "class", value_name = "[NAME=]PROFILE", num_args = 0..=1, default_missing_value = "")]
    pub classes: Vec<String>,

    /// With --class: print the class's URL on a `vari proxy` serving the classes at URL
    /// (`URL/t/NAME/simple/`) instead of its name.
    #[arg(long, value_name = "URL", requires = "classes")]
    pub proxy_url: Option<url::Url>,

    /// Print a `vari-profile/1` JSON document; with --class, `{"class", "index_url", "machine",
    /// "classes": [{"name", "fits", "properties", "missing", "platform"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// The options that change which variants may be selected and in which order.
#[derive(Debug, Args)]
pub(crate) struct SelectionArgs {
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

    #[command(flatten)]
    pub families: FamilyFileArgs,
}

/// Which build-family catalog applies (`vari families`; issue 35).
#[derive(Debug, Args)]
pub(crate) struct FamilyFileArgs {
    /// A build-family catalog file put over the built-in one (repeatable; a family of the same
    /// name replaces the built-in one) [default: `families` in vari.toml].
    #[arg(long = "families", value_name = "FILE", env = "VARI_FAMILIES")]
    pub files: Vec<PathBuf>,

    /// Turn the build-family catalog off: the built-in one and every file (`VARI_NO_FAMILIES=1`).
    #[arg(long, env = "VARI_NO_FAMILIES", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_families: bool,
}

/// `vari rank`.
#[derive(Debug, Args)]
pub(crate) struct RankArgs {
    /// A `*-variants.json`, a `variant.json`, a wheel, or a directory of wheels (`-`: a
    /// `*-variants.json` on standard input).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Print `{"order": […], "variants": […]}`.
    #[arg(long)]
    pub json: bool,
}

/// Where packages come from (`vari select`, `vari download`, `vari proxy`, `vari install`).
#[derive(Debug, Args)]
pub(crate) struct IndexArgs {
    /// A simple-API index (PEP 503/691), most important first (repeatable) [default:
    /// `index-url` from vari.toml, else `UV_DEFAULT_INDEX`, `UV_INDEX_URL` or `PIP_INDEX_URL`,
    /// else PyPI, `https://pypi.org/simple/`].
    #[arg(short = 'i', long, value_name = "URL")]
    pub index_url: Vec<vari_client::IndexUrl>,

    /// More indexes, after the first (repeatable).
    #[arg(long, value_name = "URL")]
    pub extra_index_url: Vec<vari_client::IndexUrl>,

    /// A directory of wheels or an HTML page of links (repeatable).
    #[arg(short = 'f', long, value_name = "PATH|URL", value_parser = parse_find_links)]
    pub find_links: Vec<vari_client::FindLinks>,

    /// How several indexes combine: `first-index` (the first that has the project; guards
    /// against dependency confusion) or `unsafe-best-match` (all merged).
    #[arg(long, value_name = "STRATEGY", value_parser = parse_strategy)]
    pub index_strategy: Option<vari_client::IndexStrategy>,

    /// Consider pre-releases and development releases.
    #[arg(long)]
    pub pre: bool,

    /// Use only cached pages and metadata; send nothing.
    #[arg(long, conflicts_with = "refresh")]
    pub offline: bool,

    /// Revalidate every cached page and metadata file with the server.
    #[arg(long)]
    pub refresh: bool,
}

fn parse_find_links(given: &str) -> Result<vari_client::FindLinks, String> {
    vari_client::FindLinks::parse(given).map_err(|e| e.to_string())
}

fn parse_strategy(given: &str) -> Result<vari_client::IndexStrategy, String> {
    match given {
        "first-index" => Ok(vari_client::IndexStrategy::FirstIndex),
        "unsafe-best-match" => Ok(vari_client::IndexStrategy::UnsafeBestMatch),
        other => Err(format!(
            "`{other}`: expected `first-index` or `unsafe-best-match`"
        )),
    }
}

/// `vari select`.
#[derive(Debug, Args)]
pub(crate) struct SelectArgs {
    /// Requirements (PEP 508): `torch`, `torch>=2.9`, `cupy[all]; sys_platform == "linux"`.
    #[arg(value_name = "REQ", required = true)]
    pub requirements: Vec<String>,

    #[command(flatten)]
    pub index: IndexArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// List every file of the versions considered with what happened to it.
    #[arg(long)]
    pub explain: bool,

    /// Do not read the chosen wheels' dependencies.
    #[arg(long)]
    pub no_deps: bool,

    /// Print `{"selections": [{"requirement", "name", "version", "filename", "url", "label",
    /// "sha256", "reason", …}], "families": [{"requirement", "choice"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari download`.
#[derive(Debug, Args)]
pub(crate) struct DownloadArgs {
    /// Requirements (PEP 508).
    #[arg(value_name = "REQ", required = true)]
    pub requirements: Vec<String>,

    /// The directory to write the wheels to (created when missing).
    #[arg(short = 'd', long = "dest", value_name = "DIR")]
    pub dest: PathBuf,

    #[command(flatten)]
    pub index: IndexArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Print `vari select --json`'s `{"selections": […]}`, each with the `path` written (null
    /// for a requirement that failed or was skipped).
    #[arg(long)]
    pub json: bool,
}

/// `vari mirror`.
#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("input")
        .required(true)
        .multiple(true)
        .args(["requirements", "requirement_files", "project", "lock"])
))]
pub(crate) struct MirrorArgs {
    /// Requirements (PEP 508) to resolve for the targets as `vari lock` does (needs uv on
    /// PATH), then mirror: `torch`, `torch>=2.9`.
    #[arg(value_name = "REQ")]
    pub requirements: Vec<String>,

    /// Read requirements from a file (repeatable; `-r` inside it is followed).
    #[arg(short = 'r', long = "requirement", value_name = "FILE")]
    pub requirement_files: Vec<PathBuf>,

    /// Resolve a project: its pyproject.toml's dependencies, optional dependencies and
    /// dependency groups, all of them mirrored.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// The lock to mirror (`pylock.toml`, PEP 751 with PEP 825's variant metadata) instead of
    /// resolving requirements.
    #[arg(
        long = "lock",
        value_name = "FILE",
        conflicts_with_all = ["requirements", "requirement_files", "project"]
    )]
    pub lock: Option<PathBuf>,

    /// Also write the mirror's lock here, once the mirror is complete: the lock resolved from
    /// the requirements (as `vari lock` writes it) or the one given, with the slim wheels of
    /// `--slim` and their hashes; nodes `vari sync` it with `--find-links DEST/files --offline`.
    #[arg(long, value_name = "FILE")]
    pub lock_output: Option<PathBuf>,

    /// A machine class to mirror for: a profile (`vari-profile/1` JSON as `vari detect --json`
    /// prints it), a `.toml` of hardware facts or a snapshot directory, named NAME or after the
    /// file (repeatable; NAME: lowercase letters, digits, `-` and `_`, at most 40) [default
    /// with --lock: the lock's targets; requirements need at least one].
    #[arg(long = "target", value_name = "[NAME=]PROFILE")]
    pub targets: Vec<String>,

    /// A Python version to mirror for (X.Y or X.Y.Z, repeatable): every target with every
    /// version, as `vari lock` makes them [default with --lock: each of the lock's targets'
    /// own; else the `python3` here].
    #[arg(long = "python-version", value_name = "X.Y")]
    pub python_versions: Vec<String>,

    /// A platform to mirror for, with uv's names (`x86_64-manylinux_2_28`, …; repeatable):
    /// every target on every platform [default with --lock: each of the lock's targets' own;
    /// else this one].
    #[arg(long = "python-platform", value_name = "NAME")]
    pub python_platforms: Vec<String>,

    /// Where the site goes, as for `vari index build -o`: a directory (created when missing;
    /// updated in place on later runs), or an object store prefix: `s3://BUCKET/PREFIX`,
    /// `gs://BUCKET/PREFIX`, `az://CONTAINER/PREFIX`, or an http(s) WebDAV URL (credentials from
    /// the environment, `AWS_*` …, or the AWS profile files). Files are published first, then
    /// the project pages, the project list last, removals after it; nothing is published when a
    /// download fails.
    #[arg(short = 'o', long = "output", value_name = "DIR|URL")]
    pub output: PathBuf,

    /// The local directory keeping the downloaded files between runs, so that a re-run
    /// downloads (and uploads) only what changed [default: DIR/.vari-mirror for a directory;
    /// for an object store, `{cache}/mirror/SCHEME-BUCKET-HASH` under vari's cache directory].
    /// One store per destination (a run removes from it what its own targets do not need);
    /// runs on the same store take turns: a second one waits for the first.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,

    /// Keep files no target needs any more (by default they are removed, after the pages that
    /// linked them).
    #[arg(long)]
    pub keep: bool,

    /// Also hold, for each CUDA wheel a target installs, one slim wheel per GPU family the
    /// targets declare (their profiles' `nvidia :: sm_arch`), as `vari wheel split` writes
    /// them, beside the fat one: each target's node downloads only the GPU code its GPU runs
    /// (the `--lock-output` lock names them by their path in the site). Wheels whose GPU code
    /// vari cannot read are mirrored whole and named.
    #[arg(long)]
    pub slim: bool,

    #[command(flatten)]
    pub index: IndexArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// `vari proxy`.
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    #[command(flatten)]
    pub index: IndexArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Where to listen. A fixed port, so that the URL given to pip or uv once stays valid; 3141
    /// is also devpi's (give another when both run).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:3141")]
    pub bind: std::net::SocketAddr,

    /// Allow a non-loopback --bind address: anyone who can connect sees what the indexes hold.
    /// It also serves requests naming any host; without it only those naming localhost, a
    /// loopback address or the --bind address are (others get 421), so that a web page cannot
    /// reach the proxy through DNS rebinding.
    #[arg(long)]
    pub allow_remote: bool,

    /// Serve machine class NAME, choosing for PROFILE (a profile or facts file, or a snapshot
    /// directory), under `/t/NAME.FINGERPRINT/simple/` (for uv) and `/t/NAME/simple/` (for pip),
    /// from this one process (repeatable; replaces --profile and --sysroot) [default:
    /// `[proxy.targets]` in vari.toml, else one target]. NAME: lowercase letters, digits, `-`
    /// and `_`, at most 40; without it, the profile's file name.
    #[arg(long = "target", value_name = "[NAME=]PROFILE")]
    pub targets: Vec<String>,

    /// Print the URLs as JSON (`{"index_url", "alias_url", "fingerprint"}`, or with machine
    /// classes `{"classes": [{"name", "index_url", "alias_url", "fingerprint", "source"}]}`)
    /// on one line instead of the line of variables.
    #[arg(long)]
    pub json: bool,
}

/// `vari install`.
#[derive(Debug, Args)]
// Its default sources are the installer's own, not `vari select`'s.
#[command(mut_arg("index_url", |arg| arg.help(INSTALL_INDEX_URL_HELP)))]
pub(crate) struct InstallArgs {
    /// Requirements, passed to the installer as given (PEP 508: `torch`, `torch>=2.9`).
    #[arg(value_name = "REQ", required_unless_present_any = ["installer_args", "lock"])]
    pub requirements: Vec<String>,

    /// `pip`, `uv`, or the path of a pip or uv executable [default: uv when on PATH, else the
    /// target Python's pip].
    #[arg(long, value_name = "pip|uv|PATH")]
    pub installer: Option<vari_install::InstallerChoice>,

    #[command(flatten)]
    pub index: IndexArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,

    /// Change an interpreter that is not a virtual environment although it was only found
    /// (the `python3` on PATH: the system's or a base Python). Not needed for a virtual
    /// environment, the active conda environment, or an interpreter named with --python.
    #[arg(long)]
    pub system: bool,

    /// Show the variant each requirement would be installed as; install nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// With --dry-run: print `vari select --json`'s `{"selections": […]}`.
    #[arg(long, requires = "dry_run")]
    pub json: bool,

    /// Anything else for the installer, after `--` (`-- --no-deps -r requirements.txt`).
    #[arg(last = true, value_name = "ARGS")]
    pub installer_args: Vec<std::ffi::OsString>,

    /// Install a lock file (`pylock.toml`, `pylock.NAME.toml`, PEP 751) as `vari sync` does,
    /// removing nothing; other requirements files go to the installer after `--`.
    #[arg(short = 'r', long = "requirement", value_name = "PYLOCK", conflicts_with_all = ["requirements", "installer_args"], value_parser = parse_lock_name)]
    pub lock: Option<PathBuf>,

    #[command(flatten)]
    pub lock_choice: LockChoiceArgs,
}

/// A lock file's name as PEP 751 has it: `pylock.toml` or `pylock.NAME.toml`.
fn parse_lock_name(given: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(given);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let is_lock = name == "pylock.toml"
        || name
            .strip_prefix("pylock.")
            .and_then(|rest| rest.strip_suffix(".toml"))
            .is_some_and(|middle| !middle.is_empty() && !middle.contains('.'));
    match is_lock {
        true => Ok(path),
        false => Err(format!(
            "`{given}`: -r takes a lock file (pylock.toml or pylock.NAME.toml, PEP 751); give \
             other requirements files to the installer after `--` (`-- -r {given}`)"
        )),
    }
}

/// Which parts of a lock to install: its extras and dependency groups (PEP 751).
#[derive(Debug, Args)]
pub(crate) struct LockChoiceArgs {
    /// An extra the lock offers (repeatable).
    #[arg(long = "extra", value_name = "NAME")]
    pub extras: Vec<String>,

    /// Every extra the lock offers.
    #[arg(long, conflicts_with = "extras")]
    pub all_extras: bool,

    /// A dependency group the lock offers, besides its `default-groups` (repeatable).
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,

    /// Every dependency group the lock offers.
    #[arg(long)]
    pub all_groups: bool,

    /// Leave out the lock's `default-groups`.
    #[arg(long)]
    pub no_default_groups: bool,

    /// Leave out this dependency group (repeatable), even when it is a default or --group
    /// names it.
    #[arg(long = "no-group", value_name = "NAME")]
    pub no_groups: Vec<String>,

    /// Only this dependency group (repeatable): the project's own dependencies and the
    /// default groups are left out.
    #[arg(
        long = "only-group",
        value_name = "NAME",
        conflicts_with_all = ["groups", "all_groups", "extras", "all_extras"]
    )]
    pub only_groups: Vec<String>,
}

/// `vari sync`.
#[derive(Debug, Args)]
pub(crate) struct SyncArgs {
    /// The lock file (PEP 751).
    #[arg(value_name = "PYLOCK", default_value = "pylock.toml")]
    pub lock: PathBuf,

    #[command(flatten)]
    pub lock_choice: LockChoiceArgs,

    #[command(flatten)]
    pub files: LockFilesArgs,

    /// `pip`, `uv`, or the path of a pip or uv executable [default: uv when on PATH, else the
    /// target Python's pip].
    #[arg(long, value_name = "pip|uv|PATH")]
    pub installer: Option<vari_install::InstallerChoice>,

    /// Change an interpreter that is not a virtual environment although it was only found
    /// (the `python3` on PATH: the system's or a base Python). Not needed for a virtual
    /// environment, the active conda environment, or an interpreter named with --python.
    #[arg(long)]
    pub system: bool,

    /// Keep the installed packages the lock does not list.
    #[arg(long)]
    pub inexact: bool,

    /// Show what would be installed and removed; change nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Print `{"lock", "packages": [{"name", "version", "label", "filename", "reason",
    /// "action"}], "removed": [{"name", "version"}]}`.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Where a lock's files come from besides their URLs.
#[derive(Debug, Args)]
pub(crate) struct LockFilesArgs {
    /// A directory of wheels where each file is looked up by its name before its URL
    /// (repeatable); its bytes are checked against the lock all the same.
    #[arg(short = 'f', long = "find-links", value_name = "DIR")]
    pub wheelhouses: Vec<PathBuf>,

    /// Never use the network: every file must be in vari's cache, a --find-links directory, or
    /// at the lock's `path`.
    #[arg(long)]
    pub offline: bool,
}

/// `vari export`.
#[derive(Debug, Args)]
#[command(mut_arg("profile", |arg| arg.visible_alias("target")))]
pub(crate) struct ExportArgs {
    /// The lock file (PEP 751).
    #[arg(value_name = "PYLOCK", default_value = "pylock.toml")]
    pub lock: PathBuf,

    #[command(flatten)]
    pub lock_choice: LockChoiceArgs,

    /// What to write.
    #[arg(long, value_enum, default_value = "requirements-txt")]
    pub format: ExportFormat,

    /// The file to write [default: standard output].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Put the files in DIR (checked against the lock; a variant wheel under its name without
    /// the label, its dependencies' variant markers evaluated for the target), and name them
    /// there: what pip and uv without variant support install.
    #[arg(long, value_name = "DIR")]
    pub wheelhouse: Option<PathBuf>,

    /// Name variant wheels by their URLs (`name @ URL`), for installers that read variant
    /// wheels. Without it or --wheelhouse, a requirements file with a variant wheel is refused:
    /// plain pip and uv refuse those names.
    #[arg(long, conflicts_with = "wheelhouse")]
    pub variant_urls: bool,

    #[command(flatten)]
    pub files: LockFilesArgs,

    #[command(flatten)]
    pub target: TargetArgs,

    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// What `vari export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ExportFormat {
    /// `name @ URL --hash=sha256:…`, one line per file.
    RequirementsTxt,
    /// A pylock.toml with only the target's files.
    Pylock,
}

/// `vari lock`.
#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// Requirements (PEP 508): `torch`, `torch>=2.9` [default, with no -r or --project either:
    /// lock again from `pyproject.toml` here (else the existing lock's requirements), for the
    /// existing lock's targets and indexes unless given].
    #[arg(value_name = "REQ")]
    pub requirements: Vec<String>,

    /// Read requirements from a file (repeatable; `-r` inside it is followed).
    #[arg(short = 'r', long = "requirement", value_name = "FILE")]
    pub requirement_files: Vec<PathBuf>,

    /// Lock a project: its pyproject.toml's `[project.dependencies]`, optional dependencies
    /// (the lock's extras) and `[dependency-groups]` (PEP 735).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// A machine class the lock must serve: a profile (`vari-profile/1` JSON), a `.toml` file
    /// of hardware facts or a snapshot directory (`vari snapshot`), named NAME or after the
    /// file (repeatable; NAME: lowercase letters, digits, `-` and `_`, at most 40), recorded
    /// relative to the lock (one outside its directory: by its hash only). Without any, every
    /// variant of every locked release is listed (the lock records one target, `any`).
    #[arg(long = "target", value_name = "[NAME=]PROFILE")]
    pub targets: Vec<String>,

    /// A Python version the lock must serve (X.Y, repeatable) [default: the Python on PATH].
    #[arg(long = "python-version", value_name = "X.Y")]
    pub python_versions: Vec<String>,

    /// A platform the lock must serve, with uv's names (repeatable) [default: this one].
    #[arg(long = "python-platform", value_name = "NAME")]
    pub python_platforms: Vec<String>,

    #[command(flatten)]
    pub index: IndexArgs,

    /// The lock file [default: pylock.toml, in the --project directory when given].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Ignore the pins of the existing lock.
    #[arg(short = 'U', long)]
    pub upgrade: bool,

    /// Ignore the existing lock's pin of this package (repeatable).
    #[arg(short = 'P', long = "upgrade-package", value_name = "NAME")]
    pub upgrade_packages: Vec<String>,

    /// Resolve nothing: exit 1 when the lock is missing or out of date with its inputs.
    #[arg(long, conflicts_with_all = ["upgrade", "upgrade_packages"])]
    pub check: bool,

    #[command(flatten)]
    pub families: FamilyFileArgs,
}

/// `--index-url` of `vari install`.
const INSTALL_INDEX_URL_HELP: &str = "A simple-API index (PEP 503/691), most important first \
     (repeatable) [default: `index-url` from vari.toml, else the indexes the installer would use: \
     PIP_INDEX_URL and pip's configuration files for pip, UV_DEFAULT_INDEX or UV_INDEX_URL and \
     uv.toml or [tool.uv] for uv, else PyPI]";

/// `vari snapshot`.
#[derive(Debug, Args)]
pub(crate) struct SnapshotArgs {
    /// The directory to create (it must not exist, unless --replace).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    /// Replace an earlier snapshot at DIR.
    #[arg(long)]
    pub replace: bool,
}

/// `vari wheel …`.
#[derive(Debug, Subcommand)]
pub(crate) enum WheelCommand {
    /// Print the default label of a set of properties.
    Label(LabelArgs),
    /// Show a wheel's filename parts, label, properties and providers, and check its RECORD.
    Inspect(InspectArgs),
    /// Turn a plain wheel into a variant wheel (variant.json added, RECORD updated, label in the
    /// filename); members are copied without recompressing.
    MakeVariant(MakeVariantArgs),
    /// Turn a variant wheel back into the plain wheel.
    Unmake(UnmakeArgs),
    /// Check wheels: every member against RECORD, the dist-info name, the label against
    /// variant.json.
    Validate(WheelValidateArgs),
    /// Turn existing builds of a release into variant wheels and the release's
    /// `*-variants.json`, as a config file says.
    Repack(RepackArgs),
    /// Show what the binaries in wheels need: CUDA architectures (sm_arch), CUDA runtime,
    /// x86-64 level.
    Scan(ScanArgs),
    /// Keep only some GPU architectures of a fat CUDA build: every `.nv_fatbin` rewritten in
    /// place, the result labelled by the code it keeps.
    Slim(SlimArgs),
    /// Split a fat CUDA build into one slim wheel per architecture family (compute capability
    /// major) its code covers.
    Split(SplitArgs),
}

/// `vari wheel slim`.
#[derive(Debug, Args)]
pub(crate) struct SlimArgs {
    /// The fat wheel (plain or variant).
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// What to keep (repeatable): a compute capability (`8.6`, `86`, `sm_86`, `86_real`): the
    /// SASS that runs on it, or the PTX the driver would JIT there when no SASS does; a family
    /// (`8.x`): every compute capability of that major; a PTX target (`compute_90`,
    /// `90_virtual`): the PTX a GPU of that architecture or later would JIT. The property form
    /// (`nvidia :: sm_arch :: 80_real`) means its value.
    #[arg(long, value_name = "SPEC", required = true, num_args = 1..)]
    pub keep: Vec<vari_slim::KeepSpec>,

    /// The label [default: the 8-hex default label of the properties].
    #[arg(long, value_name = "LABEL")]
    pub label: Option<VariantLabel>,

    /// Accept properties whose values cannot be checked (unknown namespaces, new values).
    #[arg(long)]
    pub skip_validation: bool,

    /// Print the report as JSON: `{"wheels": [{"wheel", "output", "label", "properties",
    /// "size": {"before", "after"}, "code": [{"code", "before", "after"}], "left_whole": [{"path",
    /// "reason"}], "files": [{"path", "changed", "left_whole", "code"}]}]}`.
    #[arg(long)]
    pub json: bool,

    /// The directory to write the slim wheel to.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

/// `vari wheel split`.
#[derive(Debug, Args)]
pub(crate) struct SplitArgs {
    /// The fat wheel (plain or variant).
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// Label the wheels `PREFIX_8x`, `PREFIX_9x`, … [default: each its 8-hex default label].
    #[arg(long, value_name = "PREFIX")]
    pub label: Option<VariantLabel>,

    /// Accept properties whose values cannot be checked (unknown namespaces, new values).
    #[arg(long)]
    pub skip_validation: bool,

    /// Print the report as JSON, in the shape of `vari wheel slim --json`.
    #[arg(long)]
    pub json: bool,

    /// The directory to write the slim wheels to.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

/// `vari wheel scan`.
#[derive(Debug, Args)]
pub(crate) struct ScanArgs {
    /// The wheels to scan.
    #[arg(value_name = "WHEEL", required = true)]
    pub wheels: Vec<PathBuf>,

    /// Print `{"properties": […], "files": [{"path", "sm_arch", "cuda_runtime", "x86_64_level",
    /// "needs"}]}`; with several wheels `{"wheels": [{"wheel", "properties", "files"}, …]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari wheel make-variant`.
#[derive(Debug, Args)]
pub(crate) struct MakeVariantArgs {
    /// The plain wheel.
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// A property `ns::feature::value` (repeatable).
    #[arg(short = 'p', long = "property", value_name = "PROP")]
    pub properties: Vec<Property>,

    /// The label [default: the 8-hex default label of the properties].
    #[arg(long, value_name = "LABEL", conflicts_with = "null")]
    pub label: Option<VariantLabel>,

    /// Make the null variant (no properties, label `null`).
    #[arg(long)]
    pub null: bool,

    /// Priorities and providers: a pyproject.toml with a `[variant]` table, or a
    /// `*-variants.json` (whose entry for --label also gives the properties when no -p is given).
    #[arg(long, value_name = "FILE")]
    pub metadata: Option<PathBuf>,

    /// The schema generation of variant.json: 0.0.2, 0.0.3, 0.1.x, 0.2.0 (PEP 850's providers
    /// schema; built-in namespaces get their reference providers) [default: the metadata's,
    /// else 0.1.1 (PEP 825)].
    #[arg(long, value_name = "VERSION")]
    pub schema: Option<SchemaGeneration>,

    /// Accept properties whose values cannot be checked (unknown namespaces, new values).
    #[arg(long)]
    pub skip_validation: bool,

    /// Add the properties the wheel's binaries need (CUDA architectures, x86-64 level).
    #[arg(long)]
    pub infer: bool,

    /// Write metadata this installer installs as intended, as `repack --for uv` does: `uv`
    /// (PEP 850 providers naming uv's vendored providers). Implies `--schema 0.2`. Without
    /// it, a warning says when uv would not select the variant.
    #[arg(
        long = "for",
        value_name = "INSTALLER",
        value_enum,
        conflicts_with = "schema"
    )]
    pub for_installer: Option<Installer>,

    /// The directory to write the variant wheel to.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

/// `vari wheel unmake`.
#[derive(Debug, Args)]
pub(crate) struct UnmakeArgs {
    /// The variant wheel.
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// The directory to write the plain wheel to.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
}

/// `vari wheel validate`.
#[derive(Debug, Args)]
pub(crate) struct WheelValidateArgs {
    /// The wheels.
    #[arg(value_name = "WHEEL", required = true)]
    pub wheels: Vec<PathBuf>,

    /// Print `{"files": [{"path", "ok", "errors": […]}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari wheel repack`.
#[derive(Debug, Args)]
pub(crate) struct RepackArgs {
    /// The repack configuration (TOML; see examples/repack/).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,

    /// The builds to repack.
    #[arg(value_name = "WHEEL", required = true)]
    pub wheels: Vec<PathBuf>,

    /// The directory to write the variant wheels and `*-variants.json` files to.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,

    /// Write metadata this installer installs as intended, as the config's `for = "uv"` does:
    /// `uv` (PEP 850 providers naming uv's vendored providers, variant markers decided per
    /// build).
    #[arg(long = "for", value_name = "INSTALLER", value_enum)]
    pub for_installer: Option<Installer>,
}

/// `vari wheel label`.
#[derive(Debug, Args)]
pub(crate) struct LabelArgs {
    /// A property `ns::feature::value` (repeatable).
    #[arg(short = 'p', long = "property", value_name = "PROP")]
    pub properties: Vec<Property>,

    /// More properties, given without `-p`.
    #[arg(value_name = "PROP")]
    pub positional: Vec<Property>,
}

/// `vari wheel inspect`.
#[derive(Debug, Args)]
pub(crate) struct InspectArgs {
    /// The wheel file.
    #[arg(value_name = "WHEEL")]
    pub wheel: PathBuf,

    /// Print `{"name", "version", "tags", "dist_info", "label", "properties", "metadata",
    /// "record": {"member", "entries", "verified"}, "problems"}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari metadata …`.
#[derive(Debug, Subcommand)]
pub(crate) enum MetadataCommand {
    /// Check pyproject.toml `[variant]`, variant.json, *-variants.json files and wheels.
    Validate(ValidateArgs),
    /// Combine the metadata of several files (conflicts are errors) into one *-variants.json.
    Merge(MergeArgs),
    /// Rewrite a metadata file in another schema generation.
    Convert(ConvertArgs),
}

/// `vari metadata validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// The files to check.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Print `{"files": [{"path", "ok", "errors"}]}` (with `--for uv`, also `"uv"` per file).
    #[arg(long)]
    pub json: bool,

    /// Also check that this installer installs each release as intended: `uv` (uv 0.13's
    /// native variant support), with why not and the label each target gets from uv and vari
    /// where they differ.
    #[arg(long = "for", value_name = "INSTALLER", value_enum)]
    pub for_installer: Option<Installer>,
}

/// An installer with its own variant support, whose narrower rules vari can check for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Installer {
    /// uv 0.13 (`--preview-features wheel-variants`).
    Uv,
}

/// `vari metadata merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// The files to combine: *-variants.json, variant.json, wheels.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Where to write the combined metadata.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,

    /// The schema generation to write: 0.0.2, 0.0.3, 0.1.x (written as 0.1.1; 0.1 and 0.1.1
    /// also accepted) or 0.2.x (written as 0.2.0; 0.2 and 0.2.0 also accepted) [default: the
    /// inputs'].
    #[arg(long, value_name = "GENERATION")]
    pub schema: Option<SchemaGeneration>,

    /// Write schema 0.2.x with variantlib 0.2.2's `$schema` URL (which allows `enable-if`)
    /// instead of PEP 850's.
    #[arg(long)]
    pub variantlib_url: bool,
}

/// `vari metadata convert`.
#[derive(Debug, Args)]
pub(crate) struct ConvertArgs {
    /// The metadata file to convert.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The schema generation to write: 0.0.2, 0.0.3, 0.1.x (written as 0.1.1; 0.1 and 0.1.1
    /// also accepted) or 0.2.x (written as 0.2.0; 0.2 and 0.2.0 also accepted) [default: the
    /// input's].
    #[arg(long, value_name = "GENERATION")]
    pub schema: Option<SchemaGeneration>,

    /// Write schema 0.2.x with variantlib 0.2.2's `$schema` URL (which allows `enable-if`)
    /// instead of PEP 850's.
    #[arg(long, conflicts_with = "for_installer")]
    pub variantlib_url: bool,

    /// Write metadata this installer installs as intended: `uv` (PEP 850 providers naming
    /// uv's vendored providers; a warning for what uv cannot express). Implies `--schema 0.2`.
    #[arg(
        long = "for",
        value_name = "INSTALLER",
        value_enum,
        conflicts_with = "schema"
    )]
    pub for_installer: Option<Installer>,

    /// Where to write the result [default: stdout].
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// `vari index …`.
#[derive(Debug, Subcommand)]
pub(crate) enum IndexCommand {
    /// Build a static simple index (PEP 503 HTML + PEP 691 JSON, PEP 658 metadata files) with a
    /// `*-variants.json` for every release with variant wheels.
    Build(IndexBuildArgs),
    /// Check that an index links a `*-variants.json` for every release with variant wheels, that
    /// it agrees with the wheels and covers their labels, and that hashes match.
    Validate(IndexValidateArgs),
}

/// `vari index build`.
#[derive(Debug, Args)]
pub(crate) struct IndexBuildArgs {
    /// The directory of wheels and source distributions.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Where the site goes: a directory to create or update (`simple/`, `files/`), or an object
    /// store prefix: `s3://BUCKET/PREFIX`, `gs://BUCKET/PREFIX`, `az://CONTAINER/PREFIX`, or an
    /// http(s) WebDAV URL. Credentials come from the environment (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`, …) or, for
    /// S3, the AWS profile files (`AWS_PROFILE`, `~/.aws/credentials`, `~/.aws/config`). Files
    /// are uploaded first, then the pages, the project list last, removals after it.
    #[arg(short, long, value_name = "SITE|URL")]
    pub output: PathBuf,

    /// Link the wheels and sdists as URL/FILENAME instead of putting them into SITE; upload
    /// SITE/files/*.metadata beside them.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<url::Url>,

    /// Copy the files into SITE instead of hard-linking them.
    #[arg(long, conflicts_with = "base_url")]
    pub copy: bool,

    /// Print `{"projects", "files", "variants_json", "read", "reused", "written", "removed",
    /// "skipped"}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari index validate`.
#[derive(Debug, Args)]
pub(crate) struct IndexValidateArgs {
    /// The site directory (as `vari index build` writes it), or the http(s) URL of a served
    /// index (its simple root, or the site holding `simple/`).
    #[arg(value_name = "SITE|URL")]
    pub site: PathBuf,

    /// Print `{"ok", "projects", "files", "problems": [{"severity", "file", "key", "message"}]}`.
    #[arg(long)]
    pub json: bool,

    /// Also check that this installer installs each release as intended: `uv` (uv 0.13's
    /// native variant support); every reason it does not is an error.
    #[arg(long = "for", value_name = "INSTALLER", value_enum)]
    pub for_installer: Option<Installer>,
}

/// `vari list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// The Python environment: an interpreter or an environment directory [default: the active
    /// `VIRTUAL_ENV`, else `CONDA_PREFIX`, else the `python3` on PATH].
    #[arg(long, value_name = "PATH", env = "VARI_PYTHON")]
    pub python: Option<PathBuf>,

    /// Print `{"packages": [{"name", "version", "label", "properties"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari config …`.
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print the merged settings and the file each one came from.
    Show(ConfigShowArgs),
}

/// `vari config show`.
#[derive(Debug, Args)]
pub(crate) struct ConfigShowArgs {
    /// Print `{"settings": {KEY: {"value", "layer", "path"}}, "files": [{"layer", "path",
    /// "found"}]}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari cache …`.
#[derive(Debug, Subcommand)]
pub(crate) enum CacheCommand {
    /// Print the cache directory ($VARI_CACHE_DIR, else $XDG_CACHE_HOME/vari, else
    /// ~/.cache/vari).
    Dir,
    /// Show how many entries, and how many bytes, each part of the cache holds.
    Info(CacheInfoArgs),
    /// Remove everything in the cache, or in the parts named.
    Clean(CacheCleanArgs),
    /// Remove HTTP responses, rewritten wheels and locked files not used for a while (the
    /// interpreter answers and the detection result are checked on every use and stay).
    Prune(CachePruneArgs),
}

/// A part of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CacheAreaArg {
    /// Index pages, metadata files and `*-variants.json` responses.
    Http,
    /// What each Python interpreter answered.
    Python,
    /// The detection result.
    Detect,
    /// The proxy's rewritten wheels.
    Proxy,
    /// The files `vari sync` and `vari export` fetched from locks.
    Locked,
    /// The stores of mirrors published to object storage.
    Mirror,
    /// Copies of the target profiles locks record by hash only.
    Profiles,
}

/// `vari cache info`.
#[derive(Debug, Args)]
pub(crate) struct CacheInfoArgs {
    /// Print `{"cache_dir", "areas": [{"area", "entries", "bytes"}], "total": {"entries",
    /// "bytes"}}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari cache clean`.
#[derive(Debug, Args)]
pub(crate) struct CacheCleanArgs {
    /// The parts to empty [default: all].
    #[arg(value_name = "AREA")]
    pub areas: Vec<CacheAreaArg>,

    /// Print `{"cache_dir", "removed": [{"area", "entries", "bytes"}], "total": {"entries",
    /// "bytes"}}`.
    #[arg(long)]
    pub json: bool,
}

/// `vari cache prune --older-than`'s default: the proxy's own eviction age (30 days).
const DEFAULT_PRUNE_DAYS: u32 =
    (vari_fs::cache_admin::DEFAULT_MAX_UNUSED.as_secs() / (24 * 60 * 60)) as u32;

/// `vari cache prune`.
#[derive(Debug, Args)]
pub(crate) struct CachePruneArgs {
    /// Remove what has not been used for this many days (a rewritten wheel is used when the
    /// proxy serves it; an HTTP response when it is fetched or revalidated).
    #[arg(long, value_name = "DAYS", default_value_t = DEFAULT_PRUNE_DAYS)]
    pub older_than: u32,

    /// Print `{"cache_dir", "older_than_days", "removed": [{"area", "entries", "bytes"}],
    /// "total": {"entries", "bytes"}}`.
    #[arg(long)]
    pub json: bool,
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
