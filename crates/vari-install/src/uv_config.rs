//! uv's configuration files, found and merged as `uv pip install` does, for two uses: the
//! indexes they name (the proxy reads those in uv's place), and a copy of them without those
//! keys that uv is given instead (`--config-file`), so that uv asks the proxy alone while its
//! other settings (cache, link mode, `[pip]` options…) still apply.
//!
//! Which files (uv's "Configuration files" documentation):
//! - `UV_NO_CONFIG`: none. `UV_CONFIG_FILE`: that file alone, in place of every other.
//! - Otherwise, in precedence order: the project's (the nearest `uv.toml`, or `pyproject.toml`
//!   with a `[tool.uv]` table, from the working directory up; `uv.toml` wins in the same
//!   directory, and a `pyproject.toml` without `[tool.uv]` is passed over); the user's
//!   (`$XDG_CONFIG_HOME/uv/uv.toml`, else `~/.config/uv/uv.toml`); the system's (the first of
//!   `$XDG_CONFIG_DIRS/uv/uv.toml` and `/etc/uv/uv.toml` that exists).
//!
//! How they merge: a string, number or boolean comes from the file of highest precedence that
//! sets it; arrays are concatenated, higher precedence first; tables merge key by key. For
//! `uv pip` commands, a key of the `[pip]` table wins over the same key at the top level.
//!
//! Hand-written because no crate reads uv's settings short of depending on uv itself; this
//! covers the keys that name where packages come from and leaves every other key to uv.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::installer_env::{parse_bool, IndexSourceError, InstallerEnv, Origin};

/// The keys that say where packages come from, at the top level and in `[pip]`: the proxy
/// reads them, and uv's copy of the settings goes without them.
pub(crate) const INDEX_KEYS: [&str; 5] = [
    "index",
    "index-url",
    "extra-index-url",
    "find-links",
    "no-index",
];

/// One configuration file: where it is and its settings (a `pyproject.toml`'s `[tool.uv]`).
#[derive(Debug, Clone)]
pub(crate) struct UvFile {
    pub(crate) path: PathBuf,
    settings: Table,
}

impl UvFile {
    /// The directory relative paths in this file are resolved against.
    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// A value of one of uv's settings and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FoundValue {
    pub(crate) value: Value,
    pub(crate) origin: Origin,
    /// The directory of the file it came from, for relative paths.
    pub(crate) dir: PathBuf,
}

/// uv's configuration files for `env`, highest precedence first.
pub(crate) fn discover(env: &InstallerEnv) -> Result<Vec<UvFile>, IndexSourceError> {
    if let Some(value) = env.var("UV_NO_CONFIG") {
        if parse_bool(value).ok_or_else(|| IndexSourceError {
            origin: Origin::Variable("UV_NO_CONFIG".to_owned()),
            message: format!("`{value}` is not a boolean"),
        })? {
            return Ok(Vec::new());
        }
    }
    if let Some(path) = env.var("UV_CONFIG_FILE") {
        let path = match (Path::new(path).is_relative(), env.cwd()) {
            (true, Some(cwd)) => cwd.join(path),
            _ => PathBuf::from(path),
        };
        return match read(&path, false)? {
            Some(file) => Ok(vec![file]),
            None => Err(IndexSourceError {
                origin: Origin::Variable("UV_CONFIG_FILE".to_owned()),
                message: format!("{}: no such file", path.display()),
            }),
        };
    }
    let mut files = Vec::new();
    if let Some(cwd) = env.cwd() {
        files.extend(project_file(cwd)?);
    }
    if let Some(user) = user_file(env) {
        files.extend(read(&user, false)?);
    }
    for system in system_files(env) {
        if let Some(file) = read(&system, false)? {
            files.push(file);
            break;
        }
    }
    Ok(files)
}

/// The nearest `uv.toml`, or `pyproject.toml` with `[tool.uv]`, from `dir` up.
fn project_file(dir: &Path) -> Result<Option<UvFile>, IndexSourceError> {
    for dir in dir.ancestors() {
        if let Some(file) = read(&dir.join("uv.toml"), false)? {
            return Ok(Some(file));
        }
        if let Some(file) = read(&dir.join("pyproject.toml"), true)? {
            return Ok(Some(file));
        }
    }
    Ok(None)
}

fn user_file(env: &InstallerEnv) -> Option<PathBuf> {
    let config_home = env
        .var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env.home().map(|home| home.join(".config")))?;
    Some(config_home.join("uv").join("uv.toml"))
}

fn system_files(env: &InstallerEnv) -> Vec<PathBuf> {
    if let Some(files) = env.uv_system_files() {
        return files.to_vec();
    }
    let mut files: Vec<PathBuf> = env
        .var("XDG_CONFIG_DIRS")
        .unwrap_or("/etc/xdg")
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join("uv").join("uv.toml"))
        .collect();
    files.push(PathBuf::from("/etc/uv/uv.toml"));
    files
}

