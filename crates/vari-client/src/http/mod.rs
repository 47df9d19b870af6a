//! HTTP for the client: one `reqwest` client with rustls, credentials per realm, time limits,
//! retries with exponential backoff, a bound on parallel requests, the on-disk cache for pages
//! and metadata, and range requests (remembering hosts that ignore them).
//!
//! `file:` URLs are read from disk here too, so the layers above treat local indexes,
//! find-links pages and wheels like remote ones.

mod body;
mod cache;
mod cache_layout;
mod failure;
mod stream;
mod tls;

use std::collections::HashSet;
use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use http::header::{
    ACCEPT, ACCEPT_ENCODING, ACCEPT_RANGES, CACHE_CONTROL, CONTENT_RANGE, CONTENT_TYPE, ETAG,
    IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, RANGE,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use http_cache_semantics::{AfterResponse, BeforeRequest, CacheOptions, CachePolicy};
use tokio::sync::Semaphore;
use url::Url;

pub(crate) use self::cache::AREA_DIR as HTTP_AREA_DIR;
use self::cache::{Entry, HttpCache};
pub use self::cache_layout::HttpCacheLayout;
use self::failure::Failure;
pub(crate) use self::stream::Streaming;
use crate::auth::CredentialStore;
use crate::error::{chain, ClientError};
use crate::limits::{BodyKind, Ceiling, Limits};
use crate::settings::{CacheMode, ClientSettings};

/// A response body read whole.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub(crate) body: Vec<u8>,
    pub(crate) content_type: Option<String>,
    /// The URL after redirects, against which relative links resolve.
    pub(crate) url: Url,
    /// How much longer the server allows a cache to use this answer without asking again
    /// (zero when it must be revalidated; `None` for a local file).
    pub(crate) fresh_for: Option<Duration>,
}

/// Which bytes of a file to ask for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ByteRange {
    /// The last `n` bytes.
    Suffix(u64),
    /// `len` bytes from `start`.
    Span { start: u64, len: u64 },
}

/// What a range request returned.
#[derive(Debug)]
pub(crate) enum RangeAnswer {
    /// The bytes asked for (fewer at the end of the file), starting at `start`, of a file of
    /// `total` bytes. A server that ignores ranges sends the whole file; only the bytes asked
    /// for are kept.
    Partial {
        start: u64,
        bytes: Vec<u8>,
        total: u64,
    },
}

/// One response, read whole, before cache handling.
struct Received {
    status: StatusCode,
    headers: HeaderMap,
    url: Url,
    body: Vec<u8>,
}

#[derive(Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    credentials: CredentialStore,
    cache: Option<HttpCache>,
    mode: CacheMode,
    retries: u32,
    backoff: Duration,
    connect_timeout: Duration,
    read_timeout: Duration,
    limits: Limits,
    /// Whether the user named a local source (a `file:` index, a find-links directory or
    /// local page): without one, no `file:` URL is read, whoever asks.
    local_sources: bool,
    permits: Arc<Semaphore>,
    /// `host:port` of servers that answered a range request with the whole file.
    no_ranges: Mutex<HashSet<String>>,
    /// The TLS verifier, to check when it read the system's roots.
    #[cfg(test)]
    verifier: Arc<tls::LazyVerifier>,
}

/// What clients sharing one pool share ([`Http::sharing`]).
struct Pool {
    client: reqwest::Client,
    /// The timeouts built into `client`.
    connect_timeout: Duration,
    read_timeout: Duration,
    permits: Arc<Semaphore>,
    #[cfg(test)]
    verifier: Arc<tls::LazyVerifier>,
}

