//! `mirror`: a static index holding exactly the files a fleet's machine classes install from a
//! lock: each target's chosen file per package, with the null variant and the plain wheel of
//! the same release and tags as fallbacks, and every package the targets' dependency closures
//! reach ([`MirrorPlan`]). Each file is downloaded once, checked against the lock's SHA-256
//! while it streams, into a local store, and the site is built from the store by `index
//! build`'s builder, which combines each release's `*-variants.json` from the wheels mirrored:
//! it holds their labels only (PEP 825 allows dropping the others), and is checked against the
//! lock's `[packages.variants-json]` narrowed to the same labels.
//!
//! Each machine class also gets an index of its own, `t/{class}/simple/` (the shape of the
//! proxy's per-class URLs), listing only the files that class installs ([`MirrorPlan::classes`]),
//! linked in the site's one `files/`, so nothing is stored twice. It is what the class's plain
//! pip and uv point at. A fleet's lock over build families (issue 35) holds several builds of
//! one project under one name, told apart by local version (`torch 2.9.0+cu128`, `2.9.0+cpu`,
//! as download.pytorch.org's per-CUDA indexes publish them): a single `simple/torch/` listing
//! both lets an installer without vari take the highest local version (`+cu128` sorts above
//! `+cpu`) on every machine, so CPU nodes would install the CUDA build and its libraries. From
//! its class's index each installer sees what that class would see on its upstream index. The
//! site's own `simple/` still lists everything the classes install: `vari sync` from the lock
//! (which chooses each family's build per machine) and variant-aware installers read it.
//!
//! The site goes to any [`Destination`] `index build` publishes to: a directory, or an object
//! store prefix (`s3://BUCKET/PREFIX`, `gs://…`, `az://…`, WebDAV). The store is always local
//! ([`MirrorOptions::store`]); [`default_store`] names the usual place: `DEST/.vari-mirror/` for
//! a directory, `{cache}/mirror/{key of the URL}/` for an object store (so re-runs from the
//! same machine are incremental). An object store gets the same order and only what changed:
//! an object already uploaded with the same content is not uploaded again (the site's build
//! state remembers what each object holds).
//!
//! A run, in an order a reader can never notice:
//! 0. lock the store (a second run on it waits), and open the destination (an object store is
//!    listed now, so missing credentials or a missing bucket fail before any download);
//! 1. download what the store lacks (a file the state does not vouch for is hashed first);
//!    any failure (a hash mismatch, a transfer cut short) publishes nothing, and the files that
//!    did arrive are kept for the next run;
//! 2. drop from the store what no target needs (unless `keep`);
//! 3. publish: files, then project pages, the root page last, removals after it (atomic pages
//!    in a directory; whole objects in a store).
//!
//! A second run downloads only what changed, and rewrites only pages whose content changed.

mod cache_layout;
mod error;
mod fetch;
mod plan;
mod publish;
mod slim;
mod store;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use vari_client::IndexClient;
use vari_core::filename::{variants_json_filename, WheelFilename};
use vari_core::metadata::{read_json, SourceKind};
use vari_core::names::VariantLabel;

pub use cache_layout::MirrorCacheLayout;
pub use error::{FileFailure, MirrorError};
pub use fetch::{download_runtime, MirrorProgress, NoMirrorProgress, CONCURRENT_DOWNLOADS};
pub use plan::{MirrorFile, MirrorPlan, TargetFiles};
pub use slim::{
    class_families, lock_with_slim_wheels, slim_requests, SlimRequest, SlimSummary, SlimWheel,
};

use crate::publish::Destination;
use plan::Release;
use store::Store;

/// Where and how to mirror.
pub struct MirrorOptions<'a> {
    /// Where the site is published: a directory (created when missing) or an object store
    /// prefix.
    pub destination: Destination,
    /// The store: the downloaded files and what is known of them, a local directory (created
    /// when missing; [`default_store`] names the usual place). One store per destination: a
    /// run removes from it what its plan does not need (unless `keep`). Runs sharing a store
    /// take turns.
    pub store: PathBuf,
    /// Keep files no target needs any more (they stay published).
    pub keep: bool,
    /// Told about the downloads.
    pub progress: &'a dyn MirrorProgress,
    /// `--slim`: the per-GPU-family wheels to write beside the fat ones (`None`: off).
    pub slim: Option<SlimRequest>,
}

impl std::fmt::Debug for MirrorOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MirrorOptions")
            .field("destination", &self.destination)
            .field("store", &self.store)
            .field("keep", &self.keep)
            .field("slim", &self.slim)
            .finish_non_exhaustive()
    }
}

/// The directory of the stores of object-store mirrors, under vari's cache.
pub use crate::publish::destination::STORES_DIR;

