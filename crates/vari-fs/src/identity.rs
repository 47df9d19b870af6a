//! Which file a path names, by the platform's file identity (device and inode). This crate is
//! the one place that reads the platform's metadata extensions (`MetadataExt`: inode, device,
//! change time; `scripts/check-layering` holds it), so that every rule resting on them is
//! written once ([`crate::stamp`] is the other).

use std::fs::Metadata;
use std::path::Path;

/// The file's inode number; `None` where the platform has none (Windows).
#[must_use]
pub fn inode(meta: &Metadata) -> Option<u64> {
    #[cfg(unix)]
    {
        Some(std::os::unix::fs::MetadataExt::ino(meta))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Whether `a` and `b` (followed through links) are the same file: the same inode on the same
/// device. Never where the platform has no inode numbers, or either cannot be read.
#[must_use]
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_is_the_same_file_and_a_copy_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        std::fs::write(&file, b"x").unwrap();
        let linked = dir.path().join("b");
        std::fs::hard_link(&file, &linked).unwrap();
        let copied = dir.path().join("c");
        std::fs::copy(&file, &copied).unwrap();
        assert!(same_file(&file, &linked));
        assert!(!same_file(&file, &copied));
        assert!(!same_file(&file, &dir.path().join("missing")));
        let inode_of = |p: &Path| inode(&std::fs::metadata(p).unwrap());
        assert_eq!(inode_of(&file), inode_of(&linked));
        assert_ne!(inode_of(&file), inode_of(&copied));
    }
}
