//! When a stored file may be trusted without reading it: the one rule for every store that
//! remembers a file's SHA-256 (`vari sync`'s records, the mirror's state, `vari index build`'s
//! state).
//!
//! A store hashes a file once and remembers the hash with the file's [`Stamp`] (size,
//! modification and change times, inode, device). A [`Seal`] vouches for the file later while
//! the file's stamp is the same **and** the seal is *settled*: the file's change time (`ctime`)
//! was older than a [`ClockProbe`] taken before the hashing began.
//!
//! The change time is in the stamp because the kernel sets it on every write, truncation,
//! rename, link or attribute change, and no system call sets it to a chosen value (`touch -r`
//! and `utimensat` set the modification time only, and update the change time to now): a file
//! rewritten in place with its size and modification time restored has a new stamp. The
//! settle rule closes the same-tick race: file times are coarse (a few milliseconds on some file
//! systems), so a change made in the same tick as the file's last one, after the hashing
//! started, could leave every time as it was. A clock probe is the modification time of a file
//! created on the same file system (so the same clock and the same granularity as the stored
//! file's times) at a moment from which on the hashed bytes are what the file must hold: before
//! the first byte is read when the file is hashed, or once it is written when it was written
//! from bytes hashed on the way in. A file whose last change is not older than the probe may
//! have changed in that tick or later, and its seal is unsettled: it vouches for nothing, and
//! the next use hashes the file again. The stamp is taken after both.
//!
//! Not caught, as for any cache that trusts file metadata: a change that bypasses the file
//! system (writing the block device, editing the disk while it is not mounted), the system clock
//! set back before the seal and a change made then, whoever can write in the store writing
//! a matching seal, and a rewrite with the size and modification time restored made while the
//! process itself hard-links the file (a seal moved over its own link: [`Seal::after_link`]).
//! A probe taken on another file system than the files it settles is rounded down to the
//! coarsest tick ([`ClockProbe::take_for`]). On platforms without inode numbers and change times (Windows) there is no
//! stamp, no seal vouches for anything, and every file is hashed on every use.

use std::fs::{File, Metadata};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What identifies a file's content without reading it (see the module documentation for why
/// the change time is in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    size: u64,
    // Nanoseconds since 1970 in an `i64` (years 1678 to 2262), not an `i128`: a seal is
    // flattened into its store's record, and serde's flattening has no 128-bit integers.
    mtime_ns: i64,
    ctime_ns: i64,
    inode: u64,
    device: u64,
}

impl Stamp {
    /// The stamp of a file from its metadata; `None` where the platform has no change time
    /// or inode numbers, or a time is outside the years 1678 to 2262.
    #[cfg(unix)]
    #[must_use]
    pub fn of(meta: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        Some(Self {
            size: meta.len(),
            mtime_ns: nanos(meta.mtime(), meta.mtime_nsec())?,
            ctime_ns: nanos(meta.ctime(), meta.ctime_nsec())?,
            inode: meta.ino(),
            device: meta.dev(),
        })
    }

    /// No stamp without change times and inode numbers.
    #[cfg(not(unix))]
    #[must_use]
    pub fn of(_meta: &Metadata) -> Option<Self> {
        None
    }

    /// The stamp of the regular file at `path`, never followed through a link; `None` for
    /// anything else (missing, a link, a directory) or where there are no stamps.
    #[must_use]
    pub fn of_file(path: &Path) -> Option<Self> {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(Metadata::is_file)
            .and_then(|meta| Self::of(&meta))
    }

    /// Whether the file's last change came before `began` (taken before its hashing began):
    /// then no change made after that moment can have left this stamp as it is.
    #[must_use]
    pub fn settled(&self, began: ClockProbe) -> bool {
        self.ctime_ns < began.ns
    }
}

#[cfg(unix)]
fn nanos(secs: i64, nsec: i64) -> Option<i64> {
    secs.checked_mul(1_000_000_000)?.checked_add(nsec)
}

/// A moment read from a file system's own clock, at its own granularity: the modification
/// time of a file just created there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockProbe {
    ns: i64,
}

impl ClockProbe {
    /// The moment `created` was created (a file this process has just created and not yet
    /// written: its modification time is its creation's); `None` without stamps.
    #[must_use]
    pub fn of_new_file(created: &File) -> Option<Self> {
        let meta = created.metadata().ok()?;
        Stamp::of(&meta).map(|stamp| Self { ns: stamp.mtime_ns })
    }

    /// Now, on the clock of the file system of `dir`: a hidden temporary file is created
    /// there, read and removed. `None` when it cannot be (the directory is not writable),
    /// or without stamps: then nothing hashed against it is settled.
    #[must_use]
    pub fn take(dir: &Path) -> Option<Self> {
        let probe = tempfile::Builder::new()
            .prefix(".vari-clock-")
            .tempfile_in(dir)
            .ok()?;
        Self::of_new_file(probe.as_file())
    }