/// Where the store of a mirror published at `destination` lives unless the user says
/// otherwise: `DEST/.vari-mirror/` for a directory (beside the site, on the same file system, so
/// the site hard-links its files); for an object store, `{cache}/mirror/{key}/` under vari's
/// cache directory `cache` (`None` when there is none), where the key is made from the URL
/// (its scheme and bucket, readable, then 16 hex digits of its SHA-256), so that every run from
/// this machine to the same prefix finds the files of the last one.
///
/// ```
/// use std::path::Path;
/// use vari_publish::{mirror::default_store, Destination};
/// let site = Destination::parse("site".as_ref()).unwrap();
/// assert_eq!(default_store(&site, None), Some(Path::new("site/.vari-mirror").to_owned()));
/// let s3 = Destination::parse("s3://bucket/pypi".as_ref()).unwrap();
/// let store = default_store(&s3, Some(Path::new("/c"))).unwrap();
/// assert!(store.starts_with("/c/mirror"));
/// assert!(store.file_name().unwrap().to_str().unwrap().starts_with("s3-bucket-"));
/// assert_eq!(default_store(&s3, None), None);
/// ```
pub fn default_store(destination: &Destination, cache: Option<&Path>) -> Option<PathBuf> {
    match destination {
        Destination::Directory(dir) => Some(dir.join(store::STORE_DIR)),
        Destination::ObjectStore(url) => Some(
            cache?
                .join(STORES_DIR)
                .join(crate::publish::destination::store_key(url)),
        ),
    }
}

/// The lock file of a destination: beside a directory site's pages
/// ([`DESTINATION_LOCK_FILE`]); for an object store, in the cache directory, named by the
/// store's key (so that runs on this machine take turns; `None` without a cache directory).
pub fn destination_lock(destination: &Destination) -> Option<PathBuf> {
    match destination {
        Destination::Directory(dir) => Some(dir.join(DESTINATION_LOCK_FILE)),
        Destination::ObjectStore(url) => {
            Some(vari_fs::cache_dir()?.join(STORES_DIR).join(format!(
                "{}{DESTINATION_LOCK_SUFFIX}",
                crate::publish::destination::store_key(url)
            )))
        }
    }
}

/// How the name of an object-store destination's lock file ends (after the store's key).
pub(crate) const DESTINATION_LOCK_SUFFIX: &str = ".lock";

/// The name of a directory site's lock file, which a mirror holds while it runs.
pub const DESTINATION_LOCK_FILE: &str = ".vari-mirror.lock";

fn lock_destination(
    path: &Path,
    progress: &dyn MirrorProgress,
) -> Result<vari_fs::lock::DirLock, MirrorError> {
    let store_error = |path: &Path, source| MirrorError::Store {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| store_error(dir, e))?;
    }
    vari_fs::lock::lock_exclusive(path, || progress.blocked(path)).map_err(|e| store_error(path, e))
}

/// What a mirror run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorReport {
    /// Distribution files the targets need, now in the site, and their bytes.
    pub files: (usize, u64),
    /// How many targets they serve.
    pub targets: usize,
    /// Files and bytes of every file the lock lists for the same releases.
    pub every_variant: (usize, u64),
    /// How many of those files have a size nobody gave (the lock or index did not, and they
    /// were not mirrored): their bytes are missing from `every_variant`.
    pub unknown_sizes: usize,
    /// Files downloaded in this run, and their bytes.
    pub downloaded: (usize, u64),
    /// Files no target needs that were removed (or, with `keep`, kept).
    pub removed: usize,
    /// Files no target needs that `keep` kept published.
    pub kept: usize,
    /// Site files (distributions, metadata, pages) written or uploaded because they were new or
    /// changed: 0 when nothing changed since the last run.
    pub published: usize,
    /// The `*-variants.json` files published.
    pub variants_json: Vec<String>,
    /// What needs the operator's attention (from building the site), one sentence each.
    pub warnings: Vec<String>,
    /// The size of each file the targets need, by file name, as it arrived (checked against
    /// the size the lock declares, when it declares one): what a lock of the mirror records.
    pub received: BTreeMap<String, u64>,
    /// What `--slim` did (`None`: off).
    pub slim: Option<SlimSummary>,
}

impl MirrorReport {
    /// The one line saying what was mirrored and what it saved against mirroring every
    /// variant of the same releases.
    pub fn summary(&self) -> String {
        let mut line = self.variants_summary();
        if let Some(slim) = &self.slim {
            line.push_str("; ");
            line.push_str(&slim.line());
        }
        line
    }

