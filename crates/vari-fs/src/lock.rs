//! An exclusive lock on a directory a command updates for its whole run (a mirror's store), so
//! that a second run waits instead of interleaving its writes with the first's.
//!
//! The lock is an advisory `flock(2)` on a file in that directory: the kernel releases it when
//! the holder exits, however it exits (a killed run never leaves a stale lock behind), and it
//! works between processes and between threads of one process (each lock opens the file
//! anew). A second taker is told once, through its `on_wait` callback, that it is blocked (cargo
//! prints `Blocking waiting for file lock`), then waits for the first to finish.
//!
//! `flock` is Unix-only; elsewhere the lock file is created and nothing is locked.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    _file: File,
}

impl DirLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Takes the exclusive lock of the file `path` (created when missing; a symbolic link there is
/// refused, so a planted link cannot make it open another file). When another holder has it,
/// calls `on_wait` once and waits for it.
pub fn lock_exclusive(path: &Path, on_wait: impl FnOnce()) -> io::Result<DirLock> {
    let file = open(path)?;
    if !try_lock(&file)? {
        on_wait();
        lock(&file)?;
    }
    Ok(DirLock {
        path: path.to_owned(),
        _file: file,
    })
}

/// Whether another holder has the lock of the file `path` right now (a missing file: no one).
/// Nothing is created, and nothing stays locked: the answer can change as soon as it is given,
/// so it can only tell a user of the directory that a run is under way.
pub fn is_held(path: &Path) -> io::Result<bool> {
    let file = match open_existing(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    // Taken and released again (closing the file releases it) when it was free.
    Ok(!try_lock(&file)?)
}

#[cfg(unix)]
fn open_existing(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nofollow)
        .open(path)
}

#[cfg(not(unix))]
fn open_existing(path: &Path) -> io::Result<File> {
    std::fs::File::open(path)
}

#[cfg(unix)]
fn open(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(nofollow)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Whether the lock was free (and is now held).
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(unix)]
fn lock(file: &File) -> io::Result<()> {
    use rustix::fs::{flock, FlockOperation};
    loop {
        match flock(file, FlockOperation::LockExclusive) {
            Err(e) if e == rustix::io::Errno::INTR => continue,
            other => return other.map_err(Into::into),
        }
    }
}

#[cfg(not(unix))]
fn try_lock(_: &File) -> io::Result<bool> {
    Ok(true)
}

#[cfg(not(unix))]
fn lock(_: &File) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_second_taker_is_told_and_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let first = lock_exclusive(&path, || panic!("the lock is free")).unwrap();
        let released = Arc::new(AtomicBool::new(false));
        let (told, wait_told) = std::sync::mpsc::channel();
        let second = {
            let path = path.clone();
            let released = Arc::clone(&released);
            std::thread::spawn(move || {
                let lock = lock_exclusive(&path, || told.send(()).unwrap()).unwrap();
                // It holds the lock only once the first let go.
                assert!(released.load(Ordering::SeqCst));
                drop(lock);
            })
        };
        wait_told.recv().unwrap();
        released.store(true, Ordering::SeqCst);
        drop(first);
        second.join().unwrap();
        // Free again.
        let third = lock_exclusive(&path, || panic!("the lock is free again")).unwrap();
        assert!(is_held(&path).unwrap());
        drop(third);
        assert!(!is_held(&path).unwrap());
        assert!(!is_held(&dir.path().join("missing")).unwrap());
        assert!(!dir.path().join("missing").exists());
    }

    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("lock")).unwrap();
        assert!(lock_exclusive(&dir.path().join("lock"), || {}).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }
}
