//! Rewritten wheels on disk: a variant wheel whose dependencies carry variant markers is served
//! as a copy whose METADATA has them evaluated for the target (`vari_wheel::replace_metadata`:
//! only METADATA and RECORD change, every other member is copied raw).
//!
//! A copy lives in `{cache}/wheels/{key}/{shown name}` next to `info.json` (its SHA-256 and
//! size). The key digests the upstream file (its SHA-256, else its URL), the marker context and
//! the new METADATA, so a copy is reused across runs exactly when it would come out the same.
//! Both files are written atomically, `info.json` last: a copy without it is not trusted.
//! Concurrent requests for one copy wait for one build ([`Flights`]).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use vari_client::{CoreMetadata, IndexClient, IndexFile};
use vari_core::markers::VariantMarkerContext;

use crate::error::ServeError;
use crate::flight::{Flights, Outcome};
use crate::pages::hex;

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
            Some(text) => id.push_str(&format!("metadata:{}\n", hex(&Sha256::digest(text)))),
            None => id.push_str("metadata:read from the wheel\n"),
        }
        Self {
            key: hex(&Sha256::digest(id.as_bytes())[..16]),
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

/// The cache of rewritten copies.
pub(crate) struct Rewrites {
    wheels: PathBuf,
    temp: PathBuf,
    flights: Flights<Built>,
}

impl Rewrites {
    /// The cache under `dir` (created when missing).
    pub(crate) fn new(dir: &Path) -> std::io::Result<Self> {
        let wheels = dir.join("wheels");
        let temp = dir.join("tmp");
        std::fs::create_dir_all(&wheels)?;
        std::fs::create_dir_all(&temp)?;
        Ok(Self {
            wheels,
            temp,
            flights: Flights::default(),
        })
    }

    fn place(&self, job: &RewriteJob) -> (PathBuf, PathBuf) {
        let dir = self.wheels.join(&job.key);
        (dir.join(&job.shown_as), dir.join("info.json"))
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

    /// The copy of `job`, built now unless it exists or is being built.
    pub(crate) async fn get(
        &self,
        client: Arc<IndexClient>,
        job: Arc<RewriteJob>,
    ) -> Outcome<Built> {
        let (path, info) = self.place(&job);
        let temp = self.temp.clone();
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
                        let built =
                            build(&client, &job, &path, &info, &temp)
                                .await
                                .map_err(|message| ServeError::Rewrite {
                                    filename: job.shown_as.clone(),
                                    message,
                                })?;
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
            .await
    }
}

/// A copy whose `info.json` exists and matches its size.
fn on_disk(path: &Path, info: &Path) -> Option<Built> {
    let text = std::fs::read(info).ok()?;
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
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // The upstream wheel on disk: a local one as it is, a remote one downloaded (hash-checked)
    // into a directory of its own, removed when done.
    let scratch =
        tempfile::TempDir::new_in(temp).map_err(|e| format!("{}: {e}", temp.display()))?;
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
            let local = IndexFile {
                url: url::Url::from_file_path(&source)
                    .map_err(|()| format!("{}: not an absolute path", source.display()))?,
                core_metadata: CoreMetadata::Absent,
                ..job.file.clone()
            };
            let text = client
                .core_metadata(&local)
                .await
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
    vari_fs::write_atomic(info, &text).map_err(|e| e.to_string())?;
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
    Ok((hex(&hasher.finalize()), size))
}
