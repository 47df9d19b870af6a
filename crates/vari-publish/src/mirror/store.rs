//! The mirror's store: the downloaded distributions, kept in `STORE/files/`, from which the
//! site is built (for a directory site, hard links, so a file costs its space once). A small
//! state file remembers each file's SHA-256 with its [`Seal`] (its stamp: size, modification
//! and change times, inode, device; and whether that stamp was settled), so a re-run knows
//! what it has without hashing gigabytes again (and the site builder does not hash what the
//! download already did); a file the state does not vouch for, by the rule `vari sync`'s
//! store follows too ([`vari_fs::stamp`]), is hashed before it is trusted.
//!
//! The store is a cache of verified files: a missing or foreign state file only means files
//! are hashed again, and a file that does not match is downloaded again. A run holds the
//! store's lock file (`STORE/lock`) from start to end, so a second run on the same store waits.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use vari_fs::{ClockProbe, Seal, Stamp};

use super::error::MirrorError;
use crate::build::KnownHashes;

/// The store's directory in a directory site.
pub(crate) const STORE_DIR: &str = ".vari-mirror";
/// The state file's name in the store.
const STATE_FILE: &str = "state.json";
/// The lock file's name in the store.
pub(super) const LOCK_FILE: &str = "lock";
/// Written into the state so that a different layout is recognised and ignored: the first
/// one's fingerprints (no change time, no settle rule) vouch for nothing, and a store of that
/// state has its files hashed once again.
const FORMAT: &str = "vari-mirror-state/2";

/// What the state remembers of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Known {
    sha256: String,
    #[serde(flatten)]
    seal: Seal,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    format: String,
    files: BTreeMap<String, Known>,
}

/// The store of one mirror.
#[derive(Debug)]
pub(crate) struct Store {
    root: PathBuf,
    files: PathBuf,
    known: BTreeMap<String, Known>,
    /// Taken when the store was opened, before this run hashed anything in it.
    began: Option<ClockProbe>,
}

impl Store {
    /// Opens (creating) the store at `root`.
    pub(crate) fn open(root: &Path) -> Result<Self, MirrorError> {
        let root = root.to_owned();
        let files = root.join("files");
        std::fs::create_dir_all(&files).map_err(|source| MirrorError::Store {
            path: files.clone(),
            source,
        })?;
        let known = vari_fs::read_input(&root.join(STATE_FILE), vari_fs::InputKind::Metadata)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .filter(|state| state.format == FORMAT)
            .map(|state| state.files)
            .unwrap_or_default()
            .into_iter()
            // Only plain names are ever trusted: the state names files to keep or remove.
            .filter(|(name, _)| vari_fs::check_name(name).is_ok())
            .collect();
        let began = ClockProbe::take(&files);
        Ok(Self {
            root,
            files,
            known,
            began,
        })
    }

    /// Takes the exclusive lock of the store at `root` (created when missing), calling
    /// `on_wait` first when another run holds it.
    pub(crate) fn lock(
        root: &Path,
        on_wait: impl FnOnce(&Path),
    ) -> Result<vari_fs::lock::DirLock, MirrorError> {
        std::fs::create_dir_all(root).map_err(|source| MirrorError::Store {
            path: root.to_owned(),
            source,
        })?;
        let path = root.join(LOCK_FILE);
        vari_fs::lock::lock_exclusive(&path, || on_wait(&path))
            .map_err(|source| MirrorError::Store { path, source })
    }

    /// What the state vouches for, as the site builder takes it: each file's seal and
    /// SHA-256.
    pub(crate) fn known_hashes(&self) -> KnownHashes {
        self.known
            .iter()
            .map(|(name, known)| (name.clone(), (known.seal, known.sha256.clone())))
            .collect()
    }

    /// The store's directory.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The directory the site is built from.
    pub(crate) fn files_dir(&self) -> &Path {
        &self.files
    }

    /// Where `filename` (a checked plain name) lives in the store.
    pub(crate) fn path(&self, filename: &str) -> PathBuf {
        self.files.join(filename)
    }

