//! Settings resolved once per command: the command line's flags, the lasting preferences
//! (`vari.toml`, `pyproject.toml` `[tool.vari]`, `VARI_CONFIG`) and the environment become one
//! value a command reads, so that every command applies them the same way.
//!
//! How the layers combine, for every selecting command (`rank`, `select`, `download`, `proxy`,
//! `install`):
//! - the configuration is loaded once ([`load_config`]); files it skipped are warned about;
//! - the target's profile is the command line's `--profile` (or `VARI_PROFILE`), else
//!   `--sysroot`, else the configured `profile` ([`resolve_target`], the one place);
//! - the selection options are the configured preferences with the command line's lists
//!   replacing them ([`selection_options`]);
//! - the sources are the command line's when it names any, else vari.toml's `index-url`, else
//!   the default index ([`vari_config::default_index`]: `UV_DEFAULT_INDEX`, `UV_INDEX_URL`,
//!   `PIP_INDEX_URL`, else PyPI), with vari.toml's index settings under the command line's
//!   ([`client_settings`]); `vari install` starts from its installer's own sources instead
//!   ([`client_settings_over`]).
//!
//! Nothing here prints to stdout; warnings go to stderr as they are met.

use vari_client::{CacheMode, ClientSettings, IndexClient};
use vari_config::Config;
use vari_core::ordering::SelectionOptions;
use vari_select::{
    ClassSource, IndexOptions, MachineClass, Outcome, Request, ResolvedClass, SelectError, Target,
    TargetError, TargetSettings,
};

use crate::cli::{FamilyFileArgs, IndexArgs, SelectionArgs, TargetArgs};
use crate::error::{warn, CliError};

/// What a selecting command resolved from its flags, the configuration and the environment.
pub(crate) struct Selecting {
    /// The merged configuration.
    pub(crate) config: Config,
    /// The target, with the configured profile applied.
    pub(crate) target: Target,
    /// The typed target settings it was resolved from (the Python version and platform as
    /// given, for an installer that installs for a described target).
    pub(crate) target_settings: TargetSettings,
    /// The selection options: the command line's lists over the configured ones.
    pub(crate) selection: SelectionOptions,
    /// The build-family catalog in effect (its user files read and checked already).
    pub(crate) families: FamilySettings,
}

impl Selecting {
    /// Where a lock's files come from (`sync`, `install -r`, `export --wheelhouse`): the
    /// configured client without indexes (a lock names its files), the wheelhouses, and
    /// `--offline`.
    pub(crate) fn lock_files(
        &self,
        wheelhouses: Vec<std::path::PathBuf>,
        offline: bool,
    ) -> vari_install::sync::FetchSettings {
        vari_install::sync::FetchSettings {
            client: self.config.client_settings(ClientSettings {
                indexes: Vec::new(),
                ..ClientSettings::default()
            }),
            wheelhouses,
            offline,
        }
    }

    /// Loads the configuration and resolves the target and the selection options.
    pub(crate) fn resolve(
        target: &TargetArgs,
        selection: &SelectionArgs,
    ) -> Result<Self, CliError> {
        let config = load_config()?;
        Self::with_config(config, target, selection)
    }

    /// [`Selecting::resolve`] with the configuration already loaded.
    pub(crate) fn with_config(
        config: Config,
        target: &TargetArgs,
        selection: &SelectionArgs,
    ) -> Result<Self, CliError> {
        let target_settings = configured_target_settings(target, Some(&config))?;
        let target = resolve_target(&target_settings)?;
        let families = FamilySettings::resolve(&selection.families, &config)?;
        let selection = config.selection(selection_options(selection));
        Ok(Self {
            config,
            target,
            target_settings,
            selection,
            families,
        })
    }

    /// The options for selecting from indexes.
    pub(crate) fn index_options(&self, pre: bool, dependencies: bool) -> IndexOptions {
        IndexOptions {
            selection: self.selection.clone(),
            pre,
            dependencies,
        }
    }
}