    /// Now, taken in `dir` as [`take`](Self::take) does, for files in `files_in`, which may
    /// be on another file system (one this process may not write, as a read-only input
    /// folder). Two file systems read the same kernel clock but each keeps it at its own
    /// granularity: on one keeping coarser times than `dir`'s, a file changed after the probe
    /// in the same tick would get a change time before it. So a probe for another file system
    /// (or one whose file system cannot be told) is rounded down to the coarsest granularity
    /// Unix file systems keep (2 s, FAT; 1 s, ext3 or HFS+): a file changed in the last two
    /// seconds before it is then not settled, and is hashed once more on its next use.
    #[must_use]
    pub fn take_for(dir: &Path, files_in: &Path) -> Option<Self> {
        let probe = tempfile::Builder::new()
            .prefix(".vari-clock-")
            .tempfile_in(dir)
            .ok()?;
        let here = Stamp::of(&probe.as_file().metadata().ok()?)?;
        let theirs = std::fs::metadata(files_in)
            .ok()
            .and_then(|meta| Stamp::of(&meta));
        let ns = match theirs {
            Some(theirs) if theirs.device == here.device => here.mtime_ns,
            _ => here.mtime_ns - here.mtime_ns.rem_euclid(COARSEST_TICK_NS),
        };
        Some(Self { ns })
    }
}

/// The coarsest granularity of file times on the file systems Unix mounts (FAT's two seconds).
const COARSEST_TICK_NS: i64 = 2_000_000_000;

/// What a store remembers of a hashed file besides its hash: its stamp after the hashing, and
/// whether that stamp was settled against a probe taken before it. Serialised as
/// `"fingerprint": {size, mtime_ns, ctime_ns, inode, device}, "settled": bool` (flatten it
/// into the store's own record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    #[serde(rename = "fingerprint")]
    stamp: Stamp,
    settled: bool,
}

impl Seal {
    /// Seals `stamp` (taken after the file was hashed) against `began` (taken before the
    /// hashing began, or after the writing ended for a file written from hashed bytes; `None`
    /// when no probe could be taken, and then the seal is unsettled).
    #[must_use]
    pub fn new(stamp: Stamp, began: Option<ClockProbe>) -> Self {
        Self {
            stamp,
            settled: began.is_some_and(|began| stamp.settled(began)),
        }
    }

    /// Whether this seal vouches for the file whose stamp is now `now` (its stamp as
    /// [`Stamp::of_file`] or [`Stamp::of`] gives it).
    #[must_use]
    pub fn vouches_for(&self, now: Option<Stamp>) -> bool {
        self.settled && now == Some(self.stamp)
    }

    /// This seal moved to the file's stamp `now`, taken after this process gave the file
    /// another name (a hard link: the kernel sets the file's change time and nothing else), so
    /// that its own link does not have the file hashed again; `None` when anything but a later
    /// change time differs. What a later change time then hides is a rewrite with the size and
    /// modification time restored made between this seal's stamp and `now`: keep that window
    /// to the linking.
    #[must_use]
    pub fn after_link(&self, now: Option<Stamp>) -> Option<Self> {
        let now = now?;
        let only_changed = Stamp {
            ctime_ns: self.stamp.ctime_ns,
            ..now
        } == self.stamp;
        (only_changed && now.ctime_ns >= self.stamp.ctime_ns).then_some(Self {
            stamp: now,
            settled: self.settled,
        })
    }

