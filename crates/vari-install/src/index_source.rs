//! The indexes an installer would use on its own, so that `vari install` puts the proxy in front
//! of exactly those and the installer itself sees nothing but the proxy.
//!
//! pip: `PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_FIND_LINKS`, `PIP_NO_INDEX`, over the keys
//! `index-url`, `extra-index-url`, `find-links` and `no-index` of the `[install]` section, over
//! those of `[global]`, in the files pip reads, later files winning: the global files
//! (`$XDG_CONFIG_DIRS/pip/pip.conf`, `/etc/pip.conf`), the user files (`~/.pip/pip.conf`, then
//! `$XDG_CONFIG_HOME/pip/pip.conf`; skipped when `PIP_CONFIG_FILE` names a file that exists), the
//! environment's `PREFIX/pip.conf`, then `$PIP_CONFIG_FILE` (`/dev/null` there: no file at
//! all). pip asks every index and takes the best match.
//!
//! uv: the variables over its configuration files (`uv.toml`, `[tool.uv]`; found and merged
//! as uv does, see `uv_config`). The indexes it asks first: `UV_INDEX`, the files'
//! `[[index]]` entries (those marked `explicit` serve only pinned sources and are left out),
//! `UV_EXTRA_INDEX_URL`, the files' `extra-index-url`; then the default: `UV_DEFAULT_INDEX`
//! (or the older `UV_INDEX_URL`), else the files' `[[index]]` entry marked `default`, else
//! their `index-url`. Also `UV_FIND_LINKS` then `find-links`, `UV_NO_INDEX` or `no-index`,
//! and `UV_INDEX_STRATEGY` or `index-strategy` (default: the first index that has the
//! project). In the files, `[pip]`'s keys win over the top level's, and relative paths are
//! relative to the file. When the files name sources, uv is given a copy of its settings
//! without them ([`InstallerIndexes::uv_config`]).
//!
//! Either installer's default index is PyPI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_client::{ClientSettings, FindLinks, IndexStrategy, IndexUrl};

use crate::ini;
use crate::installer::InstallerKind;
use crate::installer_env::parse_bool;
pub use crate::installer_env::{IndexSourceError, InstallerEnv, Origin, Sourced};
use crate::uv_config;

/// The indexes and find-links sources an installer would read on its own.
#[derive(Debug, Clone)]
pub struct InstallerIndexes {
    /// Simple-API indexes in the order the proxy should ask them (uv: its extra indexes first,
    /// then the default; pip: the main index, then the extras).
    pub indexes: Vec<Sourced<IndexUrl>>,
    /// Flat sources.
    pub find_links: Vec<Sourced<FindLinks>>,
    /// How the installer combines several indexes.
    pub strategy: IndexStrategy,
    /// Whether the installer's settings turn off every index (`no-index`): only find-links.
    pub no_index: bool,
    /// Whether its settings name indexes besides the main one (`extra-index-url`, `UV_INDEX`).
    pub extra_indexes: bool,
    /// The configuration files that exist and were read, in reading order (uv: highest
    /// precedence first).
    pub files: Vec<PathBuf>,
    /// uv only: its configuration files' settings merged, without the keys that name where
    /// packages come from, as TOML to give uv with `--config-file` so that it asks the proxy
    /// alone and keeps its other settings; `None` when its files name no source.
    pub uv_config: Option<String>,
}

impl InstallerIndexes {
    /// `base` with these sources and strategy.
    pub fn client_settings(&self, base: ClientSettings) -> ClientSettings {
        ClientSettings {
            indexes: self.indexes.iter().map(|i| i.value.clone()).collect(),
            find_links: self.find_links.iter().map(|f| f.value.clone()).collect(),
            strategy: self.strategy,
            ..base
        }
    }
}

