//! Writing `pylock.toml`: deterministic bytes for the same [`Lock`], laid out as PEP 751's
//! examples are (top-level keys, then one `[[packages]]` block each with its wheels as inline
//! tables, one per line), so that a lock reads well in a diff.

use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, Value};
use vari_core::metadata::{write_json_as, SchemaUrl, VARIANTLIB_0_2_URL};

use crate::model::{Artifact, DependencyRef, Lock, LockFamily, LockInfo, Package, PackageInfo};
use crate::LockError;

/// Writes `lock` as TOML text. The same lock always gives the same bytes; packages are
/// written in the order of [`Lock::packages`] (callers sort them: vari's lock writer by
/// name, then version). What [`crate::read_lock`] would refuse is refused here, by the same
/// [`crate::limits`]: a string too long or holding a character a lock may not hold, too many
/// items, more than [`crate::MAX_LOCK_BYTES`] in all, nesting too deep.
///
/// ```
/// let text = "lock-version = \"1.0\"\ncreated-by = \"vari\"\npackages = []\n";
/// let lock = vari_lock::read_lock(text).unwrap();
/// let written = vari_lock::write_lock(&lock).unwrap();
/// assert_eq!(vari_lock::read_lock(&written).unwrap(), lock);
/// ```
pub fn write_lock(lock: &Lock) -> Result<String, LockError> {
    crate::limits::check_lock(lock)?;
    crate::families::check_families(lock)?;
    let mut doc = DocumentMut::new();
    doc.insert(
        "lock-version",
        Item::Value(lock.lock_version.as_str().into()),
    );
    insert_strings(doc.as_table_mut(), "environments", &lock.environments);
    if let Some(requires_python) = &lock.requires_python {
        doc.insert(
            "requires-python",
            Item::Value(requires_python.as_str().into()),
        );
    }
    insert_strings(doc.as_table_mut(), "extras", &lock.extras);
    insert_strings(
        doc.as_table_mut(),
        "dependency-groups",
        &lock.dependency_groups,
    );
    insert_strings(doc.as_table_mut(), "default-groups", &lock.default_groups);
    doc.insert("created-by", Item::Value(lock.created_by.as_str().into()));

    if lock.packages.is_empty() {
        doc.insert("packages", Item::Value(Value::Array(Array::new())));
    } else {
        let mut packages = ArrayOfTables::new();
        for (i, package) in lock.packages.iter().enumerate() {
            packages.push(package_table(package, &format!("packages[{i}]"))?);
        }
        doc.insert("packages", Item::ArrayOfTables(packages));
    }

    if lock.vari.is_some() || !lock.other_tools.is_empty() {
        let mut tool = Table::new();
        tool.set_implicit(true);
        if let Some(info) = &lock.vari {
            tool.insert("vari", Item::Table(lock_info_table(info)));
        }
        for (name, value) in &lock.other_tools {
            tool.insert(name, tool_item(value));
        }
        doc.insert("tool", Item::Table(tool));
    }
    let text = doc.to_string();
    if text.len() as u64 > crate::MAX_LOCK_BYTES {
        return Err(LockError::new(
            "",
            format!(
                "would be {} bytes, more than the {} a lock may hold",
                text.len(),
                crate::MAX_LOCK_BYTES
            ),
        ));
    }
    vari_core::check_toml_depth(&text).map_err(|deep| {
        LockError::new(
            format!("line {}", deep.line),
            format!("would nest deeper than {} levels", deep.limit),
        )
    })?;
    Ok(text)
}

fn package_table(package: &Package, path: &str) -> Result<Table, LockError> {
    let mut table = Table::new();
    table.insert("name", Item::Value(package.name.as_str().into()));
    if let Some(version) = &package.version {
        table.insert("version", Item::Value(version.to_string().into()));
    }
    if let Some(marker) = &package.marker {
        table.insert("marker", Item::Value(marker.as_str().into()));
    }
    if let Some(requires_python) = &package.requires_python {
        table.insert(
            "requires-python",
            Item::Value(requires_python.as_str().into()),
        );
    }
    if let Some(index) = &package.index {
        table.insert("index", Item::Value(index.as_str().into()));
    }
    if !package.dependencies.is_empty() {
        let items = package.dependencies.iter().map(dependency_value);
        table.insert(
            "dependencies",
            Item::Value(Value::Array(one_per_line(items))),
        );
    }
    if let Some(sdist) = &package.sdist {
        table.insert(
            "sdist",
            Item::Value(Value::InlineTable(artifact_value(sdist))),
        );
    }
    if !package.wheels.is_empty() {
        let items = package
            .wheels
            .iter()
            .map(|wheel| Value::InlineTable(artifact_value(wheel)));
        table.insert("wheels", Item::Value(Value::Array(one_per_line(items))));
    }
    // Keys vari does not model, before the sub-tables so that plain keys stay in the header.
    for (key, value) in &package.other {
        if key != "tool" {
            table.insert(key, to_item(value));
        }
    }
    if let Some(meta) = &package.variants_json {
        let url = match meta.schema_url.as_deref() {
            Some(VARIANTLIB_0_2_URL) => SchemaUrl::Variantlib,
            _ => SchemaUrl::Standard,
        };
        let written = write_json_as(meta, meta.generation, url)
            .map_err(|err| LockError::new(format!("{path}.variants-json"), err.to_string()))?;
        let json: serde_json::Value = serde_json::from_str(&written.text)
            .map_err(|err| LockError::new(format!("{path}.variants-json"), err.to_string()))?;
        table.insert(
            "variants-json",
            Item::Table(variants_json_table(
                &json,
                &format!("{path}.variants-json"),
            )?),
        );
    }
    let other_tools = match package.other.get("tool") {
        Some(toml::Value::Table(tools)) => Some(tools),
        _ => None,
    };
    if package.vari.is_some() || other_tools.is_some() {
        let mut tool = Table::new();
        tool.set_implicit(true);
        if let Some(info) = &package.vari {
            tool.insert("vari", Item::Table(package_info_table(info)));
        }
        for (name, value) in other_tools.into_iter().flatten() {
            tool.insert(name, tool_item(value));
        }
        table.insert("tool", Item::Table(tool));
    }
    Ok(table)
}

