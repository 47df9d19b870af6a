//! The target environment as it lies on disk, read without running Python: its site-packages
//! directories (a venv's `pyvenv.cfg`, a prefix's `lib/pythonX.Y/site-packages`, a directory
//! that holds distributions itself) and the distributions installed there (`*.dist-info/METADATA`
//! and `*.egg-info/PKG-INFO`, `Name` and `Version`).
//!
//! [`crate::TargetPython::site_packages`] is what an interpreter says when asked; this is the
//! answer for an environment that is only named (the `abi_dependency` provider's `--python`),
//! and the listing every reader of installed distributions (`vari list`, `vari install`) shares.

use std::path::{Path, PathBuf};

/// Why the target environment could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentError {
    /// The path does not exist.
    #[error("Python environment {0} does not exist")]
    NotFound(PathBuf),
    /// No site-packages directory was found.
    #[error("no site-packages directory found for {path} (looked for {looked})")]
    NoSitePackages {
        /// The interpreter or directory given.
        path: PathBuf,
        /// What was looked for.
        looked: String,
    },
}

/// Whether `dir` directly holds distribution metadata.
fn holds_distributions(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".dist-info") || name.ends_with(".egg-info")
        })
    })
}

/// `pythonX.Y` from an interpreter file name such as `python3.12` or `python3.12t`.
fn version_from_exe(exe: &Path) -> Option<String> {
    let name = exe.file_name()?.to_str()?;
    let rest = name.strip_prefix("python")?;
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (digits.contains('.')).then(|| format!("python{}", digits.trim_end_matches('.')))
}

/// Site-packages directories under an installation prefix.
fn prefix_site_dirs(prefix: &Path, version: Option<&str>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for lib in ["lib", "lib64"] {
        let lib_dir = prefix.join(lib);
        let mut versions: Vec<String> = match version {
            Some(v) if lib_dir.join(v).is_dir() => vec![v.to_owned()],
            _ => std::fs::read_dir(&lib_dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                        .filter(|n| n.starts_with("python3") || n.starts_with("python2"))
                        .collect()
                })
                .unwrap_or_default(),
        };
        versions.sort();
        for v in versions {
            for leaf in ["site-packages", "dist-packages"] {
                dirs.push(lib_dir.join(&v).join(leaf));
            }
        }
    }
    // Windows layout.
    dirs.push(prefix.join("Lib").join("site-packages"));
    let mut seen = Vec::new();
    for d in dirs {
        // lib64 is often a symlink to lib: keep each real directory once.
        let real = std::fs::canonicalize(&d).unwrap_or(d.clone());
        if d.is_dir() && !seen.iter().any(|(r, _): &(PathBuf, PathBuf)| *r == real) {
            seen.push((real, d));
        }
    }
    seen.into_iter().map(|(_, d)| d).collect()
}

/// Reads `pyvenv.cfg` key `key`.
fn pyvenv_value(cfg: &str, key: &str) -> Option<String> {
    cfg.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim().eq_ignore_ascii_case(key)).then(|| v.trim().to_owned())
    })
}

/// The site-packages directories of the environment at `python`: an interpreter, a venv or
/// prefix directory, or a site-packages directory itself. Searched in order; nothing is run.
pub fn site_packages(python: &Path) -> Result<Vec<PathBuf>, EnvironmentError> {
    if !python.exists() {
        return Err(EnvironmentError::NotFound(python.to_owned()));
    }
    let looked = "lib/python*/site-packages, lib64/…, Lib/site-packages".to_owned();
    if python.is_dir() {
        if holds_distributions(python) {
            return Ok(vec![python.to_owned()]);
        }
        let dirs = environment_dirs(python, None);
        return if dirs.is_empty() {
            Err(EnvironmentError::NoSitePackages {
                path: python.to_owned(),
                looked,
            })
        } else {
            Ok(dirs)
        };
    }
    // An interpreter: `<prefix>/bin/python` (or `<prefix>/python.exe`). A venv's interpreter is
    // usually a symlink to the base one, so look for pyvenv.cfg before resolving links.
    let version = version_from_exe(python);
    for candidate in [python.parent(), python.parent().and_then(Path::parent)]
        .into_iter()
        .flatten()
    {
        if candidate.join("pyvenv.cfg").is_file() {
            let dirs = environment_dirs(candidate, version.as_deref());
            if !dirs.is_empty() {
                return Ok(dirs);
            }
        }
    }
    let real = std::fs::canonicalize(python).unwrap_or_else(|_| python.to_owned());
    let version = version_from_exe(&real).or(version);
    let parent = real.parent().unwrap_or(Path::new("/"));
    let prefix = if parent.file_name().is_some_and(|n| n == "bin") {
        parent.parent().unwrap_or(parent)
    } else {
        parent
    };
    let dirs = environment_dirs(prefix, version.as_deref());
    if dirs.is_empty() {
        Err(EnvironmentError::NoSitePackages {
            path: python.to_owned(),
            looked: format!("{looked} under {}", prefix.display()),
        })
    } else {
        Ok(dirs)
    }
}