/// What `vari select` and `vari download` resolve: the requirements, the client for the
/// sources, the target and the options.
pub(crate) struct FromIndexes {
    pub(crate) requests: Vec<Request>,
    pub(crate) client: IndexClient,
    pub(crate) selecting: Selecting,
    pub(crate) options: IndexOptions,
    /// Request position → the client of the source its family's chosen build lives on.
    pub(crate) own_sources: std::collections::BTreeMap<usize, std::sync::Arc<IndexClient>>,
}

impl FromIndexes {
    /// Parses the requirements and resolves the sources, the target and the options.
    pub(crate) fn resolve(
        requirements: &[String],
        index: &IndexArgs,
        target: &TargetArgs,
        selection: &SelectionArgs,
        dependencies: bool,
    ) -> Result<Self, CliError> {
        let requests = parse_requests(requirements)?;
        let config = load_config()?;
        let sources = client_settings(index, &config)?;
        let selecting = Selecting::with_config(config, target, selection)?;
        let client = IndexClient::new(sources)?;
        let options = selecting.index_options(index.pre, dependencies);
        Ok(Self {
            requests,
            client,
            selecting,
            options,
            own_sources: std::collections::BTreeMap::new(),
        })
    }

    /// The target.
    pub(crate) fn target(&self) -> &Target {
        &self.selecting.target
    }