impl Http {
    pub(crate) fn new(
        settings: &ClientSettings,
        credentials: CredentialStore,
    ) -> Result<Self, ClientError> {
        // The system's roots are read on the first TLS handshake, not here: a local index
        // over http:// or file: never needs them (see `tls`).
        let (tls, verifier) =
            tls::client_config().map_err(|e| ClientError::Setup(e.to_string()))?;
        #[cfg(not(test))]
        drop(verifier);
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .user_agent(concat!("vari/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(settings.connect_timeout)
            .read_timeout(settings.read_timeout)
            .build()
            .map_err(|e| ClientError::Setup(chain(&e)))?;
        let pool = Pool {
            client,
            connect_timeout: settings.connect_timeout,
            read_timeout: settings.read_timeout,
            permits: Arc::new(Semaphore::new(settings.concurrency.max(1))),
            #[cfg(test)]
            verifier,
        };
        Self::with_pool(settings, credentials, pool)
    }

    /// HTTP for `settings` that shares this one's connections, TLS sessions and verifier, and
    /// its bound on parallel requests: one pool for a run that asks several sets of sources
    /// (a build family's own indexes), so that their requests reuse connections and together
    /// stay within one ceiling. The timeouts (built into the pool) are this one's.
    pub(crate) fn sharing(
        &self,
        settings: &ClientSettings,
        credentials: CredentialStore,
    ) -> Result<Self, ClientError> {
        let pool = Pool {
            client: self.client.clone(),
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            permits: self.permits.clone(),
            #[cfg(test)]
            verifier: self.verifier.clone(),
        };
        Self::with_pool(settings, credentials, pool)
    }

    fn with_pool(
        settings: &ClientSettings,
        credentials: CredentialStore,
        pool: Pool,
    ) -> Result<Self, ClientError> {
        // The variables win over the settings whoever built them, so every command, the proxy
        // and the index validator honour them.
        let limits = settings
            .limits
            .with_env(|name| std::env::var(name).ok())
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        Ok(Self {
            client: pool.client,
            credentials,
            cache: settings.cache_dir.clone().map(HttpCache::new),
            mode: settings.cache_mode,
            retries: settings.retries,
            backoff: settings.retry_backoff,
            connect_timeout: pool.connect_timeout,
            read_timeout: pool.read_timeout,
            limits,
            local_sources: settings.has_local_source(),
            permits: pool.permits,
            no_ranges: Mutex::new(HashSet::new()),
            #[cfg(test)]
            verifier: pool.verifier,
        })
    }

    /// Whether this client may fetch `url` at all: http and https always; `file:` only when
    /// the user named a local source. The second line behind the page link rule
    /// (`simple::link_rule`), for callers that hand the client URLs of their own (an index
    /// validator reading a remote page itself): a client whose sources are all remote never
    /// reads the disk.
    pub(crate) fn check_reach(&self, url: &Url) -> Result<(), ClientError> {
        let reason = match url.scheme() {
            "http" | "https" => return Ok(()),
            "file" if self.local_sources => return Ok(()),
            "file" => {
                "local files are read only when a source is named as a local path or file: URL"
            }
            _ => "only http, https and file URLs are fetched",
        };
        Err(ClientError::Refused {
            url: url.clone(),
            reason,
        })
    }

    pub(crate) fn credentials(&self) -> &CredentialStore {
        &self.credentials
    }

    /// GETs a page or small file through the cache, within the ceiling for its `kind` and the
    /// deadline. `None` when the server (or the disk) does not have it (404, 410).
    pub(crate) async fn get(
        &self,
        url: &Url,
        accept: &str,
        kind: BodyKind,
    ) -> Result<Option<Fetched>, ClientError> {
        self.get_revalidating(url, accept, kind, self.mode == CacheMode::Refresh)
            .await
    }

    /// [`Self::get`], asking the server again even when the cached copy is fresh (a
    /// conditional request when the copy has a validator): for a file whose listed hash says the
    /// cached copy is not the one the index serves now. Offline, the cached copy is all there
    /// is.
    pub(crate) async fn get_again(
        &self,
        url: &Url,
        accept: &str,
        kind: BodyKind,
    ) -> Result<Option<Fetched>, ClientError> {
        self.get_revalidating(url, accept, kind, true).await
    }

    async fn get_revalidating(
        &self,
        url: &Url,
        accept: &str,
        kind: BodyKind,
        revalidate: bool,
    ) -> Result<Option<Fetched>, ClientError> {
        let ceiling = self.limits.ceiling(kind);
        self.check_reach(url)?;
        if url.scheme() == "file" {
            return read_local(url, ceiling);
        }
        let request = policy_request(url, accept, revalidate);
        let cached = self
            .cache
            .as_ref()
            .and_then(|c| c.load(url, accept, ceiling.bytes));
        if self.mode == CacheMode::Offline {
            return match cached {
                Some(entry) => Ok(Some(fetched(entry))),
                None => Err(ClientError::Offline { url: url.clone() }),
            };
        }
        let mut conditional = HeaderMap::new();
        if let Some(entry) = &cached {
            match entry.policy.before_request(&request, SystemTime::now()) {
                // Moved out, not copied: the entry is not needed any more.
                BeforeRequest::Fresh(_) => return Ok(cached.map(fetched)),
                BeforeRequest::Stale {
                    request: revalidation,
                    matches: true,
                } => {
                    for name in [IF_NONE_MATCH, IF_MODIFIED_SINCE] {
                        if let Some(value) = revalidation.headers.get(&name) {
                            conditional.insert(name, value.clone());
                        }
                    }
                }
                BeforeRequest::Stale { .. } => {}
            }
        }

        let _permit = self.permit().await;
        let mut received = self.get_whole(url, accept, &conditional, ceiling).await?;
        let now = SystemTime::now();
        if received.status == StatusCode::NOT_MODIFIED {
            if let Some(entry) = cached {
                let response = not_modified_response(&received, &conditional);
                match entry.policy.after_response(&request, &response, now) {
                    AfterResponse::NotModified(policy, _) => {
                        let entry = Entry { policy, ..entry };
                        if let Some(cache) = &self.cache {
                            cache.store_policy(url, accept, &entry);
                        }
                        return Ok(Some(fetched(entry)));
                    }
                    // The 304 is for another version of the resource: ask again, plainly.
                    AfterResponse::Modified(..) => {
                        received = self
                            .get_whole(url, accept, &HeaderMap::new(), ceiling)
                            .await?;
                    }
                }
            } else {
                received = self
                    .get_whole(url, accept, &HeaderMap::new(), ceiling)
                    .await?;
            }
        }
        match received.status {
            StatusCode::NOT_FOUND | StatusCode::GONE => return Ok(None),
            status if !status.is_success() => {
                return Err(ClientError::Status {
                    url: url.clone(),
                    status: status.as_u16(),
                })
            }
            _ => {}
        }
        let policy = CachePolicy::new_options(
            &request,
            &as_response(&received),
            now,
            CacheOptions {
                shared: false,
                ..CacheOptions::default()
            },
        );
        let entry = Entry {
            policy,
            final_url: received.url,
            content_type: header_str(&received.headers, CONTENT_TYPE),
            body: received.body,
            id: None,
        };
        if entry.policy.is_storable() {
            self.store(url, accept, &entry);
        }
        Ok(Some(fetched(entry)))
    }

    fn store(&self, url: &Url, accept: &str, entry: &Entry) {
        if let Some(cache) = &self.cache {
            cache.store(url, accept, entry);
        }
    }

    /// One GET read whole within `ceiling`, with retries, all within the deadline.
    async fn get_whole(
        &self,
        url: &Url,
        accept: &str,
        extra: &HeaderMap,
        ceiling: Ceiling,
    ) -> Result<Received, ClientError> {
        self.within_deadline(
            url,
            self.with_retries(url, || async {
                let response = self
                    .request(url)
                    .header(ACCEPT, accept)
                    .header(ACCEPT_ENCODING, body::ACCEPT_ENCODING_WHOLE)
                    .headers(extra.clone())
                    .send()
                    .await
                    .map_err(|e| self.failure(url, e))?;
                self.receive(url, response, ceiling).await
            }),
        )
        .await
    }

    /// `work` (a request and the reading of its body, retries included), cut off when the
    /// deadline passes: a server that sends one byte a second never trips the read timeout.
    async fn within_deadline<T>(
        &self,
        url: &Url,
        work: impl Future<Output = Result<T, ClientError>>,
    ) -> Result<T, ClientError> {
        match tokio::time::timeout(self.limits.deadline, work).await {
            Ok(result) => result,
            Err(_) => Err(ClientError::Deadline {
                url: url.clone(),
                deadline: self.limits.deadline,
            }),
        }
    }

    /// A response to `url` read whole within `ceiling`; a server error is a failure
    /// (retried), any other status the caller's to judge.
    async fn receive(
        &self,
        url: &Url,
        response: reqwest::Response,
        ceiling: Ceiling,
    ) -> Result<Received, Failure> {
        let status = response.status();
        if status.is_server_error() {
            return Err(Failure::status(url, status));
        }
        let headers = response.headers().clone();
        let final_url = crate::auth::redact(response.url());
        let body = body::read_whole(url, response, ceiling, self.read_timeout).await?;
        Ok(Received {
            status,
            headers,
            url: final_url,
            body,
        })
    }

    /// A range of a file; the whole file when the server ignores ranges (and from then on
    /// for that host, without asking for a range again).
    pub(crate) async fn get_range(
        &self,
        url: &Url,
        range: ByteRange,
    ) -> Result<RangeAnswer, ClientError> {
        self.check_reach(url)?;
        if url.scheme() == "file" {
            return read_local_range(url, range);
        }
        if self.mode == CacheMode::Offline {
            return Err(ClientError::Offline { url: url.clone() });
        }
        let host = host_key(url);
        let ranges_ok = !self
            .no_ranges
            .lock()
            .map(|set| set.contains(&host))
            .unwrap_or(false);
        let _permit = self.permit().await;
        let header = match range {
            ByteRange::Suffix(n) => format!("bytes=-{n}"),
            ByteRange::Span { start, len } => {
                format!("bytes={start}-{}", start + len.max(1) - 1)
            }
        };
        let wanted = |total: u64| match range {
            ByteRange::Suffix(n) => body::Window::Span {
                from: total.saturating_sub(n),
                to: total,
            },
            ByteRange::Span { start, len } => body::Window::Span {
                from: start,
                to: start.saturating_add(len),
            },
        };
        let attempt = self.with_retries(url, || async {
            let mut request = self.request(url);
            if ranges_ok {
                request = request.header(RANGE, header.as_str());
            }
            let response = request.send().await.map_err(|e| self.failure(url, e))?;
            let status = response.status();
            match status {
                // Only the bytes asked for are kept, however many the server sends.
                StatusCode::PARTIAL_CONTENT => {
                    let (start, total) = header_str(response.headers(), CONTENT_RANGE)
                        .as_deref()
                        .and_then(parse_content_range)
                        .ok_or_else(|| Failure {
                            error: ClientError::Archive {
                                url: url.clone(),
                                message: "a 206 response without a valid Content-Range".into(),
                            },
                            retry: false,
                        })?;
                    let kept = body::read_window(
                        url,
                        response,
                        start,
                        wanted(total),
                        false,
                        self.read_timeout,
                    )
                    .await?;
                    Ok(RangeAnswer::Partial {
                        start: kept.start,
                        bytes: kept.bytes,
                        total,
                    })
                }
                // The whole file: streamed through, keeping the bytes asked for.
                StatusCode::OK => {
                    if ranges_ok {
                        let advertised = header_str(response.headers(), ACCEPT_RANGES);
                        tracing::debug!(
                            "{host} ignored a range request (Accept-Ranges: {advertised:?}); \
                             reading whole files from it from now on"
                        );
                        if let Ok(mut set) = self.no_ranges.lock() {
                            set.insert(host.clone());
                        }
                    }
                    let announced = response.content_length();
                    let (window, to_end) = match (announced, range) {
                        (Some(total), _) => (wanted(total), false),
                        (None, ByteRange::Suffix(n)) => (body::Window::Tail(n), true),
                        (None, ByteRange::Span { .. }) => (wanted(u64::MAX), true),
                    };
                    let kept =
                        body::read_window(url, response, 0, window, to_end, self.read_timeout)
                            .await?;
                    Ok(RangeAnswer::Partial {
                        start: kept.start,
                        bytes: kept.bytes,
                        total: announced.unwrap_or(kept.seen),
                    })
                }
                // A range the server cannot satisfy (an empty file, or past its end).
                StatusCode::RANGE_NOT_SATISFIABLE => {
                    let total = header_str(response.headers(), CONTENT_RANGE)
                        .and_then(|v| v.trim().strip_prefix("bytes */")?.trim().parse().ok())
                        .unwrap_or(0);
                    Ok(RangeAnswer::Partial {
                        start: total,
                        bytes: Vec::new(),
                        total,
                    })
                }
                status => Err(Failure::status(url, status)),
            }
        });
        self.within_deadline(url, attempt).await
    }

    /// Whether `url`'s server was found to ignore range requests.
    pub(crate) fn ignores_ranges(&self, url: &Url) -> bool {
        self.no_ranges
            .lock()
            .map(|set| set.contains(&host_key(url)))
            .unwrap_or(false)
    }

    /// Opens a GET whose body the caller streams (downloads, pass-through, hashing). Retries
    /// until the headers arrive; the body is then bounded by the read timeout and the
    /// low-speed rule (see [`Streaming::chunk`]).
    pub(crate) async fn open(&self, url: &Url) -> Result<Streaming, ClientError> {
        self.check_reach(url)?;
        if self.mode == CacheMode::Offline {
            return Err(ClientError::Offline { url: url.clone() });
        }
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ClientError::Setup(e.to_string()))?;
        let response = self
            .with_retries(url, || async {
                let response = self
                    .request(url)
                    .send()
                    .await
                    .map_err(|e| self.failure(url, e))?;
                let status = response.status();
                if !status.is_success() {
                    return Err(Failure::status(url, status));
                }
                Ok(response)
            })
            .await?;
        Ok(Streaming::new(
            url,
            response,
            &self.limits,
            self.read_timeout,
            permit,
        ))
    }

    fn request(&self, url: &Url) -> reqwest::RequestBuilder {
        let request = self.client.get(url.clone());
        match self.credentials.for_url(url) {
            Some(c) => request.basic_auth(c.username, c.password),
            None => request,
        }
    }

    async fn permit(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        self.permits.acquire().await.ok()
    }

    async fn with_retries<T, F, Fut>(&self, url: &Url, mut attempt: F) -> Result<T, ClientError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut tries = 0;
        loop {
            match attempt().await {
                Ok(value) => return Ok(value),
                Err(failure) if failure.retry && tries < self.retries => {
                    let delay = self.backoff.saturating_mul(1 << tries.min(16));
                    tracing::debug!(
                        "{}; retrying in {} ms ({} of {})",
                        failure.error,
                        delay.as_millis(),
                        tries + 1,
                        self.retries
                    );
                    tokio::time::sleep(delay).await;
                    tries += 1;
                }
                Err(failure) => {
                    if tries > 0 {
                        tracing::debug!("{url}: giving up after {} retries", tries);
                    }
                    return Err(failure.error);
                }
            }
        }
    }

