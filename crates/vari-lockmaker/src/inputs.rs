//! What a lock is made from, read once: the requirements (command line, `-r` files, a project's
//! `pyproject.toml`), the sources as the lock records them, and the hash of everything that
//! decides the lock (`--check` compares it). Every lock is made from inputs read here, so that
//! a lock `vari mirror --lock-output` writes is the one `vari lock` writes for the same inputs.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use vari_client::{ClientSettings, FindLinks};
use vari_fs::input::{read_input_to_string, InputKind};
use vari_lock::{InputsHash, LockInfo, LockInputs, LockTarget};
use vari_select::InputError;

use crate::error::LockMakeError;
use crate::locking::LockingTarget;

/// At most this many nested `include-group`s (PEP 735) are followed.
const MAX_GROUP_DEPTH: usize = 32;

/// The requirements of a lock, by scope.
#[derive(Debug, Default)]
pub(crate) struct Requirements {
    /// Always installed.
    pub(crate) base: Vec<String>,
    /// `[project.optional-dependencies]`.
    pub(crate) extras: BTreeMap<String, Vec<String>>,
    /// `[dependency-groups]`, includes expanded.
    pub(crate) groups: BTreeMap<String, Vec<String>>,
    /// The groups installed when none is asked for: uv's `default-groups`, else `dev` when the
    /// project has it (uv's default).
    pub(crate) default_groups: Vec<String>,
    /// `[project] requires-python`.
    pub(crate) requires_python: Option<String>,
}

impl Requirements {
    /// Every requirement to resolve, each scope's in turn.
    pub(crate) fn all(&self) -> Vec<String> {
        self.base
            .iter()
            .chain(self.extras.values().flatten())
            .chain(self.groups.values().flatten())
            .cloned()
            .collect()
    }
}

/// Reads the command line's requirements, its `-r` files (bounded, nested ones followed) and
/// the project's `pyproject.toml`.
pub(crate) fn read(
    given: &[String],
    files: &[PathBuf],
    project: Option<&Path>,
) -> Result<Requirements, LockMakeError> {
    let mut requirements = Requirements {
        base: given.iter().map(|r| r.trim().to_owned()).collect(),
        ..Requirements::default()
    };
    for requirement in &requirements.base {
        vari_select::Request::parse(requirement)
            .map_err(|e| LockMakeError::Requirements(e.to_string()))?;
    }
    if !files.is_empty() {
        let args: Vec<OsString> = files
            .iter()
            .flat_map(|f| [OsString::from("-r"), f.clone().into_os_string()])
            .collect();
        let read = vari_install::requirements_in_args(&args, Path::new(""))
            .map_err(|e| LockMakeError::Read(e.to_string()))?;
        requirements.base.extend(read);
    }
    if let Some(dir) = project {
        read_pyproject(&dir.join("pyproject.toml"), &mut requirements)?;
    }
    if requirements.all().is_empty() {
        return Err(LockMakeError::Requirements(
            "nothing to resolve: give requirements, -r FILE or --project DIR".to_owned(),
        ));
    }
    Ok(requirements)
}

/// The hash of everything that decides the lock: requirements by scope (the `-r` files'
/// requirements read in place), the targets (their profiles' bytes), the sources (find-links as
/// the lock in `lock_dir` records them, [`recorded_find_links`]) and `--pre`.
pub(crate) fn inputs_hash(
    requirements: &Requirements,
    targets: &[LockingTarget],
    sources: &ClientSettings,
    lock_dir: &Path,
    pre: bool,
    families: Option<&vari_family::Catalog>,
) -> String {
    let mut hash = InputsHash::new();
    hash.add("format", b"vari-lock/1");
    for requirement in &requirements.base {
        hash.add("requirement", requirement.as_bytes());
    }
    for (extra, list) in &requirements.extras {
        for requirement in list {
            hash.add(&format!("extra:{extra}"), requirement.as_bytes());
        }
    }
    for (group, list) in &requirements.groups {
        hash.add("group", group.as_bytes());
        for requirement in list {
            hash.add(&format!("group:{group}"), requirement.as_bytes());
        }
    }
    for group in &requirements.default_groups {
        hash.add("default-group", group.as_bytes());
    }
    if let Some(requires_python) = &requirements.requires_python {
        hash.add("requires-python", requires_python.as_bytes());
    }
    for text in target_texts(targets.iter().map(|t| &t.lock)) {
        hash.add("target", text.as_bytes());
    }
    for index in &sources.indexes {
        hash.add("index", index.to_string().as_bytes());
    }
    for links in &sources.find_links {
        hash.add(
            "find-links",
            recorded_find_links(links, lock_dir).as_bytes(),
        );
    }
    hash.add("strategy", format!("{:?}", sources.strategy).as_bytes());
    hash.add("pre", if pre { b"1" } else { b"0" });
    // Only when the requirements choose through it: a lock that names no family hashes (and
    // so reads) as one made without a catalog.
    if let Some(catalog) = families {
        hash.add("families", catalog_content(catalog).as_bytes());
    }
    hash.finish()
}