    /// Replaces each request on a build family's name (`cupy`, `torch`) with the build the
    /// family chooses for the target (`cupy-cuda12x==14.2.0`, `torch==2.9.0+cu128` from the
    /// cu128 index), and returns what was chosen and why (vari-select's
    /// [`vari_select::choose_families`] holds the rules: where each build's versions come from,
    /// when a family does not apply, the group rule). A request whose chosen build lives on a
    /// source of its own is selected (and downloaded) from that source alone. A family with builds
    /// but none that fits is an error naming every build's reason; so is a group whose requested
    /// members share no line. Requests naming a build (`cupy-cuda12x`) are the user's explicit
    /// choice and are left alone; so is one whose family's source the command line names as an
    /// index (with a note).
    pub(crate) fn through_families(
        &mut self,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<Vec<FamilyStep>, CliError> {
        let names = self.requests.iter().map(|r| r.name().as_str());
        if !self.selecting.families.may_name(names) {
            return Ok(Vec::new());
        }
        let Some(catalog) = self.selecting.families.catalog()? else {
            return Ok(Vec::new());
        };
        let options = vari_family::FamilyOptions {
            selection: self.options.selection.clone(),
            pre: self.options.pre,
            ..vari_family::FamilyOptions::default()
        };
        let found = runtime.block_on(vari_select::choose_families(
            &self.client,
            &catalog,
            &self.requests,
            &self.selecting.target,
            &options,
        ))?;
        for note in &found.notes {
            crate::output::note(note);
        }
        let mut steps = Vec::new();
        for pick in found.picks {
            let request = &mut self.requests[pick.position];
            let original = request.as_str().to_owned();
            match vari_select::build_request(&pick.choice, request) {
                Some(Ok(chosen)) => *request = chosen,
                Some(Err(e)) => return Err(e.into()),
                None => {
                    return Err(CliError::Other(format!(
                        "{original}: {} (a build asked for by name, or --no-families, selects \
                         without the family catalog)",
                        pick.choice.why_nothing()
                    )))
                }
            }
            // The source's client holds the page the family chose from: selecting from it
            // reads nothing again.
            if let Some(client) = pick.client {
                self.own_sources.insert(pick.position, client);
            }
            steps.push(FamilyStep {
                requirement: original,
                choice: pick.choice,
                source: pick.source,
                group: pick.group,
            });
        }
        Ok(steps)
    }

    /// The client request `position` is selected and downloaded with: the chosen build's own
    /// source, else the command's sources.
    pub(crate) fn client_for(&self, position: usize) -> &IndexClient {
        self.own_sources
            .get(&position)
            .map_or(&self.client, |client| client.as_ref())
    }

    /// Selects for every request, in their order, on `runtime`: the one the client's later
    /// requests (downloads) run on too, since its pooled connections belong to it. A request
    /// chosen through a family whose build lives on a source of its own is selected from there.
    pub(crate) fn select_all(
        &self,
        runtime: &tokio::runtime::Runtime,
    ) -> Vec<Result<Outcome, SelectError>> {
        let target = &self.selecting.target;
        runtime.block_on(futures_util::future::join_all(
            self.requests.iter().enumerate().map(|(i, request)| {
                vari_select::select(self.client_for(i), request, target, &self.options)
            }),
        ))
    }
}

/// A request chosen through a build family: the requirement as given and the choice.
pub(crate) struct FamilyStep {
    /// The requirement as the user wrote it (`cupy`).
    pub(crate) requirement: String,
    /// The family's choice, with every build's reason.
    pub(crate) choice: vari_family::FamilyChoice,
    /// The chosen build's own source, when it has one.
    pub(crate) source: Option<vari_family::BuildSource>,
    /// The group that moved it to a line its requested members share, with those members.
    pub(crate) group: Option<(String, Vec<String>)>,
}

/// The merged configuration of this process's environment and current directory; files that
/// were skipped are reported as warnings.
pub(crate) fn load_config() -> Result<Config, CliError> {
    let config = Config::from_process_env()?;
    for skipped in &config.warnings {
        warn(&format!("{skipped} (skipped)"));
    }
    Ok(config)
}

/// The target settings the options describe, with the process's environment, and with the
/// configured profile when `config` is given and the options name no hardware source. The
/// Python version and platform are parsed here, once.
pub(crate) fn configured_target_settings(
    args: &TargetArgs,
    config: Option<&Config>,
) -> Result<TargetSettings, CliError> {
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
    if settings.profile.is_none() && settings.sysroot.is_none() {
        settings.profile = config.and_then(Config::profile).map(ToOwned::to_owned);
    }
    Ok(settings)
}

/// Resolves the target `settings` describe; `-v` says which Python and why, and the hardware's
/// warnings are printed.
pub(crate) fn resolve_target(settings: &TargetSettings) -> Result<Target, CliError> {
    let target = Target::resolve(settings).map_err(target_error)?;
    report_target(&target);
    Ok(target)
}

/// Says which Python a target has and why (`-v`), and prints its hardware's warnings.
fn report_target(target: &Target) {
    tracing::debug!(
        "target Python: {} ({})",
        target.python.version.full(),
        target.python.origin
    );
    // The target's notes are logged where they are made (vari-select's `Target::resolve`).
    for warning in &target.hardware.warnings {
        warn(&warning.to_string());
    }
}

/// A target of a lock (`vari lock`, `vari mirror`): the hardware of `source` (none: not
/// described, and not the configured profile either, so that such a target keeps every variant
/// whatever this machine is configured with), with its Python version and platform; read once
/// for its hardware and for the bytes the lock hashes.
pub(crate) fn lock_target(
    source: Option<&ClassSource>,
    python_version: Option<&str>,
    python_platform: Option<&str>,
) -> Result<ResolvedClass, CliError> {
    let args = TargetArgs {
        profile: None,
        sysroot: None,
        python: None,
        python_version: python_version.map(str::to_owned),
        python_platform: python_platform.map(str::to_owned),
    };
    let base = configured_target_settings(&args, None)?;
    let resolved = vari_select::resolve_source(source, None, None, &base).map_err(target_error)?;
    report_target(&resolved.target);
    Ok(resolved)
}

/// The target of a machine class: the command line's Python options (`args`) with the class's
/// source instead of any other hardware (a profile or facts file, or a snapshot directory).
pub(crate) fn class_target(class: &MachineClass, args: &TargetArgs) -> Result<Target, CliError> {
    let base = configured_target_settings(args, None)?;
    let resolved = class.resolve(&base).map_err(target_error)?;
    report_target(&resolved.target);
    Ok(resolved.target)
}

/// A target error as the CLI words it: with the flag that would help.
pub(crate) fn target_error(error: TargetError) -> CliError {
    match error {
        TargetError::Input(e) => e.into(),
        TargetError::ProfileIsDirectory(path) => CliError::invalid(
            &path,
            None,
            "is a directory, not a profile; to detect from a snapshot directory, use --sysroot",
        ),
        TargetError::Python(e) => CliError::Other(format!("{e} (see --python)")),
        other => other.into(),
    }
}

/// The build-family catalog a command uses (issue 35): the built-in one with the user's files
/// over it, or none. The files are the command line's `--families` (or `VARI_FAMILIES`), else
/// vari.toml's `families`; `--no-families` (`VARI_NO_FAMILIES`) or `no-families = true` turns
/// the catalog off. The user's files are read and checked when the settings are resolved, so
/// that a bad file stops every selecting command with one line naming it; the built-in catalog
/// is read on first use only, and a command that never asks costs nothing.
pub(crate) struct FamilySettings {
    /// Whether the catalog applies at all.
    pub(crate) enabled: bool,
    /// The user's files, weakest first, as read.
    pub(crate) user: Vec<(std::path::PathBuf, vari_family::Catalog)>,
}

impl FamilySettings {
    /// Resolves the catalog settings and reads the user's files.
    pub(crate) fn resolve(args: &FamilyFileArgs, config: &Config) -> Result<Self, CliError> {
        let enabled = !(args.no_families || config.no_families());
        if !enabled {
            return Ok(Self {
                enabled,
                user: Vec::new(),
            });
        }
        let files = match args.files.is_empty() {
            true => config.families().to_vec(),
            false => args.files.clone(),
        };
        let user = files
            .into_iter()
            .map(|path| read_catalog_file(&path).map(|catalog| (path, catalog)))
            .collect::<Result<_, _>>()?;
        let settings = Self { enabled, user };
        // Checks how the files combine with the built-in catalog (a family claiming another's
        // distribution, a group naming no family) now rather than at first use.
        if !settings.user.is_empty() {
            settings.catalog()?;
        }
        Ok(settings)
    }

