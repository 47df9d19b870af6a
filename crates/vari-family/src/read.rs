//! Reading a catalog: TOML text in, a validated [`Catalog`] or one [`Diagnostic`] (key path and
//! message) out. No I/O: the caller reads the file (bounded) and names it in its message.
//!
//! A catalog is hostile input: the text is bounded ([`MAX_CATALOG_BYTES`]) and its nesting
//! checked before the parser sees it, every list is bounded, every key is known (a misspelt
//! `requires` must not silently make a build fit everywhere), names are validated and
//! normalised, and URLs are parsed with their scheme checked (`file:` only in a user's file).
//! Key paths name families and builds by name once known: `family[cupy].build[cu13].requires[0]`.

use std::collections::BTreeSet;

use toml::{Table, Value};
use url::Url;
use vari_core::{Diagnostic, Namespace, Property, VariantLabel};

use crate::model::{Build, BuildSource, Catalog, Family, Group, Origin, SameName};

/// The value of the `schema` key.
pub const SCHEMA: &str = "vari-families/1";
/// The largest catalog text accepted, in bytes (the built-in one is about a tenth of it).
pub const MAX_CATALOG_BYTES: usize = 1 << 20;
/// The most families one catalog may list.
pub const MAX_FAMILIES: usize = 1_000;
/// The most builds one family may list.
pub const MAX_BUILDS: usize = 64;
/// The most properties one build may require.
pub const MAX_REQUIRES: usize = 128;
/// The most groups one catalog may list.
pub const MAX_GROUPS: usize = 256;
/// The most families one group may list.
pub const MAX_GROUP_MEMBERS: usize = 64;
/// The most entries of a short list (`docs`, `namespaces`).
pub const MAX_SHORT_LIST: usize = 16;
/// The longest string value, in bytes (URLs included).
pub const MAX_TEXT_BYTES: usize = 2_048;

/// Reads a catalog from its text. `origin` decides what it may contain: `file:` URLs only in a
/// user's file ([`Origin::File`]), never in the built-in catalog.
///
/// ```
/// let text = r#"
/// schema = "vari-families/1"
/// [[family]]
/// name = "cupy"
/// same-name = "sdist-only"
/// [[family.build]]
/// name = "cu12"
/// distribution = "cupy-cuda12x"
/// requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
/// "#;
/// let catalog = vari_family::read_catalog(text, vari_family::Origin::BuiltIn).unwrap();
/// assert_eq!(catalog.family("CuPy").unwrap().builds[0].distribution, "cupy-cuda12x");
/// let e = vari_family::read_catalog(&text.replace("requires", "require"), vari_family::Origin::BuiltIn)
///     .unwrap_err();
/// assert_eq!(e.path, "family[cupy].build[cu12].require");
/// ```
pub fn read_catalog(text: &str, origin: Origin) -> Result<Catalog, Diagnostic> {
    if text.len() > MAX_CATALOG_BYTES {
        return Err(Diagnostic::document(format!(
            "the catalog is {} bytes, more than the limit of {MAX_CATALOG_BYTES}",
            text.len()
        )));
    }
    let text = vari_core::strip_bom(text);
    vari_core::check_toml_depth(text)
        .map_err(|e| Diagnostic::document(format!("not valid TOML: {e}")))?;
    let root: Table = text.parse().map_err(|e: toml::de::Error| {
        let message = e.message().trim().replace('\n', "; ");
        match e.span() {
            Some(span) => {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                Diagnostic::document(format!("not valid TOML: {message} at line {line}"))
            }
            None => Diagnostic::document(format!("not valid TOML: {message}")),
        }
    })?;
    let reader = Reader { origin: &origin };
    let top = Obj {
        table: &root,
        path: String::new(),
    };
    top.check_keys(&["schema", "family", "group"])?;
    match top.string("schema")? {
        Some(SCHEMA) => {}
        Some(other) => {
            return Err(Diagnostic::new(
                "schema",
                format!("unsupported schema {other:?} (expected {SCHEMA:?})"),
            ))
        }
        None => {
            return Err(Diagnostic::new(
                "schema",
                format!("missing; expected {SCHEMA:?}"),
            ))
        }
    }
    let mut families: Vec<Family> = Vec::new();
    for table in top.tables("family", MAX_FAMILIES)? {
        let family = reader.family(table)?;
        if families.iter().any(|f| f.name == family.name) {
            return Err(Diagnostic::new(
                format!("family[{}].name", family.name),
                format!("family {:?} is listed twice", family.name),
            ));
        }
        families.push(family);
    }
    let mut groups: Vec<Group> = Vec::new();
    for (i, table) in top.tables("group", MAX_GROUPS)?.into_iter().enumerate() {
        let group = reader.group(table, i)?;
        if groups.iter().any(|g| g.name == group.name) {
            return Err(Diagnostic::new(
                format!("group[{}].name", group.name),
                format!("group {:?} is listed twice", group.name),
            ));
        }
        groups.push(group);
    }
    let catalog = Catalog { families, groups };
    check_distributions(&catalog)?;
    Ok(catalog)
}

