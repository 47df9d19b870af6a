//! What every request shares: the [`Context`] (client, target, journal, …) and the caches of
//! the pages built with it (the projects' pages and the project list), each built once for
//! everyone asking.

use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tracing::Instrument;
use vari_client::ProjectName;

use crate::context::Context;
use crate::error::ServeError;
use crate::flight::{Flights, Outcome};
use crate::page_keeping;
use crate::pages::{ProjectPage, Want};
use crate::root::{self, RootPage};
use crate::union;

pub(crate) struct State {
    context: Arc<Context>,
    pages: Flights<ProjectPage>,
    /// The project list does not depend on the target: every class of a proxy shares it.
    root: Arc<Flights<RootPage>>,
}

/// The context's fields and methods, read through the state as before.
impl Deref for State {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.context
    }
}

impl State {
    /// The state of one target (or class) built with `context`; `root`: the project list's
    /// cache, shared by every class of the proxy.
    pub(crate) fn new(context: Context, root: Arc<Flights<RootPage>>) -> Self {
        Self {
            context: Arc::new(context),
            pages: Flights::default(),
            root,
        }
    }

    /// The page of `name` with what `want` needs: cached while younger than the TTL, else
    /// built (or taken from disk: [`crate::stored_pages`]) once for everyone asking; a failure
    /// is answered again for [`Self::failure_ttl`]. A page taken from disk has one format and
    /// no entries: a request that needs more builds the page again.
    pub(crate) async fn page(
        self: &Arc<Self>,
        name: &ProjectName,
        want: Want,
    ) -> Outcome<ProjectPage> {
        let ttl = self.page_ttl;
        // A request may find another's build under way, for another format: it waits for it,
        // then builds its own. Three rounds end any run of such overlaps in practice.
        for _ in 0..3 {
            let page = self
                .pages
                .get(
                    name.as_str(),
                    |page| page.built.elapsed() < ttl && page.serves(want),
                    self.failure_ttl,
                    || self.start_build(name, want),
                )
                .await?;
            if page.serves(want) {
                return Ok(page);
            }
        }
        Err(ServeError::Internal(format!(
            "the page of {name} was rebuilt by other requests three times while this one waited"
        )))
    }

    /// Starts building the page of `name` on the build threads, counting it.
    fn start_build(
        &self,
        name: &ProjectName,
        want: Want,
    ) -> tokio::task::JoinHandle<Result<ProjectPage, ServeError>> {
        let (context, name) = (self.context.clone(), name.clone());
        let span = context.span();
        let counts = context.page_counts.clone();
        let union = context.union.len() > 1;
        self.builders.spawn(move || {
            async move {
                let page = match union {
                    true => union::build(context, name).await,
                    false => page_keeping::build(context, name, want).await,
                };
                if let Ok(page) = &page {
                    let count = match page.from_disk {
                        true => &counts.from_disk,
                        false => &counts.built,
                    };
                    count.fetch_add(1, Ordering::Relaxed);
                }
                page
            }
            .instrument(span)
        })
    }

    /// Re-renders the page of `name` when it lists `key` without the hash its rewritten copy
    /// now has.
    pub(crate) fn refresh_hash(&self, name: &ProjectName, key: &str) {
        if let Some(page) = self.pages.ready(name.as_str()) {
            if page.lacks_hash(key) {
                self.pages
                    .put(name.as_str(), Arc::new(page.rerendered(&self.rewrites)));
            }
        }
    }

    /// The project list, cached like a page (a failure too).
    pub(crate) async fn root(self: &Arc<Self>) -> Outcome<RootPage> {
        let ttl = self.page_ttl;
        self.root
            .get(
                "",
                |page| page.built.elapsed() < ttl,
                self.failure_ttl,
                || {
                    let client = self.client.clone();
                    self.builders.spawn(move || root::build(client))
                },
            )
            .await
    }
}
