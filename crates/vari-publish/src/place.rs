//! Putting a distribution file into the site: a hard link (the default), a copy, or nothing
//! when the files are hosted elsewhere ([`FilePlacement::External`]).
//!
//! A hard link costs no space and no time, which matters for multi-gigabyte wheels; it falls
//! back to a copy where links cannot be made (another file system, a file system without them).
//! Both are atomic: the link is made under a temporary name beside the destination and renamed
//! over it, and the copy goes through [`vari_fs::AtomicFile`], so a server never sees half a
//! file. The price of a link is that the site shares the input's inode: a tool that rewrites an
//! input *in place* changes the published file until the next build; `--copy` avoids that.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::BuildError;

/// How distribution files reach the site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FilePlacement {
    /// Hard-linked into `SITE/files/` (copied where a link cannot be made).
    #[default]
    HardLink,
    /// Copied into `SITE/files/`.
    Copy,
    /// Not put into the site: linked as `{base_url}/{filename}`. The generated files
    /// (`*.metadata`, `*-variants.json`) are still written to `SITE/files/`; the `.metadata`
    /// files must be served beside the distributions (PEP 658 puts them at the file's URL plus
    /// `.metadata`).
    External {
        /// The URL the distribution files are served under.
        base_url: String,
    },
}

/// Makes `dest` hold the content of `src` according to `placement` (a no-op for
/// [`FilePlacement::External`], or when a link to `src` is already there); whether it wrote.
pub(crate) fn place(
    src: &Path,
    dest: &Path,
    placement: &FilePlacement,
) -> Result<bool, BuildError> {
    match placement {
        FilePlacement::External { .. } => Ok(false),
        FilePlacement::Copy => copy(src, dest).map(|()| true),
        FilePlacement::HardLink => {
            if vari_fs::same_file(src, dest) {
                return Ok(false);
            }
            match link(src, dest) {
                Ok(()) => Ok(true),
                // EXDEV, EPERM, unsupported: every reason to fall back is a reason to copy.
                Err(_) => copy(src, dest).map(|()| true),
            }
        }
    }
}

/// Tells temporary names of concurrent links apart.
static LINK_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Hard-links `src` to `dest` atomically (link under a temporary name, rename over `dest`).
fn link(src: &Path, dest: &Path) -> std::io::Result<()> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let temporary = dest.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        PID.get_or_init(std::process::id),
        LINK_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // Removed if the build is interrupted between the link and the rename.
    let _interrupt = vari_fs::interrupt::remove_on_interrupt(temporary.clone());
    std::fs::hard_link(src, &temporary)?;
    std::fs::rename(&temporary, dest).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// Copies `src` to `dest` atomically.
fn copy(src: &Path, dest: &Path) -> Result<(), BuildError> {
    let mut input = File::open(src).map_err(|source| BuildError::Read {
        path: src.to_owned(),
        source,
    })?;
    let mut output = vari_fs::AtomicFile::create(dest)?;
    std::io::copy(&mut input, &mut output).map_err(|source| BuildError::Site {
        path: dest.to_owned(),
        source,
    })?;
    output.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_and_copies_replace_atomically_and_keep_content() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.whl");
        std::fs::write(&src, b"wheel").unwrap();
        let linked = dir.path().join("linked.whl");
        std::fs::write(&linked, b"old").unwrap();
        place(&src, &linked, &FilePlacement::HardLink).unwrap();
        assert!(vari_fs::same_file(&src, &linked));
        place(&src, &linked, &FilePlacement::HardLink).unwrap();
        let copied = dir.path().join("copied.whl");
        place(&src, &copied, &FilePlacement::Copy).unwrap();
        assert_eq!(std::fs::read(&copied).unwrap(), b"wheel");
        assert!(!vari_fs::same_file(&src, &copied));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 3, "no temporary file is left behind");
    }
}