    /// Whether the file had not changed since the hashing began (see the module
    /// documentation): only a settled seal vouches for anything.
    #[must_use]
    pub fn settled(&self) -> bool {
        self.settled
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A file whose last change is well before now.
    fn old_file(dir: &Path) -> std::path::PathBuf {
        let file = dir.join("a.whl");
        std::fs::write(&file, b"the bytes").unwrap();
        // The change time is the write's; wait until it is in the past on any clock tick.
        std::thread::sleep(Duration::from_millis(50));
        file
    }

    #[test]
    fn a_rewrite_in_place_with_size_and_modification_time_restored_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let began = ClockProbe::take(dir.path()).unwrap();
        let seal = Seal::new(Stamp::of_file(&file).unwrap(), Some(began));
        assert!(seal.settled());
        assert!(seal.vouches_for(Stamp::of_file(&file)));

        let before = std::fs::metadata(&file).unwrap();
        std::fs::write(&file, b"the bytex").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(before.modified().unwrap())
            .unwrap();
        let after = Stamp::of_file(&file).unwrap();
        // Everything the publisher used to compare is as it was: only the change time tells.
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(meta.len(), before.len());
        assert_eq!(meta.modified().unwrap(), before.modified().unwrap());
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&meta),
            std::os::unix::fs::MetadataExt::ino(&before)
        );
        assert!(!seal.vouches_for(Some(after)));
    }

    #[test]
    fn a_file_changed_after_the_probe_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let began = ClockProbe::take(dir.path()).unwrap();
        // Written now: its change time is the probe's tick or later, never before it.
        std::fs::write(&file, b"new bytes").unwrap();
        let stamp = Stamp::of_file(&file).unwrap();
        assert!(!stamp.settled(began));
        let seal = Seal::new(stamp, Some(began));
        assert!(!seal.settled());
        assert!(
            !seal.vouches_for(Some(stamp)),
            "not even for the same stamp"
        );
        // Without a probe nothing is settled either.
        assert!(!Seal::new(stamp, None).vouches_for(Some(stamp)));
    }

    #[test]
    fn a_probe_in_a_directory_leaves_nothing_there_and_a_new_file_is_its_creation() {
        let dir = tempfile::tempdir().unwrap();
        let probe = ClockProbe::take(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(ClockProbe::take(&dir.path().join("missing")), None);
        let created = std::fs::File::create(dir.path().join("new")).unwrap();
        let later = ClockProbe::of_new_file(&created).unwrap();
        assert!(later.ns >= probe.ns);
    }

    #[test]
    fn a_probe_for_files_on_the_same_file_system_is_exact_and_for_others_rounded_down() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = dir.path().join("inputs");
        std::fs::create_dir(&inputs).unwrap();
        let exact = ClockProbe::take(dir.path()).unwrap();
        let same = ClockProbe::take_for(dir.path(), &inputs).unwrap();
        assert!(same.ns >= exact.ns);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A folder that cannot be read (as one on another file system cannot be matched with
        // this one) gets the probe rounded down to the coarsest tick.
        let other = ClockProbe::take_for(dir.path(), &dir.path().join("missing")).unwrap();
        assert_eq!(other.ns % COARSEST_TICK_NS, 0);
        assert!(other.ns <= ClockProbe::take(dir.path()).unwrap().ns);
        assert_eq!(
            ClockProbe::take_for(&dir.path().join("missing"), &inputs),
            None
        );
    }

    #[test]
    fn a_seal_follows_a_hard_link_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let seal = Seal::new(Stamp::of_file(&file).unwrap(), ClockProbe::take(dir.path()));
        assert!(seal.settled());
        std::thread::sleep(Duration::from_millis(20));
        std::fs::hard_link(&file, dir.path().join("linked.whl")).unwrap();
        let now = Stamp::of_file(&file);
        assert!(!seal.vouches_for(now), "the link set the change time");
        let moved = seal.after_link(now).unwrap();
        assert!(moved.vouches_for(now));
        // A rewrite changes more than the change time.
        std::fs::write(&file, b"other bytes").unwrap();
        assert_eq!(moved.after_link(Stamp::of_file(&file)), None);
        assert_eq!(moved.after_link(None), None);
        // An unsettled seal stays unsettled.
        let unsettled = Seal::new(now.unwrap(), None);
        assert!(!unsettled.after_link(now).unwrap().settled());
    }

    #[test]
    fn links_and_directories_have_no_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let link = dir.path().join("link.whl");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(Stamp::of_file(&file).is_some());
        assert_eq!(Stamp::of_file(&link), None);
        assert_eq!(Stamp::of_file(dir.path()), None);
        assert_eq!(Stamp::of_file(&dir.path().join("missing")), None);
    }

    #[test]
    fn a_seal_is_written_as_the_fingerprint_and_whether_it_settled() {
        let dir = tempfile::tempdir().unwrap();
        let file = old_file(dir.path());
        let seal = Seal::new(Stamp::of_file(&file).unwrap(), ClockProbe::take(dir.path()));
        let json = serde_json::to_value(seal).unwrap();
        assert_eq!(json["settled"], true);
        let mut keys: Vec<&str> = json["fingerprint"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["ctime_ns", "device", "inode", "mtime_ns", "size"]);
        assert_eq!(serde_json::from_value::<Seal>(json.clone()).unwrap(), seal);
        // Flattened into a store's own record, as both stores keep it.
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Known {
            sha256: String,
            #[serde(flatten)]
            seal: Seal,
        }
        let known = Known {
            sha256: "00".to_owned(),
            seal,
        };
        let text = serde_json::to_string(&known).unwrap();
        assert_eq!(serde_json::from_str::<Known>(&text).unwrap(), known);
        // A fingerprint of the older publisher state (no change time) is no seal.
        let old = serde_json::json!({"fingerprint": {"size": 1, "mtime_ns": 1, "inode": 1}, "settled": true});
        assert!(serde_json::from_value::<Seal>(old).is_err());
    }
}
