//! Rewritten wheels on disk: a variant wheel whose dependencies carry variant markers is served
//! as a copy whose METADATA has them evaluated for the target (`vari_wheel::replace_metadata`:
//! only METADATA and RECORD change, every other member is copied raw).
//!
//! A copy lives in `{cache}/wheels/{key}/{shown name}` next to `info.json` (its SHA-256 and
//! size). The key digests the upstream file (its SHA-256, else its URL), the marker context and
//! the new METADATA, so a copy is reused across runs exactly when it would come out the same.
//! Both files are written atomically, `info.json` last: a copy without it is not trusted.
//! Concurrent requests for one copy wait for one build ([`Flights`]).
//!
//! Copies are as large as their upstream wheels, so unused ones are evicted
//! ([`crate::ProxyCacheLayout`], when a proxy starts, and `vari cache prune`) by the time of
//! `info.json`, which serving a copy refreshes ([`USE_RESOLUTION`]).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use vari_client::{IndexClient, IndexFile};
use vari_core::markers::VariantMarkerContext;

use crate::error::ServeError;
use crate::flight::{Flights, Outcome};

/// The proxy's directory in vari's cache directory (when it is not given one).
pub(crate) const AREA_DIR: &str = "proxy";
/// The rewritten copies' directory in the proxy's cache directory.
pub(crate) const WHEELS_DIR: &str = "wheels";
/// The builds' scratch directory in the proxy's cache directory.
pub(crate) const SCRATCH_DIR: &str = "tmp";
/// How a build's scratch directory's name starts (`tempfile`'s default, which earlier versions
/// used, so that what they left is recognised too).
pub(crate) const SCRATCH_PREFIX: &str = ".tmp";
/// The file beside a copy that makes it trusted.
pub(crate) const INFO_FILE: &str = "info.json";
/// The bytes of the SHA-256 a copy's key (its directory's name) is made of.
pub(crate) const KEY_BYTES: usize = 16;

/// A copy to build.
#[derive(Debug)]
pub(crate) struct RewriteJob {
    /// Names the copy in the cache.
    pub(crate) key: String,
    /// The upstream wheel.
    pub(crate) file: IndexFile,
    /// The name it is served under.
    pub(crate) shown_as: String,
    /// The new METADATA; `None`: read the wheel's own and evaluate its markers when building.
    pub(crate) metadata: Option<Bytes>,
    /// What the markers are evaluated against.
    pub(crate) context: VariantMarkerContext,
}

impl RewriteJob {
    pub(crate) fn new(
        file: &IndexFile,
        shown_as: &str,
        metadata: Option<Bytes>,
        context: &VariantMarkerContext,
    ) -> Self {
        let mut id = String::from("vari-proxy rewritten wheel 1\n");
        match file.hashes.sha256() {
            Some(sha256) => id.push_str(&format!("sha256:{sha256}\n")),
            None => {
                id.push_str(&format!("url:{}\n", file.url));
                // A local file without a published hash may change in place.
                if let Some(meta) = file
                    .url
                    .to_file_path()
                    .ok()
                    .and_then(|p| std::fs::metadata(p).ok())
                {
                    let modified = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_nanos())
                        .unwrap_or_default();
                    id.push_str(&format!("local:{}:{modified}\n", meta.len()));
                }
            }
        }
        id.push_str(&format!(
            "label:{}\n",
            context.label.as_ref().map(|l| l.as_str()).unwrap_or("")
        ));
        for property in &context.properties {
            id.push_str(&format!("property:{property}\n"));
        }
        match &metadata {
            Some(text) => id.push_str(&format!("metadata:{}\n", hex::encode(Sha256::digest(text)))),
            None => id.push_str("metadata:read from the wheel\n"),
        }
        Self {
            key: hex::encode(&Sha256::digest(id.as_bytes())[..KEY_BYTES]),
            file: file.clone(),
            shown_as: shown_as.to_owned(),
            metadata,
            context: context.clone(),
        }
    }
}

/// A copy ready to serve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Built {
    /// The copy.
    #[serde(skip)]
    pub(crate) path: PathBuf,
    /// Its SHA-256, lowercase hex.
    pub(crate) sha256: String,
    /// Its size in bytes.
    pub(crate) size: u64,
}

