//! What `vari select` and `vari download` share: index options → client settings (with
//! vari.toml and the pip/uv index variables under them), requirements, the target with the
//! configured profile, selection options with the configured preferences, and the runtime.
//!
//! Which index when none is named: `index-url` from vari.toml, else
//! [`vari_config::default_index`] (the variables pip and uv read, `UV_DEFAULT_INDEX`,
//! `UV_INDEX_URL`, `PIP_INDEX_URL`, else PyPI, as pip and uv do), the same answer `vari config
//! show` gives. Sources named on the command line replace it, as they replace the installer's
//! own in `vari install`.

use vari_client::{CacheMode, ClientSettings, IndexClient};
use vari_select::{select_all, IndexOptions, Outcome, Request, SelectError, Target};

use super::{config, rank, target};
use crate::cli::{IndexArgs, SelectionArgs, TargetArgs};
use crate::error::CliError;

/// Everything a command needs to select from indexes.
pub(crate) struct Session {
    pub(crate) client: IndexClient,
    pub(crate) target: Target,
    pub(crate) options: IndexOptions,
    pub(crate) requests: Vec<Request>,
}

impl Session {
    /// Selects for every request, in their order, on `runtime`: the one the client's later
    /// requests (downloads) run on too, since its pooled connections belong to it.
    pub(crate) fn select_all(
        &self,
        runtime: &tokio::runtime::Runtime,
    ) -> Vec<Result<Outcome, SelectError>> {
        runtime.block_on(select_all(
            &self.client,
            &self.requests,
            &self.target,
            &self.options,
        ))
    }
}

/// Parses the requirements and sets up the client, the target and the options.
pub(crate) fn prepare(
    requirements: &[String],
    index: &IndexArgs,
    target_args: &TargetArgs,
    selection: &SelectionArgs,
    dependencies: bool,
) -> Result<Session, CliError> {
    let requests = parse_requests(requirements)?;
    let config = config::load()?;
    let settings = client_settings(index, &config)?;
    let target = resolve_target(target_args, &config)?;
    session(
        settings,
        target,
        requests,
        &config,
        selection,
        index.pre,
        dependencies,
    )
}

/// The requirements, parsed (PEP 508).
pub(crate) fn parse_requests(requirements: &[String]) -> Result<Vec<Request>, CliError> {
    requirements
        .iter()
        .map(|r| Request::parse(r).map_err(|e| CliError::Other(e.to_string())))
        .collect()
}

/// The target the options describe, with the configured profile when they name no hardware
/// source; the profile's warnings are printed.
pub(crate) fn resolve_target(
    target_args: &TargetArgs,
    config: &vari_config::Config,
) -> Result<Target, CliError> {
    let mut target_settings = target::settings(target_args)?;
    if target_settings.profile.is_none() && target_settings.sysroot.is_none() {
        target_settings.profile = config.profile().map(ToOwned::to_owned);
    }
    let target = Target::resolve(&target_settings).map_err(target::target_error)?;
    for warning in &target.hardware.warnings {
        crate::output::warn(&warning.to_string());
    }
    Ok(target)
}

/// The selection options: the command line's over the configured preferences.
pub(crate) fn selection_options(
    config: &vari_config::Config,
    selection: &SelectionArgs,
) -> vari_core::ordering::SelectionOptions {
    config.selection(rank::selection_options(selection))
}

/// A session from settings already worked out.
pub(crate) fn session(
    settings: ClientSettings,
    target: Target,
    requests: Vec<Request>,
    config: &vari_config::Config,
    selection: &SelectionArgs,
    pre: bool,
    dependencies: bool,
) -> Result<Session, CliError> {
    let client = IndexClient::new(settings).map_err(|e| CliError::Other(e.to_string()))?;
    let options = IndexOptions {
        selection: selection_options(config, selection),
        pre,
        dependencies,
    };
    Ok(Session {
        client,
        target,
        options,
        requests,
    })
}

/// Client settings: the default index (the pip/uv variables, else PyPI) when the command
/// line names no source, then vari.toml, then the command line.
pub(crate) fn client_settings(
    index: &IndexArgs,
    config: &vari_config::Config,
) -> Result<ClientSettings, CliError> {
    let named = !index.index_url.is_empty()
        || !index.extra_index_url.is_empty()
        || !index.find_links.is_empty();
    let indexes = match named {
        true => Vec::new(),
        false => {
            let default = vari_config::default_index(|name| std::env::var(name).ok())
                .map_err(|e| CliError::Other(e.to_string()))?;
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
    config: &vari_config::Config,
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