/// The site directories of a prefix, plus the base environment's when a venv includes system
/// site-packages.
fn environment_dirs(prefix: &Path, version: Option<&str>) -> Vec<PathBuf> {
    let mut dirs = prefix_site_dirs(prefix, version);
    let Ok(cfg) = read_text(&prefix.join("pyvenv.cfg")) else {
        return dirs;
    };
    let version = version.map(str::to_owned).or_else(|| {
        // `version_info = 3.12.3` → python3.12
        let v = pyvenv_value(&cfg, "version_info").or_else(|| pyvenv_value(&cfg, "version"))?;
        let mut parts = v.split('.');
        Some(format!("python{}.{}", parts.next()?, parts.next()?))
    });
    let include_system = pyvenv_value(&cfg, "include-system-site-packages")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if include_system {
        if let Some(home) = pyvenv_value(&cfg, "home") {
            let home = PathBuf::from(home);
            let base = if home.file_name().is_some_and(|n| n == "bin") {
                home.parent().map(Path::to_path_buf).unwrap_or(home)
            } else {
                home
            };
            for d in prefix_site_dirs(&base, version.as_deref()) {
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    dirs
}

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The `Name` header as written.
    pub name: String,
    /// The `Version` header as written.
    pub version: String,
    /// The metadata directory it was read from.
    pub path: PathBuf,
}

/// `Name` and `Version` from the header block of a core-metadata file.
fn metadata_headers(text: &str) -> (Option<String>, Option<String>) {
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        if line.trim().is_empty() {
            break; // end of headers; the body (description) follows
        }
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim();
            if name.is_none() && k.eq_ignore_ascii_case("Name") {
                name = Some(v.trim().to_owned());
            } else if version.is_none() && k.eq_ignore_ascii_case("Version") {
                version = Some(v.trim().to_owned());
            }
        }
    }
    (name, version)
}

/// `name-version` from a metadata directory name (`torch-2.8.0.dist-info`).
fn name_version_from_dir(stem: &str) -> Option<(String, String)> {
    let (name, version) = stem.split_once('-')?;
    let version = version.split('-').next()?; // egg-info may append `-py3.12`
    Some((name.to_owned(), version.to_owned()))
}

/// The distributions in `site_dirs`, in directory order then file-name order.
pub fn installed_distributions(site_dirs: &[PathBuf]) -> Vec<Installed> {
    let mut found = Vec::new();
    for dir in site_dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let (stem, metadata_file) = if let Some(stem) = file_name.strip_suffix(".dist-info") {
                (stem, path.join("METADATA"))
            } else if let Some(stem) = file_name.strip_suffix(".egg-info") {
                // An egg-info is a directory with PKG-INFO, or a PKG-INFO-format file itself.
                let file = if path.is_dir() {
                    path.join("PKG-INFO")
                } else {
                    path.clone()
                };
                (stem, file)
            } else {
                continue;
            };
            let headers = read_text(&metadata_file)
                .map(|t| metadata_headers(&t))
                .unwrap_or((None, None));
            let from_dir = name_version_from_dir(stem);
            let name = headers
                .0
                .or_else(|| from_dir.as_ref().map(|(n, _)| n.clone()));
            let version = headers.1.or_else(|| from_dir.map(|(_, v)| v));
            if let (Some(name), Some(version)) = (name, version) {
                found.push(Installed {
                    name,
                    version,
                    path: path.clone(),
                });
            }
        }
    }
    found
}

/// A metadata or configuration file of the environment, as text: a regular file, opened without
/// blocking, within [`vari_fs::InputKind::System`]'s ceiling.
fn read_text(path: &Path) -> std::io::Result<String> {
    Ok(vari_fs::read_input_to_string(
        path,
        vari_fs::InputKind::System,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_fallbacks() {
        assert_eq!(
            metadata_headers("Name: a\nVersion: 1\n"),
            (Some("a".into()), Some("1".into()))
        );
        assert_eq!(
            name_version_from_dir("foo-1.0-py3.12"),
            Some(("foo".into(), "1.0".into()))
        );
        assert_eq!(
            version_from_exe(Path::new("/usr/bin/python3.12")).as_deref(),
            Some("python3.12")
        );
        assert_eq!(version_from_exe(Path::new("/usr/bin/python3")), None);
        // A dist-info without METADATA falls back to its directory name.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("zstd-1.5.dist-info")).unwrap();
        let found = installed_distributions(&[tmp.path().to_owned()]);
        assert_eq!(found[0].name, "zstd");
        assert_eq!(found[0].version, "1.5");
    }
}