/// How often serving a copy refreshes its `info.json` time: eviction counts unused days, so
/// an hour's precision costs nothing, and a copy read in many requests (ranges, several
/// installers) is written to at most once an hour, not once per request.
pub(crate) const USE_RESOLUTION: Duration = Duration::from_secs(60 * 60);

/// The cache of rewritten copies.
pub(crate) struct Rewrites {
    wheels: PathBuf,
    temp: PathBuf,
    flights: Flights<Built>,
    /// When this process last refreshed each copy's use time, by key.
    used: Mutex<HashMap<String, Instant>>,
}

impl Rewrites {
    /// The cache under `dir` (created when missing).
    pub(crate) fn new(dir: &Path) -> std::io::Result<Self> {
        let wheels = dir.join(WHEELS_DIR);
        let temp = dir.join(SCRATCH_DIR);
        // Real directories below `dir`: a link planted there is replaced (vari_fs::cache_write).
        vari_fs::ensure_cache_dir(dir, &wheels)?;
        vari_fs::ensure_cache_dir(dir, &temp)?;
        Ok(Self {
            wheels,
            temp,
            flights: Flights::default(),
            used: Mutex::default(),
        })
    }

    fn place(&self, job: &RewriteJob) -> (PathBuf, PathBuf) {
        let dir = self.wheels.join(&job.key);
        (dir.join(&job.shown_as), dir.join(INFO_FILE))
    }

    /// The copy of `job` if it was built (in this run or an earlier one).
    pub(crate) fn known(&self, job: &RewriteJob) -> Option<Arc<Built>> {
        if let Some(built) = self.flights.ready(&job.key) {
            return Some(built);
        }
        let (path, info) = self.place(job);
        let built = Arc::new(on_disk(&path, &info)?);
        self.flights.put(&job.key, built.clone());
        Some(built)
    }

    /// The copy of `job`, built now unless it exists or is being built. Asking for a copy (to
    /// serve it, or because an installer read its metadata) counts as using it.
    pub(crate) async fn get(
        &self,
        client: Arc<IndexClient>,
        job: Arc<RewriteJob>,
    ) -> Outcome<Built> {
        let (path, info) = self.place(&job);
        let (key, used) = (job.key.clone(), info.clone());
        let temp = self.temp.clone();
        let outcome =
            self.flights
                .get(
                    &job.key.clone(),
                    |built| built.path.is_file(),
                    // A failed copy is tried again on the next request: the wheel is listed, and
                    // its download is rarer than page requests.
                    Duration::ZERO,
                    move || {
                        tokio::spawn(async move {
                            if let Some(built) = on_disk(&path, &info) {
                                return Ok(built);
                            }
                            let built = build(&client, &job, &path, &info, &temp).await.map_err(
                                |message| ServeError::Rewrite {
                                    filename: job.shown_as.clone(),
                                    message,
                                },
                            )?;
                            tracing::info!(
                                "{}: rewritten copy of {} ready ({} bytes, sha256 {})",
                                job.shown_as,
                                job.file.filename,
                                built.size,
                                built.sha256
                            );
                            Ok(built)
                        })
                    },
                )
                .await;
        if outcome.is_ok() {
            self.mark_used(&key, &used, Instant::now());
        }
        outcome
    }

    /// Sets the time of the copy's `info.json` to now, unless this process did so less than
    /// [`USE_RESOLUTION`] ago. A failure (the copy was removed meanwhile by `vari cache clean`)
    /// only costs its use time: the copy is rebuilt when next asked for.
    fn mark_used(&self, key: &str, info: &Path, now: Instant) {
        {
            let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
            match used.get(key) {
                Some(at) if now.duration_since(*at) < USE_RESOLUTION => return,
                _ => used.insert(key.to_owned(), now),
            };
        }
        // One small system call: not worth a blocking task. Never created: an `info.json`
        // that was removed stays removed.
        let touched = std::fs::File::options()
            .write(true)
            .open(info)
            .and_then(|file| file.set_modified(SystemTime::now()));
        if let Err(e) = touched {
            tracing::debug!("cannot refresh the use time of {}: {e}", info.display());
        }
    }
}

