//! Reading `pylock.toml`: the text parsed as TOML (depth bounded first), then every field
//! checked against PEP 751's and PEP 825's rules, with the key path of the first problem.
//!
//! A lock is input like any other: it may come from a pull request. So paths must stay under
//! the lock's directory, URLs must be http(s), hashes must be hex of the right length, and the
//! counts are bounded, before anything downstream names a file or a download after them.

use std::collections::BTreeMap;
use std::str::FromStr;

use pep440_rs::Version;
use vari_core::filename::WheelFilename;
use vari_core::metadata::{read_json, SourceKind};
use vari_core::Diagnostic;

use crate::fields::Fields;
use crate::limits::{
    check_location, check_relative_path, check_text, MAX_PACKAGES, MAX_WHEELS_PER_PACKAGE,
};
use crate::model::{Artifact, DependencyRef, Lock, LockInfo, LockTarget, Package, PackageInfo};
use crate::LockError;

/// Reads and checks a `pylock.toml`'s text (the caller reads the file, bounded by
/// [`crate::MAX_LOCK_BYTES`]). The limits and the characters allowed are
/// [`crate::limits`], which the writer checks too.
///
/// ```
/// let lock = vari_lock::read_lock(r#"
/// lock-version = "1.0"
/// created-by = "hand"
/// [[packages]]
/// name = "Demo_Pkg"
/// version = "1.0"
/// wheels = [{ url = "https://example.org/demo_pkg-1.0-py3-none-any.whl", hashes = { sha256 = "0000000000000000000000000000000000000000000000000000000000000000" } }]
/// "#).unwrap();
/// assert_eq!(lock.packages[0].name, "demo-pkg");
/// let err = vari_lock::read_lock("lock-version = \"2.0\"\ncreated-by = \"x\"\npackages = []\n").unwrap_err();
/// assert_eq!(err.to_string(), "lock-version: version 2.0 is not supported (vari reads 1.x)");
/// ```
pub fn read_lock(text: &str) -> Result<Lock, LockError> {
    let text = vari_core::strip_bom(text);
    vari_core::check_toml_depth(text).map_err(|deep| {
        LockError::new(
            format!("line {}", deep.line),
            format!("nests deeper than {} levels", deep.limit),
        )
    })?;
    let table: toml::Table = text.parse().map_err(|err: toml::de::Error| {
        let line = err
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        let message = err.message().trim().to_owned();
        LockError::new(
            line.map(|line| format!("line {line}")).unwrap_or_default(),
            format!("invalid TOML: {message}"),
        )
    })?;
    let mut top = Fields::new(table, "");

    let lock_version = top.required_string("lock-version")?;
    check_lock_version(&lock_version)?;
    let environments = top.strings("environments")?;
    let requires_python = top.string("requires-python")?;
    let extras = top.strings("extras")?;
    let dependency_groups = top.strings("dependency-groups")?;
    let default_groups = top.strings("default-groups")?;
    let created_by = top.required_string("created-by")?;
    let package_tables = top.tables("packages")?.ok_or_else(|| {
        LockError::new(
            "packages",
            "is missing (PEP 751 requires it, even if empty)",
        )
    })?;
    if package_tables.len() > MAX_PACKAGES {
        return Err(LockError::new(
            "packages",
            format!("has more than {MAX_PACKAGES} entries"),
        ));
    }
    let mut packages = Vec::with_capacity(package_tables.len());
    for (i, table) in package_tables.into_iter().enumerate() {
        packages.push(read_package(table, &format!("packages[{i}]"))?);
    }
    let mut vari = None;
    let mut other_tools = BTreeMap::new();
    if let Some(tools) = top.table("tool")? {
        for (name, value) in tools {
            if name == "vari" {
                let toml::Value::Table(table) = value else {
                    return Err(LockError::new("tool.vari", "must be a table"));
                };
                vari = Some(read_lock_info(table)?);
            } else {
                other_tools.insert(name, value);
            }
        }
    }
    // Unknown top-level keys are ignored, as PEP 751 asks of readers of a newer minor version.
    let lock = Lock {
        lock_version,
        environments,
        requires_python,
        extras,
        dependency_groups,
        default_groups,
        created_by,
        packages,
        vari,
        other_tools,
    };
    crate::families::check_families(&lock)?;
    Ok(lock)
}

fn check_lock_version(version: &str) -> Result<(), LockError> {
    let major = version.split('.').next().unwrap_or_default();
    if major == "1" && version.split('.').all(|part| part.parse::<u32>().is_ok()) {
        Ok(())
    } else {
        Err(LockError::new(
            "lock-version",
            format!("version {version} is not supported (vari reads 1.x)"),
        ))
    }
}

