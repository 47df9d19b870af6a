//! Project listings kept for a run: one answer per project, whichever client asks.
//!
//! A run that reads a project's page more than once — `vari lock` reads it in the proxy uv
//! resolves through, again while uv runs, and again to list the pinned release's files — must
//! not take one answer for the resolution and another for the lock: an index could answer the
//! second request with other files and hashes, and the lock would name files nobody resolved.
//! Clients made from settings that hold the same [`Listings`] read each project once: the
//! first answer is kept (with the credentials its links carried) and every later request of
//! any of them gets it.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use url::Url;

use crate::auth::Credentials;
use crate::simple::Project;

/// A project's listing as first read, and the credentials its links carried (moved into
/// each client's store when it takes the listing).
#[derive(Clone)]
pub(crate) struct Kept {
    pub(crate) project: Project,
    pub(crate) credentials: Vec<(Url, Credentials)>,
}

/// Where listings are kept; the default keeps none (each request reads the sources, through
/// the HTTP cache). Clones share what they keep.
#[derive(Clone, Default)]
pub struct Listings(Option<Arc<Mutex<HashMap<String, Kept>>>>);

impl Listings {
    /// Listings kept from now on, by every client whose settings hold this value or a clone.
    pub fn kept() -> Self {
        Self(Some(Arc::default()))
    }

    /// Whether listings are kept.
    pub fn keeps(&self) -> bool {
        self.0.is_some()
    }

    /// How many projects are kept.
    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| lock(map).len())
    }

    /// Whether no project is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The listing of `name` kept earlier.
    pub(crate) fn get(&self, name: &str) -> Option<Kept> {
        self.0.as_ref().and_then(|map| lock(map).get(name).cloned())
    }

    /// Keeps `kept` as the listing of `name` unless one is kept already; returns the one kept.
    pub(crate) fn keep(&self, name: &str, kept: Kept) -> Kept {
        match &self.0 {
            Some(map) => lock(map).entry(name.to_owned()).or_insert(kept).clone(),
            None => kept,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl fmt::Debug for Listings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.keeps() {
            true => write!(f, "Listings(kept: {})", self.len()),
            false => f.write_str("Listings(none)"),
        }
    }
}