    /// Whether the catalog in effect may name one of `names` as a family or a build's
    /// distribution: when it names none, a command has nothing to choose through it and skips
    /// reading the built-in catalog ([`vari_family::builtin_may_name`]).
    pub(crate) fn may_name<'n>(&self, mut names: impl Iterator<Item = &'n str>) -> bool {
        self.enabled
            && names.any(|name| {
                vari_family::builtin_may_name(name)
                    || self.user.iter().any(|(_, catalog)| {
                        catalog.family(name).is_some()
                            || catalog.family_of_distribution(name).is_some()
                    })
            })
    }

    /// The catalog in effect: `None` when turned off.
    pub(crate) fn catalog(&self) -> Result<Option<vari_family::Catalog>, CliError> {
        if !self.enabled {
            return Ok(None);
        }
        let layers = self.user.iter().map(|(_, c)| c.clone()).collect();
        vari_family::layered(vari_family::builtin().clone(), layers)
            .map(Some)
            .map_err(|d| {
                // The problem is in a user's file: the last one that names the family or group.
                let path = self
                    .user
                    .iter()
                    .rev()
                    .find(|(_, c)| {
                        c.families
                            .iter()
                            .any(|f| d.path.contains(&format!("[{}]", f.name)))
                            || c.groups
                                .iter()
                                .any(|g| d.path.contains(&format!("[{}]", g.name)))
                    })
                    .or(self.user.last())
                    .map(|(p, _)| p.clone())
                    .unwrap_or_default();
                CliError::invalid(path, Some(d.path), d.message)
            })
    }
}

/// Reads and checks one catalog file (bounded; hostile input like every other file).
pub(crate) fn read_catalog_file(path: &std::path::Path) -> Result<vari_family::Catalog, CliError> {
    let bytes = vari_fs::input::read_input_limited(path, vari_family::MAX_CATALOG_BYTES as u64)
        .map_err(|e| CliError::invalid(e.path(), None, e.problem()))?;
    let text =
        String::from_utf8(bytes).map_err(|_| CliError::invalid(path, None, "is not UTF-8 text"))?;
    let origin = vari_family::Origin::File(path.display().to_string());
    vari_family::read_catalog(&text, origin)
        .map_err(|d| CliError::invalid(path, Some(d.path), d.message))
}

/// The command line's selection options (before the configured ones are put under them).
pub(crate) fn selection_options(args: &SelectionArgs) -> SelectionOptions {
    SelectionOptions {
        prefer: args.prefer.clone(),
        forbid: args.forbid.clone(),
        variant: args.variant.clone(),
        no_variants: args.no_variants,
        enable_optional: args.enable_optional.iter().cloned().collect(),
    }
}

