//! The record that lets a store file be used again without hashing it: `{file}.record.json`
//! beside it, written when vari hashed the file, holding the SHA-256 it found and the file's
//! stamp then (size, modification and change times, inode, device).
//!
//! Hashing every store file on every sync cost most of `vari sync`'s time over the installer's
//! (measured: 25 ms of 31 for 28 MB, `bench/sync.sh`), while uv trusts its own cache the same
//! way: this is the fast path, and it keeps the lock's hash the only root of trust for what
//! enters the store.
//!
//! # What a record vouches for
//!
//! A record holds the file's [`vari_fs::Seal`]: it vouches for the file while the file's
//! [`vari_fs::Stamp`] (size, modification and change times, inode, device) is the one taken
//! after the hashing, and that stamp was settled, its change time older than the moment the
//! hashing began (the rule, and what it does not catch, are [`vari_fs::stamp`]'s, shared with
//! the mirror's store). The moment the hashing began is the modification time of the record's
//! own temporary file, created before the first byte is read (same file system, same clock).
//! The store is vari's own cache: whoever can write in it can as well replace what the
//! installers read from their own caches.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use vari_fs::{ClockProbe, Seal, Stamp};

/// The suffix of a file's record.
pub(super) const RECORD_SUFFIX: &str = ".record.json";

/// Written in every record; a record of another format is ignored.
const FORMAT: &str = "vari-locked-record/1";

/// A record is a few hundred bytes; anything larger is not one.
const MAX_RECORD_BYTES: u64 = 4096;

/// A file's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Record {
    format: String,
    /// The SHA-256 (lowercase hex) the file had when it was hashed.
    pub(super) sha256: String,
    /// The file's stamp after the hashing, and whether it was settled (written as
    /// `fingerprint` and `settled`).
    #[serde(flatten)]
    seal: Seal,
    /// For a wheel: whether its METADATA has `Requires-Dist` markers naming variant variables
    /// (then the installer gets a copy with them evaluated); unknown for other files. Read
    /// from the file that was hashed, so it holds as long as the record vouches for the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) variant_markers: Option<bool>,
    /// The record file's modification time: when the file was last used (see
    /// [`Record::mark_used`]).
    #[serde(skip)]
    written: Option<SystemTime>,
}

/// Where the record of `file` is.
pub(super) fn record_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(RECORD_SUFFIX);
    PathBuf::from(name)
}

/// The record of `file`, when there is one of this format (read without following a link,
/// bounded).
pub(super) fn read(file: &Path) -> Option<Record> {
    let path = record_path(file);
    let input = vari_fs::open_cache_file(&path)?;
    let written = input.metadata().ok()?.modified().ok();
    let mut bytes = Vec::new();
    vari_fs::input::read_bounded(input, MAX_RECORD_BYTES, &mut bytes).ok()?;
    let mut record = serde_json::from_slice::<Record>(&bytes)
        .ok()
        .filter(|r| r.format == FORMAT && vari_fs::cache_admin::layout::is_hex(&r.sha256, 64))?;
    record.written = written;
    Some(record)
}

impl Record {
    /// Whether this record vouches for `file` as it is now (a regular file, never followed
    /// through a link) without reading it.
    pub(super) fn vouches_for(&self, file: &Path) -> bool {
        self.seal.vouches_for(Stamp::of_file(file))
    }
}

/// How often a use is written down: `vari cache prune` counts in days, and a sync should not
/// write to the store on every run.
const USE_RESOLUTION: Duration = Duration::from_secs(60 * 60);

impl Record {
    /// Notes that `file` was used now (for `vari cache prune`, which removes what has not been
    /// used for a while): its record's modification time is set to now, at most once per
    /// [`USE_RESOLUTION`]. Only the record's time changes, never what it says; a failure (the
    /// store is read-only, the entry was just removed) only costs the use time.
    pub(super) fn mark_used(&self, file: &Path) {
        let now = SystemTime::now();
        if self
            .written
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|age| age < USE_RESOLUTION)
        {
            return;
        }
        let path = record_path(file);
        // Never through a link: only a regular file is touched (the record was read so).
        let touched = std::fs::symlink_metadata(&path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .ok_or_else(|| std::io::Error::other("not a regular file"))
            .and_then(|_| std::fs::File::options().write(true).open(&path))
            .and_then(|out| out.set_modified(now));
        if let Err(e) = touched {
            tracing::debug!("cannot note the use of {}: {e}", file.display());
        }
    }
}

/// A record about to be written: its temporary file is created before the file it describes
/// is hashed, and its modification time is when the hashing began.
pub(super) struct Probe {
    out: vari_fs::AtomicFile,
    began: Option<ClockProbe>,
}