fn read_package(table: toml::Table, path: &str) -> Result<Package, LockError> {
    let mut fields = Fields::new(table, path);
    let raw_name = fields.required_string("name")?;
    if !vari_core::project::is_valid(&raw_name) {
        return Err(fields.error("name", format!("{raw_name:?} is not a valid project name")));
    }
    let name = vari_core::project::normalize(&raw_name);
    let version = match fields.string("version")? {
        Some(text) => Some(
            Version::from_str(&text)
                .map_err(|err| fields.error("version", format!("{text:?}: {err}")))?,
        ),
        None => None,
    };
    let marker = fields.string("marker")?;
    let requires_python = fields.string("requires-python")?;
    let index = fields.string("index")?;
    if let Some(index) = &index {
        check_location(index, false)
            .and_then(|()| check_url(index))
            .map_err(|message| fields.error("index", message))?;
    }
    let mut dependencies = Vec::new();
    for (i, table) in fields
        .tables("dependencies")?
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let mut dep = Fields::new(table, &format!("{path}.dependencies[{i}]"));
        let dep_name = dep.required_string("name")?;
        if !vari_core::project::is_valid(&dep_name) {
            return Err(dep.error("name", format!("{dep_name:?} is not a valid project name")));
        }
        dependencies.push(DependencyRef {
            name: vari_core::project::normalize(&dep_name),
            version: dep.string("version")?,
        });
    }
    let sdist = match fields.table("sdist")? {
        Some(table) => {
            let sdist = read_artifact(table, &format!("{path}.sdist"))?;
            check_sdist_name(&sdist, &format!("{path}.sdist"))?;
            Some(sdist)
        }
        None => None,
    };
    let wheel_tables = fields.tables("wheels")?.unwrap_or_default();
    if wheel_tables.len() > MAX_WHEELS_PER_PACKAGE {
        return Err(fields.error(
            "wheels",
            format!("has more than {MAX_WHEELS_PER_PACKAGE} entries"),
        ));
    }
    let mut wheels = Vec::with_capacity(wheel_tables.len());
    for (i, table) in wheel_tables.into_iter().enumerate() {
        let key = format!("{path}.wheels[{i}]");
        let wheel = read_artifact(table, &key)?;
        check_wheel_name(&wheel, &name, version.as_ref(), &key)?;
        wheels.push(wheel);
    }
    let variants_json = match fields.take("variants-json") {
        Some(toml::Value::Table(table)) => {
            Some(read_variants_json(table, &format!("{path}.variants-json"))?)
        }
        Some(_) => return Err(fields.error("variants-json", "must be a table")),
        None => None,
    };
    check_labels_defined(&wheels, variants_json.as_ref(), path)?;
    let mut vari = None;
    let mut other = BTreeMap::new();
    if let Some(tools) = fields.table("tool")? {
        let mut others = toml::Table::new();
        for (tool, value) in tools {
            if tool == "vari" {
                let toml::Value::Table(table) = value else {
                    return Err(fields.error("tool.vari", "must be a table"));
                };
                vari = Some(read_package_info(table, &format!("{path}.tool.vari"))?);
            } else {
                others.insert(tool, value);
            }
        }
        if !others.is_empty() {
            other.insert("tool".to_owned(), toml::Value::Table(others));
        }
    }
    other.extend(fields.rest());
    Ok(Package {
        name,
        version,
        marker,
        requires_python,
        dependencies,
        index,
        sdist,
        wheels,
        variants_json,
        vari,
        other,
    })
}

fn read_artifact(table: toml::Table, path: &str) -> Result<Artifact, LockError> {
    let mut fields = Fields::new(table, path);
    let name = fields.string("name")?;
    if let Some(name) = &name {
        check_location(name, true).map_err(|message| fields.error("name", message))?;
        if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
            return Err(fields.error("name", format!("{name:?} is not a file name")));
        }
    }
    let url = fields.string("url")?;
    if let Some(url) = &url {
        check_location(url, false)
            .and_then(|()| check_url(url))
            .map_err(|message| fields.error("url", message))?;
    }
    let file_path = fields.string("path")?;
    if let Some(file_path) = &file_path {
        check_location(file_path, true)
            .and_then(|()| check_relative_path(file_path))
            .map_err(|message| fields.error("path", message))?;
    }
    if url.is_none() && file_path.is_none() {
        return Err(LockError::new(path, "needs a url or a path"));
    }
    let size = match fields.take("size") {
        Some(toml::Value::Integer(size)) if size >= 0 => Some(size as u64),
        Some(_) => return Err(fields.error("size", "must be a non-negative integer")),
        None => None,
    };
    let upload_time = match fields.take("upload-time") {
        Some(toml::Value::Datetime(time)) => Some(time.to_string()),
        Some(toml::Value::String(time)) => {
            check_text(&time).map_err(|message| fields.error("upload-time", message))?;
            Some(time)
        }
        Some(_) => return Err(fields.error("upload-time", "must be a date-time")),
        None => None,
    };
    let mut hashes = BTreeMap::new();
    for (algorithm, value) in fields.table("hashes")?.unwrap_or_default() {
        let toml::Value::String(digest) = value else {
            return Err(fields.error(&format!("hashes.{algorithm}"), "must be a string"));
        };
        check_hash(&algorithm, &digest)
            .map_err(|message| fields.error(&format!("hashes.{algorithm}"), message))?;
        hashes.insert(algorithm, digest.to_ascii_lowercase());
    }
    if hashes.is_empty() {
        return Err(fields.error("hashes", "lists no hash (PEP 751 requires at least one)"));
    }
    let artifact = Artifact {
        name,
        url,
        path: file_path,
        size,
        upload_time,
        hashes,
    };
    if artifact.file_name().is_none() {
        return Err(LockError::new(path, "names no file (give `name`)"));
    }
    Ok(artifact)
}

