//! Downloading the missing files into the store: in parallel (at most [`CONCURRENT_DOWNLOADS`]
//! at once), each hashed while it streams and written atomically by `vari-client`, so a file
//! that does not match the lock's SHA-256, or a transfer cut short, leaves nothing behind.

use futures_util::stream::{self, StreamExt};
use vari_client::{ClientError, Downloaded, IndexClient, IndexFile};
use vari_client::{CoreMetadata, Hashes};
use vari_core::filename::WheelFilename;

use super::error::FileFailure;
use super::plan::MirrorFile;

/// How many files download at once: enough to fill a link to a nearby index, few enough not
/// to be throttled by it.
pub const CONCURRENT_DOWNLOADS: usize = 8;

/// Told about the downloads. The CLI draws one progress bar with it.
pub trait MirrorProgress: Sync {
    /// Downloading starts: `files` files of about `bytes` bytes (what the lock says).
    fn start(&self, files: usize, bytes: u64) {
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

/// Downloads `files` into `dir` (names already checked); the result of each, in order.
pub(crate) async fn download_all(
    client: &IndexClient,
    files: &[&MirrorFile],
    dir: &std::path::Path,
    progress: &dyn MirrorProgress,
) -> Vec<Result<Downloaded, FileFailure>> {
    let tasks = files.iter().map(|file| async move {
        let index_file = index_file(file);
        let path = dir.join(&file.filename);
        let seen = std::sync::atomic::AtomicU64::new(0);
        let report = |done: u64, _total: Option<u64>| {
            let before = seen.swap(done, std::sync::atomic::Ordering::Relaxed);
            progress.advance(done.saturating_sub(before));
        };
        let result = client.download(&index_file, &path, &report).await;
        progress.file_done();
        result.map_err(|e| failure(file, &e))
    });
    stream::iter(tasks)
        .buffered(CONCURRENT_DOWNLOADS)
        .collect()
        .await
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