/// The requirements, parsed (PEP 508).
pub(crate) fn parse_requests(requirements: &[String]) -> Result<Vec<Request>, CliError> {
    requirements
        .iter()
        .map(|r| Request::parse(r).map_err(CliError::from))
        .collect()
}

/// Whether the command line names any source.
pub(crate) fn names_sources(index: &IndexArgs) -> bool {
    !index.index_url.is_empty() || !index.extra_index_url.is_empty() || !index.find_links.is_empty()
}

/// Client settings: the default index (the pip/uv variables, else PyPI) when the command
/// line names no source, then vari.toml, then the command line.
pub(crate) fn client_settings(
    index: &IndexArgs,
    config: &Config,
) -> Result<ClientSettings, CliError> {
    let indexes = match names_sources(index) {
        true => Vec::new(),
        false => {
            let default = vari_config::default_index(|name| std::env::var(name).ok())?;
            vec![default.url]
        }
    };
    let base = ClientSettings {
        indexes,
        ..ClientSettings::default()
    };
    client_settings_over(base, index, config)
}

/// `base` with vari.toml's index settings over it, then the command line's.
pub(crate) fn client_settings_over(
    base: ClientSettings,
    index: &IndexArgs,
    config: &Config,
) -> Result<ClientSettings, CliError> {
    let mut settings = config.client_settings(base);
    if !index.index_url.is_empty() {
        settings.indexes = index.index_url.clone();
    }
    settings
        .indexes
        .extend(index.extra_index_url.iter().cloned());
    if !index.find_links.is_empty() {
        settings.find_links = index.find_links.clone();
    }
    if let Some(strategy) = index.index_strategy {
        settings.strategy = strategy;
    }
    if index.offline {
        settings.cache_mode = CacheMode::Offline;
    } else if index.refresh {
        settings.cache_mode = CacheMode::Refresh;
    }
    if settings.indexes.is_empty() && settings.find_links.is_empty() {
        return Err(CliError::Other(
            "no package index to select from: give --index-url URL or --find-links PATH".to_owned(),
        ));
    }
    Ok(settings)
}

/// A runtime for the index client: one thread is enough to wait on the network.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Other(format!("cannot start the network runtime: {e}")))
}

/// A runtime for a server: the proxy answers on worker threads while the calling thread waits
/// (for a signal, or for the installer). Its threads are bounded ([`vari_proxy::server_runtime`]).
pub(crate) fn server_runtime() -> Result<tokio::runtime::Runtime, CliError> {
    vari_proxy::server_runtime()
        .map_err(|e| CliError::Other(format!("cannot start the network runtime: {e}")))
}

/// The file ceilings, applied once for every command: `max-input-bytes` and
/// `max-inflate-ratio` from vari.toml, then `VARI_MAX_INFLATE_RATIO` over the ratio (vari-wheel
/// reads no environment itself; empty counts as unset; `VARI_MAX_INPUT_BYTES` is read by
/// vari-fs, the larger of it and the file's value counting). A configuration that cannot be
/// read sets nothing here: the commands that use it report why.
pub(crate) fn apply_file_limits() -> Result<(), CliError> {
    if let Ok(config) = Config::from_process_env() {
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

/// The environment a command is about to change: refused, before anything is read or run,
/// when `vari_install`'s rule does not allow changing it (an interpreter only found on PATH
/// that is not a virtual environment, without `--system`). The command names it
/// ([`name_environment`]) on its first line once it is about to change it, so that a command
/// that fails before (a lock that does not fit, a tampered file) still prints one error line.
pub(crate) fn environment_to_change(
    target: &Target,
    system: bool,
) -> Result<Option<vari_install::ChangedEnvironment>, CliError> {
    vari_install::environment_to_change(&target.python, system).map_err(CliError::from)
}

/// `note: Using Python 3.12.3 environment at /work/.venv`.
pub(crate) fn name_environment(environment: Option<&vari_install::ChangedEnvironment>) {
    if let Some(environment) = environment {
        crate::error::note(&environment.to_string());
    }
}
