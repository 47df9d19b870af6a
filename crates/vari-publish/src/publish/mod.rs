//! Publishing a site: where it goes ([`Destination`]: a local directory or an object store), what
//! it holds ([`SitePlan`]), and the one order every destination is written in ([`publish`]).
//!
//! The order is the rule that keeps a site consistent for a client reading it during an update:
//! 1. the immutable files (distributions, `*.metadata`, `*-variants.json`), in parallel;
//! 2. the project pages that link them;
//! 3. the root pages (`simple/index.html`, `simple/index.json`), which link the projects;
//! 4. deletions of what the earlier site had and this one does not, last: first the pages (a
//!    removed project's pages still link its files, and a client may still ask for them by
//!    name), then, once no page names them, the files;
//!
//! so that no page ever points at a file not yet (or no longer) there. A failure stops the
//! sequence where it is: what was there before stays linked and whole.
//!
//! Each destination is a [`SiteStore`]: a directory writes atomically (a temporary file renamed
//! over the old one; distributions hard-linked or copied), an object store uploads each object
//! with its `Content-Type` ([`content_type`]) and skips objects it uploaded before with the same
//! content (it remembers each object's SHA-256 and the store's entity tag, see [`Stamp`]).

mod aws_profile;
pub(crate) mod destination;
mod directory;
mod journal;
mod object;
#[cfg(test)]
mod order_tests;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::error::DestinationError;
pub use destination::Destination;
pub use directory::DirectoryStore;
pub use journal::StampJournal;
pub use object::ObjectSite;

use crate::error::BuildError;
use crate::site::is_page;

/// The content of one site file.
#[derive(Debug, Clone)]
pub enum Body {
    /// Generated here (a page, a `.metadata` file, a `*-variants.json`).
    Bytes(Vec<u8>),
    /// A distribution file on the local disk, put into the site as it is.
    File(PathBuf),
    /// Published by an earlier run and unchanged (its content is not at hand): kept as it is.
    Kept,
}

/// One file of the site.
#[derive(Debug, Clone)]
pub struct SiteFile {
    /// The path relative to the site root, `/`-separated (`files/…`, `simple/…`), made from
    /// validated names only.
    pub path: String,
    /// What it holds.
    pub body: Body,
    /// The SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// The size in bytes.
    pub size: u64,
}

impl SiteFile {
    /// A generated file (its hash and size are computed here).
    pub fn bytes(path: impl Into<String>, bytes: Vec<u8>) -> Self {
        Self {
            path: path.into(),
            sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
            size: bytes.len() as u64,
            body: Body::Bytes(bytes),
        }
    }
}

/// A whole site, grouped by the order in which it is published.
#[derive(Debug, Clone, Default)]
pub struct SitePlan {
    /// Immutable files: distributions, `*.metadata`, `*-variants.json`.
    pub files: Vec<SiteFile>,
    /// Project pages (`simple/{project}/index.html`, `…/index.json`).
    pub pages: Vec<SiteFile>,
    /// The root pages (`simple/index.html`, `simple/index.json`).
    pub root: Vec<SiteFile>,
}

impl SitePlan {
    /// Every file, in publishing order.
    pub fn all(&self) -> impl Iterator<Item = &SiteFile> {
        self.files.iter().chain(&self.pages).chain(&self.root)
    }
}

/// What the destination held for one path after an earlier publish: the content's hash and
/// size, and the store's entity tag (object stores), so that an unchanged object is not uploaded
/// again and one changed behind vari's back is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
    /// The entity tag the store gave the object when it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e_tag: Option<String>,
}

/// Stamps by site path.
pub type Stamps = BTreeMap<String, Stamp>;

/// What one call of [`SiteStore::put_all`] did for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    /// Written (uploaded, linked, copied); with the stamp to remember.
    Written(Stamp),
    /// Already there with this content; with its stamp.
    Unchanged(Stamp),
}

impl Put {
    /// The stamp to remember.
    pub fn stamp(&self) -> &Stamp {
        match self {
            Put::Written(stamp) | Put::Unchanged(stamp) => stamp,
        }
    }
}

