//! Copies of the target profiles a lock records by hash only (a profile outside the lock's
//! directory), kept in vari's cache so that the machine that made the lock can make it again
//! with no arguments. Content-addressed: `profiles/HEX/profile[.EXT]`, `HEX` the recorded hash's
//! hex digits, the extension the original file's. A copy is only a candidate: whoever uses it
//! checks that its bytes have the recorded hash.

use std::path::{Path, PathBuf};

use vari_fs::cache_admin::layout::{each_dir, is_hex};
use vari_fs::cache_admin::{AreaLayout, CacheArea, CacheEntry, CacheIoError};

/// The area's directory under the cache directory.
pub const PROFILES_AREA: &str = "profiles";

/// The hex digits of a recorded `sha256:HEX` hash, when it is one.
fn key(hash: &str) -> Option<&str> {
    hash.strip_prefix("sha256:").filter(|hex| is_hex(hex, 64))
}

/// The copy's file name: `profile`, with the original's extension when it is a short
/// alphanumeric one (the profile readers tell a facts file by it).
fn file_name(original: &Path) -> String {
    match original.extension().and_then(|e| e.to_str()) {
        Some(ext)
            if (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            format!("profile.{ext}")
        }
        _ => "profile".to_owned(),
    }
}

/// Keeps a copy of the profile `original` (its `bytes`, whose recorded hash is `hash`) under
/// the cache directory `root`. Nothing is kept for a hash that is not `sha256:` and 64 hex
/// digits.
pub fn keep(root: &Path, hash: &str, original: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let Some(hex) = key(hash) else {
        return Ok(());
    };
    let dir = root.join(PROFILES_AREA).join(hex);
    std::fs::create_dir_all(&dir)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    vari_fs::write_atomic(&dir.join(file_name(original)), bytes).map_err(std::io::Error::other)
}

/// The kept copy of the profile whose recorded hash is `hash`, when there is one (a plain
/// file; the caller checks its hash).
pub fn find(root: &Path, hash: &str) -> Option<PathBuf> {
    let dir = root.join(PROFILES_AREA).join(key(hash)?);
    let mut found = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == "profile" || n.starts_with("profile."))
        })
        .collect::<Vec<_>>();
    found.sort();
    found.into_iter().next()
}

/// The `profiles` area: one entry per kept profile, its directory `profiles/HEX/`. Never
/// pruned by age (small, and the only way to lock again without the original).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProfileCacheLayout;

impl AreaLayout for ProfileCacheLayout {
    fn area(&self) -> CacheArea {
        CacheArea::Profiles
    }

    fn entries(&self, root: &Path) -> Result<Vec<CacheEntry>, CacheIoError> {
        each_dir(CacheArea::Profiles, &root.join(PROFILES_AREA), |name| {
            is_hex(name, 64)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_kept_profile_is_found_by_its_hash_only() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(find(root.path(), HASH), None);
        keep(root.path(), HASH, Path::new("/x/a100.toml"), b"[gpu]\n").unwrap();
        let found = find(root.path(), HASH).unwrap();
        assert!(found.ends_with("profile.toml"));
        assert_eq!(std::fs::read(&found).unwrap(), b"[gpu]\n");
        // Not a hash of the recorded form: nothing kept, nothing found, no path made from it.
        for bad in ["sha256:../../etc", "md5:00", "sha256:ABC"] {
            keep(root.path(), bad, Path::new("p.toml"), b"x").unwrap();
            assert_eq!(find(root.path(), bad), None);
        }
        let entries = ProfileCacheLayout.entries(root.path()).unwrap();
        assert_eq!(entries.len(), 1);
    }
}
