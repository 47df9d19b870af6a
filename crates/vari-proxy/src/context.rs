//! What a page build and every request share: the client, the target, the METADATA texts and
//! rewritten wheels, the journal and the log. The caches of built pages are [`crate::state`]'s,
//! which builds them with this context: the page builder never needs the page caches.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vari_client::{ClientError, IndexClient, IndexFile};
use vari_core::ordering::SelectionOptions;
use vari_select::Target;

use crate::builders::Builders;
use crate::error::ServeError;
use crate::fingerprint::fingerprint;
use crate::journal::{Journal, UpstreamFailure};
use crate::rewrite::Rewrites;

pub(crate) struct Context {
    pub(crate) client: Arc<IndexClient>,
    pub(crate) target: Target,
    pub(crate) selection: SelectionOptions,
    /// The target's fingerprint ([`crate::fingerprint`]), in its URLs.
    pub(crate) fingerprint: String,
    pub(crate) page_ttl: Duration,
    /// How long a failed page build is answered from memory.
    pub(crate) failure_ttl: Duration,
    pub(crate) rewrites: Rewrites,
    pub(crate) journal: Journal,
    /// METADATA texts of variant wheels by URL and hash: read once, however often the page is
    /// rebuilt (range reads are not in the HTTP cache).
    metadata: Mutex<HashMap<String, Arc<str>>>,
    /// Messages already logged at their level (repeats go to `debug`).
    logged: Mutex<HashSet<String>>,
    /// Upstream failures warned about, and when.
    warned: Mutex<HashMap<String, Instant>>,
    /// The threads page builds run on.
    pub(crate) builders: Builders,
}

impl Context {
    pub(crate) fn new(
        client: IndexClient,
        target: Target,
        selection: SelectionOptions,
        page_ttl: Duration,
        failure_ttl: Duration,
        rewrites: Rewrites,
        builders: Builders,
    ) -> Self {
        Self {
            fingerprint: fingerprint(&target, &selection, client.settings()),
            client: Arc::new(client),
            target,
            selection,
            page_ttl,
            failure_ttl,
            rewrites,
            journal: Journal::default(),
            metadata: Mutex::new(HashMap::new()),
            logged: Mutex::new(HashSet::new()),
            warned: Mutex::new(HashMap::new()),
            builders,
        }
    }

    /// The path prefix of the target's own URLs: `/t/{fingerprint}`.
    pub(crate) fn prefix(&self) -> String {
        format!("/t/{}", self.fingerprint)
    }

    /// The METADATA text of a variant wheel (PEP 658, else range reads of the wheel).
    pub(crate) async fn core_metadata(&self, file: &IndexFile) -> Result<Arc<str>, ClientError> {
        let key = format!("{} {}", file.url, file.hashes.sha256().unwrap_or_default());
        if let Some(text) = self.lock_metadata().get(&key) {
            return Ok(text.clone());
        }
        let text: Arc<str> = self.client.core_metadata(file).await?.into();
        self.lock_metadata().insert(key, text.clone());
        Ok(text)
    }

    fn lock_metadata(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<str>>> {
        self.metadata.lock().unwrap_or_else(|e| e.into_inner())
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