/// The indexes `kind` would use in `env`.
///
/// ```
/// use vari_install::{installer_indexes, InstallerEnv, InstallerKind};
/// let env = InstallerEnv::new([("PIP_INDEX_URL", "https://wheels.example.com/simple")], None);
/// let found = installer_indexes(InstallerKind::Pip, &env).unwrap();
/// assert_eq!(found.indexes[0].value.to_string(), "https://wheels.example.com/simple/");
/// assert_eq!(found.indexes[0].origin.to_string(), "PIP_INDEX_URL");
/// ```
pub fn installer_indexes(
    kind: InstallerKind,
    env: &InstallerEnv,
) -> Result<InstallerIndexes, IndexSourceError> {
    match kind {
        InstallerKind::Pip => pip_indexes(env),
        InstallerKind::Uv => uv_indexes(env),
    }
}

/// pip's configuration files, in the order it reads them (later ones win).
pub fn pip_config_files(env: &InstallerEnv) -> Vec<PathBuf> {
    let config_file = env.var("PIP_CONFIG_FILE").map(PathBuf::from);
    if config_file.as_deref() == Some(Path::new(DEV_NULL)) {
        return Vec::new();
    }
    let mut files = match &env.global_files {
        Some(files) => files.clone(),
        None => global_pip_files(env),
    };
    if !config_file.as_deref().is_some_and(Path::exists) {
        files.extend(user_pip_files(env));
    }
    if let Some(prefix) = &env.prefix {
        files.push(prefix.join(PIP_CONFIG_NAME));
    }
    files.extend(config_file);
    files
}

#[cfg(windows)]
const DEV_NULL: &str = "nul";
#[cfg(not(windows))]
const DEV_NULL: &str = "/dev/null";

#[cfg(windows)]
const PIP_CONFIG_NAME: &str = "pip.ini";
#[cfg(not(windows))]
const PIP_CONFIG_NAME: &str = "pip.conf";

#[cfg(not(any(windows, target_os = "macos")))]
fn global_pip_files(env: &InstallerEnv) -> Vec<PathBuf> {
    let dirs = env.var("XDG_CONFIG_DIRS").unwrap_or("/etc/xdg");
    let mut files: Vec<PathBuf> = dirs
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join("pip").join(PIP_CONFIG_NAME))
        .collect();
    files.push(PathBuf::from("/etc").join(PIP_CONFIG_NAME));
    files
}

#[cfg(target_os = "macos")]
fn global_pip_files(_env: &InstallerEnv) -> Vec<PathBuf> {
    vec![PathBuf::from("/Library/Application Support/pip").join(PIP_CONFIG_NAME)]
}

#[cfg(windows)]
fn global_pip_files(env: &InstallerEnv) -> Vec<PathBuf> {
    let data = env.var("PROGRAMDATA").unwrap_or("C:\\ProgramData");
    vec![Path::new(data).join("pip").join(PIP_CONFIG_NAME)]
}

#[cfg(not(windows))]
fn user_pip_files(env: &InstallerEnv) -> Vec<PathBuf> {
    let Some(home) = &env.home else {
        return Vec::new();
    };
    let config_home = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mut files = vec![home.join(".pip").join(PIP_CONFIG_NAME)];
    if cfg!(target_os = "macos") {
        files.push(
            home.join("Library/Application Support/pip")
                .join(PIP_CONFIG_NAME),
        );
    }
    files.push(config_home.join("pip").join(PIP_CONFIG_NAME));
    files
}

#[cfg(windows)]
fn user_pip_files(env: &InstallerEnv) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(home) = &env.home {
        files.push(home.join("pip").join(PIP_CONFIG_NAME));
    }
    if let Some(appdata) = env.var("APPDATA") {
        files.push(Path::new(appdata).join("pip").join(PIP_CONFIG_NAME));
    }
    files
}

/// The index keys of pip's `install` command, with where each value came from.
#[derive(Default)]
struct PipKeys {
    values: BTreeMap<&'static str, (String, Origin)>,
}

const PIP_KEYS: [&str; 4] = ["index-url", "extra-index-url", "find-links", "no-index"];

