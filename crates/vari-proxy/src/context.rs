//! What a page build and every request share: the client, the target, the METADATA texts and
//! rewritten wheels, the journal and the log. The caches of built pages are [`crate::state`]'s,
//! which builds them with this context: the page builder never needs the page caches.
//!
//! A proxy serving several machine classes has one context per class, and every class's
//! context holds the same [`Shared`] parts: one client (one HTTP cache, one connection pool),
//! one cache of METADATA texts (they do not depend on the target), one cache of rewritten
//! wheels (keyed by the marker context, so classes never get each other's copies) and one set
//! of page-build threads. What depends on the target — the pages, the journal — is per class.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vari_client::{ClientError, IndexClient, IndexFile};
use vari_core::ordering::SelectionOptions;
use vari_select::Target;

use crate::builders::Builders;
use crate::class::ClassName;
use crate::error::ServeError;
use crate::fingerprint::{fingerprint as fingerprint_for, union_fingerprint};
use crate::journal::{Journal, UpstreamFailure};
use crate::metadata_texts::{MetadataTexts, Text};
use crate::rewrite::Rewrites;
use crate::stored_pages::{Counts, PageStore};

/// What every class of one proxy shares (a single target's proxy has one class).
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) client: Arc<IndexClient>,
    pub(crate) rewrites: Arc<Rewrites>,
    pub(crate) builders: Arc<Builders>,
    /// METADATA texts of wheels by URL and hash: read once, however often the page is
    /// rebuilt and however many classes show the wheel (range reads are not in the HTTP cache).
    metadata: Arc<MetadataTexts>,
    /// Built pages kept on disk across runs ([`crate::stored_pages`]), and the counts of
    /// pages built and taken from there.
    pub(crate) page_store: Arc<PageStore>,
    pub(crate) page_counts: Arc<Counts>,
}

impl Shared {
    pub(crate) fn new(
        client: IndexClient,
        rewrites: Rewrites,
        builders: Builders,
        metadata: MetadataTexts,
        page_store: PageStore,
    ) -> Self {
        Self {
            client: Arc::new(client),
            rewrites: Arc::new(rewrites),
            builders: Arc::new(builders),
            metadata: Arc::new(metadata),
            page_store: Arc::new(page_store),
            page_counts: Arc::new(Counts::default()),
        }
    }
}

pub(crate) struct Context {
    pub(crate) client: Arc<IndexClient>,
    pub(crate) target: Target,
    pub(crate) selection: SelectionOptions,
    /// The build-family catalog, for selector pages ([`crate::selector`]).
    pub(crate) families: Option<Arc<vari_family::Catalog>>,
    /// The targets whose union is served ([`crate::union`]); empty: `target` alone.
    pub(crate) union: Vec<Target>,
    /// The target's fingerprint ([`crate::fingerprint`]), in its URLs.
    pub(crate) fingerprint: String,
    /// The machine class, when the proxy serves several.
    pub(crate) class: Option<ClassName>,
    /// The path segment after `/t/` of the target's own URLs: the fingerprint, or for a class
    /// `{name}.{fingerprint}`.
    pub(crate) segment: String,
    pub(crate) page_ttl: Duration,
    /// How long a failed page build is answered from memory.
    pub(crate) failure_ttl: Duration,
    /// Serve the index's `.metadata` files through the proxy ([`crate::ProxySettings::keep_metadata`]).
    pub(crate) keep_metadata: bool,
    pub(crate) rewrites: Arc<Rewrites>,
    pub(crate) journal: Journal,
    /// The METADATA texts ([`Shared`]).
    metadata: Arc<MetadataTexts>,
    /// Messages already logged at their level (repeats go to `debug`).
    logged: Mutex<HashSet<String>>,
    /// Upstream failures warned about, and when.
    warned: Mutex<HashMap<String, Instant>>,
    /// The threads page builds run on.
    pub(crate) builders: Arc<Builders>,
    /// The kept pages and the counts ([`Shared`]).
    pub(crate) page_store: Arc<PageStore>,
    pub(crate) page_counts: Arc<Counts>,
}

/// What one target (or class) of a proxy is served with.
pub(crate) struct Serving {
    pub(crate) target: Target,
    pub(crate) selection: SelectionOptions,
    pub(crate) families: Option<Arc<vari_family::Catalog>>,
    /// The targets whose union is served (empty: `target` alone).
    pub(crate) union: Vec<Target>,
    pub(crate) class: Option<ClassName>,
    pub(crate) page_ttl: Duration,
    pub(crate) failure_ttl: Duration,
    /// The fingerprint of the target or the union, when the caller computed it already (from
    /// the same settings: [`crate::fingerprint_of`]); else it is computed here.
    pub(crate) fingerprint: Option<String>,
    /// Serve the index's `.metadata` files through the proxy ([`crate::ProxySettings::keep_metadata`]).
    pub(crate) keep_metadata: bool,
}

