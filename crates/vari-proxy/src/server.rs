//! Starting and stopping: the loopback check, the cache directory (and the eviction of its
//! unused rewritten wheels), the listener (capped connections, back-off on failed accepts),
//! one task per connection (HTTP/1.1 with keep-alive, via hyper, behind the `Host` check), and
//! a graceful shutdown.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};
use vari_client::{IndexClient, IndexFile};

use crate::builders::Builders;
use crate::class::{ClassName, ClassUrls};
use crate::connections::{connection_cap, Connections, RequestGuard, Tracked};
use crate::context::{Context, Serving, Shared};
use crate::error::ProxyError;
use crate::host::HostCheck;
use crate::journal::{HiddenVersion, Served};
use crate::metadata_texts::MetadataTexts;
use crate::response::{text, without_body, Body};
use crate::rewrite::Rewrites;
use crate::routes;
use crate::runtime::worker_threads;
use crate::settings::ProxySettings;
use crate::signals::StopSignals;
use crate::state::State;
use crate::stored_pages::{PageBuilds, PageStore};
use crate::targets::Targets;
use crate::throttle::{Backoff, Throttled, LOG_INTERVAL};
use crate::union_view::UnionVersion;

/// How long a shutdown waits for requests under way.
const GRACE: Duration = Duration::from_secs(5);

/// The longest `Host` value quoted in the log (a hostile client may send kilobytes).
const QUOTED_HOST: usize = 80;

/// Starts the proxy on the current tokio runtime and returns once it listens.
///
/// Refuses a non-loopback address unless [`ProxySettings::allow_remote`] is set; without it,
/// only requests whose `Host` names `localhost`, a loopback address or the bound address are
/// served (others get `421 Misdirected Request`), so that a web page cannot reach the proxy
/// through DNS rebinding. Pages are built on first request, so an unreachable upstream shows
/// as 502 answers (and warnings in the log), not as an error here.
///
/// Rewritten wheels in the cache directory that no proxy has served for 30 days
/// ([`vari_fs::cache_admin::DEFAULT_MAX_UNUSED`]) are removed in the background: they are as
/// large as their upstream wheels, and would otherwise stay for ever.
///
/// The proxy answers on the runtime's worker threads: use a multi-thread runtime, or keep the
/// thread of a current-thread runtime in `block_on` while clients are served (an installer run
/// from that thread with a blocking call would wait for a proxy that cannot answer).
///
/// ```no_run
/// # async fn run(target: vari_select::Target) -> Result<(), vari_proxy::ProxyError> {
/// use vari_client::{ClientSettings, IndexUrl};
/// // Before the URL is announced: a signal from then on stops the proxy gracefully.
/// let signals = vari_proxy::StopSignals::listen()?;
/// let client = ClientSettings {
///     indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
///     ..ClientSettings::default()
/// };
/// let proxy = vari_proxy::start(vari_proxy::ProxySettings::new(client, target)).await?;
/// println!("pip install --index-url {} torch", proxy.index_url());
/// proxy.run_until(signals).await
/// # }
/// ```
pub async fn start(settings: ProxySettings) -> Result<RunningProxy, ProxyError> {
    let bind = settings.bind;
    start_first_free(settings, |_| vec![bind]).await
}