/// A copy whose `info.json` exists and matches its size.
fn on_disk(path: &Path, info: &Path) -> Option<Built> {
    let text = vari_fs::read_cache_file(info, 1 << 20)?;
    let mut built: Built = serde_json::from_slice(&text).ok()?;
    let size = std::fs::metadata(path).ok()?.len();
    (size == built.size).then(|| {
        built.path = path.to_path_buf();
        built
    })
}

async fn build(
    client: &IndexClient,
    job: &RewriteJob,
    dest: &Path,
    info: &Path,
    temp: &Path,
) -> Result<Built, String> {
    let dir = dest.parent().unwrap_or(dest);
    // The proxy's cache directory holds `tmp/` and `wheels/`: below it, nothing vari writes
    // goes through a planted link (vari_fs::cache_write).
    let root = temp.parent().unwrap_or(temp);
    vari_fs::ensure_cache_dir(root, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for planted in [dest, info] {
        if std::fs::symlink_metadata(planted).is_ok_and(|m| m.file_type().is_symlink()) {
            std::fs::remove_file(planted).map_err(|e| format!("{}: {e}", planted.display()))?;
        }
    }
    // The upstream wheel on disk: a local one as it is, a remote one downloaded (hash-checked)
    // into a directory of its own, removed when done.
    let scratch = tempfile::Builder::new()
        .prefix(SCRATCH_PREFIX)
        .tempdir_in(temp)
        .map_err(|e| format!("{}: {e}", temp.display()))?;
    let source = match job.file.url.to_file_path() {
        Ok(path) if job.file.url.scheme() == "file" => path,
        _ => {
            // Under its own name: the wheel's name says where its .dist-info is.
            let path = scratch.path().join(&job.file.filename);
            client
                .download(&job.file, &path, &|_, _| {})
                .await
                .map_err(|e| e.to_string())?;
            path
        }
    };
    let metadata = match &job.metadata {
        Some(text) => Some(text.clone()),
        None => {
            // Read from the wheel on disk (the hash-checked download, or the local source) as
            // a wheel, not as a URL: the client refuses `file:` URLs of a remote index's files,
            // which made every download of such a wheel a 502.
            let wheel = source.clone();
            let text = tokio::task::spawn_blocking(move || vari_wheel::read_core_metadata(&wheel))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            vari_core::metadata::resolve_variant_markers(&text, &job.context)
                .map_err(|e| format!("its METADATA: {e}"))?
                .map(|rewritten| Bytes::from(rewritten.into_bytes()))
        }
    };
    let (source, dest_owned) = (source.clone(), dest.to_path_buf());
    let (sha256, size) = tokio::task::spawn_blocking(move || match metadata {
        Some(text) => {
            let written = vari_wheel::replace_metadata(&source, &dest_owned, &text)
                .map_err(|e| e.to_string())?;
            match written.sha256 {
                Some(sha256) => Ok((sha256, written.size)),
                None => digest(&dest_owned),
            }
        }
        // No variant marker after all: the copy is the upstream wheel.
        None => {
            copy_atomic(&source, &dest_owned)?;
            digest(&dest_owned)
        }
    })
    .await
    .map_err(|e| e.to_string())??;
    let built = Built {
        path: dest.to_path_buf(),
        sha256,
        size,
    };
    let text = serde_json::to_vec(&built).map_err(|e| e.to_string())?;
    vari_fs::write_cache_file(root, info, &text).map_err(|e| e.to_string())?;
    drop(scratch);
    Ok(built)
}

fn copy_atomic(source: &Path, dest: &Path) -> Result<(), String> {
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", dest.display());
    let mut input =
        std::fs::File::open(source).map_err(|e| format!("{}: {e}", source.display()))?;
    let mut output = vari_fs::AtomicFile::create(dest).map_err(|e| fail(&e))?;
    std::io::copy(&mut input, &mut output).map_err(|e| fail(&e))?;
    output.commit().map_err(|e| fail(&e))
}

fn digest(path: &Path) -> Result<(String, u64), String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 256 * 1024];
    let mut size = 0u64;
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buffer[..n]);
                size += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Ok((hex::encode(hasher.finalize()), size))
}

