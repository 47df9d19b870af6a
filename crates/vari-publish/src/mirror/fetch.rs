//! Downloading the missing files into the store: in parallel (at most [`CONCURRENT_DOWNLOADS`]
//! at once), each hashed while it streams and written atomically by `vari-client`, so a file
//! that does not match the lock's SHA-256, or a transfer cut short, leaves nothing behind.
//!
//! Each download is a task of its own, so that on a multi-threaded runtime the hashing and
//! writing of several files (the CPU a transfer costs) run on several cores instead of one;
//! their progress comes back through a channel to the caller's [`MirrorProgress`].

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use vari_client::{ClientError, Downloaded, IndexClient, IndexFile};
use vari_client::{CoreMetadata, Hashes};
use vari_core::filename::WheelFilename;

use super::error::FileFailure;
use super::plan::MirrorFile;

/// How many files download at once: enough to fill a link to a nearby index, few enough not
/// to be throttled by it.
pub const CONCURRENT_DOWNLOADS: usize = 8;

/// The runtime a mirror downloads on: multi-threaded, a worker per core up to
/// [`CONCURRENT_DOWNLOADS`], so that the hashing and writing of the files in flight (what a fast
/// link makes the bottleneck) use as many cores as there are downloads.
pub fn download_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(CONCURRENT_DOWNLOADS);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("vari-mirror")
        .enable_all()
        .build()
}

/// Told about the downloads. The CLI draws one progress bar with it.
pub trait MirrorProgress: Sync {
    /// Downloading starts: `files` files of `bytes` bytes in all (what the index or the lock
    /// says), `None` when a file's size is not known (a PEP 503 page gives none).
    fn start(&self, files: usize, bytes: Option<u64>) {
        let _ = (files, bytes);
    }
    /// `bytes` more bytes arrived.
    fn advance(&self, bytes: u64) {
        let _ = bytes;
    }
    /// One more file is done (downloaded or failed).
    fn file_done(&self) {}
    /// Downloading is over.
    fn finish(&self) {}
    /// Another run holds the store's `lock` file: this one waits for it to finish.
    fn blocked(&self, lock: &std::path::Path) {
        let _ = lock;
    }
}

/// A [`MirrorProgress`] that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMirrorProgress;

impl MirrorProgress for NoMirrorProgress {}

/// What a download task tells the caller's progress.
enum Event {
    /// More bytes arrived.
    Bytes(u64),
    /// A file is done (downloaded or failed).
    FileDone,
}

/// Downloads `files` into `dir` (names already checked); the result of each, in order.
pub(crate) async fn download_all(
    client: &Arc<IndexClient>,
    files: &[&MirrorFile],
    dir: &Path,
    progress: &dyn MirrorProgress,
) -> Vec<Result<Downloaded, FileFailure>> {
    let (events, mut received) = tokio::sync::mpsc::unbounded_channel();
    // Futures only: nothing starts until the stream below polls them.
    let tasks: Vec<_> = files
        .iter()
        .map(|file| {
            let task = download_one(
                Arc::clone(client),
                (*file).clone(),
                dir.join(&file.filename),
                events.clone(),
            );
            async move {
                // Started when the stream reaches it, so at most CONCURRENT_DOWNLOADS run at once.
                let handle = tokio::spawn(task);
                handle.await.unwrap_or_else(|e| {
                    Err(FileFailure {
                        filename: file.filename.clone(),
                        url: file.url.to_string(),
                        problem: format!("the download stopped: {e}"),
                    })
                })
            }
        })
        .collect();
    drop(events);
    let results = stream::iter(tasks)
        .buffered(CONCURRENT_DOWNLOADS)
        .collect::<Vec<_>>();
    // Every sender is gone once every task is: the progress loop ends with the downloads.
    let report = async {
        while let Some(event) = received.recv().await {
            match event {
                Event::Bytes(bytes) => progress.advance(bytes),
                Event::FileDone => progress.file_done(),
            }
        }
    };
    futures_util::future::join(results, report).await.0
}

/// One download, as a task of its own.
async fn download_one(
    client: Arc<IndexClient>,
    file: MirrorFile,
    path: std::path::PathBuf,
    events: tokio::sync::mpsc::UnboundedSender<Event>,
) -> Result<Downloaded, FileFailure> {
    let seen = AtomicU64::new(0);
    let report = |done: u64, _total: Option<u64>| {
        let before = seen.swap(done, Ordering::Relaxed);
        // The receiver outlives every task; a send can only fail after the run ended.
        let _ = events.send(Event::Bytes(done.saturating_sub(before)));
    };
    let result = client.download(&index_file(&file), &path, &report).await;
    let _ = events.send(Event::FileDone);
    result.map_err(|e| failure(&file, &e))
}

/// The file as the client downloads it: the lock's URL, checked against the lock's SHA-256.
fn index_file(file: &MirrorFile) -> IndexFile {
    let kind = match WheelFilename::parse(&file.filename) {
        Ok(wheel) => vari_client::FileKind::Wheel(wheel),
        Err(_) => vari_client::FileKind::Sdist {
            version: file.version.clone(),
        },
    };
    IndexFile {
        filename: file.filename.clone(),
        kind,
        url: file.url.clone(),
        hashes: Hashes::sha256_of(&file.sha256),
        requires_python: None,
        yanked: None,
        core_metadata: CoreMetadata::Absent,
        size: file.size,
        upload_time: None,
        source: vari_client::FileSource::Index(file.url.clone()),
    }
}

fn failure(file: &MirrorFile, error: &ClientError) -> FileFailure {
    let problem = match error {
        ClientError::HashMismatch(mismatch) => format!(
            "refused: its {} is {}, the lock says {}",
            mismatch.algorithm, mismatch.actual, mismatch.expected
        ),
        other => other.to_string(),
    };
    FileFailure {
        filename: file.filename.clone(),
        url: file.url.to_string(),
        problem,
    }
}