/// A place a site is published to. [`publish`] calls these in its fixed order; each call may
/// work in parallel but returns only when all of its work is done.
pub trait SiteStore: Sync {
    /// Where `path` lives, for messages: a file path or a URL.
    fn locate(&self, path: &str) -> String;
    /// A small file of the site (the build state), at most `limit` bytes; `None` when absent.
    fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, BuildError>;
    /// Whether the site holds `path`.
    fn contains(&self, path: &str) -> bool;
    /// Writes `files` (in parallel, with a bound), skipping those already there with the same
    /// content (`previous`: the stamps of the last publish). One result per file, in order; the
    /// first failure is returned. `done` is told of each file as soon as it is written or
    /// found unchanged, whatever happens to the others (so a publish that fails part-way
    /// knows what it wrote).
    fn put_all(
        &self,
        files: &[&SiteFile],
        previous: &Stamps,
        done: &Done<'_>,
    ) -> Result<Vec<Put>, BuildError>;
    /// Removes `paths` (in parallel); how many were there. A path already gone is no error.
    fn remove_all(&self, paths: &[&str]) -> Result<usize, BuildError>;
    /// Writes a small file that is not part of the site's pages (the build state).
    fn write_private(&self, path: &str, bytes: &[u8]) -> Result<(), BuildError>;
}

/// Told of each file [`SiteStore::put_all`] has written or found unchanged.
pub type Done<'a> = dyn Fn(&SiteFile, &Put) + Sync + 'a;

/// What [`publish`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishStats {
    /// Files written (changed or new).
    pub written: usize,
    /// Files removed.
    pub removed: usize,
    /// The stamp of every file the site now holds.
    pub stamps: Stamps,
    /// The site paths of the files written (those found unchanged left out).
    pub written_paths: BTreeSet<String>,
}

/// Publishes `plan` to `store` in the order the module docs give (files, project pages, root
/// pages, then the removal of every path in `stale`). `previous` holds the stamps of the last
/// publish (and of one that did not complete, from its `journal`); each file written is
/// recorded in `journal` as soon as it is, so that a publish stopped part-way resumes there.
pub fn publish(
    store: &dyn SiteStore,
    plan: &SitePlan,
    previous: &Stamps,
    stale: &[&str],
    journal: Option<&StampJournal>,
) -> Result<PublishStats, BuildError> {
    let mut stats = PublishStats::default();
    let record = |file: &SiteFile, put: &Put| {
        if let Some(journal) = journal {
            journal.record(file, put);
        }
    };
    for group in [&plan.files, &plan.pages, &plan.root] {
        let files: Vec<&SiteFile> = group.iter().collect();
        let puts = store.put_all(&files, previous, &record)?;
        for (file, put) in files.iter().zip(puts) {
            if matches!(put, Put::Written(_)) {
                stats.written += 1;
                stats.written_paths.insert(file.path.clone());
            }
            stats.stamps.insert(file.path.clone(), put.stamp().clone());
        }
    }
    // Pages before files: a run stopped between the two leaves files no page names (harmless),
    // never a page naming a file that is gone.
    let (pages, files): (Vec<&str>, Vec<&str>) = stale.iter().partition(|path| is_page(path));
    stats.removed = store.remove_all(&pages)?;
    stats.removed += store.remove_all(&files)?;
    Ok(stats)
}