#[cfg(test)]
mod tests {
    use vari_client::{ClientSettings, CoreMetadata, FileKind, FileSource};

    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    fn job() -> RewriteJob {
        let name = "demo-1.0-py3-none-any.whl";
        let url =
            url::Url::parse("https://example.invalid/demo-1.0-py3-none-any-fbe82642.whl").unwrap();
        let file = IndexFile {
            filename: name.to_owned(),
            kind: FileKind::Wheel(name.parse().unwrap()),
            url: url.clone(),
            hashes: [("sha256", "ab".repeat(32))].into_iter().collect(),
            requires_python: None,
            yanked: None,
            core_metadata: CoreMetadata::Absent,
            size: None,
            upload_time: None,
            source: FileSource::Index(url),
        };
        let metadata = Bytes::from_static(b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n");
        RewriteJob::new(
            &file,
            name,
            Some(metadata),
            &VariantMarkerContext::default(),
        )
    }

    fn modified(path: &Path) -> SystemTime {
        std::fs::metadata(path).unwrap().modified().unwrap()
    }

    fn set_modified(path: &Path, time: SystemTime) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(time).unwrap();
    }

    #[test]
    fn a_copy_and_a_builds_scratch_are_entries_of_the_proxy_area() {
        use vari_fs::cache_admin::AreaLayout;
        let root = tempfile::tempdir().unwrap();
        let rewrites = Rewrites::new(&root.path().join(AREA_DIR)).unwrap();
        let (path, info) = rewrites.place(&job());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"the rewritten wheel").unwrap();
        std::fs::write(&info, b"{}").unwrap();
        let scratch = tempfile::Builder::new()
            .prefix(SCRATCH_PREFIX)
            .tempdir_in(&rewrites.temp)
            .unwrap();
        let listed = crate::ProxyCacheLayout.entries(root.path()).unwrap();
        let named: Vec<_> = listed.iter().map(|e| e.path().to_owned()).collect();
        assert_eq!(named, [path.parent().unwrap(), scratch.path()]);
        // `info.json` goes first: a copy half-removed is never trusted.
        assert_eq!(listed[0].paths()[0], info);
        assert_eq!(listed[0].bytes(), 19 + 2);
    }

    /// Serving a copy built by an earlier run: no download (the upstream URL does not resolve),
    /// and its use time is refreshed, at most once an hour.
    #[tokio::test]
    async fn serving_a_cached_copy_refreshes_its_use_time_at_most_hourly() {
        let dir = tempfile::tempdir().unwrap();
        let rewrites = Rewrites::new(dir.path()).unwrap();
        let job = Arc::new(job());
        let (path, info) = rewrites.place(&job);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"the rewritten wheel").unwrap();
        let built = Built {
            path: path.clone(),
            sha256: "cd".repeat(32),
            size: 19,
        };
        std::fs::write(&info, serde_json::to_vec(&built).unwrap()).unwrap();
        let long_ago = SystemTime::now() - DAY * 40;
        set_modified(&info, long_ago);
        set_modified(&path, long_ago);
        let client = Arc::new(
            IndexClient::new(ClientSettings {
                cache_dir: None,
                ..ClientSettings::default()
            })
            .unwrap(),
        );

        let served = rewrites.get(client.clone(), job.clone()).await.unwrap();
        assert_eq!(*served, built);
        let first = modified(&info);
        assert!(
            first > SystemTime::now() - Duration::from_secs(60),
            "{first:?}"
        );
        assert_eq!(modified(&path), long_ago, "the copy itself is not written");

        // Served again within the hour: not written again.
        set_modified(&info, long_ago);
        rewrites.get(client.clone(), job.clone()).await.unwrap();
        assert_eq!(modified(&info), long_ago);

        // An hour later it is.
        rewrites.mark_used(&job.key, &info, Instant::now() + USE_RESOLUTION);
        assert!(modified(&info) > long_ago + DAY * 39);

        // A copy removed meanwhile (`vari cache clean`) stays removed: nothing is created.
        std::fs::remove_file(&info).unwrap();
        rewrites.mark_used(&job.key, &info, Instant::now() + USE_RESOLUTION * 3);
        assert!(!info.exists());
    }
}