/// What of the catalog decides a lock: its families and groups as JSON, without the origin
/// each records (`built-in`, or a file's path as given), so that the same catalog named by
/// another path (`./gpu.toml`, `ci/../gpu.toml`, a copy elsewhere) hashes alike.
fn catalog_content(catalog: &vari_family::Catalog) -> String {
    let mut value = serde_json::to_value(catalog).unwrap_or_default();
    for list in ["families", "groups"] {
        if let Some(entries) = value.get_mut(list).and_then(|v| v.as_array_mut()) {
            for entry in entries.iter_mut().filter_map(|e| e.as_object_mut()) {
                entry.remove("origin");
            }
        }
    }
    value.to_string()
}

/// What the inputs hash takes of each target (its name, profile hash, Python version and
/// platform), sorted: the targets are a set, and the order of `--target`, `--python-version`
/// and `--python-platform` flags decides nothing.
fn target_texts<'a>(targets: impl Iterator<Item = &'a LockTarget>) -> Vec<String> {
    let mut texts: Vec<String> = targets
        .map(|t| {
            let parts = [
                Some(t.name.as_str()),
                t.profile_hash.as_deref(),
                t.python_version.as_deref(),
                t.python_platform.as_deref(),
            ];
            let text: Vec<&str> = parts.iter().map(|p| p.unwrap_or("-")).collect();
            text.join("\n")
        })
        .collect();
    texts.sort();
    texts
}

/// What `vari_lock::build_lock` builds the lock from: the requirements by scope, the targets'
/// marker environments, and `[tool.vari]` (the inputs hash, the targets, the indexes).
pub(crate) fn lock_inputs(
    requirements: &Requirements,
    targets: &[LockingTarget],
    sources: &ClientSettings,
    lock_dir: &Path,
    pre: bool,
    hash: String,
    families: Vec<vari_lock::LockFamily>,
) -> LockInputs {
    LockInputs {
        families,
        requirements: requirements.base.clone(),
        extras: requirements.extras.clone(),
        groups: requirements.groups.clone(),
        default_groups: requirements.default_groups.clone(),
        requires_python: requirements.requires_python.clone(),
        environments: targets
            .iter()
            .map(|t| t.files.target.markers.clone())
            .collect(),
        info: LockInfo {
            inputs_hash: Some(hash),
            requirements: requirements.base.clone(),
            targets: targets.iter().map(|t| t.lock.clone()).collect(),
            indexes: sources.indexes.iter().map(ToString::to_string).collect(),
            find_links: sources
                .find_links
                .iter()
                .map(|links| recorded_find_links(links, lock_dir))
                .collect(),
            pre,
            // Decided by the lock builder, from the groups.
            group_markers: false,
            families: Vec::new(),
        },
    }
}