/// Each distribution belongs to one family: two families that both claim `torch` would let
/// either send it to its own index.
pub(crate) fn check_distributions(catalog: &Catalog) -> Result<(), Diagnostic> {
    let mut owner: std::collections::BTreeMap<&str, &str> = Default::default();
    for family in &catalog.families {
        for build in &family.builds {
            match owner.get(build.distribution.as_str()) {
                Some(other) if *other != family.name => {
                    return Err(Diagnostic::new(
                        format!("family[{}].build[{}].distribution", family.name, build.name),
                        format!(
                            "distribution {:?} is a build of family {other:?} already; a \
                             distribution belongs to one family",
                            build.distribution
                        ),
                    ));
                }
                _ => {
                    owner.insert(&build.distribution, &family.name);
                }
            }
        }
    }
    Ok(())
}

/// Checks that every group member is a family of `catalog` (after the layers are merged).
pub(crate) fn check_groups(catalog: &Catalog) -> Result<(), Diagnostic> {
    for group in &catalog.groups {
        for member in &group.families {
            if catalog.family(member).is_none() {
                return Err(Diagnostic::new(
                    format!("group[{}].families", group.name),
                    format!("{member:?} is not a family of the catalog"),
                ));
            }
        }
    }
    Ok(())
}

struct Reader<'o> {
    origin: &'o Origin,
}

