//! What a front-end decides before the proxy starts.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_select::Target;

use crate::class::TargetClass;
use crate::error::ProxyError;

pub use crate::connections::DEFAULT_MAX_CONNECTIONS;

/// How long a presented project page is reused before the upstream sources are asked again
/// (through the client's HTTP cache, which may answer without the network).
pub const DEFAULT_PAGE_TTL: Duration = Duration::from_secs(60);

/// How long a project page (or the project list) that could not be built is answered with the
/// same error without asking the upstream again. Installers retry a 502 at once (uv three
/// times), and each retry would otherwise fetch the upstream again with the client's own
/// retries and back-off: an upstream that is down took about 19 s to fail through uv. Short,
/// so that an upstream that comes back is seen soon.
pub const DEFAULT_FAILURE_TTL: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's head, and how long a keep-alive connection
/// may stay idle between requests (hyper's one timer covers both). Short: each connection holds
/// a file descriptor, and clients that connect and send nothing must not keep them for long.
/// Installers reopen a connection the proxy closed; nginx waits 60 s, Apache 5 s.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything [`start`](crate::start) needs.
#[derive(Debug, Clone)]
pub struct ProxySettings {
    /// The upstream indexes and find-links sources, the HTTP cache, offline mode.
    pub client: ClientSettings,
    /// The machine and Python environment the wheels are chosen for (unless `classes` names
    /// machine classes).
    pub target: Target,
    /// Machine classes to serve side by side instead of `target` (empty: serve `target`).
    /// Each gets its own URLs, `/t/{name}.{fingerprint}/simple/` (for uv: it changes with
    /// the class's facts) and `/t/{name}/simple/` (for pip: it does not), its own pages and
    /// journal; the client, its HTTP cache, the METADATA texts, the rewritten wheels and the
    /// page-build threads are shared. `target` is then not served (a node that names no class
    /// must not get another class's wheels): [`ProxySettings::for_classes`].
    pub classes: Vec<TargetClass>,
    /// Targets served together, as one index, to a resolver that must find one version of
    /// each package that fits all of them (`vari lock`): empty, serve `target` (or
    /// `classes`). Per version and tag set, the file the first target that is shown one there
    /// is shown, with PEP 658 metadata stating every target's dependencies (variant markers
    /// evaluated for each one's variant); a version is listed when any target is shown a file
    /// of it, and [`RunningProxy::union_view`](crate::RunningProxy::union_view) says which
    /// were. Files are the upstream's, never rewritten copies: the index is for resolving.
    /// See [`ProxySettings::for_union`].
    pub union: Vec<Target>,
    /// Which variants may be chosen and in which order.
    pub selection: SelectionOptions,
    /// The build-family catalog: a request for a by-name family's page (`cupy`) is answered
    /// with a selector wheel requiring the build chosen for the target (the crate's
    /// documentation says why). `None`: no family is served so.
    pub families: Option<std::sync::Arc<vari_family::Catalog>>,
    /// Where to listen; `127.0.0.1:0` picks a free port.
    pub bind: SocketAddr,
    /// Whether a non-loopback `bind` is allowed (else [`start`](crate::start) refuses it).
    /// It also turns off the `Host` check: without it only requests naming `localhost`, a
    /// loopback address or the bound address are served (others get 421), so that a web page
    /// cannot reach the proxy through DNS rebinding.
    pub allow_remote: bool,
    /// Where rewritten wheels are kept; `None`: `vari_fs::cache_dir()/proxy` (a temporary
    /// directory, removed at shutdown, when there is no cache directory).
    pub cache_dir: Option<PathBuf>,
    /// How long a presented page is reused in memory.
    pub page_ttl: Duration,
    /// How long a page that could not be built answers with the same error.
    pub failure_ttl: Duration,
    /// The most connections open at once ([`DEFAULT_MAX_CONNECTIONS`]); at most three quarters
    /// of the open-file limit are used. At the cap a new connection closes the one idle the
    /// longest, or waits in the listen queue while all are busy.
    pub max_connections: usize,
    /// How long a request's head may take, and a keep-alive connection may stay idle
    /// ([`DEFAULT_HEADER_TIMEOUT`]).
    pub header_timeout: Duration,
    /// Serve the index's own `.metadata` files through the proxy, keeping each text, instead
    /// of redirecting the installer to them: for a caller that reads the same texts after the
    /// installer (`vari lock`, through [`RunningProxy::metadata_of_any`](crate::RunningProxy::metadata_of_any)),
    /// so that the index sends each once. Off: a redirect costs the proxy nothing.
    pub keep_metadata: bool,
}

impl ProxySettings {
    /// Settings for `client` sources and `target`: default selection options, an ephemeral
    /// port on 127.0.0.1, the default cache directory, [`DEFAULT_PAGE_TTL`],
    /// [`DEFAULT_FAILURE_TTL`], [`DEFAULT_MAX_CONNECTIONS`] and [`DEFAULT_HEADER_TIMEOUT`].
    pub fn new(client: ClientSettings, target: Target) -> Self {
        Self {
            client,
            target,
            classes: Vec::new(),
            union: Vec::new(),
            selection: SelectionOptions::default(),
            families: None,
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            allow_remote: false,
            cache_dir: None,
            page_ttl: DEFAULT_PAGE_TTL,
            failure_ttl: DEFAULT_FAILURE_TTL,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            keep_metadata: false,
        }
    }

    /// Settings serving `classes` side by side (see [`ProxySettings::classes`]), otherwise as
    /// [`ProxySettings::new`]'s. Refuses an empty list and a name given twice.
    pub fn for_classes(
        client: ClientSettings,
        classes: Vec<TargetClass>,
    ) -> Result<Self, ProxyError> {
        let Some(first) = classes.first() else {
            return Err(ProxyError::NoClasses);
        };
        for (at, class) in classes.iter().enumerate() {
            if classes[..at].iter().any(|c| c.name == class.name) {
                return Err(ProxyError::DuplicateClass {
                    name: class.name.to_string(),
                });
            }
        }
        Ok(Self {
            classes: classes.clone(),
            ..Self::new(client, first.target.clone())
        })
    }

    /// Settings serving the union of `targets` as one index (see [`ProxySettings::union`]),
    /// otherwise as [`ProxySettings::new`]'s. Refuses an empty list.
    pub fn for_union(client: ClientSettings, targets: Vec<Target>) -> Result<Self, ProxyError> {
        let Some(first) = targets.first().cloned() else {
            return Err(ProxyError::NoUnionTargets);
        };
        Ok(Self {
            union: targets,
            ..Self::new(client, first)
        })
    }
}