impl Probe {
    /// Starts the record of `file` (in the store `store`); `None` when the store cannot be
    /// written (a record is an optimisation: without one the file is hashed next time).
    pub(super) fn start(store: &Path, file: &Path) -> Option<Self> {
        let out = vari_fs::AtomicFile::create_in_cache(store, &record_path(file))
            .map_err(|e| tracing::debug!("no record for {}: {e}", file.display()))
            .ok()?;
        let began = ClockProbe::of_new_file(out.as_file());
        Some(Self { out, began })
    }

    /// Writes the record: `file` (as it is now, after it was hashed) had `sha256`. Settled
    /// when its last change came before this probe started. Best effort, as [`Probe::start`].
    pub(super) fn finish(mut self, file: &Path, sha256: &str, variant_markers: Option<bool>) {
        let Some(stamp) = Stamp::of_file(file) else {
            return;
        };
        let record = Record {
            format: FORMAT.to_owned(),
            sha256: sha256.to_owned(),
            seal: Seal::new(stamp, self.began),
            variant_markers,
            written: None,
        };
        // Serialising strings, numbers and booleans cannot fail.
        let text = serde_json::to_vec(&record).unwrap_or_default();
        let written = self
            .out
            .write_all(&text)
            .map_err(|e| e.to_string())
            .and_then(|()| self.out.commit().map_err(|e| e.to_string()));
        if let Err(e) = written {
            tracing::debug!("no record for {}: {e}", file.display());
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// A file whose last change is well before now, and its SHA-256.
    fn old_file(dir: &Path) -> PathBuf {
        let file = dir.join("a.whl");
        std::fs::write(&file, b"the bytes").unwrap();
        // The change time is the write's; wait until it is in the past on any clock tick.
        std::thread::sleep(Duration::from_millis(50));
        file
    }

    #[test]
    fn a_record_written_after_the_last_change_vouches_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        Probe::start(dir.path(), &file)
            .unwrap()
            .finish(&file, SHA, Some(false));
        let record = read(&file).unwrap();
        assert_eq!(record.sha256, SHA);
        assert!(record.seal.settled());
        assert_eq!(record.variant_markers, Some(false));
        assert!(record.vouches_for(&file));

        // Rewritten in place, same size, modification time put back: no longer vouched for.
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, b"the bytex").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 9);
        assert!(!record.vouches_for(&file));
    }

    #[test]
    fn a_file_changed_after_its_probe_started_gets_an_unsettled_record() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let probe = Probe::start(dir.path(), &file).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&file, b"new bytes").unwrap();
        probe.finish(&file, SHA, None);
        let record = read(&file).unwrap();
        assert!(!record.seal.settled());
        assert!(!record.vouches_for(&file));
    }

    #[test]
    fn records_of_another_format_or_through_links_are_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        Probe::start(dir.path(), &file)
            .unwrap()
            .finish(&file, SHA, None);
        let text = std::fs::read_to_string(record_path(&file)).unwrap();
        std::fs::write(record_path(&file), text.replace(FORMAT, "other/1")).unwrap();
        assert_eq!(read(&file), None);
        std::fs::write(record_path(&file), text).unwrap();
        let record = read(&file).unwrap();
        // The same file seen through a link is not the store's file.
        let link = dir.path().join("link.whl");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(!record.vouches_for(&link));
        assert!(record.vouches_for(&file));
    }

    #[test]
    fn a_record_written_before_the_shared_seal_still_vouches() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let meta = std::fs::metadata(&file).unwrap();
        let nanos = |secs: i64, nsec: i64| secs * 1_000_000_000 + nsec;
        // A record as `vari sync` wrote it before its seal was shared with the mirror's store.
        let text = format!(
            r#"{{"format":"{FORMAT}","sha256":"{SHA}","fingerprint":{{"size":{},"mtime_ns":{},"ctime_ns":{},"inode":{},"device":{}}},"settled":true,"variant_markers":true}}"#,
            meta.len(),
            nanos(meta.mtime(), meta.mtime_nsec()),
            nanos(meta.ctime(), meta.ctime_nsec()),
            meta.ino(),
            meta.dev()
        );
        std::fs::write(record_path(&file), &text).unwrap();
        let record = read(&file).unwrap();
        assert_eq!(record.variant_markers, Some(true));
        assert!(record.vouches_for(&file));
        // And one written now reads the same way.
        Probe::start(dir.path(), &file)
            .unwrap()
            .finish(&file, SHA, Some(true));
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(record_path(&file)).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        );
    }
}
