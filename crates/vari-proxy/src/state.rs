//! What every request shares: the [`Context`] (client, target, journal, …) and the caches of
//! the pages built with it (the projects' pages and the project list), each built once for
//! everyone asking.

use std::ops::Deref;
use std::sync::Arc;

use tracing::Instrument;
use vari_client::ProjectName;

use crate::context::Context;
use crate::flight::{Flights, Outcome};
use crate::pages::{self, ProjectPage};
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

    /// The page of `name`: cached while younger than the TTL, else built once for everyone
    /// asking; a failure is answered again for [`Self::failure_ttl`].
    pub(crate) async fn page(self: &Arc<Self>, name: &ProjectName) -> Outcome<ProjectPage> {
        let ttl = self.page_ttl;
        self.pages
            .get(
                name.as_str(),
                |page| page.built.elapsed() < ttl,
                self.failure_ttl,
                || {
                    let (context, name) = (self.context.clone(), name.clone());
                    let span = context.span();
                    match context.union.len() > 1 {
                        true => self
                            .builders
                            .spawn(move || union::build(context, name).instrument(span)),
                        false => self
                            .builders
                            .spawn(move || pages::build(context, name).instrument(span)),
                    }
                },
            )
            .await
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