    fn variants_summary(&self) -> String {
        let (files, bytes) = self.files;
        let (all_files, all_bytes) = self.every_variant;
        let targets = match self.targets {
            1 => "1 target".to_owned(),
            n => format!("{n} targets"),
        };
        let percent = if all_bytes > 0 {
            all_bytes.saturating_sub(bytes) as f64 * 100.0 / all_bytes as f64
        } else {
            0.0
        };
        let saved_files = all_files.saturating_sub(files);
        // Bytes saved are only claimed when every file's size is known: an index without sizes
        // (PEP 503 pages, download.pytorch.org's) would otherwise make the saving look nil.
        match self.unknown_sizes {
            0 => format!(
                "mirrored {files} files ({}) for {targets}; every variant of these releases \
                 would be {all_files} files ({}): saved {saved_files} files, {} ({percent:.0} %)",
                vari_fs::human_bytes(bytes),
                vari_fs::human_bytes(all_bytes),
                vari_fs::human_bytes(all_bytes.saturating_sub(bytes)),
            ),
            unknown => format!(
                "mirrored {files} files ({}) for {targets}; every variant of these releases \
                 would be {all_files} files ({} and {unknown} of a size the index does not \
                 give): saved {saved_files} files",
                vari_fs::human_bytes(bytes),
                vari_fs::human_bytes(all_bytes),
            ),
        }
    }
}

impl MirrorReport {
    /// What this run did: `downloaded 3 file(s) (1.2 MiB); published 9 new or changed site
    /// file(s); removed 1 file(s) no target needs`.
    pub fn activity(&self) -> String {
        let (files, bytes) = self.downloaded;
        let mut text = format!(
            "downloaded {files} file(s) ({}); published {} new or changed site file(s)",
            vari_fs::human_bytes(bytes),
            self.published
        );
        if self.removed > 0 {
            text.push_str(&format!(
                "; removed {} file(s) no target needs",
                self.removed
            ));
        }
        if self.kept > 0 {
            text.push_str(&format!(
                "; kept {} file(s) no target needs (--keep)",
                self.kept
            ));
        }
        text
    }
}

/// Mirrors `plan` to `options.destination`, downloading with `client` on `runtime` (the one
/// the client was made for; a multi-threaded one hashes several downloads at once).
pub fn mirror(
    client: &Arc<IndexClient>,
    runtime: &tokio::runtime::Runtime,
    plan: &MirrorPlan,
    options: &MirrorOptions<'_>,
) -> Result<MirrorReport, MirrorError> {
    // 0. One run at a time on a store, and on a destination (two runs with different stores
    // would otherwise publish over each other); the destination is reachable before anything
    // is fetched. Always the store first, then the destination: no two runs wait on each
    // other.
    let _lock = Store::lock(&options.store, |path| options.progress.blocked(path))?;
    let _destination_lock = match destination_lock(&options.destination) {
        Some(path) => Some(lock_destination(&path, options.progress)?),
        None => None,
    };
    let mut store = Store::open(&options.store)?;
    let site = publish::open(&options.destination)?;

    // 1. Download what the store lacks.
    let mut missing = Vec::new();
    for file in &plan.files {
        if !store.has(&file.filename, &file.sha256)? {
            missing.push(file);
        }
    }
    let mut report = MirrorReport {
        targets: plan.targets,
        ..MirrorReport::default()
    };
    if !missing.is_empty() {
        // Unknown when one file's size is: a sum of the known ones is not the total.
        let expected = missing.iter().map(|f| f.size).sum();
        options.progress.start(missing.len(), expected);
        let results = runtime.block_on(fetch::download_all(
            client,
            &missing,
            store.files_dir(),
            options.progress,
        ));
        options.progress.finish();
        let mut failures = Vec::new();
        for (file, result) in missing.iter().zip(results) {
            match result {
                Ok(done) => {
                    report.downloaded.0 += 1;
                    report.downloaded.1 += done.size;
                    store.record(&file.filename, done.sha256)?;
                }
                Err(failure) => failures.push(failure),
            }
        }
        if !failures.is_empty() {
            store.save()?;
            return Err(MirrorError::Files(failures));
        }
    }

    // 1b. `--slim`: the per-family wheels, written beside the fat ones.
    if let Some(request) = &options.slim {
        let sha256: BTreeMap<&str, &str> = plan
            .files
            .iter()
            .map(|f| (f.filename.as_str(), f.sha256.as_str()))
            .collect();
        report.slim = Some(slim::slim_store(&mut store, request, &sha256)?);
    }
    let slim_files: BTreeSet<&str> = report
        .slim
        .iter()
        .flat_map(|s| &s.wheels)
        .map(|w| w.filename.as_str())
        .collect();

    // 2. Drop what no target needs. The release metadata is not kept in the store: the site
    // builder combines each release's `*-variants.json` from the wheels mirrored, so it holds
    // exactly their labels.
    let mut wanted: BTreeSet<&str> = plan.files.iter().map(|f| f.filename.as_str()).collect();
    wanted.extend(slim_files.iter().copied());
    for name in store.list()? {
        if wanted.contains(name.as_str()) {
            continue;
        }
        let distribution = !name.ends_with("-variants.json");
        if options.keep && distribution {
            report.kept += 1;
        } else {
            store.remove(&name)?;
            report.removed += usize::from(distribution);
        }
    }
    store.save()?;

    // 3. Publish.
    // A class of one GPU family lists its slim variant wheels in place of the fat ones.
    let classes = match (&options.slim, &report.slim) {
        (Some(request), Some(summary)) => {
            slim::class_files_with_slim(&plan.classes, &request.classes, summary)
        }
        _ => plan.classes.clone(),
    };
    let built = publish::publish(&store, site.as_ref(), &options.destination, &classes)?;
    if !built.linked.is_empty() {
        store.follow_links(&built.linked);
        store.save()?;
    }
    report.warnings = built.stats.warnings;
    report.variants_json = built.stats.variants_json;
    report.published = built.stats.written;
    // The slim wheels' labels are the mirror's own, not the lock's.
    let present: Vec<String> = store
        .list()?
        .into_iter()
        .filter(|name| !slim_files.contains(name.as_str()))
        .collect();
    for release in &plan.releases {
        report.warnings.extend(check_variants_json(
            site.as_ref(),
            &built.variants_json,
            release,
            &present,
        ));
    }
    for file in &plan.files {
        let received = std::fs::metadata(store.path(&file.filename)).map(|m| m.len());
        if let Ok(received) = received {
            report.received.insert(file.filename.clone(), received);
        }
        let size = received.unwrap_or(file.size.unwrap_or(0));
        report.files.0 += 1;
        report.files.1 += size;
    }
    for wheel in report.slim.iter().flat_map(|s| &s.wheels) {
        report.received.insert(wheel.filename.clone(), wheel.size);
    }
    report.every_variant = plan.every_variant;
    for filename in &plan.without_size {
        match std::fs::metadata(store.path(filename)) {
            Ok(meta) => report.every_variant.1 += meta.len(),
            Err(_) => report.unknown_sizes += 1,
        }
    }
    Ok(report)
}