/// Reads `path` if it exists: its settings, or `None` for a missing file (and for a
/// `pyproject.toml` without `[tool.uv]`, when `pyproject`).
fn read(path: &Path, pyproject: bool) -> Result<Option<UvFile>, IndexSourceError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // A directory where a file is looked for, as uv does, is passed over.
        Err(_) if path.is_dir() => return Ok(None),
        Err(e) => return Err(file_error(path, "", e.to_string())),
    };
    vari_core::check_toml_depth(&text)
        .map_err(|e| file_error(path, "", format!("not valid TOML: {e}")))?;
    let mut table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| file_error(path, "", e.message().to_owned()))?;
    let settings = if pyproject {
        let tool_uv = table
            .remove("tool")
            .and_then(|tool| match tool {
                Value::Table(mut tool) => tool.remove("uv"),
                _ => None,
            })
            .map(|uv| match uv {
                Value::Table(uv) => Ok(uv),
                _ => Err(file_error(path, "tool.uv", "not a table".to_owned())),
            });
        match tool_uv {
            None => return Ok(None),
            Some(settings) => settings?,
        }
    } else {
        table
    };
    Ok(Some(UvFile {
        path: path.to_owned(),
        settings,
    }))
}

fn file_error(path: &Path, key: &str, message: String) -> IndexSourceError {
    IndexSourceError {
        origin: Origin::File {
            path: path.to_owned(),
            key: key.to_owned(),
        },
        message,
    }
}

/// Every value of `key` for `uv pip`, highest precedence first: `[pip]` in each file, then the
/// top level in each file. A scalar setting takes the first; an array setting takes them all.
pub(crate) fn values(files: &[UvFile], key: &str) -> Vec<FoundValue> {
    let in_pip = files.iter().filter_map(|file| {
        let value = file.settings.get("pip")?.as_table()?.get(key)?;
        Some(found(file, &format!("pip.{key}"), value))
    });
    let top = files
        .iter()
        .filter_map(|file| Some(found(file, key, file.settings.get(key)?)));
    in_pip.chain(top).collect()
}

fn found(file: &UvFile, key: &str, value: &Value) -> FoundValue {
    FoundValue {
        value: value.clone(),
        origin: Origin::File {
            path: file.path.clone(),
            key: key.to_owned(),
        },
        dir: file.dir().to_owned(),
    }
}

/// Whether any file sets a key that says where packages come from.
pub(crate) fn names_sources(files: &[UvFile]) -> bool {
    INDEX_KEYS.iter().any(|key| !values(files, key).is_empty())
}

/// The files' settings merged into one table as uv merges them, without the keys that say
/// where packages come from (at the top level and in `[pip]`): what uv is given instead of its
/// files. Relative paths keep the meaning they had only when the files share a directory;
/// the keys that hold paths uv resolves against a file (find-links) are the removed ones.
pub(crate) fn without_sources(files: &[UvFile]) -> Table {
    let mut merged = Table::new();
    // Lowest precedence first; each file merges over what is there.
    for file in files.iter().rev() {
        merge_over(&mut merged, &file.settings);
    }
    for key in INDEX_KEYS {
        merged.remove(key);
        if let Some(Value::Table(pip)) = merged.get_mut("pip") {
            pip.remove(key);
        }
    }
    merged
}