    /// Whether the store holds `filename` with this SHA-256: vouched for by the state, or
    /// hashed now.
    pub(crate) fn has(&mut self, filename: &str, sha256: &str) -> Result<bool, MirrorError> {
        let path = self.path(filename);
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_file() => meta,
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(MirrorError::Store { path, source }),
        };
        if let Some(known) = self.known.get(filename) {
            if known.seal.vouches_for(Stamp::of(&meta)) {
                return Ok(known.sha256 == sha256);
            }
        }
        let actual = hash_file(&path)?;
        // Stamped after the hashing, settled against the probe taken before it.
        self.remember(filename, actual.clone(), self.began);
        Ok(actual == sha256)
    }

    /// Records a file just written with its verified SHA-256 (hashed on the way in).
    pub(crate) fn record(&mut self, filename: &str, sha256: String) -> Result<(), MirrorError> {
        // The bytes were hashed as they were written: from now on they are what the file
        // must hold, so the probe is taken now (a file changed since, in this tick or later,
        // gets an unsettled seal and is hashed on its next use).
        let path = self.path(filename);
        std::fs::metadata(&path).map_err(|source| MirrorError::Store { path, source })?;
        let now = ClockProbe::take(&self.files);
        self.remember(filename, sha256, now);
        Ok(())
    }

    /// Moves the seal of each file the site has just hard-linked (`linked`, by file name) over
    /// the change time the link set ([`Seal::after_link`]), so that the next run does not hash
    /// it again for that alone; a file changed in any other way keeps a seal that vouches for
    /// nothing.
    pub(crate) fn follow_links(&mut self, linked: &std::collections::BTreeSet<String>) {
        let files = &self.files;
        for (name, known) in &mut self.known {
            if !linked.contains(name) {
                continue;
            }
            if let Some(moved) = known.seal.after_link(Stamp::of_file(&files.join(name))) {
                known.seal = moved;
            }
        }
    }

    /// Remembers `filename` (as it is now) with `sha256`, sealed against `began`; a file
    /// that has no stamp (no longer a regular file, or a platform without stamps) is
    /// forgotten, to be hashed on its next use.
    fn remember(&mut self, filename: &str, sha256: String, began: Option<ClockProbe>) {
        match Stamp::of_file(&self.path(filename)) {
            Some(stamp) => {
                let seal = Seal::new(stamp, began);
                self.known
                    .insert(filename.to_owned(), Known { sha256, seal });
            }
            None => {
                self.known.remove(filename);
            }
        }
    }

    /// The plain files of the store, sorted (temporary files of interrupted runs excluded).
    pub(crate) fn list(&self) -> Result<Vec<String>, MirrorError> {
        let error = |source| MirrorError::Store {
            path: self.files.clone(),
            source,
        };
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.files).map_err(error)? {
            let entry = entry.map_err(error)?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name.starts_with('.') || !entry.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    /// Writes `bytes` as `filename` unless it already holds them.
    #[cfg(test)]
    pub(crate) fn write(&self, filename: &str, bytes: &[u8]) -> Result<bool, MirrorError> {
        let path = self.path(filename);
        if std::fs::read(&path).is_ok_and(|old| old == bytes) {
            return Ok(false);
        }
        vari_fs::write_atomic(&path, bytes)?;
        Ok(true)
    }

    /// Removes `filename` from the store (the site keeps its link until the site is rebuilt).
    pub(crate) fn remove(&mut self, filename: &str) -> Result<(), MirrorError> {
        self.known.remove(filename);
        match vari_fs::remove_file_under(&self.files, filename) {
            Ok(_) => Ok(()),
            Err(e) => Err(MirrorError::Store {
                path: self.path(filename),
                source: std::io::Error::other(e.to_string()),
            }),
        }
    }

    /// Saves the state, forgetting files no longer in the store.
    pub(crate) fn save(&mut self) -> Result<(), MirrorError> {
        let files = &self.files;
        self.known.retain(|name, _| files.join(name).is_file());
        let state = State {
            format: FORMAT.to_owned(),
            files: self.known.clone(),
        };
        // Serialising maps of strings and numbers cannot fail.
        let text = serde_json::to_vec(&state).unwrap_or_default();
        vari_fs::write_atomic(&self.root.join(STATE_FILE), &text)?;
        Ok(())
    }
}

