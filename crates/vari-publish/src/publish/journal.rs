//! The stamps of a publish in progress, written as it goes, so that a publish stopped part-way
//! (killed, or failed at the store) resumes where it stopped: a re-run uploads only what is
//! missing.
//!
//! The site's own state file ([`crate::state`]) records the stamps of a publish once it is
//! done; an object store has no append, and rewriting that file after every object would cost
//! a growing upload per object. So each object written is appended to a local journal, one JSON
//! line per object, written whole and flushed before the next is recorded: a run stopped
//! mid-line leaves one partial last line, which is ignored. The next publish to the same
//! destination adds the journal's stamps to the state's; an object counts as published only
//! while the store's listing still shows the size and entity tag its upload gave
//! ([`super::SiteStore::put_all`]), so a journal that is stale (or altered) costs uploads,
//! never a page naming a file that is not there. A publish that completes removes its journal.
//!
//! The journal of an object-store destination is `{cache}/mirror/{key}.journal` under vari's
//! cache directory ([`crate::Destination::journal`]), for `vari index build` and `vari mirror`
//! alike; a journal is a cache: one that cannot be read or written only means uploads again.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{Put, SiteFile, Stamp, Stamps};

/// The most bytes of journal read back (a few hundred thousand objects): a larger one is
/// ignored, as a cache is.
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// One line: an object written, and its stamp.
#[derive(Debug, Serialize, Deserialize)]
struct Record {
    path: String,
    #[serde(flatten)]
    stamp: Stamp,
}

/// A journal open for appending.
#[derive(Debug)]
pub struct StampJournal {
    path: PathBuf,
    /// `None` once a write failed (nothing more is recorded).
    file: Mutex<Option<std::fs::File>>,
}

impl StampJournal {
    /// Opens the journal at `path` in the cache directory `cache` (created when missing),
    /// with the stamps it holds from a run that did not complete: the complete lines naming a
    /// site path, the later of two for one path. `None` when it cannot be written.
    pub fn open(cache: &Path, path: &Path) -> Option<(Self, Stamps)> {
        let (stamps, torn) = read(path);
        let dir = path.parent()?;
        vari_fs::ensure_cache_dir(cache, dir).ok()?;
        // A link planted in the cache is replaced, not followed.
        if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
            std::fs::remove_file(path).ok()?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        if torn {
            // The next record starts a line of its own.
            file.write_all(b"\n").ok()?;
        }
        let journal = Self {
            path: path.to_owned(),
            file: Mutex::new(Some(file)),
        };
        Some((journal, stamps))
    }

    /// Records what `put` wrote at `file`'s path (nothing for an unchanged file: the stamps it
    /// was compared with are recorded already).
    pub fn record(&self, file: &SiteFile, put: &Put) {
        let Put::Written(stamp) = put else {
            return;
        };
        let record = Record {
            path: file.path.clone(),
            stamp: stamp.clone(),
        };
        // Serialising strings and numbers cannot fail.
        let mut line = serde_json::to_vec(&record).unwrap_or_default();
        line.push(b'\n');
        let mut guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let failed = match guard.as_mut() {
            // One write of the whole line, then flushed: lines never interleave.
            Some(out) => out.write_all(&line).and_then(|()| out.flush()).is_err(),
            None => false,
        };
        if failed {
            *guard = None;
        }
    }

    /// The publish completed (its state is in the site): the journal is removed.
    pub fn finish(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The stamps of the journal at `path`: complete lines only, each naming a plain path under
/// `files/` or `simple/`; anything else is skipped. Also whether its last line is torn.
fn read(path: &Path) -> (Stamps, bool) {
    let mut stamps = Stamps::new();
    let Some(bytes) = vari_fs::read_cache_file(path, MAX_JOURNAL_BYTES) else {
        return (stamps, false);
    };
    let torn = bytes.last().is_some_and(|b| *b != b'\n');
    let complete = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(end) => &bytes[..end],
        None => return (stamps, torn),
    };
    for line in complete.split(|b| *b == b'\n') {
        let Ok(record) = serde_json::from_slice::<Record>(line) else {
            continue;
        };
        if crate::state::check_output(&record.path).is_ok() {
            stamps.insert(record.path, record.stamp);
        }
    }
    (stamps, torn)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(n: u64) -> Stamp {
        Stamp {
            sha256: format!("{n:064x}"),
            size: n,
            e_tag: Some(format!("\"e{n}\"")),
        }
    }

    #[test]
    fn written_stamps_are_read_back_and_a_torn_line_or_a_bad_path_is_not() {
        let cache = tempfile::tempdir().unwrap();
        let path = cache.path().join("mirror/s3-b-0123456789abcdef.journal");
        let (journal, resumed) = StampJournal::open(cache.path(), &path).unwrap();
        assert!(resumed.is_empty());
        let file = SiteFile::bytes("files/a-1.whl", b"a".to_vec());
        journal.record(&file, &Put::Written(stamp(1)));
        journal.record(&file, &Put::Unchanged(stamp(9)));
        let page = SiteFile::bytes("simple/a/index.html", b"p".to_vec());
        journal.record(&page, &Put::Written(stamp(2)));
        drop(journal);
        // A run killed mid-line, and a line naming a path outside the site.
        let mut out = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        out.write_all(b"{\"path\":\"../x\",\"sha256\":\"00\",\"size\":1}\n")
            .unwrap();
        out.write_all(b"{\"path\":\"files/b-1.whl\",\"sha2")
            .unwrap();
        drop(out);
        let (journal, resumed) = StampJournal::open(cache.path(), &path).unwrap();
        assert_eq!(
            resumed,
            Stamps::from([
                ("files/a-1.whl".to_owned(), stamp(1)),
                ("simple/a/index.html".to_owned(), stamp(2)),
            ])
        );
        // The torn line is ended: a record after it is read back.
        let other = SiteFile::bytes("files/c-1.whl", b"c".to_vec());
        journal.record(&other, &Put::Written(stamp(3)));
        drop(journal);
        let (journal, resumed) = StampJournal::open(cache.path(), &path).unwrap();
        assert_eq!(resumed.len(), 3);
        journal.finish();
        assert!(!path.exists());
    }
}