fn pip_indexes(env: &InstallerEnv) -> Result<InstallerIndexes, IndexSourceError> {
    // Per section, later files win; then `[install]` over `[global]`, the variables over both.
    let mut by_section: BTreeMap<&str, PipKeys> = BTreeMap::new();
    let mut read = Vec::new();
    for path in pip_config_files(env) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let entries = ini::parse(&text).map_err(|e| IndexSourceError {
            origin: Origin::File {
                path: path.clone(),
                key: format!("line {}", e.line),
            },
            message: e.message,
        })?;
        for entry in entries {
            let section = match entry.section.as_str() {
                "global" => "global",
                "install" => "install",
                _ => continue,
            };
            let key = normalise_pip_key(&entry.key);
            let Some(known) = PIP_KEYS.iter().find(|k| **k == key) else {
                continue;
            };
            if entry.value.trim().is_empty() {
                continue;
            }
            let origin = Origin::File {
                path: path.clone(),
                key: format!("{section}.{known}"),
            };
            by_section
                .entry(section)
                .or_default()
                .values
                .insert(known, (entry.value, origin));
        }
        read.push(path);
    }
    let mut merged = PipKeys::default();
    for section in ["global", "install"] {
        if let Some(keys) = by_section.remove(section) {
            merged.values.extend(keys.values);
        }
    }
    for key in PIP_KEYS {
        let variable = format!("PIP_{}", key.to_uppercase().replace('-', "_"));
        if let Some(value) = env.var(&variable) {
            merged
                .values
                .insert(key, (value.to_owned(), Origin::Variable(variable)));
        }
    }

    let no_index = match merged.values.get("no-index") {
        Some((value, origin)) => parse_bool(value).ok_or_else(|| IndexSourceError {
            origin: origin.clone(),
            message: format!("`{value}` is not a boolean (true/false, yes/no, on/off, 1/0)"),
        })?,
        None => false,
    };
    let mut indexes = Vec::new();
    let extra_indexes = merged.values.contains_key("extra-index-url");
    if !no_index {
        match merged.values.get("index-url") {
            Some((value, origin)) => indexes.push(index(value.trim(), origin)?),
            None => indexes.push(Sourced {
                value: IndexUrl::pypi(),
                origin: Origin::Default,
            }),
        }
        if let Some((value, origin)) = merged.values.get("extra-index-url") {
            for url in value.split_whitespace() {
                indexes.push(index(url, origin)?);
            }
        }
    }
    let mut find_links = Vec::new();
    if let Some((value, origin)) = merged.values.get("find-links") {
        for given in value.split_whitespace() {
            find_links.push(links(given, origin)?);
        }
    }
    Ok(InstallerIndexes {
        indexes,
        find_links,
        // pip collects every index's files and installs the best match.
        strategy: IndexStrategy::UnsafeBestMatch,
        no_index,
        extra_indexes,
        files: read,
        uv_config: None,
    })
}

/// pip's key normalisation: lower case, `_` as `-`, no leading `--`.
fn normalise_pip_key(key: &str) -> String {
    let key = key.to_lowercase().replace('_', "-");
    key.strip_prefix("--").map(str::to_owned).unwrap_or(key)
}

fn index(given: &str, origin: &Origin) -> Result<Sourced<IndexUrl>, IndexSourceError> {
    sourced(given, origin, IndexUrl::parse)
}

fn links(given: &str, origin: &Origin) -> Result<Sourced<FindLinks>, IndexSourceError> {
    sourced(given, origin, FindLinks::parse)
}