    /// Classifies a transport error. Failed and broken connections are retried; a time limit
    /// that ran out is not (a server that hangs once usually hangs again, and retrying would
    /// multiply the wait).
    fn failure(&self, url: &Url, error: reqwest::Error) -> Failure {
        if error.is_timeout() {
            let timeout = if error.is_connect() {
                self.connect_timeout
            } else {
                self.read_timeout
            };
            return Failure {
                error: ClientError::Timeout {
                    url: url.clone(),
                    timeout,
                },
                retry: false,
            };
        }
        let retry = error.is_connect() || error.is_request() || error.is_body();
        Failure {
            error: ClientError::Transport {
                url: url.clone(),
                message: chain(&error.without_url()),
            },
            retry,
        }
    }
}

/// The request the cache policy sees: method, URL, `Accept`, and `Cache-Control: no-cache`
/// when every cached answer must be revalidated. Never `Authorization`.
fn policy_request(url: &Url, accept: &str, revalidate: bool) -> http::Request<()> {
    let mut request = http::Request::new(());
    if let Ok(uri) = url.as_str().parse() {
        *request.uri_mut() = uri;
    }
    if let Ok(value) = HeaderValue::from_str(accept) {
        request.headers_mut().insert(ACCEPT, value);
    }
    if revalidate {
        request
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    request
}

fn as_response(received: &Received) -> http::Response<()> {
    let mut response = http::Response::new(());
    *response.status_mut() = received.status;
    *response.headers_mut() = received.headers.clone();
    response
}

/// A `304 Not Modified` as the cache policy is shown it.
///
/// A server may leave the validator out of a 304 (RFC 9110 §15.4.5 asks for `ETag` only when
/// the full response would carry one; Python's `http.server` sends neither `ETag` nor
/// `Last-Modified`). The policy then cannot tell which stored response the 304 confirms and
/// reports it modified, which cost a second, full request on every warm run. This 304 answers
/// a conditional request made from the one response stored for this URL: the validators that
/// request sent are exactly the ones it confirms, so they stand in for the missing ones.
fn not_modified_response(received: &Received, sent: &HeaderMap) -> http::Response<()> {
    let mut response = as_response(received);
    let headers = response.headers_mut();
    if !headers.contains_key(ETAG) && !headers.contains_key(LAST_MODIFIED) {
        for (condition, validator) in [(IF_NONE_MATCH, ETAG), (IF_MODIFIED_SINCE, LAST_MODIFIED)] {
            if let Some(value) = sent.get(&condition) {
                headers.insert(validator, value.clone());
            }
        }
    }
    response
}

fn fetched(entry: Entry) -> Fetched {
    Fetched {
        fresh_for: Some(entry.policy.time_to_live(SystemTime::now())),
        body: entry.body,
        content_type: entry.content_type,
        url: entry.final_url,
    }
}

fn header_str(headers: &HeaderMap, name: http::header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn host_key(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or_default()
    )
}

/// `bytes START-END/TOTAL` → (START, TOTAL).
fn parse_content_range(value: &str) -> Option<(u64, u64)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let (start, _end) = span.split_once('-')?;
    Some((start.trim().parse().ok()?, total.trim().parse().ok()?))
}

