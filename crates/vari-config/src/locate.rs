//! Where the configuration files are: the user's `vari.toml`, the project's `pyproject.toml`,
//! and the environment the search reads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable naming a configuration file read after all others (the strongest file layer).
pub const CONFIG_ENV: &str = "VARI_CONFIG";

/// The variable that, set to anything non-empty, turns off finding the user and project files
/// (a file named by [`CONFIG_ENV`] is still read): for reproducible runs and tests.
pub const NO_CONFIG_ENV: &str = "VARI_NO_CONFIG";

/// The environment a configuration search reads: variables and the current directory.
#[derive(Debug, Clone, Default)]
pub struct ConfigEnv {
    vars: BTreeMap<String, String>,
    current_dir: Option<PathBuf>,
}

impl ConfigEnv {
    /// An environment with these variables and this current directory.
    pub fn new<K, V>(vars: impl IntoIterator<Item = (K, V)>, current_dir: Option<PathBuf>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            current_dir,
        }
    }

    /// The process's variables (those that are valid UTF-8) and current directory.
    pub fn from_process() -> Self {
        Self::new(std::env::vars(), std::env::current_dir().ok())
    }

    /// A variable's value; an empty value counts as unset.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// The directory the project search starts from.
    pub fn current_dir(&self) -> Option<&Path> {
        self.current_dir.as_deref()
    }
}

/// The operating systems whose conventions for configuration directories differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OsFamily {
    Windows,
    MacOs,
    OtherUnix,
}

impl OsFamily {
    const THIS: OsFamily = if cfg!(windows) {
        OsFamily::Windows
    } else if cfg!(target_os = "macos") {
        OsFamily::MacOs
    } else {
        OsFamily::OtherUnix
    };
}

/// The user's configuration file, `vari/vari.toml` under the platform's configuration
/// directory; `None` when the variables that locate it are unset.
///
/// - Linux and other Unix systems: `$XDG_CONFIG_HOME/vari/vari.toml`, else
///   `$HOME/.config/vari/vari.toml` (the XDG base-directory rule; a relative `XDG_CONFIG_HOME`
///   is invalid per the specification and ignored).
/// - macOS: `$XDG_CONFIG_HOME/vari/vari.toml` when set (people who keep their dotfiles there
///   expect command-line tools to honour it), else the platform's directory,
///   `$HOME/Library/Application Support/vari/vari.toml`.
/// - Windows: `%APPDATA%\vari\vari.toml` (the roaming profile: preferences follow the user).
///
/// ```
/// use std::path::PathBuf;
/// let env = |name: &str| (name == "HOME").then(|| "/home/u".to_owned());
/// # if cfg!(all(unix, not(target_os = "macos"))) {
/// assert_eq!(
///     vari_config::user_config_file(env),
///     Some(PathBuf::from("/home/u/.config/vari/vari.toml"))
/// );
/// # }
/// ```
pub fn user_config_file(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    user_config_file_for(OsFamily::THIS, var)
}

fn user_config_file_for(os: OsFamily, var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let dir = match os {
        OsFamily::Windows => PathBuf::from(var("APPDATA")?),
        OsFamily::MacOs | OsFamily::OtherUnix => {
            match var("XDG_CONFIG_HOME").filter(|d| Path::new(d).is_absolute()) {
                Some(xdg) => PathBuf::from(xdg),
                None if os == OsFamily::MacOs => PathBuf::from(var("HOME")?)
                    .join("Library")
                    .join("Application Support"),
                None => PathBuf::from(var("HOME")?).join(".config"),
            }
        }
    };
    Some(dir.join("vari").join("vari.toml"))
}

/// The `pyproject.toml` files a project search looks at, nearest first: one per directory from
/// `start` upwards, ending with the directory that holds `.git` (the repository's root) or at
/// the filesystem root. Only existing files are returned.
pub(crate) fn project_candidates(start: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in start.ancestors() {
        let candidate = dir.join("pyproject.toml");
        if candidate.is_file() {
            found.push(candidate);
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(os: OsFamily, pairs: &[(&str, &str)]) -> Option<PathBuf> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        user_config_file_for(os, |name| map.get(name).cloned())
    }

    #[test]
    fn unix_follows_xdg_then_home() {
        let os = OsFamily::OtherUnix;
        assert_eq!(with(os, &[]), None);
        assert_eq!(
            with(os, &[("HOME", "/h")]),
            Some("/h/.config/vari/vari.toml".into())
        );
        assert_eq!(
            with(os, &[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")]),
            Some("/x/vari/vari.toml".into())
        );
        // Relative or empty XDG_CONFIG_HOME is ignored.
        assert_eq!(
            with(os, &[("HOME", "/h"), ("XDG_CONFIG_HOME", "rel")]),
            Some("/h/.config/vari/vari.toml".into())
        );
        assert_eq!(
            with(os, &[("HOME", "/h"), ("XDG_CONFIG_HOME", " ")]),
            Some("/h/.config/vari/vari.toml".into())
        );
    }

    #[test]
    fn macos_uses_application_support_unless_xdg_is_set() {
        let os = OsFamily::MacOs;
        assert_eq!(
            with(os, &[("HOME", "/Users/u")]),
            Some("/Users/u/Library/Application Support/vari/vari.toml".into())
        );
        assert_eq!(
            with(os, &[("HOME", "/Users/u"), ("XDG_CONFIG_HOME", "/x")]),
            Some("/x/vari/vari.toml".into())
        );
    }

    #[test]
    fn windows_uses_appdata() {
        let os = OsFamily::Windows;
        assert_eq!(with(os, &[("HOME", "/h")]), None);
        assert_eq!(
            with(os, &[("APPDATA", "C:/Users/u/AppData/Roaming")]),
            Some(
                PathBuf::from("C:/Users/u/AppData/Roaming")
                    .join("vari")
                    .join("vari.toml")
            )
        );
    }

    #[test]
    fn the_project_search_stops_at_the_repository_root() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let sub = repo.join("a").join("b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        std::fs::write(root.path().join("pyproject.toml"), "").unwrap();
        std::fs::write(repo.join("a").join("pyproject.toml"), "").unwrap();
        std::fs::write(repo.join("pyproject.toml"), "").unwrap();
        assert_eq!(
            project_candidates(&sub),
            vec![
                repo.join("a").join("pyproject.toml"),
                repo.join("pyproject.toml")
            ]
        );
    }
}