fn dependency_value(dependency: &DependencyRef) -> Value {
    let mut inline = InlineTable::new();
    inline.insert("name", dependency.name.as_str().into());
    if let Some(version) = &dependency.version {
        inline.insert("version", version.as_str().into());
    }
    Value::InlineTable(inline)
}

fn artifact_value(artifact: &Artifact) -> InlineTable {
    let mut inline = InlineTable::new();
    if let Some(name) = &artifact.name {
        inline.insert("name", name.as_str().into());
    }
    if let Some(url) = &artifact.url {
        inline.insert("url", url.as_str().into());
    }
    if let Some(path) = &artifact.path {
        inline.insert("path", path.as_str().into());
    }
    if let Some(upload_time) = &artifact.upload_time {
        match upload_time.parse::<toml_edit::Datetime>() {
            Ok(time) => inline.insert("upload-time", Value::from(time)),
            Err(_) => inline.insert("upload-time", upload_time.as_str().into()),
        };
    }
    if let Some(size) = artifact.size {
        inline.insert("size", Value::from(i64::try_from(size).unwrap_or(i64::MAX)));
    }
    let mut hashes = InlineTable::new();
    for (algorithm, digest) in &artifact.hashes {
        hashes.insert(algorithm, digest.as_str().into());
    }
    inline.insert("hashes", Value::InlineTable(hashes));
    inline
}

/// The variant metadata as a table whose sections (`default-priorities`, `variants`, …) are
/// tables and whose entries are inline: one line per label, as PEP 825's example.
fn variants_json_table(json: &serde_json::Value, path: &str) -> Result<Table, LockError> {
    let serde_json::Value::Object(sections) = json else {
        return Err(LockError::new(path, "is not a JSON object"));
    };
    let mut table = Table::new();
    for (key, value) in sections {
        match value {
            serde_json::Value::Object(entries) => {
                let mut section = Table::new();
                for (entry, value) in entries {
                    section.insert(entry, Item::Value(json_to_value(value, path)?));
                }
                table.insert(key, Item::Table(section));
            }
            other => {
                table.insert(key, Item::Value(json_to_value(other, path)?));
            }
        }
    }
    Ok(table)
}

fn json_to_value(json: &serde_json::Value, path: &str) -> Result<Value, LockError> {
    Ok(match json {
        serde_json::Value::Null => {
            return Err(LockError::new(
                path,
                "holds a JSON null, which TOML cannot say",
            ))
        }
        serde_json::Value::Bool(value) => Value::from(*value),
        serde_json::Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(int), _) => Value::from(int),
            (None, Some(float)) => Value::from(float),
            _ => {
                return Err(LockError::new(
                    path,
                    format!("number {number} is out of range"),
                ))
            }
        },
        serde_json::Value::String(text) => Value::from(text.as_str()),
        serde_json::Value::Array(items) => {
            let mut array = Array::new();
            for item in items {
                array.push(json_to_value(item, path)?);
            }
            Value::Array(array)
        }
        serde_json::Value::Object(entries) => {
            let mut inline = InlineTable::new();
            for (key, value) in entries {
                inline.insert(key, json_to_value(value, path)?);
            }
            Value::InlineTable(inline)
        }
    })
}