/// How a lock in `lock_dir` records a `--find-links` source: an http(s) page by its URL; a
/// directory (or a local page) under the lock's directory relative to it, `/`-separated (`.`
/// for the directory itself); another one by its absolute path, as the user named it.
pub(crate) fn recorded_find_links(links: &FindLinks, lock_dir: &Path) -> String {
    let path = match links {
        FindLinks::Directory(path) => path.clone(),
        FindLinks::Page { url, .. } => match url.to_file_path() {
            Ok(path) if url.scheme() == "file" => path,
            _ => return url.to_string(),
        },
    };
    if let Some(relative) = vari_fs::safe_path::relative_under(&path, lock_dir) {
        return relative;
    }
    std::fs::canonicalize(&path)
        .or_else(|_| std::path::absolute(&path))
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The `--find-links` sources the lock at `lock_path` records, read back: a relative path
/// under the lock's directory, an absolute path, an http(s) page. A local one that is not here
/// is one error naming it.
pub(crate) fn recorded_sources(
    recorded: &[String],
    lock_path: &Path,
) -> Result<Vec<FindLinks>, LockMakeError> {
    let lock_dir = vari_fs::safe_path::parent_dir(lock_path);
    let key = |i: usize| Some(format!("tool.vari.find-links[{i}]"));
    let mut sources = Vec::new();
    for (i, text) in recorded.iter().enumerate() {
        let lower = text.to_ascii_lowercase();
        let given = if lower.starts_with("http://") || lower.starts_with("https://") {
            text.clone()
        } else {
            let path = if Path::new(text).is_absolute() {
                PathBuf::from(text)
            } else if text == "." {
                lock_dir.clone()
            } else {
                vari_fs::safe_path::join_under(&lock_dir, text).map_err(|e| {
                    invalid(
                        lock_path,
                        key(i),
                        format!("{e}; a lock names its find-links relative to its directory"),
                    )
                })?
            };
            if !path.exists() {
                return Err(invalid(
                    lock_path,
                    key(i),
                    format!(
                        "{} is not here: give --find-links again, or put the wheelhouse back",
                        path.display()
                    ),
                ));
            }
            path.to_string_lossy().into_owned()
        };
        sources
            .push(FindLinks::parse(&given).map_err(|e| invalid(lock_path, key(i), e.to_string()))?);
    }
    Ok(sources)
}

fn read_pyproject(path: &Path, requirements: &mut Requirements) -> Result<(), LockMakeError> {
    let text = read_input_to_string(path, InputKind::Config)
        .map_err(|e| LockMakeError::Read(e.to_string()))?;
    let text = vari_core::strip_bom(&text);
    vari_core::check_toml_depth(text).map_err(|deep| {
        invalid(
            path,
            Some(format!("line {}", deep.line)),
            format!("nests deeper than {} levels", deep.limit),
        )
    })?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| invalid(path, None, e.message().trim()))?;
    let project = table.get("project").and_then(toml::Value::as_table);
    if let Some(project) = project {
        if let Some(list) = project.get("dependencies") {
            requirements
                .base
                .extend(strings(list, path, "project.dependencies")?);
        }
        if let Some(value) = project.get("optional-dependencies") {
            let key = "project.optional-dependencies";
            let table = value
                .as_table()
                .ok_or_else(|| invalid(path, Some(key.into()), "is not a table"))?;
            for (extra, list) in table {
                let name = normalized_name(extra, path, key)?;
                let entries = strings(list, path, &format!("{key}.{extra}"))?;
                requirements.extras.entry(name).or_default().extend(entries);
            }
        }
        if let Some(value) = project.get("requires-python") {
            let text = value.as_str().ok_or_else(|| {
                invalid(
                    path,
                    Some("project.requires-python".into()),
                    "is not a string",
                )
            })?;
            requirements.requires_python = Some(text.to_owned());
        }
    }
    if let Some(value) = table.get("dependency-groups") {
        let groups = value
            .as_table()
            .ok_or_else(|| invalid(path, Some("dependency-groups".into()), "is not a table"))?;
        for name in groups.keys() {
            let mut entries = Vec::new();
            expand_group(groups, name, path, 0, &mut entries)?;
            requirements
                .groups
                .insert(normalized_name(name, path, "dependency-groups")?, entries);
        }
    }
    let uv_defaults = table
        .get("tool")
        .and_then(|t| t.get("uv"))
        .and_then(|t| t.get("default-groups"));
    requirements.default_groups = match uv_defaults {
        Some(list) => strings(list, path, "tool.uv.default-groups")?
            .iter()
            .map(|g| vari_core::project::normalize(g))
            .filter(|g| requirements.groups.contains_key(g))
            .collect(),
        None if requirements.groups.contains_key("dev") => vec!["dev".to_owned()],
        None => Vec::new(),
    };
    Ok(())
}

/// The requirements of group `name`, with `{include-group = "…"}` entries expanded (PEP 735),
/// refusing cycles and deep nesting.
fn expand_group(
    groups: &toml::Table,
    name: &str,
    path: &Path,
    depth: usize,
    out: &mut Vec<String>,
) -> Result<(), LockMakeError> {
    let key = format!("dependency-groups.{name}");
    if depth > MAX_GROUP_DEPTH {
        return Err(invalid(
            path,
            Some(key),
            "includes groups in a cycle or deeper than 32 levels",
        ));
    }
    let wanted = vari_core::project::normalize(name);
    let list = groups
        .iter()
        .find(|(g, _)| vari_core::project::normalize(g) == wanted)
        .map(|(_, list)| list)
        .ok_or_else(|| invalid(path, Some(key.clone()), "no such group"))?;
    let items = list
        .as_array()
        .ok_or_else(|| invalid(path, Some(key.clone()), "is not an array"))?;
    for (i, item) in items.iter().enumerate() {
        match item {
            toml::Value::String(requirement) => {
                check_requirement(requirement, path, &format!("{key}[{i}]"))?;
                out.push(requirement.trim().to_owned());
            }
            toml::Value::Table(table) => {
                let include = table
                    .get("include-group")
                    .and_then(toml::Value::as_str)
                    .ok_or_else(|| {
                        invalid(
                            path,
                            Some(format!("{key}[{i}]")),
                            "is neither a requirement nor {include-group = \"…\"}",
                        )
                    })?;
                expand_group(groups, include, path, depth + 1, out)?;
            }
            _ => {
                return Err(invalid(
                    path,
                    Some(format!("{key}[{i}]")),
                    "is neither a requirement nor {include-group = \"…\"}",
                ))
            }
        }
    }
    Ok(())
}