/// Merges `higher` over `base`: scalars replace, arrays are prepended, tables merge.
fn merge_over(base: &mut Table, higher: &Table) {
    for (key, value) in higher {
        match (base.get_mut(key), value) {
            (Some(Value::Table(base)), Value::Table(higher)) => merge_over(base, higher),
            (Some(Value::Array(base)), Value::Array(higher)) => {
                let lower = std::mem::take(base);
                base.extend(higher.iter().cloned());
                base.extend(lower);
            }
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)], cwd: &Path) -> InstallerEnv {
        InstallerEnv::new(vars.iter().copied(), None)
            .with_cwd(cwd)
            .without_machine_files()
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn paths(files: &[UvFile]) -> Vec<&Path> {
        files.iter().map(|f| f.path.as_path()).collect()
    }

    #[test]
    fn the_nearest_project_file_then_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let work = root.join("project/src/deep");
        std::fs::create_dir_all(&work).unwrap();
        // Passed over: a pyproject.toml without [tool.uv].
        write(
            &root.join("project/src/pyproject.toml"),
            "[project]\nname = 'x'\n",
        );
        // Found: a pyproject.toml with [tool.uv]; its uv.toml neighbour would win.
        write(
            &root.join("project/pyproject.toml"),
            "[tool.uv]\nno-index = true\n",
        );
        write(&root.join("uv.toml"), "no-index = false\n");
        let home = root.join("home");
        write(
            &home.join(".config/uv/uv.toml"),
            "index-url = 'https://user.example/simple'\n",
        );
        let vars = [("HOME", home.to_str().unwrap())];
        let files = discover(&env(&vars, &work)).unwrap();
        assert_eq!(
            paths(&files),
            [
                root.join("project/pyproject.toml").as_path(),
                home.join(".config/uv/uv.toml").as_path()
            ]
        );
        assert_eq!(values(&files, "no-index")[0].value, Value::Boolean(true));

        write(&root.join("project/uv.toml"), "no-index = false\n");
        let files = discover(&env(&vars, &work)).unwrap();
        assert_eq!(paths(&files)[0], root.join("project/uv.toml"));
    }

    #[test]
    fn no_config_and_config_file_replace_discovery() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("uv.toml"), "no-index = true\n");
        write(
            &dir.path().join("other.toml"),
            "index-url = 'https://o.example/'\n",
        );
        let cwd = dir.path();
        assert!(discover(&env(&[("UV_NO_CONFIG", "1")], cwd))
            .unwrap()
            .is_empty());
        let files = discover(&env(&[("UV_CONFIG_FILE", "other.toml")], cwd)).unwrap();
        assert_eq!(paths(&files), [dir.path().join("other.toml").as_path()]);
        let e = discover(&env(&[("UV_CONFIG_FILE", "missing.toml")], cwd)).unwrap_err();
        assert!(e.to_string().starts_with("UV_CONFIG_FILE: "), "{e}");
        assert!(e.to_string().contains("missing.toml"), "{e}");
    }

    #[test]
    fn a_broken_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("uv.toml"), "index-url = [\n");
        let e = discover(&env(&[], dir.path())).unwrap_err();
        assert!(e.to_string().contains("uv.toml"), "{e}");
    }

    #[test]
    fn a_file_nested_too_deep_is_named_not_a_stack_overflow() {
        // Inline tables of dotted keys inside each other: past the toml crate's own limit.
        let key = ["b"; 78].join(".");
        let mut text = format!("{key} = ");
        for _ in 0..78 {
            text.push_str(&format!("{{{key} = "));
        }
        text.push('1');
        text.push_str(&"}".repeat(78));
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("uv.toml"), &text);
        let e = discover(&env(&[], dir.path())).unwrap_err().to_string();
        assert!(e.contains("uv.toml"), "{e}");
        assert!(e.contains("more than the limit of 64"), "{e}");
    }

    #[test]
    fn pip_keys_win_and_arrays_concatenate_in_precedence_order() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        write(
            &dir.path().join("uv.toml"),
            "extra-index-url = ['https://p.example/']\nindex-url = 'https://top.example/'\n\
             [pip]\nindex-url = 'https://pip.example/'\n",
        );
        write(
            &home.join(".config/uv/uv.toml"),
            "extra-index-url = ['https://u.example/']\n",
        );
        let vars = [("HOME", home.to_str().unwrap())];
        let files = discover(&env(&vars, dir.path())).unwrap();
        let index_url = values(&files, "index-url");
        assert_eq!(index_url[0].value.as_str(), Some("https://pip.example/"));
        assert_eq!(
            index_url[0].origin.to_string(),
            format!("{}: pip.index-url", dir.path().join("uv.toml").display())
        );
        let extra: Vec<_> = values(&files, "extra-index-url")
            .into_iter()
            .map(|v| v.value)
            .collect();
        assert_eq!(
            extra,
            [
                Value::Array(vec!["https://p.example/".into()]),
                Value::Array(vec!["https://u.example/".into()])
            ]
        );
    }

    #[test]
    fn the_copy_for_uv_keeps_every_other_setting_merged() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        write(
            &dir.path().join("uv.toml"),
            "link-mode = 'copy'\nno-index = true\nfind-links = ['w']\n\
             [pip]\ncompile-bytecode = true\nextra-index-url = ['https://e.example/']\n\
             [[index]]\nurl = 'https://i.example/'\n",
        );
        write(
            &home.join(".config/uv/uv.toml"),
            "link-mode = 'hardlink'\nnative-tls = true\n[pip]\nonly-binary = [':all:']\n",
        );
        let vars = [("HOME", home.to_str().unwrap())];
        let files = discover(&env(&vars, dir.path())).unwrap();
        assert!(names_sources(&files));
        let copy = without_sources(&files);
        let expected: Table = "link-mode = 'copy'\nnative-tls = true\n\
                               [pip]\ncompile-bytecode = true\nonly-binary = [':all:']\n"
            .parse()
            .unwrap();
        assert_eq!(copy, expected);
    }

    #[test]
    fn files_without_sources_say_so() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("uv.toml"), "link-mode = 'copy'\n");
        let files = discover(&env(&[], dir.path())).unwrap();
        assert!(!names_sources(&files));
    }
}