fn check_wheel_name(
    wheel: &Artifact,
    package: &str,
    version: Option<&Version>,
    path: &str,
) -> Result<(), LockError> {
    let file_name = wheel.file_name().unwrap_or_default();
    let parsed = WheelFilename::parse(&file_name)
        .map_err(|err| LockError::new(path, format!("{file_name:?}: {err}")))?;
    if vari_core::project::normalize(&parsed.name) != package {
        return Err(LockError::new(
            path,
            format!("{file_name} is not a wheel of {package}"),
        ));
    }
    if let Some(version) = version {
        if &parsed.version != version {
            return Err(LockError::new(
                path,
                format!(
                    "{file_name} is version {}, the entry is {version}",
                    parsed.version
                ),
            ));
        }
    }
    Ok(())
}

fn check_sdist_name(sdist: &Artifact, path: &str) -> Result<(), LockError> {
    let file_name = sdist.file_name().unwrap_or_default();
    if file_name.ends_with(".tar.gz") || file_name.ends_with(".zip") {
        Ok(())
    } else {
        Err(LockError::new(
            path,
            format!("{file_name:?} is not a source distribution (.tar.gz or .zip)"),
        ))
    }
}

fn read_variants_json(
    table: toml::Table,
    path: &str,
) -> Result<vari_core::metadata::VariantMetadata, LockError> {
    let json = serde_json::to_string(&toml::Value::Table(table))
        .map_err(|err| LockError::new(path, format!("cannot be read as JSON: {err}")))?;
    let mut meta = read_json(&json, SourceKind::IndexFile).map_err(|errors| {
        let first = errors
            .into_iter()
            .next()
            .unwrap_or_else(|| Diagnostic::new("", "is not valid variant metadata"));
        let key = if first.path.is_empty() {
            path.to_owned()
        } else {
            format!("{path}.{}", first.path)
        };
        LockError::new(key, first.message)
    })?;
    // `$schema` as the writer writes it (the URL of the metadata's generation, in variantlib's
    // spelling when the lock used it), so that what is read is written and read back the same.
    let spelling = match meta.schema_url.as_deref() {
        Some(vari_core::metadata::VARIANTLIB_0_2_URL) => vari_core::metadata::SchemaUrl::Variantlib,
        _ => vari_core::metadata::SchemaUrl::Standard,
    };
    meta.schema_url = Some(meta.generation.url_as(spelling).to_owned());
    Ok(meta)
}

/// Every variant wheel's label must be defined by the entry's variants-json: an installer
/// would treat the wheel as incompatible (PEP 825), so a lock listing one is inconsistent.
fn check_labels_defined(
    wheels: &[Artifact],
    variants_json: Option<&vari_core::metadata::VariantMetadata>,
    path: &str,
) -> Result<(), LockError> {
    for (i, wheel) in wheels.iter().enumerate() {
        let Some(label) = wheel.wheel_filename().and_then(|parsed| parsed.label) else {
            continue;
        };
        let defined = variants_json.is_some_and(|meta| meta.variants.contains_key(&label));
        if !defined {
            return Err(LockError::new(
                format!("{path}.wheels[{i}]"),
                format!("variant label {label} is not defined in {path}.variants-json"),
            ));
        }
    }
    Ok(())
}

