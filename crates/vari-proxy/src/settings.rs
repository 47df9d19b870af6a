//! What a front-end decides before the proxy starts.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_select::Target;

/// How long a presented project page is reused before the upstream sources are asked again
/// (through the client's HTTP cache, which may answer without the network).
pub const DEFAULT_PAGE_TTL: Duration = Duration::from_secs(60);

/// How long a project page (or the project list) that could not be built is answered with the
/// same error without asking the upstream again. Installers retry a 502 at once (uv three
/// times), and each retry would otherwise fetch the upstream again with the client's own
/// retries and back-off: an upstream that is down took about 19 s to fail through uv. Short,
/// so that an upstream that comes back is seen soon.
pub const DEFAULT_FAILURE_TTL: Duration = Duration::from_secs(10);

/// Everything [`start`](crate::start) needs.
#[derive(Debug, Clone)]
pub struct ProxySettings {
    /// The upstream indexes and find-links sources, the HTTP cache, offline mode.
    pub client: ClientSettings,
    /// The machine and Python environment the wheels are chosen for.
    pub target: Target,
    /// Which variants may be chosen and in which order.
    pub selection: SelectionOptions,
    /// Where to listen; `127.0.0.1:0` picks a free port.
    pub bind: SocketAddr,
    /// Whether a non-loopback `bind` is allowed (else [`start`](crate::start) refuses it).
    pub allow_remote: bool,
    /// Where rewritten wheels are kept; `None`: `vari_fs::cache_dir()/proxy` (a temporary
    /// directory, removed at shutdown, when there is no cache directory).
    pub cache_dir: Option<PathBuf>,
    /// How long a presented page is reused in memory.
    pub page_ttl: Duration,
    /// How long a page that could not be built answers with the same error.
    pub failure_ttl: Duration,
}

impl ProxySettings {
    /// Settings for `client` sources and `target`: default selection options, an ephemeral
    /// port on 127.0.0.1, the default cache directory, [`DEFAULT_PAGE_TTL`] and
    /// [`DEFAULT_FAILURE_TTL`].
    pub fn new(client: ClientSettings, target: Target) -> Self {
        Self {
            client,
            target,
            selection: SelectionOptions::default(),
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allow_remote: false,
            cache_dir: None,
            page_ttl: DEFAULT_PAGE_TTL,
            failure_ttl: DEFAULT_FAILURE_TTL,
        }
    }
}