fn local_path(url: &Url) -> Result<PathBuf, ClientError> {
    url.to_file_path().map_err(|()| ClientError::Io {
        path: PathBuf::from(url.path()),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a local path"),
    })
}

/// A `file:` page: a directory's `index.html`, or the file itself, within `ceiling` (checked
/// before reading, and while reading: the file may grow). Only regular files are read: a FIFO
/// or a device would block or never end.
fn read_local(url: &Url, ceiling: Ceiling) -> Result<Option<Fetched>, ClientError> {
    let mut path = local_path(url)?;
    if path.is_dir() {
        path.push("index.html");
    }
    // vari-fs's one reader of input files: opened without blocking, refused unless regular
    // (a FIFO or a device cannot be a page), read up to the ceiling.
    let body = match vari_fs::read_input_limited(&path, ceiling.bytes) {
        Ok(body) => body,
        Err(vari_fs::InputError::TooLarge { .. }) => {
            return Err(ClientError::too_large(url, ceiling))
        }
        Err(vari_fs::InputError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None)
        }
        Err(e) => {
            let source = std::io::Error::new(std::io::ErrorKind::InvalidInput, e.problem());
            return Err(ClientError::Io { path, source });
        }
    };
    let content_type = match path.extension().and_then(|e| e.to_str()) {
        Some("json") => Some("application/json".to_owned()),
        Some("html" | "htm") => Some("text/html".to_owned()),
        _ => None,
    };
    Ok(Some(Fetched {
        body,
        content_type,
        url: url.clone(),
        fresh_for: None,
    }))
}

