//! The one place where a path that came from input (a state file, a file name, a project name,
//! a cache key) is joined under a directory vari writes in, or deleted from it.
//!
//! The rule: such a path is relative and `/`-separated, and each of its components is a plain
//! name: not empty, not `.` or `..`, no `/` or `\`, no NUL or other control character, not a
//! Windows drive (`C:`). Anything else is refused with an error naming the path, before any
//! file is touched. What a name must look like beyond that (a PEP 427 wheel filename, a PEP 503
//! project name) is the caller's grammar, checked before it calls here.
//!
//! Deletions go through [`remove_file_under`], which also refuses to pass through a symbolic
//! link to a directory on the way down, so a planted `files -> /` link cannot turn a removal of
//! `files/x` into one outside the root.
//!
//! ```
//! use std::path::Path;
//! let root = Path::new("/site");
//! assert_eq!(vari_fs::join_under(root, "simple/foo/index.html").unwrap(),
//!            Path::new("/site/simple/foo/index.html"));
//! assert!(vari_fs::join_under(root, "../etc/passwd").is_err());
//! assert!(vari_fs::join_under(root, "/etc/passwd").is_err());
//! assert!(vari_fs::join_under(root, "a//b").is_err());
//! ```

use std::io;
use std::path::{Path, PathBuf};

/// Why a path from input may not be joined under a directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` is not a path inside the directory: {reason}", .path.escape_debug())]
pub struct UnsafePath {
    /// The path as given (shown escaped: it may hold control characters).
    pub path: String,
    /// Which part of the rule it breaks.
    pub reason: &'static str,
}

/// Checks one path component (a file or directory name) against the rule in the
/// [module documentation](self).
///
/// ```
/// assert!(vari_fs::check_name("torch-2.8.0-py3-none-any.whl").is_ok());
/// for bad in ["", ".", "..", "a/b", "a\\b", "nul\0", "line\nbreak", "C:"] {
///     assert!(vari_fs::check_name(bad).is_err(), "{bad:?}");
/// }
/// ```
pub fn check_name(name: &str) -> Result<(), UnsafePath> {
    let bad = |reason| {
        Err(UnsafePath {
            path: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return bad("it has an empty component");
    }
    if name == "." || name == ".." {
        return bad("it has a `.` or `..` component");
    }
    if name.contains(['/', '\\']) {
        return bad("a name may not contain `/` or `\\`");
    }
    if name.chars().any(char::is_control) {
        return bad("it contains a control character (NUL, newline, escape…)");
    }
    // `C:` and `C:x` name a drive on Windows, whatever the platform that wrote them.
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return bad("it names a drive");
    }
    Ok(())
}

/// Checks a relative, `/`-separated path from input: not absolute, and every component a plain
/// name ([`check_name`]).
pub fn check_relative(relative: &str) -> Result<(), UnsafePath> {
    let bad = |reason| {
        Err(UnsafePath {
            path: relative.to_owned(),
            reason,
        })
    };
    if relative.is_empty() {
        return bad("it is empty");
    }
    if relative.starts_with(['/', '\\']) {
        return bad("it is absolute");
    }
    for component in relative.split('/') {
        check_name(component).map_err(|e| UnsafePath {
            path: relative.to_owned(),
            reason: e.reason,
        })?;
    }
    Ok(())
}

/// `root` joined with the relative, `/`-separated `relative`, after [`check_relative`].
pub fn join_under(root: &Path, relative: &str) -> Result<PathBuf, UnsafePath> {
    check_relative(relative)?;
    Ok(relative
        .split('/')
        .fold(root.to_path_buf(), |path, part| path.join(part)))
}

/// Why [`remove_file_under`] did not remove a file.
#[derive(Debug, thiserror::Error)]
pub enum RemoveError {
    /// The path breaks the rule of [`check_relative`].
    #[error(transparent)]
    Unsafe(#[from] UnsafePath),
    /// A directory on the way is a symbolic link (or not a directory), so the file is not
    /// inside the root.
    #[error("{}: is a symbolic link or not a directory; nothing below it is removed", .0.display())]
    NotARealDirectory(PathBuf),
    /// The operating system refused.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The reason.
        source: io::Error,
    },
}

/// Removes the file `relative` (checked as in [`join_under`]) under `root`, making sure that no
/// directory between `root` and it is a symbolic link. A missing file is not an error; returns
/// whether a file was removed. The final component itself is removed as it is (a symbolic link
/// is removed, never what it names).
pub fn remove_file_under(root: &Path, relative: &str) -> Result<bool, RemoveError> {
    let path = join_under(root, relative)?;
    let mut dir = root.to_path_buf();
    let parts: Vec<&str> = relative.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(RemoveError::NotARealDirectory(dir)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(RemoveError::Io { path: dir, source }),
        }
    }
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(RemoveError::Io { path, source }),
    }
}

/// `path` relative to `dir`, `/`-separated (`.` for `dir` itself), when it lies under it.
pub fn relative_under(path: &Path, dir: &Path) -> Option<String> {
    let file = std::fs::canonicalize(path).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let relative: Vec<String> = file
        .strip_prefix(&dir)
        .ok()?
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if relative.is_empty() {
        return Some(".".to_owned());
    }
    let relative = relative.join("/");
    check_relative(&relative).ok()?;
    Some(relative)
}

/// The directory the file at `path` lies in (`.` for a bare file name): where paths a file
/// records relative to itself (a lock's profiles and local files) start from.
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_of_plain_names_only() {
        assert!(check_relative("files/a-1.0.tar.gz").is_ok());
        assert!(check_relative("simple/foo/index.json").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "\\\\server\\share",
            "../x",
            "files/../../x",
            "files/./x",
            "files//x",
            "files/",
            "C:/Windows",
            "files/C:x",
            "files\\..\\x",
            "a\0b",
            "simple/\x1b[31m/index.html",
        ] {
            let err = check_relative(bad).unwrap_err();
            assert_eq!(err.path, bad);
            assert!(join_under(Path::new("/r"), bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_message_shows_control_characters_escaped() {
        let err = check_relative("a\nb").unwrap_err().to_string();
        assert!(err.contains("a\\nb"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn removal_never_passes_through_a_linked_directory() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"keep").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("files")).unwrap();
        let err = remove_file_under(root.path(), "files/victim").unwrap_err();
        assert!(matches!(err, RemoveError::NotARealDirectory(_)), "{err}");
        assert!(outside.path().join("victim").exists());
        assert!(remove_file_under(root.path(), "../victim").is_err());

        // A link as the final component is removed itself.
        std::fs::create_dir(root.path().join("simple")).unwrap();
        let link = root.path().join("simple/index.html");
        std::os::unix::fs::symlink(outside.path().join("victim"), &link).unwrap();
        assert!(remove_file_under(root.path(), "simple/index.html").unwrap());
        assert!(outside.path().join("victim").exists());
        assert!(!remove_file_under(root.path(), "simple/index.html").unwrap());
    }
}