impl Context {
    pub(crate) fn new(shared: &Shared, serving: Serving) -> Self {
        let Serving {
            target,
            selection,
            families,
            union,
            class,
            page_ttl,
            failure_ttl,
            fingerprint,
            keep_metadata,
        } = serving;
        let fingerprint = fingerprint.unwrap_or_else(|| match union.is_empty() {
            true => fingerprint_for(&target, &selection, shared.client.settings()),
            false => union_fingerprint(&union, &selection, shared.client.settings()),
        });
        let segment = match &class {
            Some(name) => crate::class::segment(name, &fingerprint),
            None => fingerprint.clone(),
        };
        Self {
            fingerprint,
            class,
            segment,
            client: shared.client.clone(),
            target,
            selection,
            families,
            union,
            page_ttl,
            failure_ttl,
            keep_metadata,
            rewrites: shared.rewrites.clone(),
            journal: Journal::default(),
            metadata: shared.metadata.clone(),
            logged: Mutex::new(HashSet::new()),
            warned: Mutex::new(HashMap::new()),
            builders: shared.builders.clone(),
            page_store: shared.page_store.clone(),
            page_counts: shared.page_counts.clone(),
        }
    }

    /// The path prefix of the target's own URLs: `/t/{fingerprint}`, or for a machine class
    /// `/t/{name}.{fingerprint}`.
    pub(crate) fn prefix(&self) -> String {
        format!("/t/{}", self.segment)
    }

    /// The span a class's log lines are written in (`class{name=gpu-a100}: …`); none for a
    /// single target, whose log lines stay as they were.
    pub(crate) fn span(&self) -> tracing::Span {
        match &self.class {
            Some(name) => tracing::info_span!(parent: None, "class", name = %name),
            None => tracing::Span::none(),
        }
    }

    /// The METADATA text of a wheel (PEP 658, else range reads of the wheel), read once.
    pub(crate) async fn core_metadata(&self, file: &IndexFile) -> Result<Arc<str>, ClientError> {
        Ok(self.metadata_text(file).await?.text)
    }

    /// [`Self::core_metadata`] with its SHA-256.
    pub(crate) async fn metadata_text(&self, file: &IndexFile) -> Result<Text, ClientError> {
        self.metadata.get(&self.client, file).await
    }

    /// The METADATA text of `file` when it is kept (in memory or on disk): never read now.
    pub(crate) async fn stored_metadata(&self, file: &IndexFile) -> Option<Text> {
        self.metadata.stored(file).await
    }

    /// The METADATA text of `file` when it has been read already (in memory).
    pub(crate) fn known_metadata(&self, file: &IndexFile) -> Option<Text> {
        self.metadata.known(file)
    }

    /// Whether this process has read any METADATA text ([`MetadataTexts::any_known`]).
    pub(crate) fn knows_any_metadata(&self) -> bool {
        self.metadata.any_known()
    }

    /// Logs `message` at `level` the first time, at `debug` afterwards.
    pub(crate) fn log_once(&self, level: tracing::Level, message: String) {
        let first = self
            .logged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(message.clone());
        match (first, level) {
            (true, tracing::Level::WARN) => tracing::warn!("{message}"),
            (true, tracing::Level::ERROR) => tracing::error!("{message}"),
            (true, _) => tracing::info!("{message}"),
            (false, _) => tracing::debug!("{message}"),
        }
    }

    /// Logs an upstream failure answering a request: a warning, unless the same one was
    /// warned about within the failure TTL (the installer retrying, answered from the failed
    /// page kept for that long: no new attempt to report), then at `debug`.
    /// Every failure is also recorded in the journal ([`crate::UpstreamFailure`]) for the
    /// front-end to name once the installer has failed; a project the upstream does not have
    /// is not a failure of the upstream and is not recorded.
    pub(crate) fn upstream_failed(&self, what: &str, error: &ServeError) {
        if error.status() != hyper::StatusCode::NOT_FOUND {
            self.journal.upstream_failed(UpstreamFailure {
                what: what.to_owned(),
                message: error.one_line(),
            });
        }
        let message = format!("{what}: {}", error.one_line());
        let now = Instant::now();
        let repeated = {
            let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
            warned.retain(|_, at| now.duration_since(*at) < self.failure_ttl);
            match warned.contains_key(&message) {
                true => true,
                false => {
                    warned.insert(message.clone(), now);
                    false
                }
            }
        };
        match repeated {
            true => tracing::debug!("{message}"),
            false => tracing::warn!("{message}"),
        }
    }
}