/// [`start`], listening on the first address of `candidates` that can be bound (a busy one
/// is logged at debug level and the next tried). `candidates` is given the fingerprint the
/// proxy's URLs will carry ([`fingerprint_of`](crate::fingerprint_of)), so that a front-end
/// can derive stable ports from it, computed once for both; fails as [`start`] does for the
/// last address when none can be bound, or with none given.
pub async fn start_first_free(
    settings: ProxySettings,
    candidates: impl FnOnce(&str) -> Vec<SocketAddr>,
) -> Result<RunningProxy, ProxyError> {
    // Machine classes have a fingerprint each, computed as their states are made.
    let fingerprint = crate::fingerprint_of(&settings);
    let addresses = candidates(&fingerprint);
    let fingerprint = settings.classes.is_empty().then_some(fingerprint);
    let mut bound = Err(ProxyError::Bind {
        addr: settings.bind,
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address to listen on"),
    });
    for addr in addresses {
        if !addr.ip().is_loopback() && !settings.allow_remote {
            return Err(ProxyError::RemoteBind { addr });
        }
        bound = TcpListener::bind(addr)
            .await
            .map_err(|source| ProxyError::Bind { addr, source });
        match &bound {
            Ok(_) => break,
            Err(e) => tracing::debug!("{e}; trying the next address"),
        }
    }
    let listener = bound?;
    let addr = listener.local_addr().map_err(|source| ProxyError::Bind {
        addr: settings.bind,
        source,
    })?;
    let (cache_dir, temporary) = match settings
        .cache_dir
        .clone()
        .or_else(|| vari_fs::cache_dir().map(|dir| dir.join(crate::rewrite::AREA_DIR)))
    {
        Some(dir) => (dir, None),
        None => {
            let temporary = tempfile::Builder::new()
                .prefix("vari-proxy-")
                .tempdir()
                .map_err(|source| ProxyError::CacheDir {
                    path: std::env::temp_dir(),
                    source,
                })?;
            (temporary.path().to_path_buf(), Some(temporary))
        }
    };
    let rewrites = Rewrites::new(&cache_dir).map_err(|source| ProxyError::CacheDir {
        path: cache_dir.clone(),
        source,
    })?;
    if temporary.is_none() {
        evict_unused(cache_dir.clone());
    }
    let client = IndexClient::new(settings.client.clone())?;
    let builders = Builders::start(&tokio::runtime::Handle::current(), worker_threads())
        .map_err(ProxyError::Threads)?;
    let shared = Shared::new(
        client,
        rewrites,
        builders,
        MetadataTexts::new(&cache_dir),
        PageStore::new(&cache_dir),
    );
    let (hosts, connections, header_timeout) = (
        HostCheck::new(addr, settings.allow_remote),
        Connections::new(connection_cap(settings.max_connections)),
        settings.header_timeout,
    );
    // The settings' targets move into the states (a union's can be large: their tag lists).
    let targets = Arc::new(targets(&shared, settings, fingerprint)?);
    let server = Server {
        targets: targets.clone(),
        hosts,
        refused_hosts: Throttled::new(LOG_INTERVAL),
        connections,
        header_timeout,
    };
    tracing::debug!("at most {} connections at once", server.connections.cap());
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(serve(listener, Arc::new(server), stopped));
    let proxy = RunningProxy {
        addr,
        targets,
        builders: shared.builders.clone(),
        stop,
        task,
        cache_dir,
        _temporary: temporary,
    };
    let serving = match proxy.classes().as_slice() {
        [] => proxy.index_url().to_string(),
        classes => classes
            .iter()
            .map(|class| format!("{} at {}", class.name, class.index_url))
            .collect::<Vec<_>>()
            .join(", "),
    };
    tracing::info!(
        "serving a variant-aware index: {serving} (rewritten wheels in {})",
        proxy.cache_dir.display()
    );
    Ok(proxy)
}

/// Removes the rewritten wheels under `dir` unused for
/// [`vari_fs::cache_admin::DEFAULT_MAX_UNUSED`], in a blocking task of its own: starting never
/// waits for it. A copy removed while a request reads it is safe (see
/// [`vari_fs::cache_admin`]): a request under way keeps its open file, a later one rebuilds it.
fn evict_unused(dir: PathBuf) {
    use vari_fs::cache_admin::DEFAULT_MAX_UNUSED;
    tokio::task::spawn_blocking(move || {
        let now = SystemTime::now();
        let removed = crate::cache_layout::prune_proxy_dir(&dir, DEFAULT_MAX_UNUSED, now);
        for entry in &removed.entries {
            let days = now
                .duration_since(entry.last_used())
                .map_or(0, |unused| unused.as_secs() / 86_400);
            tracing::debug!(
                "removed {} ({} bytes), unused for {days} days",
                entry.path().display(),
                entry.bytes()
            );
        }
        for failure in &removed.failures {
            tracing::warn!("cannot remove an unused rewritten wheel: {failure}");
        }
        let trimmed = crate::stored_pages::trim(&dir, crate::stored_pages::MAX_BYTES);
        if trimmed > 0 {
            tracing::debug!("removed the {trimmed} oldest kept pages (over the size cap)");
        }
    });
}