impl Reader<'_> {
    fn family(&self, obj: Obj<'_>) -> Result<Family, Diagnostic> {
        obj.check_keys(&[
            "name",
            "summary",
            "docs",
            "same-name",
            "namespaces",
            "build",
        ])?;
        let name = project_name(&obj, "name")?;
        // From here on, paths name the family.
        let obj = Obj {
            table: obj.table,
            path: format!("family[{name}]"),
        };
        let summary = obj.string("summary")?.map(str::to_owned);
        let mut docs = Vec::new();
        for (at, text) in obj.strings("docs", MAX_SHORT_LIST)? {
            self.url(&at, text, false)?;
            docs.push(text.to_owned());
        }
        let same_name = match obj.string("same-name")? {
            None => SameName::Absent,
            Some(text) => SameName::ALL
                .into_iter()
                .find(|s| s.as_str() == text)
                .ok_or_else(|| {
                    obj.error(
                        "same-name",
                        format!(
                            "unknown value {text:?} (expected one of: {})",
                            SameName::ALL.map(SameName::as_str).join(", ")
                        ),
                    )
                })?,
        };
        let mut namespaces: Vec<Namespace> = Vec::new();
        for (at, text) in obj.strings("namespaces", MAX_SHORT_LIST)? {
            let ns: Namespace = text
                .parse()
                .map_err(|e| Diagnostic::new(at.clone(), format!("{e}")))?;
            if namespaces.contains(&ns) {
                return Err(Diagnostic::new(
                    at,
                    format!("namespace {text:?} is listed twice"),
                ));
            }
            namespaces.push(ns);
        }
        let mut builds: Vec<Build> = Vec::new();
        let tables = obj.tables("build", MAX_BUILDS)?;
        if tables.is_empty() {
            return Err(obj.error("build", "a family needs at least one build"));
        }
        for (i, table) in tables.into_iter().enumerate() {
            let build = self.build(table, &name, &obj.path, i)?;
            if builds.iter().any(|b| b.name == build.name) {
                return Err(Diagnostic::new(
                    format!("{}.build[{}].name", obj.path, build.name),
                    format!("build {:?} is listed twice", build.name),
                ));
            }
            if build.null && builds.iter().any(|b| b.null) {
                return Err(Diagnostic::new(
                    format!("{}.build[{}].null", obj.path, build.name),
                    "a family has one null (CPU) build at most",
                ));
            }
            if let Some(same) = builds.iter().find(|b| {
                b.distribution == build.distribution
                    && b.source == build.source
                    && b.extra == build.extra
                    && b.local == build.local
            }) {
                return Err(Diagnostic::new(
                    format!("{}.build[{}]", obj.path, build.name),
                    format!(
                        "the same files as build {:?} (same distribution, source, extra and \
                         local tag)",
                        same.name
                    ),
                ));
            }
            builds.push(build);
        }
        // Namespaces used by builds but not listed go after the listed ones, in order of use.
        for build in &builds {
            for property in &build.requires {
                if !namespaces.contains(&property.namespace) {
                    if namespaces.len() >= MAX_SHORT_LIST {
                        return Err(obj.error(
                            "namespaces",
                            format!("the builds use more than {MAX_SHORT_LIST} namespaces"),
                        ));
                    }
                    namespaces.push(property.namespace.clone());
                }
            }
        }
        match same_name {
            SameName::Build => {
                if !builds.iter().any(|b| b.distribution == name) {
                    return Err(obj.error(
                        "same-name",
                        format!(
                            "\"build\" says {name:?} is one of the builds, but no build is \
                             published as {name:?}"
                        ),
                    ));
                }
            }
            other => {
                if let Some(b) = builds
                    .iter()
                    .find(|b| b.distribution == name && b.source.is_none())
                {
                    return Err(Diagnostic::new(
                        format!("{}.build[{}].distribution", obj.path, b.name),
                        format!(
                            "same-name = {:?} says {name:?} on the default index is not a build, \
                             but this build is {name:?} from the default index (give it an \
                             index, or say same-name = \"build\")",
                            other.as_str()
                        ),
                    ));
                }
            }
        }
        Ok(Family {
            name,
            summary,
            docs,
            same_name,
            namespaces,
            builds,
            origin: self.origin.clone(),
        })
    }

    fn build(
        &self,
        obj: Obj<'_>,
        family: &str,
        family_path: &str,
        index: usize,
    ) -> Result<Build, Diagnostic> {
        // Name first, so that the other keys' paths can say which build.
        let named = obj.table.get("name").and_then(Value::as_str);
        let path = match named.and_then(|n| n.parse::<VariantLabel>().ok()) {
            Some(label) => format!("{family_path}.build[{label}]"),
            None => format!("{family_path}.build[{index}]"),
        };
        let obj = Obj {
            table: obj.table,
            path,
        };
        obj.check_keys(&[
            "name",
            "distribution",
            "index",
            "find-links",
            "local",
            "extra",
            "requires",
            "null",
            "line-from-requirements",
        ])?;
        let name = obj
            .string("name")?
            .ok_or_else(|| obj.error("name", "missing; every build has a name (`cu128`, `cpu`)"))?;
        let label: VariantLabel = name
            .parse()
            .map_err(|e| obj.error("name", format!("{e}")))?;
        if label.as_str().len() > VariantLabel::MAX_LEN_0_0_3 {
            return Err(obj.error(
                "name",
                format!(
                    "{name:?} is longer than {} characters",
                    VariantLabel::MAX_LEN_0_0_3
                ),
            ));
        }
        let distribution = match obj.table.get("distribution") {
            None => family.to_owned(),
            Some(_) => project_name(&obj, "distribution")?,
        };
        let index_url = obj
            .string("index")?
            .map(|u| self.url(&obj.at("index"), u, true))
            .transpose()?;
        let links_url = obj
            .string("find-links")?
            .map(|u| self.url(&obj.at("find-links"), u, true))
            .transpose()?;
        let source = match (index_url, links_url) {
            (Some(_), Some(_)) => {
                return Err(obj.error(
                    "find-links",
                    "a build is on an index or a links page, not both",
                ))
            }
            (Some(url), None) => Some(BuildSource::Index(url)),
            (None, Some(url)) => Some(BuildSource::FindLinks(url)),
            (None, None) => None,
        };
        let local = match obj.string("local")? {
            None => None,
            Some(tag) => {
                let valid = !tag.is_empty()
                    && tag
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.')
                    && !tag.starts_with('.')
                    && !tag.ends_with('.');
                if !valid {
                    return Err(obj.error(
                        "local",
                        format!(
                            "{tag:?} is not a local version tag (lowercase letters, digits and \
                             dots, as in \"cu128\" or \"rocm6.4\"; without the `+`)"
                        ),
                    ));
                }
                if source.is_none() {
                    return Err(obj.error(
                        "local",
                        "a local version tag belongs to a build on its own index or links page",
                    ));
                }
                Some(tag.to_owned())
            }
        };
        let extra = match obj.string("extra")? {
            None => None,
            Some(text) => {
                if !vari_core::project::is_valid(text) {
                    return Err(obj.error("extra", format!("{text:?} is not a valid extra name")));
                }
                Some(vari_core::project::normalize(text))
            }
        };
        let mut requires: Vec<Property> = Vec::new();
        for (at, text) in obj.strings("requires", MAX_REQUIRES)? {
            let property: Property = text.parse().map_err(|e| {
                Diagnostic::new(
                    at.clone(),
                    format!("{e} (expected \"NAMESPACE :: FEATURE :: VALUE\")"),
                )
            })?;
            if requires.contains(&property) {
                return Err(Diagnostic::new(at, format!("{text:?} is listed twice")));
            }
            requires.push(property);
        }
        let null = obj.flag("null")?.unwrap_or(false);
        let line_from_requirements = obj.flag("line-from-requirements")?.unwrap_or(false);
        if null && !requires.is_empty() {
            return Err(obj.error(
                "requires",
                "the null (CPU) build requires nothing; give its properties to another build",
            ));
        }
        if null && line_from_requirements {
            return Err(obj.error(
                "line-from-requirements",
                "the null (CPU) build has no CUDA line to read",
            ));
        }
        if !null && requires.is_empty() && !line_from_requirements {
            return Err(obj.error(
                "requires",
                "a build that requires nothing fits every machine: say `null = true` if it is \
                 the CPU build, else list the properties it needs",
            ));
        }
        Ok(Build {
            name: label.as_str().to_owned(),
            distribution,
            source,
            local,
            extra,
            requires,
            null,
            line_from_requirements,
        })
    }

    fn group(&self, obj: Obj<'_>, index: usize) -> Result<Group, Diagnostic> {
        let obj = Obj {
            table: obj.table,
            path: format!("group[{index}]"),
        };
        obj.check_keys(&["name", "families"])?;
        let name = obj
            .string("name")?
            .ok_or_else(|| obj.error("name", "missing"))?;
        if !vari_core::project::is_valid(name) {
            return Err(obj.error("name", format!("{name:?} is not a valid group name")));
        }
        let obj = Obj {
            table: obj.table,
            path: format!("group[{name}]"),
        };
        let mut families = Vec::new();
        for (at, text) in obj.strings("families", MAX_GROUP_MEMBERS)? {
            if !vari_core::project::is_valid(text) {
                return Err(Diagnostic::new(
                    at,
                    format!("{text:?} is not a valid project name"),
                ));
            }
            let member = vari_core::project::normalize(text);
            if families.contains(&member) {
                return Err(Diagnostic::new(at, format!("{text:?} is listed twice")));
            }
            families.push(member);
        }
        if families.len() < 2 {
            return Err(obj.error("families", "a group has two families at least"));
        }
        Ok(Group {
            name: vari_core::project::normalize(name),
            families,
            origin: self.origin.clone(),
        })
    }

    /// A URL of an allowed scheme, without credentials or fragment; `source` URLs (indexes,
    /// links pages) may be `file:` in a user's catalog.
    fn url(&self, at: &str, text: &str, source: bool) -> Result<Url, Diagnostic> {
        let url = Url::parse(text)
            .map_err(|e| Diagnostic::new(at, format!("{text:?} is not a URL: {e}")))?;
        let local_ok = source && matches!(self.origin, Origin::File(_));
        match url.scheme() {
            "http" | "https" => {
                if url.host_str().is_none_or(str::is_empty) {
                    return Err(Diagnostic::new(at, format!("{text:?} has no host")));
                }
            }
            "file" if local_ok => {}
            "file" => {
                return Err(Diagnostic::new(
                    at,
                    match source {
                        true => "a file: URL is only allowed in a user's catalog file",
                        false => "expected an http(s) URL",
                    },
                ))
            }
            other => {
                return Err(Diagnostic::new(
                    at,
                    format!(
                        "the scheme {other:?} is not allowed (expected http or https{})",
                        if local_ok { ", or file" } else { "" }
                    ),
                ))
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Diagnostic::new(
                at,
                "a catalog URL carries no credentials (give them to the index settings or \
                 .netrc)",
            ));
        }
        if source && url.fragment().is_some() {
            return Err(Diagnostic::new(
                at,
                "an index or links URL has no #fragment",
            ));
        }
        Ok(url)
    }
}