/// Compares the `*-variants.json` the site publishes for `release` (combined from the wheels
/// mirrored) with the lock's `[packages.variants-json]` narrowed to the same labels: the lock
/// recorded what the upstream index said, and an installer choosing from the mirror must see
/// the same variants. A difference is a warning naming the labels.
fn check_variants_json(
    site: &dyn crate::publish::SiteStore,
    published: &std::collections::BTreeMap<String, String>,
    release: &Release,
    present: &[String],
) -> Option<String> {
    let expected = release.variants_json.as_ref()?;
    let labels: Vec<VariantLabel> = present
        .iter()
        .filter_map(|name| WheelFilename::parse(name).ok())
        .filter(|wheel| {
            vari_core::project::normalize(&wheel.name) == release.project
                && wheel.version == release.version
        })
        .filter_map(|wheel| wheel.label)
        .collect();
    if labels.is_empty() {
        return None;
    }
    let filename = variants_json_filename(&release.project, &release.version);
    let location = site.locate(&crate::site::files_path(&filename));
    let published = published
        .get(&filename)
        .and_then(|text| read_json(text, SourceKind::IndexFile).ok());
    let narrowed = expected.keep_labels(&labels);
    let differing: Vec<String> = labels
        .iter()
        .filter(|label| {
            published.as_ref().and_then(|p| p.variants.get(*label)) != narrowed.variants.get(*label)
        })
        .map(ToString::to_string)
        .collect();
    (!differing.is_empty()).then(|| {
        format!(
            "{location}: variants {} differ from the lock's variants-json for {}=={} (the \
             wheels' variant.json disagree with the index the lock was made from)",
            differing.join(", "),
            release.project,
            release.version
        )
    })
}

#[cfg(test)]
mod upstream_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_every_size_the_summary_claims_no_bytes_saved() {
        let report = MirrorReport {
            files: (2, 2_097_152),
            targets: 1,
            every_variant: (5, 2_097_152),
            unknown_sizes: 3,
            ..MirrorReport::default()
        };
        assert_eq!(
            report.summary(),
            "mirrored 2 files (2.0 MiB) for 1 target; every variant of these releases would be 5 \
             files (2.0 MiB and 3 of a size the index does not give): saved 3 files"
        );
    }

    #[test]
    fn the_summary_says_what_was_saved() {
        let report = MirrorReport {
            files: (14, 1_258_291),
            targets: 2,
            every_variant: (31, 4_194_304),
            ..MirrorReport::default()
        };
        assert_eq!(
            report.summary(),
            "mirrored 14 files (1.2 MiB) for 2 targets; every variant of these releases would \
             be 31 files (4.0 MiB): saved 17 files, 2.8 MiB (70 %)"
        );
        assert_eq!(vari_fs::human_bytes(512), "512 B");
    }
}