/// The states of the target or the machine classes `settings` name, sharing `shared`;
/// `fingerprint`: the single target's or the union's, when already computed.
fn targets(
    shared: &Shared,
    settings: ProxySettings,
    fingerprint: Option<String>,
) -> Result<Targets, ProxyError> {
    if settings.classes.is_empty() {
        let serving = Serving {
            target: settings.target,
            selection: settings.selection,
            families: settings.families,
            union: settings.union,
            class: None,
            page_ttl: settings.page_ttl,
            failure_ttl: settings.failure_ttl,
            fingerprint,
            keep_metadata: settings.keep_metadata,
        };
        let context = Context::new(shared, serving);
        return Ok(Targets::One(Arc::new(State::new(context, Arc::default()))));
    }
    // A union is served as one index, never per class.
    let serving = |target: &vari_select::Target, class: Option<ClassName>| Serving {
        target: target.clone(),
        selection: settings.selection.clone(),
        families: settings.families.clone(),
        union: Vec::new(),
        class,
        page_ttl: settings.page_ttl,
        failure_ttl: settings.failure_ttl,
        fingerprint: None,
        keep_metadata: settings.keep_metadata,
    };
    let root = Arc::default();
    let mut states: Vec<Arc<State>> = Vec::with_capacity(settings.classes.len());
    for class in &settings.classes {
        if states.iter().any(|s| s.class.as_ref() == Some(&class.name)) {
            return Err(ProxyError::DuplicateClass {
                name: class.name.to_string(),
            });
        }
        let context = Context::new(shared, serving(&class.target, Some(class.name.clone())));
        states.push(Arc::new(State::new(context, Arc::clone(&root))));
    }
    Ok(Targets::Classes(states))
}

/// A running proxy. Dropping it stops the server too (without waiting); [`Self::shutdown`]
/// waits for requests under way.
pub struct RunningProxy {
    addr: SocketAddr,
    targets: Arc<Targets>,
    /// The page-build threads every target shares.
    builders: Arc<Builders>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    cache_dir: PathBuf,
    /// The cache directory when there is no user cache: removed with the proxy.
    _temporary: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for RunningProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningProxy")
            .field("addr", &self.addr)
            .field("cache_dir", &self.cache_dir)
            .finish_non_exhaustive()
    }
}

impl RunningProxy {
    /// The index URL to give installers: `http://127.0.0.1:PORT/t/{fingerprint}/simple/`
    /// (the loopback address when listening on every address), where the fingerprint is a
    /// short hash of what decides the choices (the hardware profile, the marker environment,
    /// the wheel tags, the selection options). It changes with the target, so an installer
    /// that caches wheels by index URL and file name (uv) never reuses another target's
    /// variant; a URL of another fingerprint gets 404.
    ///
    /// A proxy serving machine classes has no index of its own: its root URL, which lists the
    /// classes ([`Self::classes`] gives each one's URLs).
    pub fn index_url(&self) -> url::Url {
        match &*self.targets {
            Targets::One(state) => self.url(&format!("{}/simple/", state.prefix())),
            Targets::Classes(_) => self.url("/"),
        }
    }

    /// The machine classes served, in the order given, with their URLs: empty for a single
    /// target.
    pub fn classes(&self) -> Vec<ClassUrls> {
        let Targets::Classes(states) = &*self.targets else {
            return Vec::new();
        };
        states
            .iter()
            .filter_map(|state| {
                let name = state.class.as_ref()?;
                Some(ClassUrls {
                    name: name.to_string(),
                    fingerprint: state.fingerprint.clone(),
                    index_url: self.url(&format!("{}/simple/", state.prefix())).to_string(),
                    alias_url: self.url(&format!("/t/{name}/simple/")).to_string(),
                    source: state.target.hardware.source.to_string(),
                })
            })
            .collect()
    }

    /// `http://127.0.0.1:PORT/simple/`: the same pages under a URL that does not change with
    /// the target (for a `pip.conf` written once). Safe for pip, which checks each download
    /// against the listed hash, and file links always carry the target's prefix; not for uv's
    /// cache, which a target change on the same port would leave holding another variant.
    /// A proxy serving machine classes answers 404 there: each class has its own alias
    /// ([`ClassUrls::alias_url`]).
    pub fn alias_url(&self) -> url::Url {
        self.url("/simple/")
    }

    /// The target's fingerprint (12 hex digits), as in [`Self::index_url`]; for machine
    /// classes, the first class's ([`Self::classes`] gives each one's).
    pub fn fingerprint(&self) -> &str {
        &self.targets.states()[0].fingerprint
    }