fn lock_info_table(info: &LockInfo) -> Table {
    let mut table = Table::new();
    if let Some(hash) = &info.inputs_hash {
        table.insert("inputs-hash", Item::Value(hash.as_str().into()));
    }
    insert_strings(&mut table, "requirements", &info.requirements);
    insert_strings(&mut table, "indexes", &info.indexes);
    insert_strings(&mut table, "find-links", &info.find_links);
    if info.pre {
        table.insert("pre", Item::Value(true.into()));
    }
    if info.group_markers {
        table.insert("group-markers", Item::Value(true.into()));
    }
    if !info.targets.is_empty() {
        let items = info.targets.iter().map(|target| {
            let mut inline = InlineTable::new();
            inline.insert("name", target.name.as_str().into());
            let optional = [
                ("profile", &target.profile),
                ("profile-hash", &target.profile_hash),
                ("python-version", &target.python_version),
                ("python-platform", &target.python_platform),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    inline.insert(key, value.as_str().into());
                }
            }
            Value::InlineTable(inline)
        });
        table.insert("targets", Item::Value(Value::Array(one_per_line(items))));
    }
    if !info.families.is_empty() {
        // Sorted by name: the order of families means nothing (that of builds does).
        let mut families: Vec<&LockFamily> = info.families.iter().collect();
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let mut tables = ArrayOfTables::new();
        for family in families {
            tables.push(family_table(family));
        }
        table.insert("families", Item::ArrayOfTables(tables));
    }
    table
}

fn family_table(family: &LockFamily) -> Table {
    let mut table = Table::new();
    table.insert("name", Item::Value(family.name.as_str().into()));
    if let Some(group) = &family.group {
        table.insert("group", Item::Value(group.as_str().into()));
    }
    let mut builds = ArrayOfTables::new();
    for build in &family.builds {
        let mut entry = Table::new();
        entry.insert("name", Item::Value(build.name.as_str().into()));
        entry.insert(
            "distribution",
            Item::Value(build.distribution.as_str().into()),
        );
        if let Some(extra) = &build.extra {
            entry.insert("extra", Item::Value(extra.as_str().into()));
        }
        let requires: Vec<String> = build.requires.iter().map(ToString::to_string).collect();
        insert_strings(&mut entry, "requires", &requires);
        if build.null {
            entry.insert("null", Item::Value(true.into()));
        }
        insert_strings(&mut entry, "classes", &build.classes);
        builds.push(entry);
    }
    table.insert("builds", Item::ArrayOfTables(builds));
    table
}

fn package_info_table(info: &PackageInfo) -> Table {
    let mut table = Table::new();
    insert_strings(
        &mut table,
        "variant-dependencies",
        &info.variant_dependencies,
    );
    if info.through_variants {
        table.insert("through-variants", Item::Value(true.into()));
    }
    insert_strings(&mut table, "targets", &info.targets);
    if let Some(marker) = &info.group_marker {
        table.insert("group-marker", Item::Value(marker.as_str().into()));
    }
    if !info.builds.is_empty() {
        let items: Array = info
            .builds
            .iter()
            .map(|reference| {
                let mut inline = InlineTable::new();
                inline.insert("family", reference.family.as_str().into());
                inline.insert("build", reference.build.as_str().into());
                Value::InlineTable(inline)
            })
            .collect();
        table.insert("builds", Item::Value(Value::Array(items)));
    }
    table
}

fn insert_strings(table: &mut Table, key: &str, items: &[String]) {
    if !items.is_empty() {
        let array: Array = items.iter().map(String::as_str).collect();
        table.insert(key, Item::Value(Value::Array(array)));
    }
}

/// An array laid out one item per line, with a trailing comma (diffs touch one line).
fn one_per_line(items: impl IntoIterator<Item = Value>) -> Array {
    let mut array = Array::new();
    for mut item in items {
        item.decor_mut().set_prefix("\n    ");
        array.push_formatted(item);
    }
    array.set_trailing("\n");
    array.set_trailing_comma(true);
    array
}

/// A preserved value from a read lock, written back as a value (tables inline), so that it
/// stays with its entry.
fn to_item(value: &toml::Value) -> Item {
    Item::Value(to_value(value))
}

/// Another tool's table, written as a `[tool.NAME]` table of its own.
fn tool_item(value: &toml::Value) -> Item {
    match value {
        toml::Value::Table(entries) => {
            let mut table = Table::new();
            for (key, value) in entries {
                table.insert(key, to_item(value));
            }
            Item::Table(table)
        }
        other => to_item(other),
    }
}

fn to_value(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::from(text.as_str()),
        toml::Value::Integer(int) => Value::from(*int),
        toml::Value::Float(float) => Value::from(*float),
        toml::Value::Boolean(flag) => Value::from(*flag),
        toml::Value::Datetime(time) => match time.to_string().parse::<toml_edit::Datetime>() {
            Ok(time) => Value::from(time),
            Err(_) => Value::from(time.to_string()),
        },
        toml::Value::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        toml::Value::Table(entries) => {
            let mut inline = InlineTable::new();
            for (key, value) in entries {
                inline.insert(key, to_value(value));
            }
            Value::InlineTable(inline)
        }
    }
}