/// A project name at `key`: valid (PEP 508) and returned in its PEP 503 normal form.
fn project_name(obj: &Obj<'_>, key: &str) -> Result<String, Diagnostic> {
    let text = obj
        .string(key)?
        .ok_or_else(|| obj.error(key, "missing; expected a project name"))?;
    if !vari_core::project::is_valid(text) {
        return Err(obj.error(key, format!("{text:?} is not a valid project name")));
    }
    Ok(vari_core::project::normalize(text))
}

/// A table at a key path, read key by key.
struct Obj<'a> {
    table: &'a Table,
    path: String,
}

impl<'a> Obj<'a> {
    fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn error(&self, key: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.at(key), message)
    }

    fn check_keys(&self, allowed: &[&str]) -> Result<(), Diagnostic> {
        let allowed_set: BTreeSet<&str> = allowed.iter().copied().collect();
        for key in self.table.keys() {
            if !allowed_set.contains(key.as_str()) {
                return Err(self.error(
                    key,
                    format!("unknown key (expected one of: {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, Diagnostic> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => {
                check_text(&self.at(key), s)?;
                Ok(Some(s.as_str()))
            }
            Some(other) => Err(self.error(
                key,
                format!("expected a string, found {}", other.type_str()),
            )),
        }
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, Diagnostic> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.error(
                key,
                format!("expected true or false, found {}", other.type_str()),
            )),
        }
    }

    /// A list of strings, each with its key path.
    fn strings(&self, key: &str, max: usize) -> Result<Vec<(String, &'a str)>, Diagnostic> {
        let Some(value) = self.table.get(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err(self.error(
                key,
                format!("expected a list of strings, found {}", value.type_str()),
            ));
        };
        if items.len() > max {
            return Err(self.error(
                key,
                format!("{} entries, more than the limit of {max}", items.len()),
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{}[{i}]", self.at(key));
            match item {
                Value::String(s) => {
                    check_text(&at, s)?;
                    out.push((at, s.as_str()));
                }
                other => {
                    return Err(Diagnostic::new(
                        at,
                        format!("expected a string, found {}", other.type_str()),
                    ))
                }
            }
        }
        Ok(out)
    }

    /// An array of tables (`[[family]]`), bounded.
    fn tables(&self, key: &str, max: usize) -> Result<Vec<Obj<'a>>, Diagnostic> {
        let Some(value) = self.table.get(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = value else {
            return Err(self.error(
                key,
                format!(
                    "expected an array of tables ([[{key}]]), found {}",
                    value.type_str()
                ),
            ));
        };
        if items.len() > max {
            return Err(self.error(
                key,
                format!("{} entries, more than the limit of {max}", items.len()),
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("{}[{i}]", self.at(key));
            match item {
                Value::Table(table) => out.push(Obj { table, path: at }),
                other => {
                    return Err(Diagnostic::new(
                        at,
                        format!("expected a table, found {}", other.type_str()),
                    ))
                }
            }
        }
        Ok(out)
    }
}

fn check_text(at: &str, text: &str) -> Result<(), Diagnostic> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(Diagnostic::new(
            at,
            format!(
                "{} bytes, more than the limit of {MAX_TEXT_BYTES}",
                text.len()
            ),
        ));
    }
    Ok(())
}
