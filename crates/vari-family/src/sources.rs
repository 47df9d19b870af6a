//! Which source may serve which distribution: the one answer every front-end asks before it
//! sends a project name to an index the catalog named.
//!
//! An index or links page a family names serves that family's builds' distributions and no
//! other name. PyTorch's indexes also list `numpy`, `requests` and `jinja2`; a company's
//! internal index may list anything. Asking them for anything but the builds would let a page
//! that is not the user's choose what a dependency resolves to (dependency confusion), so the
//! map refuses it: [`SourceMap::sources_for`] lists only the sources a build of that name is
//! published on, and [`SourceMap::may_serve`] says no to every other pair.

use std::collections::{BTreeMap, BTreeSet};

use url::Url;

use crate::model::{BuildSource, Catalog};

/// The sources of a catalog and the distribution names each may serve.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// Distribution → the sources its builds are on, in catalog order, each once.
    by_name: BTreeMap<String, Vec<BuildSource>>,
    /// Source URL (normalised) → the distributions it may serve.
    by_url: BTreeMap<String, BTreeSet<String>>,
}

/// A URL compared as a source: without a trailing slash, so that `…/cu128` and `…/cu128/` are
/// one index.
fn key(url: &Url) -> String {
    url.as_str().trim_end_matches('/').to_owned()
}

impl SourceMap {
    /// The map of `catalog`'s sources.
    ///
    /// ```
    /// let map = vari_family::SourceMap::new(vari_family::builtin());
    /// let cu128 = url::Url::parse("https://download.pytorch.org/whl/cu128").unwrap();
    /// assert!(map.may_serve(&cu128, "torch"));
    /// assert!(map.may_serve(&cu128, "TorchVision"));
    /// assert!(!map.may_serve(&cu128, "numpy"));
    /// assert!(map.sources_for("numpy").is_empty());
    /// ```
    pub fn new(catalog: &Catalog) -> Self {
        let mut map = SourceMap::default();
        for family in &catalog.families {
            for build in &family.builds {
                let Some(source) = &build.source else {
                    continue;
                };
                let list = map.by_name.entry(build.distribution.clone()).or_default();
                if !list.contains(source) {
                    list.push(source.clone());
                }
                map.by_url
                    .entry(key(source.url()))
                    .or_default()
                    .insert(build.distribution.clone());
            }
        }
        map
    }

    /// The sources that may serve `distribution` (any spelling): those a build published as it
    /// is on. Empty for every other name, which comes from the user's own sources only.
    pub fn sources_for(&self, distribution: &str) -> &[BuildSource] {
        self.by_name
            .get(&vari_core::project::normalize(distribution))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Whether `url` may be asked for `distribution`: only when the catalog names `url` as the
    /// source of a build published as `distribution`. A URL the catalog does not name is not
    /// the catalog's to allow, and gets `false` too (the user's own indexes are the caller's).
    pub fn may_serve(&self, url: &Url, distribution: &str) -> bool {
        self.by_url
            .get(&key(url))
            .is_some_and(|names| names.contains(&vari_core::project::normalize(distribution)))
    }

    /// Every source URL the catalog names, each once, sorted.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        self.by_url.keys().map(String::as_str)
    }
}
