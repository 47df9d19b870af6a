//! The one answer to "where is vari's cache?".

use std::path::{Path, PathBuf};

/// The variable that names the cache directory explicitly.
pub const CACHE_DIR_ENV: &str = "VARI_CACHE_DIR";

/// vari's cache directory for this process's environment (see [`cache_dir_with`]).
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_with(|name| std::env::var(name).ok())
}

/// vari's cache directory, reading variables through `var` (an empty value counts as unset):
/// `$VARI_CACHE_DIR`, else on Windows `%LOCALAPPDATA%\vari\cache`, else `$XDG_CACHE_HOME/vari`
/// (when absolute, as the XDG specification requires), else `$HOME/.cache/vari`. `None` when
/// none of them is set.
///
/// ```
/// use std::path::PathBuf;
/// let env = |name: &str| (name == "HOME").then(|| "/home/u".to_owned());
/// # if cfg!(unix) {
/// assert_eq!(vari_fs::cache_dir_with(env), Some(PathBuf::from("/home/u/.cache/vari")));
/// # }
/// ```
pub fn cache_dir_with(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let Some(dir) = var(CACHE_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    if cfg!(windows) {
        return Some(
            PathBuf::from(var("LOCALAPPDATA")?)
                .join("vari")
                .join("cache"),
        );
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Some(PathBuf::from(xdg).join("vari"));
    }
    Some(PathBuf::from(var("HOME")?).join(".cache").join("vari"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Option<PathBuf> {
        let map: std::collections::BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        cache_dir_with(|name| map.get(name).cloned())
    }

    #[cfg(unix)]
    #[test]
    fn the_explicit_variable_then_xdg_then_home() {
        assert_eq!(with(&[]), None);
        assert_eq!(with(&[("HOME", "/h")]), Some("/h/.cache/vari".into()));
        assert_eq!(
            with(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]),
            Some("/x/vari".into())
        );
        // A relative XDG_CACHE_HOME is invalid per the specification and ignored.
        assert_eq!(
            with(&[("HOME", "/h"), ("XDG_CACHE_HOME", "rel")]),
            Some("/h/.cache/vari".into())
        );
        assert_eq!(
            with(&[
                ("HOME", "/h"),
                (CACHE_DIR_ENV, "/c"),
                ("XDG_CACHE_HOME", "/x")
            ]),
            Some("/c".into())
        );
        assert_eq!(
            with(&[("HOME", "/h"), (CACHE_DIR_ENV, "")]),
            Some("/h/.cache/vari".into())
        );
    }
}