/// The lowercase hex SHA-256 of the file at `path`, streamed.
pub(super) fn hash_file(path: &Path) -> Result<String, MirrorError> {
    let error = |source| MirrorError::Store {
        path: path.to_owned(),
        source,
    };
    let mut file = vari_fs::input::open_input(path).map_err(|e| MirrorError::Store {
        path: path.to_owned(),
        source: std::io::Error::other(e.problem()),
    })?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = file.read(&mut buffer).map_err(error)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_trusted_by_its_hash_and_remembered() {
        let dest = tempfile::tempdir().unwrap();
        let mut store = Store::open(dest.path()).unwrap();
        let sha = hex::encode(Sha256::digest(b"wheel"));
        assert!(!store.has("a-1-py3-none-any.whl", &sha).unwrap());
        store.write("a-1-py3-none-any.whl", b"wheel").unwrap();
        assert!(store.has("a-1-py3-none-any.whl", &sha).unwrap());
        assert!(!store.has("a-1-py3-none-any.whl", &"00".repeat(32)).unwrap());
        store.save().unwrap();
        let mut again = Store::open(dest.path()).unwrap();
        assert_eq!(again.known.len(), 1);
        assert!(again.has("a-1-py3-none-any.whl", &sha).unwrap());
        again.remove("a-1-py3-none-any.whl").unwrap();
        assert!(again.list().unwrap().is_empty());
    }

    #[test]
    fn state_entries_that_are_not_plain_names_are_ignored() {
        let dest = tempfile::tempdir().unwrap();

        let state = serde_json::json!({"format": FORMAT, "files": {
            "../x.whl": {"sha256": "00", "settled": true, "fingerprint":
                {"size": 1, "mtime_ns": 1, "ctime_ns": 1, "inode": 1, "device": 1}}
        }});
        std::fs::write(
            dest.path().join(STATE_FILE),
            serde_json::to_vec(&state).unwrap(),
        )
        .unwrap();
        assert!(Store::open(dest.path()).unwrap().known.is_empty());
    }

    /// Rewrites `path` in place (same inode, same size), then puts its modification time
    /// back, as `touch -r` would: only its change time tells.
    #[cfg(unix)]
    fn tamper_in_place(path: &Path, bytes: &[u8]) {
        use std::os::unix::fs::MetadataExt;
        let before = std::fs::metadata(path).unwrap();
        std::fs::write(path, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(before.modified().unwrap())
            .unwrap();
        let after = std::fs::metadata(path).unwrap();
        assert_eq!(
            (after.len(), after.modified().unwrap(), after.ino()),
            (before.len(), before.modified().unwrap(), before.ino())
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_rewritten_in_place_with_its_size_and_time_kept_is_hashed_again() {
        let dest = tempfile::tempdir().unwrap();
        let name = "a-1-py3-none-any.whl";
        let sha = hex::encode(Sha256::digest(b"wheel"));
        Store::open(dest.path())
            .unwrap()
            .write(name, b"wheel")
            .unwrap();
        // The file's last change is then in the past on any clock tick: hashed by the next
        // run, its seal is settled and vouches for it.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut store = Store::open(dest.path()).unwrap();
        assert!(store.has(name, &sha).unwrap());
        store.save().unwrap();
        let mut again = Store::open(dest.path()).unwrap();
        assert!(
            again.known[name].seal.settled(),
            "the fast path is what is tested"
        );

        tamper_in_place(&again.path(name), b"wheex");
        // The state's old seal no longer vouches: hashed, refused (and downloaded again).
        assert!(!again.has(name, &sha).unwrap());
        let tampered = hex::encode(Sha256::digest(b"wheex"));
        assert_eq!(again.known[name].sha256, tampered);
    }

    #[cfg(unix)]
    #[test]
    fn a_state_of_the_first_format_vouches_for_nothing() {
        use std::os::unix::fs::MetadataExt;
        let dest = tempfile::tempdir().unwrap();
        let name = "a-1-py3-none-any.whl";
        let store = Store::open(dest.path()).unwrap();
        store.write(name, b"wheel").unwrap();
        let meta = std::fs::metadata(store.path(name)).unwrap();
        let mtime_ns = meta
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        // What the first format wrote of this very file, with another hash.
        let state = serde_json::json!({"format": "vari-mirror-state/1", "files": {
            name: {"sha256": "00".repeat(32),
                   "fingerprint": {"size": 5, "mtime_ns": mtime_ns, "inode": meta.ino()}}
        }});
        std::fs::write(
            dest.path().join(STATE_FILE),
            serde_json::to_vec(&state).unwrap(),
        )
        .unwrap();
        let mut store = Store::open(dest.path()).unwrap();
        assert!(store.known.is_empty());
        assert!(store
            .has(name, &hex::encode(Sha256::digest(b"wheel")))
            .unwrap());
    }
}