    fn url(&self, path: &str) -> url::Url {
        let ip = match self.addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        let text = format!("http://{}{path}", SocketAddr::new(ip, self.addr.port()));
        url::Url::parse(&text).unwrap_or_else(|_| unreachable!("{text} is a valid URL"))
    }

    /// For a proxy serving a union of targets ([`ProxySettings::union`]): what each target is
    /// shown of each version of `project` (the page is built when no request has built it
    /// yet). Empty for a project without variants (every target sees the same files) and
    /// for a proxy serving one target.
    pub async fn union_view(&self, project: &str) -> Result<Vec<UnionVersion>, ProxyError> {
        let failed = |message: String| ProxyError::Union {
            project: project.to_owned(),
            message,
        };
        let name = vari_client::ProjectName::new(project).map_err(|e| failed(e.to_string()))?;
        let state = &self.targets.states()[0];
        if state.union.is_empty() {
            return Ok(Vec::new());
        }
        let page = state
            .page(&name, crate::pages::Want::Entries)
            .await
            .map_err(|e| failed(e.one_line()))?;
        Ok(page.union.clone())
    }

    /// The METADATA text of one of `files` (wheels of one release, any of which will do for
    /// the caller), as this proxy serves it for PEP 658: the first text it keeps already (an
    /// installer asked for that wheel's, or a proxy before it on the same cache directory),
    /// else with `read` the first file's, read now (the index's `.metadata`, else range reads
    /// of the wheel) and kept; `None` without `read` when none is kept. A caller after the
    /// installer so reads no byte of a wheel the installer had the proxy read.
    pub async fn metadata_of_any(
        &self,
        files: &[&IndexFile],
        read: bool,
    ) -> Result<Option<Arc<str>>, vari_client::ClientError> {
        let state = &self.targets.states()[0];
        for file in files {
            if let Some(text) = state.stored_metadata(file).await {
                return Ok(Some(text.text));
            }
        }
        match files.first() {
            Some(first) if read => Ok(Some(state.core_metadata(first).await?)),
            _ => Ok(None),
        }
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where rewritten wheels are kept.
    pub fn cache_dir(&self) -> &std::path::Path {
        &self.cache_dir
    }

    /// Every variant choice presented so far (and the non-variant wheels shown in place of
    /// unusable variants), and every file downloaded through the proxy, in the order first
    /// seen.
    ///
    /// With machine classes, each class's entries in turn, in the order the classes were given.
    pub fn journal(&self) -> Vec<Served> {
        self.each(|state| state.journal.served())
    }

    /// How many project pages were built from the upstream so far, and how many were taken
    /// from the pages kept on disk by an earlier run (the upstream page unchanged), every class
    /// together.
    pub fn page_builds(&self) -> PageBuilds {
        self.targets.states()[0].page_counts.snapshot()
    }

    /// Every target's entries of one kind, in order.
    fn each<T>(&self, entries: impl Fn(&State) -> Vec<T>) -> Vec<T> {
        self.targets
            .states()
            .iter()
            .flat_map(|state| entries(state))
            .collect()
    }

    /// The versions of which no wheel for the target was shown, with why (what hardware their
    /// variants need), in the order first seen.
    pub fn hidden_versions(&self) -> Vec<HiddenVersion> {
        self.each(|state| state.journal.hidden_versions())
    }

    /// The upstream failures that answered requests with an error status (a project the
    /// upstream does not have is not one), each once, in the order first seen.
    pub fn upstream_failures(&self) -> Vec<crate::UpstreamFailure> {
        self.each(|state| state.journal.upstream_failures())
    }

    /// Stops listening, lets requests under way finish (up to a few seconds), and returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        // Page builds nobody waits for any more: their threads end.
        self.builders.close();
        tracing::debug!("the proxy at {} stopped", self.addr);
    }

    /// Serves until one of `signals` comes (SIGINT or SIGTERM; Ctrl-C on Windows), then shuts
    /// down gracefully.
    pub async fn run_until(self, mut signals: StopSignals) -> Result<(), ProxyError> {
        let signal = signals.next().await;
        tracing::info!("{signal}: stopping the proxy at {}", self.addr);
        self.shutdown().await;
        Ok(())
    }
}

/// What every connection shares.
struct Server {
    targets: Arc<Targets>,
    hosts: HostCheck,
    /// Refused `Host`s, logged once per interval.
    refused_hosts: Throttled,
    connections: Arc<Connections>,
    header_timeout: Duration,
}