fn read_lock_info(table: toml::Table) -> Result<LockInfo, LockError> {
    let mut fields = Fields::new(table, "tool.vari");
    let inputs_hash = fields.string("inputs-hash")?;
    let requirements = fields.strings("requirements")?;
    let indexes = fields.strings("indexes")?;
    for (i, index) in indexes.iter().enumerate() {
        check_location(index, false)
            .and_then(|()| check_url(index))
            .map_err(|message| fields.error(&format!("indexes[{i}]"), message))?;
    }
    let find_links = fields.strings("find-links")?;
    for (i, links) in find_links.iter().enumerate() {
        check_find_links(links)
            .map_err(|message| fields.error(&format!("find-links[{i}]"), message))?;
    }
    let pre = match fields.take("pre") {
        Some(toml::Value::Boolean(value)) => value,
        Some(_) => return Err(fields.error("pre", "must be true or false")),
        None => false,
    };
    let group_markers = match fields.take("group-markers") {
        Some(toml::Value::Boolean(value)) => value,
        Some(_) => return Err(fields.error("group-markers", "must be true or false")),
        None => false,
    };
    let mut targets = Vec::new();
    for (i, table) in fields
        .tables("targets")?
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let mut target = Fields::new(table, &format!("tool.vari.targets[{i}]"));
        targets.push(LockTarget {
            name: target.required_string("name")?,
            profile: target.string("profile")?,
            profile_hash: target.string("profile-hash")?,
            python_version: target.string("python-version")?,
            python_platform: target.string("python-platform")?,
        });
    }
    let families = families::read_families(&mut fields)?;
    Ok(LockInfo {
        inputs_hash,
        requirements,
        targets,
        indexes,
        find_links,
        pre,
        group_markers,
        families,
    })
}

/// A `find-links` entry: an http(s) page's URL (as [`check_url`]), else a directory's path
/// (relative to the lock, or absolute) without control characters. Whoever reads
/// the directory resolves a relative path under the lock's directory.
fn check_find_links(text: &str) -> Result<(), String> {
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return check_url(text);
    }
    if text.is_empty() {
        return Err("is empty".to_owned());
    }
    if text.chars().any(char::is_control) {
        return Err(format!("{text:?} has a control character"));
    }
    if lower.contains("://") || lower.starts_with("file:") {
        return Err(format!(
            "{text:?}: only http and https pages or a directory's path are allowed"
        ));
    }
    Ok(())
}

fn read_package_info(table: toml::Table, path: &str) -> Result<PackageInfo, LockError> {
    let mut fields = Fields::new(table, path);
    let variant_dependencies = fields.strings("variant-dependencies")?;
    for (i, requirement) in variant_dependencies.iter().enumerate() {
        check_variant_dependency(requirement)
            .map_err(|message| fields.error(&format!("variant-dependencies[{i}]"), message))?;
    }
    let through_variants = match fields.take("through-variants") {
        Some(toml::Value::Boolean(value)) => value,
        Some(_) => return Err(fields.error("through-variants", "must be true or false")),
        None => false,
    };
    let builds = families::read_build_refs(&mut fields)?;
    Ok(PackageInfo {
        variant_dependencies,
        through_variants,
        targets: fields.strings("targets")?,
        group_marker: fields.string("group-marker")?,
        builds,
    })
}

/// A requirement with a marker using variant variables: the requirement part by PEP 508, the
/// marker by vari-core's marker grammar (PEP 508 parsers do not know the variant variables).
fn check_variant_dependency(text: &str) -> Result<(), String> {
    let (requirement, marker) = vari_core::markers::split_requirement(text);
    vari_core::metadata::parse_requirement(requirement)?;
    match marker {
        Some(marker) => vari_core::markers::Marker::parse(marker)
            .map(|_| ())
            .map_err(|err| err.to_string()),
        None => Err("has no marker (only dependencies behind variant markers belong here)".into()),
    }
}

/// A URL a lock may name: http or https, parseable, without credentials embedded (a lock is
/// committed and shared; credentials belong in the installer's configuration).
fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|err| format!("{text:?} is not a URL: {err}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{text:?}: only http and https URLs are allowed (use `path` for local files)"
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{}: credentials do not belong in a lock",
            redact(&url)
        ));
    }
    Ok(())
}

fn redact(url: &url::Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

fn check_hash(algorithm: &str, digest: &str) -> Result<(), String> {
    if algorithm.is_empty()
        || algorithm.len() > 32
        || !algorithm
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(format!("{algorithm:?} is not a hash algorithm name"));
    }
    let expected = match algorithm {
        "sha256" => Some(64),
        "sha384" => Some(96),
        "sha512" => Some(128),
        _ => None,
    };
    let hex =
        !digest.is_empty() && digest.len() <= 256 && digest.bytes().all(|b| b.is_ascii_hexdigit());
    match expected {
        Some(len) if hex && digest.len() == len => Ok(()),
        None if hex => Ok(()),
        _ => Err(format!("{digest:?} is not a {algorithm} digest in hex")),
    }
}

mod families;
#[cfg(test)]
mod tests;
