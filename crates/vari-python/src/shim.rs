//! Version-manager shims: `python3` scripts from pyenv or asdf that pick an interpreter at run
//! time. vari works out which interpreter a pyenv or asdf shim would run by reading the same
//! variables and version files they read, so the answer can be cached under the real
//! interpreter (a shim's own file never changes when the chosen version does). Any other
//! script is run once and its `sys.executable` names the real interpreter.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::env::{search_path, DiscoveryEnv};

/// Which kind of shim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShimKind {
    /// A pyenv shim.
    Pyenv,
    /// An asdf shim.
    Asdf,
    /// Another script (a wrapper); what it runs is learned by running it.
    Script,
}

impl fmt::Display for ShimKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Pyenv => "pyenv shim",
            Self::Asdf => "asdf shim",
            Self::Script => "script",
        })
    }
}

/// A shim and, when it could be worked out without running it, the interpreter it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shim {
    /// The kind.
    pub kind: ShimKind,
    /// The interpreter it runs (`None`: learned by running the shim).
    pub target: Option<PathBuf>,
}

/// How much of a file is read to recognize a shim.
const SNIFF_BYTES: u64 = 8192;

/// The shim `program` is, or `None` for a binary (a real interpreter).
pub(crate) fn detect(program: &Path, env: &DiscoveryEnv) -> Option<Shim> {
    let mut head = Vec::new();
    std::fs::File::open(program)
        .ok()?
        .take(SNIFF_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    if !head.starts_with(b"#!") {
        return None;
    }
    let text = String::from_utf8_lossy(&head);
    let name = program.file_name()?.to_str()?;
    let (kind, target) = if text.contains("libexec/pyenv") || text.contains("PYENV_ROOT") {
        (ShimKind::Pyenv, pyenv_target(program, name, &text, env))
    } else if text.contains("asdf exec") || text.contains("asdf-plugin") {
        (ShimKind::Asdf, asdf_target(program, name, env))
    } else {
        (ShimKind::Script, None)
    };
    Some(Shim { kind, target })
}

/// The interpreter a pyenv shim named `name` runs: `PYENV_VERSION`, else the nearest
/// `.python-version` from the working directory up, else `$PYENV_ROOT/version`, else the
/// system Python; each may list several versions, the first that has the program wins.
fn pyenv_target(shim: &Path, name: &str, text: &str, env: &DiscoveryEnv) -> Option<PathBuf> {
    // The shim states its root (`export PYENV_ROOT="…"`); else the variable; else `shims/..`.
    let root = text
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("export PYENV_ROOT=")?;
            Some(PathBuf::from(value.trim_matches(['"', '\''])))
        })
        .or_else(|| env.var("PYENV_ROOT").map(PathBuf::from))
        .or_else(|| shim.parent()?.parent().map(Path::to_path_buf))?;
    let versions: Vec<String> = match env.var_str("PYENV_VERSION") {
        Some(list) => list.split(':').map(str::to_owned).collect(),
        None => find_upwards(env.current_dir(), ".python-version")
            .or_else(|| Some(root.join("version")).filter(|p| p.is_file()))
            .and_then(|file| std::fs::read_to_string(file).ok())
            .map(|text| version_words(&text))
            .unwrap_or_else(|| vec!["system".to_owned()]),
    };
    let installs = root.join("versions");
    versions.iter().find_map(|version| {
        if version == "system" {
            return search_path(name, env, shim.parent());
        }
        installed(&installs, version, name)
    })
}

/// The interpreter an asdf shim named `name` runs: `ASDF_PYTHON_VERSION`, else the `python`
/// line of the nearest `.tool-versions` from the working directory up, else of
/// `$HOME/.tool-versions`.
fn asdf_target(shim: &Path, name: &str, env: &DiscoveryEnv) -> Option<PathBuf> {
    let data_dir = env
        .var("ASDF_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| shim.parent()?.parent().map(Path::to_path_buf))?;
    let versions: Vec<String> = match env.var_str("ASDF_PYTHON_VERSION") {
        Some(version) => vec![version.to_owned()],
        None => {
            let home = env.var("HOME").map(|h| Path::new(h).join(".tool-versions"));
            let file = find_upwards(env.current_dir(), ".tool-versions")
                .or(home.filter(|p| p.is_file()))?;
            let text = std::fs::read_to_string(file).ok()?;
            text.lines()
                .map(|line| line.split('#').next().unwrap_or_default())
                .find_map(|line| {
                    let mut words = line.split_whitespace();
                    (words.next() == Some("python")).then(|| words.map(str::to_owned).collect())
                })?
        }
    };
    let installs = data_dir.join("installs").join("python");
    versions.iter().find_map(|version| {
        if version == "system" {
            return search_path(name, env, shim.parent());
        }
        installed(&installs, version, name)
    })
}

/// `<installs>/<version>/bin/<name>`; a prefix such as `3.12` means the newest installed
/// `3.12.x` (as pyenv resolves it).
fn installed(installs: &Path, version: &str, name: &str) -> Option<PathBuf> {
    let exact = installs.join(version).join("bin").join(name);
    if exact.is_file() {
        return Some(exact);
    }
    let prefix = format!("{version}.");
    let mut matches: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(installs)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let dir_name = entry.file_name().into_string().ok()?;
            let rest = dir_name.strip_prefix(&prefix)?;
            let numbers = rest
                .split('.')
                .map(|p| p.parse::<u64>().ok())
                .collect::<Option<Vec<_>>>()?;
            let program = entry.path().join("bin").join(name);
            program.is_file().then_some((numbers, program))
        })
        .collect();
    matches.sort();
    matches.pop().map(|(_, program)| program)
}

/// The words of a version file, without comments.
fn version_words(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .flat_map(str::split_whitespace)
        .map(str::to_owned)
        .collect()
}

/// The nearest file named `name` in `start` or a parent directory.
fn find_upwards(start: Option<&Path>, name: &str) -> Option<PathBuf> {
    start?
        .ancestors()
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_files_ignore_comments() {
        assert_eq!(
            version_words("3.12.1 # main\n# old\n3.11.7\n"),
            ["3.12.1", "3.11.7"]
        );
    }

    #[test]
    fn a_binary_is_not_a_shim() {
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("python3");
        std::fs::write(&binary, b"\x7fELF\x02\x01").unwrap();
        assert_eq!(detect(&binary, &DiscoveryEnv::default()), None);
        let script = dir.path().join("python");
        std::fs::write(&script, b"#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n").unwrap();
        assert_eq!(
            detect(&script, &DiscoveryEnv::default()),
            Some(Shim {
                kind: ShimKind::Script,
                target: None
            })
        );
    }

    #[test]
    fn version_prefixes_pick_the_newest_install() {
        let dir = tempfile::tempdir().unwrap();
        for version in ["3.12.1", "3.12.10", "3.12.9", "3.13.0"] {
            let bin = dir.path().join(version).join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("python3"), b"").unwrap();
        }
        let found = installed(dir.path(), "3.12", "python3").unwrap();
        assert!(
            found.ends_with("3.12.10/bin/python3"),
            "{}",
            found.display()
        );
        assert!(installed(dir.path(), "3.11", "python3").is_none());
    }
}