async fn serve(listener: TcpListener, server: Arc<Server>, mut stop: watch::Receiver<bool>) {
    let mut tasks = JoinSet::new();
    let mut backoff = Backoff::new();
    let failed_accepts = Throttled::new(LOG_INTERVAL);
    'serving: loop {
        while tasks.try_join_next().is_some() {}
        // At the cap, the connection idle the longest is closed first.
        let room = tokio::select! {
            room = server.connections.room() => room,
            // A shutdown, or the proxy dropped.
            _ = stop.changed() => break,
        };
        let stream = loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        backoff.succeeded();
                        break stream;
                    }
                    Err(e) => {
                        // Out of file descriptors, nearly always: free one, wait, and say
                        // so once per interval (it fails again at once until then).
                        let closing = server.connections.close_oldest_idle();
                        if let Some(failures) = failed_accepts.record(Instant::now()) {
                            tracing::warn!(
                                "cannot accept connections: {e} ({failures} failed accepts \
                                 since the last report; {}; retrying after up to {} ms)",
                                match closing {
                                    true => "closing the connection idle the longest",
                                    false => "every connection is busy",
                                },
                                Backoff::MAX.as_millis()
                            );
                        }
                        tokio::select! {
                            _ = tokio::time::sleep(backoff.failed()) => {}
                            _ = stop.changed() => break 'serving,
                        }
                    }
                },
                _ = stop.changed() => break 'serving,
            }
        };
        let (tracked, closing) = server.connections.register(room);
        tasks.spawn(connection(
            stream,
            server.clone(),
            tracked,
            closing,
            stop.clone(),
        ));
    }
    drop(listener);
    let drained =
        tokio::time::timeout(GRACE, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::debug!("closing {} connections still busy", tasks.len());
        tasks.abort_all();
    }
}

async fn connection(
    stream: TcpStream,
    server: Arc<Server>,
    tracked: Tracked,
    mut closing: oneshot::Receiver<()>,
    mut stop: watch::Receiver<bool>,
) {
    // Pages are small: Nagle's algorithm would hold their last segment for an ACK.
    let _ = stream.set_nodelay(true);
    let tracked = Arc::new(tracked);
    let header_timeout = server.header_timeout;
    let service = {
        let tracked = tracked.clone();
        service_fn(move |request| {
            let (server, under_way) = (server.clone(), tracked.request());
            async move {
                let response = answer(&server, request).await;
                Ok::<_, Infallible>(response.map(|body| held_until_sent(body, under_way)))
            }
        })
    };
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("connection closed: {e}");
            }
        }
        _ = stop.changed() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
        Ok(()) = &mut closing => {
            // Room for a new connection. Idle: nothing to finish, close it now (even one
            // that sent half a request head, which a graceful close would wait for).
            if !tracked.idle() {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
            }
        }
    }
}

/// The `Host` check, then the routes; a HEAD request gets the GET answer without its body.
async fn answer(server: &Server, request: Request<Incoming>) -> Response<Body> {
    let head = request.method() == http::Method::HEAD;
    let response = match server.hosts.check(request.uri(), request.headers()) {
        Ok(()) => routes::handle(&server.targets, request).await,
        Err(host) => misdirected(server, &host),
    };
    match head {
        true => without_body(response),
        false => response,
    }
}

/// `421 Misdirected Request` for a request naming another host (a web page's through DNS
/// rebinding, most likely), logged once per interval.
fn misdirected(server: &Server, host: &str) -> Response<Body> {
    let served = server.hosts.served();
    if let Some(refused) = server.refused_hosts.record(Instant::now()) {
        let quoted: String = host.chars().take(QUOTED_HOST).collect();
        tracing::warn!(
            "refused {refused} request(s) naming another host since the last report (the \
             latest: Host {quoted:?}): this proxy serves {served} only, so that a web page \
             cannot reach it through DNS rebinding (--allow-remote serves any host)"
        );
    }
    let mut response = text(
        StatusCode::MISDIRECTED_REQUEST,
        &format!("this proxy serves requests for {served} only"),
    );
    response.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    response
}

/// `body`, holding `under_way` until hyper has sent it (or dropped it): the connection counts
/// as busy, not idle, while a response is being sent.
fn held_until_sent(body: Body, under_way: RequestGuard) -> Body {
    body.map_frame(move |frame| {
        let _ = &under_way;
        frame
    })
    .boxed_unsync()
}