/// `given` as `parse` reads it, with where it was given; an error names that place.
fn sourced<T, E: std::fmt::Display>(
    given: &str,
    origin: &Origin,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<Sourced<T>, IndexSourceError> {
    let value = parse(given).map_err(|e| IndexSourceError {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    Ok(Sourced {
        value,
        origin: origin.clone(),
    })
}

fn uv_indexes(env: &InstallerEnv) -> Result<InstallerIndexes, IndexSourceError> {
    let files = uv_config::discover(env)?;
    let variable = |name: &str| {
        env.var(name)
            .map(|value| (value, Origin::Variable(name.to_owned())))
    };
    let first_in_files = |key: &str| uv_config::values(&files, key).into_iter().next();

    let no_index = match variable("UV_NO_INDEX") {
        Some((value, origin)) => parse_bool(value).ok_or_else(|| IndexSourceError {
            origin,
            message: format!("`{value}` is not a boolean"),
        })?,
        None => match first_in_files("no-index") {
            Some(found) => found.value.as_bool().ok_or_else(|| IndexSourceError {
                origin: found.origin,
                message: "expected true or false".to_owned(),
            })?,
            None => false,
        },
    };

    // The indexes uv asks before the default, in its order.
    let mut named = Vec::new();
    let mut file_default = None;
    if let Some((value, origin)) = variable("UV_INDEX") {
        for entry in value.split_whitespace() {
            named.push(index(strip_index_name(entry), &origin)?);
        }
    }
    for found in uv_config::values(&files, "index") {
        for (i, entry) in array(&found)?.iter().enumerate() {
            let origin = with_key_suffix(&found.origin, &format!("[{i}]"));
            let entry = entry.as_table().ok_or_else(|| IndexSourceError {
                origin: origin.clone(),
                message: "expected a table with `url`".to_owned(),
            })?;
            // An explicit index serves only the packages pinned to it in `[tool.uv.sources]`.
            if entry.get("explicit").and_then(toml::Value::as_bool) == Some(true) {
                continue;
            }
            let url_origin = with_key_suffix(&origin, ".url");
            let url = entry
                .get("url")
                .and_then(toml::Value::as_str)
                .ok_or_else(|| IndexSourceError {
                    origin: url_origin.clone(),
                    message: "missing, or not a string".to_owned(),
                })?;
            let found_index = index(&index_location(url, &found.dir), &url_origin)?;
            if entry.get("default").and_then(toml::Value::as_bool) == Some(true) {
                file_default.get_or_insert(found_index);
            } else {
                named.push(found_index);
            }
        }
    }
    if let Some((value, origin)) = variable("UV_EXTRA_INDEX_URL") {
        for url in value.split_whitespace() {
            named.push(index(url, &origin)?);
        }
    }
    for found in uv_config::values(&files, "extra-index-url") {
        for url in strings(&found)? {
            named.push(index(&index_location(url, &found.dir), &found.origin)?);
        }
    }
    let extra_indexes = !named.is_empty();
    // The variables `vari select` reads for the default index too: one list, vari-config's.
    let default = match vari_config::UV_DEFAULT_INDEX_VARIABLES
        .iter()
        .find_map(|name| variable(name))
    {
        Some((value, origin)) => index(value.trim(), &origin)?,
        None => match (file_default, first_in_files("index-url")) {
            (Some(default), _) => default,
            (None, Some(found)) => {
                let url = found.value.as_str().ok_or_else(|| IndexSourceError {
                    origin: found.origin.clone(),
                    message: "expected a string".to_owned(),
                })?;
                index(&index_location(url, &found.dir), &found.origin)?
            }
            (None, None) => Sourced {
                value: IndexUrl::pypi(),
                origin: Origin::Default,
            },
        },
    };
    let indexes = match no_index {
        true => Vec::new(),
        false => named.into_iter().chain([default]).collect(),
    };

    let mut find_links = Vec::new();
    if let Some((value, origin)) = variable("UV_FIND_LINKS") {
        for given in value.split([',', ' ']).filter(|s| !s.trim().is_empty()) {
            find_links.push(links(given.trim(), &origin)?);
        }
    }
    for found in uv_config::values(&files, "find-links") {
        for given in strings(&found)? {
            find_links.push(links(&path_location(given, &found.dir), &found.origin)?);
        }
    }

    let strategy = match variable("UV_INDEX_STRATEGY") {
        Some((value, origin)) => (value.to_owned(), origin),
        None => match first_in_files("index-strategy") {
            Some(found) => match found.value.as_str() {
                Some(value) => (value.to_owned(), found.origin),
                None => {
                    return Err(IndexSourceError {
                        origin: found.origin,
                        message: "expected a string".to_owned(),
                    })
                }
            },
            None => ("first-index".to_owned(), Origin::Default),
        },
    };
    let strategy = match strategy.0.as_str() {
        "first-index" => IndexStrategy::FirstIndex,
        // The proxy shows the installer every index's files; uv then applies its own rule.
        "unsafe-first-match" | "unsafe-best-match" => IndexStrategy::UnsafeBestMatch,
        value => {
            return Err(IndexSourceError {
                origin: strategy.1,
                message: format!(
                    "`{value}`: expected first-index, unsafe-first-match or unsafe-best-match"
                ),
            })
        }
    };

    let uv_config = match uv_config::names_sources(&files) {
        true => Some(
            toml::to_string(&uv_config::without_sources(&files)).map_err(|e| IndexSourceError {
                origin: Origin::File {
                    path: files[0].path.clone(),
                    key: String::new(),
                },
                message: format!("cannot be written back for uv: {e}"),
            })?,
        ),
        false => None,
    };
    Ok(InstallerIndexes {
        indexes,
        find_links,
        strategy,
        no_index,
        extra_indexes,
        files: files.into_iter().map(|f| f.path).collect(),
        uv_config,
    })
}

/// The elements of an array setting.
fn array(found: &uv_config::FoundValue) -> Result<&Vec<toml::Value>, IndexSourceError> {
    found.value.as_array().ok_or_else(|| IndexSourceError {
        origin: found.origin.clone(),
        message: "expected an array".to_owned(),
    })
}

/// The strings of an array-of-strings setting.
fn strings(found: &uv_config::FoundValue) -> Result<Vec<&str>, IndexSourceError> {
    array(found)?
        .iter()
        .map(|v| {
            v.as_str().ok_or_else(|| IndexSourceError {
                origin: found.origin.clone(),
                message: "expected an array of strings".to_owned(),
            })
        })
        .collect()
}

/// `origin` with `suffix` added to its key (`index` → `index[0].url`).
fn with_key_suffix(origin: &Origin, suffix: &str) -> Origin {
    match origin {
        Origin::File { path, key } => Origin::File {
            path: path.clone(),
            key: format!("{key}{suffix}"),
        },
        other => other.clone(),
    }
}

/// Whether `given` is a URL rather than a path.
fn is_url(given: &str) -> bool {
    given.contains("://") || given.to_ascii_lowercase().starts_with("file:")
}

/// A find-links value from a file: URLs as they are, paths relative to the file's directory.
fn path_location(given: &str, dir: &Path) -> String {
    match is_url(given) {
        true => given.to_owned(),
        false => dir.join(given).to_string_lossy().into_owned(),
    }
}

/// An index given as a path in a file: a `file:` URL of it, relative to the file's directory.
fn index_location(given: &str, dir: &Path) -> String {
    if is_url(given) {
        return given.to_owned();
    }
    let path = dir.join(given);
    url::Url::from_directory_path(&path)
        .map(String::from)
        .unwrap_or_else(|()| path.to_string_lossy().into_owned())
}

/// `name=https://…` (a named index in `UV_INDEX`) → the URL.
fn strip_index_name(entry: &str) -> &str {
    match entry.split_once('=') {
        Some((name, url)) if !name.contains([':', '/']) => url,
        _ => entry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment that reads no machine-wide file.
    fn env(vars: &[(&str, &str)], prefix: Option<PathBuf>) -> InstallerEnv {
        InstallerEnv::new(vars.iter().copied(), prefix).without_machine_files()
    }

    fn urls(found: &InstallerIndexes) -> Vec<String> {
        found.indexes.iter().map(|i| i.value.to_string()).collect()
    }

    #[test]
    fn without_settings_both_installers_use_pypi() {
        let env = env(&[("PIP_CONFIG_FILE", DEV_NULL)], None);
        for kind in [InstallerKind::Pip, InstallerKind::Uv] {
            let found = installer_indexes(kind, &env).unwrap();
            assert_eq!(urls(&found), ["https://pypi.org/simple/"]);
            assert_eq!(found.indexes[0].origin, Origin::Default);
        }
    }

    #[test]
    fn uv_asks_its_extra_indexes_before_the_default() {
        let env = InstallerEnv::new(
            [
                ("UV_DEFAULT_INDEX", "https://main.example/simple"),
                (
                    "UV_INDEX",
                    "torch=https://torch.example/whl other=https://o.example/s",
                ),
                ("UV_EXTRA_INDEX_URL", "https://extra.example/simple"),
                ("UV_FIND_LINKS", "/wheels,/more"),
            ],
            None,
        );
        let found = installer_indexes(InstallerKind::Uv, &env).unwrap();
        assert_eq!(
            urls(&found),
            [
                "https://torch.example/whl/",
                "https://o.example/s/",
                "https://extra.example/simple/",
                "https://main.example/simple/"
            ]
        );
        assert_eq!(found.find_links.len(), 2);
        assert_eq!(found.strategy, IndexStrategy::FirstIndex);
    }

    #[test]
    fn uv_reads_its_files_below_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("wheels")).unwrap();
        std::fs::write(
            project.join("pyproject.toml"),
            "[project]\nname = 'app'\n\n[tool.uv]\n\
             extra-index-url = ['https://extra.example/simple']\n\
             find-links = ['wheels']\nindex-strategy = 'unsafe-best-match'\n\
             [[tool.uv.index]]\nname = 'torch'\nurl = 'https://torch.example/whl'\n\
             [[tool.uv.index]]\nname = 'pinned'\nurl = 'https://pinned.example/'\nexplicit = true\n\
             [[tool.uv.index]]\nname = 'mirror'\nurl = 'https://mirror.example/simple'\n\
             default = true\n",
        )
        .unwrap();
        let found = |vars: &[(&str, &str)]| {
            let env = InstallerEnv::new(vars.iter().copied(), None)
                .with_cwd(&project)
                .without_machine_files();
            installer_indexes(InstallerKind::Uv, &env).unwrap()
        };
        let files = found(&[]);
        assert_eq!(
            urls(&files),
            [
                "https://torch.example/whl/",
                "https://extra.example/simple/",
                "https://mirror.example/simple/"
            ]
        );
        assert_eq!(
            files.indexes[0].origin.to_string(),
            format!("{}: index[0].url", project.join("pyproject.toml").display())
        );
        // Relative to the file, not to the working directory.
        assert_eq!(
            files.find_links[0].value,
            FindLinks::Directory(project.join("wheels"))
        );
        assert_eq!(files.strategy, IndexStrategy::UnsafeBestMatch);
        assert_eq!(files.files, [project.join("pyproject.toml")]);
        // uv gets its settings back without the sources.
        assert_eq!(
            files.uv_config.as_deref(),
            Some("index-strategy = \"unsafe-best-match\"\n")
        );

        // The variables come first, and the default they name wins.
        let both = found(&[
            ("UV_INDEX", "https://env.example/i"),
            ("UV_DEFAULT_INDEX", "https://env.example/default"),
            ("UV_INDEX_STRATEGY", "first-index"),
        ]);
        assert_eq!(
            urls(&both),
            [
                "https://env.example/i/",
                "https://torch.example/whl/",
                "https://extra.example/simple/",
                "https://env.example/default/"
            ]
        );
        assert_eq!(both.strategy, IndexStrategy::FirstIndex);
        assert!(found(&[("UV_NO_CONFIG", "1")]).uv_config.is_none());
    }

    #[test]
    fn a_bad_uv_setting_names_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("uv.toml"), "[[index]]\nname = 'x'\n").unwrap();
        let env = InstallerEnv::new([("A", "b")], None)
            .with_cwd(dir.path())
            .without_machine_files();
        let e = installer_indexes(InstallerKind::Uv, &env).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: index[0].url: missing, or not a string",
                dir.path().join("uv.toml").display()
            )
        );
    }

    #[test]
    fn pip_reads_its_files_in_order_sections_then_variables() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let prefix = dir.path().join("venv");
        std::fs::create_dir_all(home.join(".config/pip")).unwrap();
        std::fs::create_dir_all(home.join(".pip")).unwrap();
        std::fs::create_dir_all(&prefix).unwrap();
        std::fs::write(
            home.join(".pip/pip.conf"),
            "[global]\nindex-url = https://legacy.example/simple\n",
        )
        .unwrap();
        std::fs::write(
            home.join(".config/pip/pip.conf"),
            "[global]\nindex-url = https://user.example/simple\nextra_index_url = \
             https://e1.example/simple\n  https://e2.example/simple\n",
        )
        .unwrap();
        std::fs::write(
            prefix.join("pip.conf"),
            "[install]\nindex-url = https://venv.example/simple\n",
        )
        .unwrap();
        let home_text = home.display().to_string();
        let env = env(&[("HOME", home_text.as_str())], Some(prefix.clone()));
        let found = installer_indexes(InstallerKind::Pip, &env).unwrap();
        assert_eq!(
            urls(&found),
            [
                "https://venv.example/simple/",
                "https://e1.example/simple/",
                "https://e2.example/simple/"
            ]
        );
        assert_eq!(
            found.indexes[0].origin.to_string(),
            format!("{}: install.index-url", prefix.join("pip.conf").display())
        );
        assert_eq!(found.strategy, IndexStrategy::UnsafeBestMatch);

        // The variable wins over every file; `PIP_CONFIG_FILE` that exists hides the user files.
        let own = dir.path().join("own.conf");
        std::fs::write(&own, "[global]\nfind-links = /wheels\nno-index = yes\n").unwrap();
        let own_text = own.display().to_string();
        let env = super::tests::env(
            &[
                ("HOME", home_text.as_str()),
                ("PIP_CONFIG_FILE", own_text.as_str()),
            ],
            None,
        );
        let found = installer_indexes(InstallerKind::Pip, &env).unwrap();
        assert!(found.no_index);
        assert!(found.indexes.is_empty());
        assert_eq!(found.find_links[0].value.location(), "file:///wheels");
        assert!(!found.files.iter().any(|f| f.starts_with(&home)));

        let env = super::tests::env(
            &[
                ("HOME", home_text.as_str()),
                ("PIP_INDEX_URL", "https://var.example/simple"),
            ],
            None,
        );
        let found = installer_indexes(InstallerKind::Pip, &env).unwrap();
        assert_eq!(urls(&found)[0], "https://var.example/simple/");
    }

    #[test]
    fn a_bad_value_names_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pip.conf");
        std::fs::write(&file, "[global]\nindex-url = ftp://nope\n").unwrap();
        let text = file.display().to_string();
        let env = env(&[("PIP_CONFIG_FILE", text.as_str())], None);
        let e = installer_indexes(InstallerKind::Pip, &env).unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("{text}: global.index-url: ")),
            "{e}"
        );
        std::fs::write(&file, "[global]\nindex-url\n").unwrap();
        let e = installer_indexes(InstallerKind::Pip, &env).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("{text}: line 2: ")),
            "{e}"
        );
        let env = super::tests::env(&[("UV_INDEX_STRATEGY", "best")], None);
        let e = installer_indexes(InstallerKind::Uv, &env).unwrap_err();
        assert!(e.to_string().starts_with("UV_INDEX_STRATEGY: "), "{e}");
    }
}