fn strings(value: &toml::Value, path: &Path, key: &str) -> Result<Vec<String>, LockMakeError> {
    let items = value
        .as_array()
        .ok_or_else(|| invalid(path, Some(key.into()), "is not an array"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = item
                .as_str()
                .ok_or_else(|| invalid(path, Some(format!("{key}[{i}]")), "is not a string"))?;
            check_requirement(text, path, &format!("{key}[{i}]"))?;
            Ok(text.trim().to_owned())
        })
        .collect()
}

fn check_requirement(text: &str, path: &Path, key: &str) -> Result<(), LockMakeError> {
    vari_select::Request::parse(text)
        .map(|_| ())
        .map_err(|e| invalid(path, Some(key.into()), e.to_string()))
}

/// A content problem in `path` at `key` (none: the file as a whole).
fn invalid(path: &Path, key: Option<String>, message: impl Into<String>) -> LockMakeError {
    let message = message.into();
    LockMakeError::Input(match key {
        Some(key) => InputError::at(path, key, message),
        None => InputError::new(path, message),
    })
}

/// An extra's or group's name, normalised (PEP 685, PEP 735), checked to be a name.
fn normalized_name(name: &str, path: &Path, key: &str) -> Result<String, LockMakeError> {
    let valid = !name.is_empty()
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    match valid {
        true => Ok(vari_core::project::normalize(name)),
        false => Err(invalid(
            path,
            Some(format!("{key}.{name}")),
            "is not a valid name",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogs_path_is_not_hashed_its_content_is() {
        let text = "schema = \"vari-families/1\"\n\n[[family]]\nname = \"cupy\"\nsame-name = \"sdist-only\"\n\n\
                    [[family.build]]\nname = \"cu12\"\ndistribution = \"cupy-cuda12x\"\n\
                    requires = [\"nvidia :: cuda_version_lower_bound :: 12\"]\n";
        let read = |text: &str, path: &str| {
            vari_family::read_catalog(text, vari_family::Origin::File(path.to_owned())).unwrap()
        };
        let here = read(text, "gpu.toml");
        let elsewhere = read(text, "/srv/ci/../catalogs/gpu.toml");
        assert_ne!(here, elsewhere);
        assert_eq!(catalog_content(&here), catalog_content(&elsewhere));
        let changed = read(&text.replace("cuda12x", "cuda13x"), "gpu.toml");
        assert_ne!(catalog_content(&here), catalog_content(&changed));
    }

    #[test]
    fn the_order_of_targets_decides_nothing() {
        let target = |name: &str, version: &str| LockTarget {
            name: name.to_owned(),
            profile: None,
            profile_hash: Some("sha256:00".to_owned()),
            python_version: Some(version.to_owned()),
            python_platform: None,
        };
        let given = [
            target("cpu-py3.11", "3.11"),
            target("cpu-py3.12", "3.12"),
            target("a100-py3.11", "3.11"),
        ];
        let reordered = [&given[2], &given[1], &given[0]];
        assert_eq!(
            target_texts(given.iter()),
            target_texts(reordered.into_iter())
        );
        assert_ne!(target_texts(given.iter()), target_texts(given[..2].iter()));
    }

    #[test]
    fn pyproject_scopes_and_included_groups() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            r#"
[project]
name = "x"
requires-python = ">=3.9"
dependencies = ["app-like"]
[project.optional-dependencies]
Socks = ["reqlike[socks]"]
[dependency-groups]
lint = ["idnalike"]
dev = ["sockslike", {include-group = "lint"}]
"#,
        )
        .unwrap();
        let read = read(&[], &[], Some(dir.path())).unwrap();
        assert_eq!(read.base, ["app-like"]);
        assert_eq!(read.extras["socks"], ["reqlike[socks]"]);
        assert_eq!(read.groups["dev"], ["sockslike", "idnalike"]);
        assert_eq!(read.default_groups, ["dev"]);
        assert_eq!(read.requires_python.as_deref(), Some(">=3.9"));
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[dependency-groups]\na = [{include-group = \"b\"}]\nb = [{include-group = \"a\"}]\n",
        )
        .unwrap();
        let err = read_pyproject(
            &dir.path().join("pyproject.toml"),
            &mut Requirements::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
    }
}
