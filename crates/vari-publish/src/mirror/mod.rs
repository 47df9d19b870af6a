//! `mirror`: a static index holding exactly the files a fleet's machine classes install from a
//! lock: each target's chosen file per package, with the null variant and the plain wheel of
//! the same release and tags as fallbacks, and every package the targets' dependency closures
//! reach ([`MirrorPlan`]). Each file is downloaded once, checked against the lock's SHA-256
//! while it streams, into a local store (`DEST/.vari-mirror/files/`), and the site is built
//! from the store by `index build`'s builder, which combines each release's `*-variants.json`
//! from the wheels mirrored: it holds their labels only (PEP 825 allows dropping the others),
//! and is checked against the lock's `[packages.variants-json]` narrowed to the same labels.
//!
//! A run in the order a reader can never notice:
//! 1. download what the store lacks (a file the state does not vouch for is hashed first);
//!    any failure (a hash mismatch, a transfer cut short) publishes nothing, and the files that
//!    did arrive are kept for the next run;
//! 2. drop from the store what no target needs (unless `keep`);
//! 3. publish: files, then project pages, the root page last, removals after it (atomic pages).
//!
//! A second run downloads only what changed, and rewrites only pages whose content changed.

mod error;
mod fetch;
mod plan;
mod publish;
mod store;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use vari_client::IndexClient;
use vari_core::filename::{variants_json_filename, WheelFilename};
use vari_core::metadata::{read_json, SourceKind};
use vari_core::names::VariantLabel;

pub use error::{FileFailure, MirrorError};
pub use fetch::{MirrorProgress, NoMirrorProgress, CONCURRENT_DOWNLOADS};
pub use plan::{MirrorFile, MirrorPlan, TargetFiles};

use plan::Release;
use store::Store;

/// Where and how to mirror.
pub struct MirrorOptions<'a> {
    /// The site directory (created when missing). Its `.vari-mirror/` holds the store.
    pub dest: PathBuf,
    /// Keep files no target needs any more (they stay published).
    pub keep: bool,
    /// Told about the downloads.
    pub progress: &'a dyn MirrorProgress,
}

impl std::fmt::Debug for MirrorOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MirrorOptions")
            .field("dest", &self.dest)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
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
    /// Files downloaded in this run, and their bytes.
    pub downloaded: (usize, u64),
    /// Files no target needs that were removed (or, with `keep`, kept).
    pub removed: usize,
    /// Files no target needs that `keep` kept published.
    pub kept: usize,
    /// The `*-variants.json` files published.
    pub variants_json: Vec<String>,
    /// What needs the operator's attention (from building the site), one sentence each.
    pub warnings: Vec<String>,
}

impl MirrorReport {
    /// The one line saying what was mirrored and what it saved against mirroring every
    /// variant of the same releases.
    pub fn summary(&self) -> String {
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
        format!(
            "mirrored {files} files ({}) for {targets}; every variant of these releases would be \
             {all_files} files ({}): saved {} files, {} ({percent:.0} %)",
            vari_fs::human_bytes(bytes),
            vari_fs::human_bytes(all_bytes),
            all_files.saturating_sub(files),
            vari_fs::human_bytes(all_bytes.saturating_sub(bytes)),
        )
    }
}

impl MirrorReport {
    /// What this run did: `downloaded 3 files (1.2 MiB); removed 1 file no target needs`.
    pub fn activity(&self) -> String {
        let (files, bytes) = self.downloaded;
        let mut text = format!(
            "downloaded {files} file(s) ({})",
            vari_fs::human_bytes(bytes)
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

/// Mirrors `plan` into `options.dest`, downloading with `client` on `runtime` (the one the
/// client was made for).
pub fn mirror(
    client: &IndexClient,
    runtime: &tokio::runtime::Runtime,
    plan: &MirrorPlan,
    options: &MirrorOptions<'_>,
) -> Result<MirrorReport, MirrorError> {
    let mut store = Store::open(&options.dest)?;

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
        let expected = missing.iter().map(|f| f.size.unwrap_or(0)).sum();
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

    // 2. Drop what no target needs. The release metadata is not kept in the store: the site
    // builder combines each release's `*-variants.json` from the wheels mirrored, so it holds
    // exactly their labels.
    let wanted: BTreeSet<&str> = plan.files.iter().map(|f| f.filename.as_str()).collect();
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
    let stats = publish::publish(store.files_dir(), &options.dest)?;
    report.variants_json = stats.variants_json;
    report.warnings = stats.warnings;
    let present = store.list()?;
    for release in &plan.releases {
        report
            .warnings
            .extend(check_variants_json(&options.dest, release, &present));
    }
    for file in &plan.files {
        let size = std::fs::metadata(store.path(&file.filename))
            .map(|m| m.len())
            .unwrap_or(file.size.unwrap_or(0));
        report.files.0 += 1;
        report.files.1 += size;
    }
    report.every_variant = plan.every_variant;
    for filename in &plan.without_size {
        if let Ok(meta) = std::fs::metadata(store.path(filename)) {
            report.every_variant.1 += meta.len();
        }
    }
    Ok(report)
}

/// Compares the `*-variants.json` the site publishes for `release` (combined from the wheels
/// mirrored) with the lock's `[packages.variants-json]` narrowed to the same labels: the lock
/// recorded what the upstream index said, and an installer choosing from the mirror must see
/// the same variants. A difference is a warning naming the labels.
fn check_variants_json(dest: &Path, release: &Release, present: &[String]) -> Option<String> {
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
    let path = dest.join(crate::site::FILES_DIR).join(&filename);
    let published = vari_fs::read_input(&path, vari_fs::InputKind::Metadata)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| read_json(&text, SourceKind::IndexFile).ok());
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
            "{}: variants {} differ from the lock's variants-json for {}=={} (the wheels' \
             variant.json disagree with the index the lock was made from)",
            path.display(),
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