fn read_local_range(url: &Url, range: ByteRange) -> Result<RangeAnswer, ClientError> {
    let path = local_path(url)?;
    let io = |source| ClientError::Io {
        path: path.clone(),
        source,
    };
    let mut file = std::fs::File::open(&path).map_err(io)?;
    let total = file.metadata().map_err(io)?.len();
    let (start, len) = match range {
        ByteRange::Suffix(n) => (total.saturating_sub(n), n.min(total)),
        ByteRange::Span { start, len } => (start.min(total), len.min(total.saturating_sub(start))),
    };
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut bytes).map_err(io)?;
    Ok(RangeAnswer::Partial {
        start,
        bytes,
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain-HTTP request (to a real server on 127.0.0.1) does not read the system's TLS
    /// roots; only a TLS handshake would.
    #[test]
    fn plain_http_leaves_the_tls_roots_unread() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut byte = [0u8; 1];
            while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
                request.push(byte[0]);
            }
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
                .unwrap();
        });
        let settings = ClientSettings {
            netrc: crate::NetrcSource::Disabled,
            cache_dir: None,
            ..ClientSettings::default()
        };
        let http = Http::new(&settings, CredentialStore::new(&settings.netrc).unwrap()).unwrap();
        assert!(!http.verifier.is_loaded());
        let url = Url::parse(&format!("http://127.0.0.1:{port}/simple/x/")).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let page = runtime
            .block_on(http.get(&url, "*/*", BodyKind::Page))
            .unwrap()
            .unwrap();
        assert_eq!(page.body, b"ok");
        server.join().unwrap();
        assert!(!http.verifier.is_loaded());
    }

    /// Reads one HTTP/1.1 request's head from `stream`; false when none came in time.
    fn read_head(stream: &mut std::net::TcpStream) -> bool {
        let mut request = Vec::new();
        let mut byte = [0u8; 1];
        while !request.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => request.push(byte[0]),
                _ => return false,
            }
        }
        true
    }

    /// HTTP for other settings made with `sharing` sends its requests over the first one's
    /// connections: a server that accepts one keep-alive connection answers both.
    #[test]
    fn sharing_http_reuses_the_pooled_connection() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut answered = 0;
            while read_head(&mut stream) {
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    .unwrap();
                answered += 1;
                if answered == 2 {
                    break;
                }
            }
            answered
        });
        let settings = ClientSettings {
            netrc: crate::NetrcSource::Disabled,
            cache_dir: None,
            ..ClientSettings::default()
        };
        let first = Http::new(&settings, CredentialStore::default()).unwrap();
        let other = ClientSettings {
            concurrency: 1,
            ..settings.clone()
        };
        let second = first.sharing(&other, CredentialStore::default()).unwrap();
        // One bound on parallel requests for both, the first one's.
        assert!(Arc::ptr_eq(&first.permits, &second.permits));
        assert!(Arc::ptr_eq(&first.verifier, &second.verifier));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for (http, path) in [(&first, "a"), (&second, "b")] {
            let url = Url::parse(&format!("http://127.0.0.1:{port}/simple/{path}/")).unwrap();
            let page = runtime
                .block_on(http.get(&url, "*/*", BodyKind::Page))
                .unwrap()
                .unwrap();
            assert_eq!(page.body, b"ok");
        }
        assert_eq!(server.join().unwrap(), 2);
    }

    #[test]
    fn content_ranges() {
        assert_eq!(parse_content_range("bytes 100-199/1000"), Some((100, 1000)));
        assert_eq!(parse_content_range("bytes 0-0/1"), Some((0, 1)));
        assert_eq!(parse_content_range("bytes */1000"), None);
        assert_eq!(parse_content_range("items 1-2/3"), None);
    }

    #[test]
    fn local_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.bin");
        std::fs::write(&path, b"0123456789").unwrap();
        let url = Url::from_file_path(&path).unwrap();
        let RangeAnswer::Partial {
            start,
            bytes,
            total,
        } = read_local_range(&url, ByteRange::Suffix(4)).unwrap();
        assert_eq!((start, bytes.as_slice(), total), (6, &b"6789"[..], 10));
        let RangeAnswer::Partial { bytes, .. } =
            read_local_range(&url, ByteRange::Span { start: 2, len: 3 }).unwrap();
        assert_eq!(bytes, b"234");
    }
}