/// The `Content-Type` a site file is served with, from its path: PEP 503 pages as HTML, PEP 691
/// pages as `application/vnd.pypi.simple.v1+json`, `*-variants.json` and the build state as
/// JSON, PEP 658 `.metadata` as plain text, wheels and zip sdists as zip, `.tar.gz` as gzip,
/// anything else as bytes.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".html") {
        "text/html; charset=utf-8"
    } else if name == "index.json" && is_page(path) {
        "application/vnd.pypi.simple.v1+json"
    } else if name.ends_with(".json") {
        "application/json"
    } else if name.ends_with(".metadata") {
        "text/plain; charset=utf-8"
    } else if name.ends_with(".whl") || name.ends_with(".zip") {
        "application/zip"
    } else if name.ends_with(".tar.gz") {
        "application/gzip"
    } else {
        "application/octet-stream"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records every call, in order; fails every call after the first `.1` (when set).
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>, Option<usize>);

    impl SiteStore for Recorder {
        fn locate(&self, path: &str) -> String {
            path.to_owned()
        }
        fn read(&self, _: &str, _: u64) -> Result<Option<Vec<u8>>, BuildError> {
            Ok(None)
        }
        fn contains(&self, _: &str) -> bool {
            false
        }
        fn put_all(
            &self,
            files: &[&SiteFile],
            previous: &Stamps,
            done: &Done<'_>,
        ) -> Result<Vec<Put>, BuildError> {
            let mut calls = self.0.lock().unwrap();
            let mut puts = Vec::new();
            for file in files {
                let stamp = Stamp {
                    sha256: file.sha256.clone(),
                    size: file.size,
                    e_tag: None,
                };
                let put = if previous.get(&file.path) == Some(&stamp) {
                    Put::Unchanged(stamp)
                } else {
                    if self.1.is_some_and(|limit| calls.len() >= limit) {
                        return Err(BuildError::Store {
                            location: file.path.clone(),
                            problem: "the store failed".to_owned(),
                        });
                    }
                    calls.push(format!("put {}", file.path));
                    Put::Written(stamp)
                };
                done(file, &put);
                puts.push(put);
            }
            Ok(puts)
        }
        fn remove_all(&self, paths: &[&str]) -> Result<usize, BuildError> {
            let mut calls = self.0.lock().unwrap();
            calls.extend(paths.iter().map(|p| format!("remove {p}")));
            Ok(paths.len())
        }
        fn write_private(&self, _: &str, _: &[u8]) -> Result<(), BuildError> {
            Ok(())
        }
    }

    #[test]
    fn files_go_first_then_pages_then_the_root_and_removals_last() {
        let plan = SitePlan {
            // Given in the wrong order on purpose: the groups decide, not the list.
            root: vec![SiteFile::bytes("simple/index.html", b"root".to_vec())],
            pages: vec![SiteFile::bytes("simple/a/index.html", b"page".to_vec())],
            files: vec![
                SiteFile::bytes("files/a-2.whl", b"new".to_vec()),
                SiteFile::bytes("files/a-1.whl", b"same".to_vec()),
            ],
        };
        let mut previous = Stamps::new();
        previous.insert(
            "files/a-1.whl".to_owned(),
            Stamp {
                sha256: plan.files[1].sha256.clone(),
                size: 4,
                e_tag: None,
            },
        );
        let store = Recorder::default();
        // A removed project `b`: its pages go before its files, whatever order they are given.
        let stale = [
            "files/a-0.whl",
            "files/b-1.whl",
            "simple/b/index.html",
            "simple/b/index.json",
        ];
        let stats = publish(&store, &plan, &previous, &stale, None).unwrap();
        assert_eq!(
            *store.0.lock().unwrap(),
            [
                "put files/a-2.whl",
                "put simple/a/index.html",
                "put simple/index.html",
                "remove simple/b/index.html",
                "remove simple/b/index.json",
                "remove files/a-0.whl",
                "remove files/b-1.whl",
            ]
        );
        assert_eq!((stats.written, stats.removed), (3, 4));
        assert_eq!(stats.stamps.len(), 4);
    }

    /// A publish whose store fails after 3 uploads, run again: the second run uploads only
    /// what the first did not, from the stamps its journal recorded as it went.
    #[test]
    fn a_publish_stopped_part_way_resumes_from_its_journal() {
        let plan = SitePlan {
            files: (0..5)
                .map(|i| SiteFile::bytes(format!("files/a-{i}.whl"), vec![i; 3]))
                .collect(),
            pages: vec![SiteFile::bytes("simple/a/index.html", b"page".to_vec())],
            root: vec![SiteFile::bytes("simple/index.html", b"root".to_vec())],
        };
        let cache = tempfile::tempdir().unwrap();
        let path = cache.path().join("mirror/s3-b-0123456789abcdef.journal");
        let (journal, resumed) = StampJournal::open(cache.path(), &path).unwrap();
        let failing = Recorder(Mutex::default(), Some(3));
        publish(&failing, &plan, &resumed, &[], Some(&journal)).unwrap_err();
        drop(journal);
        let first = failing.0.lock().unwrap().clone();
        assert_eq!(first.len(), 3);

        let (journal, resumed) = StampJournal::open(cache.path(), &path).unwrap();
        assert_eq!(resumed.len(), 3);
        let store = Recorder::default();
        let stats = publish(&store, &plan, &resumed, &[], Some(&journal)).unwrap();
        let second = store.0.lock().unwrap().clone();
        assert_eq!(second.len(), 7 - 3, "{second:?}");
        assert!(second.iter().all(|put| !first.contains(put)), "{second:?}");
        assert_eq!(stats.stamps.len(), 7);
        journal.finish();
        assert!(!path.exists());
    }

    #[test]
    fn content_types_follow_the_site_layout() {
        for (path, expected) in [
            ("simple/index.html", "text/html; charset=utf-8"),
            ("simple/a/index.json", "application/vnd.pypi.simple.v1+json"),
            ("files/a-1-variants.json", "application/json"),
            ("files/a-1-py3-none-any.whl", "application/zip"),
            (
                "files/a-1-py3-none-any.whl.metadata",
                "text/plain; charset=utf-8",
            ),
            ("files/a-1.tar.gz", "application/gzip"),
            ("files/a-1.zip", "application/zip"),
            (".vari-index-state.json", "application/json"),
            ("files/other", "application/octet-stream"),
        ] {
            assert_eq!(content_type(path), expected, "{path}");
        }
    }
}
