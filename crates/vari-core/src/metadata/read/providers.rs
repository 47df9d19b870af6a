//! `providers`: one table per namespace, whose keys depend on the generation.
//!
//! - 0.0.3: `requires`, `enable-if`, `install-time` (default true), `optional`, `plugin-api`.
//! - 0.0.2: as 0.0.3 but `plugin-use = "none" | "build" | "all"` (default `all`) instead of
//!   `install-time`; `all` is install-time, `none`/`build` are ahead-of-time.
//! - 0.2: exactly one of `requires` (install-time plugin), `build-requires` (ahead-of-time
//!   plugin, pyproject only), `static-properties` (+ `feature-order`), `builtin`; plus
//!   `optional`, `enable-if`, and `plugin-api` (only with `requires`/`build-requires`).
//!   Under PEP 850's URL (`…/peps/850/v0.2.0.json`) `enable-if` is not allowed
//!   (`docs/reference/providers-schema.md`).
//!
//! In the model, ahead-of-time plugin requirements always live in `build_requires` (0.0.x
//! spell them `requires`), so `requires` is non-empty exactly for install-time providers.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::str::FromStr;

use pep508_rs::MarkerTree;

use crate::markers::Marker;
use crate::metadata::requirement::{check_marker_text, parse_requirement};

use super::issues::{
    as_bool, as_object, as_str, get, index_path, key_path, name_list, reject_unknown_keys,
    string_list, unique_entries, Issues,
};
use super::source::SourceKind;
use crate::metadata::model::{ProviderInfo, ProviderKind, SchemaGeneration, StaticProperties};
use crate::metadata::tree::Node;
use crate::names::{FeatureName, FeatureValue, Namespace};

/// `providers` as read.
#[derive(Debug, Default)]
pub(super) struct ProvidersRead {
    /// Valid providers by namespace.
    pub(super) value: BTreeMap<Namespace, ProviderInfo>,
    /// Every namespace with a provider table, valid or not (cross-checks use this so one
    /// broken provider does not also report its namespace as missing).
    pub(super) declared: BTreeSet<Namespace>,
    /// 0.2 per-provider `static-properties`, in `feature-order`.
    pub(super) static_properties: BTreeMap<Namespace, StaticProperties>,
    /// Whether `providers` was an object whose keys are all valid namespaces, so
    /// cross-checks against `default-priorities.namespace` are meaningful.
    pub(super) keys_ok: bool,
}

const KEYS_0_0_2: &[&str] = &[
    "enable-if",
    "optional",
    "plugin-api",
    "plugin-use",
    "requires",
];
const KEYS_0_0_3: &[&str] = &[
    "enable-if",
    "install-time",
    "optional",
    "plugin-api",
    "requires",
];
const KEYS_0_2: &[&str] = &[
    "build-requires",
    "builtin",
    "enable-if",
    "feature-order",
    "optional",
    "plugin-api",
    "requires",
    "static-properties",
];

/// Reads `providers` at `path` (absent: `node` is `None`, meaning no providers).
pub(super) fn read_providers(
    node: Option<&Node>,
    path: &str,
    generation: SchemaGeneration,
    kind: SourceKind,
    pep_850: bool,
    issues: &mut Issues,
) -> ProvidersRead {
    let mut out = ProvidersRead {
        keys_ok: true,
        ..ProvidersRead::default()
    };
    let Some(node) = node else {
        return out;
    };
    let Some(entries) = as_object(node, path, issues) else {
        out.keys_ok = false;
        return out;
    };
    for (ns, table) in unique_entries(entries, path, issues) {
        let ns_path = key_path(path, ns);
        let namespace = match Namespace::new(ns) {
            Ok(n) => n,
            Err(e) => {
                issues.add(&ns_path, e.to_string());
                out.keys_ok = false;
                continue;
            }
        };
        out.declared.insert(namespace.clone());
        let Some(table) = as_object(table, &ns_path, issues) else {
            continue;
        };
        let table = unique_entries(table, &ns_path, issues);
        let before = issues.count();
        let read = match generation {
            SchemaGeneration::V0_0_2 => read_0_0_2(&table, &ns_path, issues),
            SchemaGeneration::V0_0_3 => read_0_0_3(&table, &ns_path, issues),
            SchemaGeneration::V0_2 => read_0_2(&table, &ns_path, kind, pep_850, issues),
            // 0.1 has no providers; the caller never asks.
            SchemaGeneration::V0_1 => continue,
        };
        if issues.count() == before {
            if let Some(static_properties) = read.static_properties {
                out.static_properties
                    .insert(namespace.clone(), static_properties);
            }
            out.value.insert(namespace, read.info);
        }
    }
    out
}

/// One provider table as read.
struct ProviderRead {
    info: ProviderInfo,
    static_properties: Option<StaticProperties>,
}

/// The keys every generation shares: `enable-if`, `optional`, `plugin-api`.
struct Common {
    enable_if: Option<Marker>,
    optional: bool,
    plugin_api: Option<String>,
}

impl Common {
    /// The provider read: these shared keys with what the generation-specific ones gave.
    fn with(
        self,
        kind: ProviderKind,
        requires: Vec<String>,
        build_requires: Vec<String>,
        static_properties: Option<StaticProperties>,
    ) -> ProviderRead {
        ProviderRead {
            info: ProviderInfo {
                kind,
                requires,
                build_requires,
                enable_if: self.enable_if,
                optional: self.optional,
                plugin_api: self.plugin_api,
            },
            static_properties,
        }
    }
}

fn read_common(table: &[(&str, &Node)], path: &str, issues: &mut Issues) -> Common {
    let enable_if = get(table, "enable-if").and_then(|n| {
        let p = key_path(path, "enable-if");
        let marker = as_str(n, &p, issues)?;
        check_marker(marker, &p, issues)
    });
    let optional = get(table, "optional")
        .and_then(|n| as_bool(n, &key_path(path, "optional"), issues))
        .unwrap_or(false);
    let plugin_api = get(table, "plugin-api").and_then(|n| {
        let p = key_path(path, "plugin-api");
        let api = as_str(n, &p, issues)?;
        check_plugin_api(api, &p, issues).then(|| api.to_owned())
    });
    Common {
        enable_if,
        optional,
        plugin_api,
    }
}

fn read_0_0_3(table: &[(&str, &Node)], path: &str, issues: &mut Issues) -> ProviderRead {
    reject_unknown_keys(table, KEYS_0_0_3, path, issues);
    let common = read_common(table, path, issues);
    let install_time = get(table, "install-time")
        .and_then(|n| as_bool(n, &key_path(path, "install-time"), issues))
        .unwrap_or(true);
    let requires = read_requires(table, "requires", path, false, issues);
    if let (true, Some(requires)) = (install_time, &requires) {
        require_install_time_requires(requires, path, "install-time = true", issues);
    }
    build_0_0_x(common, install_time, requires)
}

fn read_0_0_2(table: &[(&str, &Node)], path: &str, issues: &mut Issues) -> ProviderRead {
    reject_unknown_keys(table, KEYS_0_0_2, path, issues);
    let common = read_common(table, path, issues);
    let plugin_use = get(table, "plugin-use").and_then(|n| {
        let p = key_path(path, "plugin-use");
        let value = as_str(n, &p, issues)?;
        if matches!(value, "none" | "build" | "all") {
            Some(value)
        } else {
            issues.add(
                p,
                format!("expected \"none\", \"build\" or \"all\", found {value:?}"),
            );
            None
        }
    });
    let install_time = plugin_use.unwrap_or("all") == "all";
    let requires = read_requires(table, "requires", path, false, issues);
    if let (true, Some(requires)) = (install_time, &requires) {
        require_install_time_requires(requires, path, "plugin-use = \"all\"", issues);
    }
    build_0_0_x(common, install_time, requires)
}

fn build_0_0_x(common: Common, install_time: bool, requires: Option<Vec<String>>) -> ProviderRead {
    let requires = requires.unwrap_or_default();
    let (kind, requires, build_requires) = if install_time {
        (ProviderKind::InstallTime, requires, Vec::new())
    } else {
        (ProviderKind::AheadOfTime, Vec::new(), requires)
    };
    common.with(kind, requires, build_requires, None)
}

fn require_install_time_requires(requires: &[String], path: &str, why: &str, issues: &mut Issues) {
    if requires.is_empty() {
        issues.add(
            key_path(path, "requires"),
            format!("an install-time provider ({why}) must list at least one requirement"),
        );
    }
}

fn read_0_2(
    table: &[(&str, &Node)],
    path: &str,
    kind: SourceKind,
    pep_850: bool,
    issues: &mut Issues,
) -> ProviderRead {
    reject_unknown_keys(table, KEYS_0_2, path, issues);
    if pep_850 && get(table, "enable-if").is_some() {
        issues.add(
            key_path(path, "enable-if"),
            format!(
                "is not part of PEP 850's providers schema ($schema {}); drop it, or give \
                 variantlib's URL ({}) which allows it",
                crate::metadata::PEP_850_URL,
                crate::metadata::VARIANTLIB_0_2_URL
            ),
        );
    }
    let common = read_common(table, path, issues);
    let present: Vec<&str> = ["requires", "build-requires", "static-properties", "builtin"]
        .into_iter()
        .filter(|k| get(table, k).is_some())
        .collect();
    if present.len() != 1 {
        let found = if present.is_empty() {
            "none".to_owned()
        } else {
            present.join(", ")
        };
        issues.add(
            path,
            format!(
                "exactly one of requires, build-requires, static-properties or builtin \
                 must be given (found: {found})"
            ),
        );
    }
    let requires = read_requires(table, "requires", path, true, issues).unwrap_or_default();
    let build_requires =
        read_requires(table, "build-requires", path, true, issues).unwrap_or_default();
    if get(table, "build-requires").is_some() && kind != SourceKind::Pyproject {
        issues.add(
            key_path(path, "build-requires"),
            "is only allowed in pyproject.toml (a built wheel carries static-properties instead)",
        );
    }
    if common.plugin_api.is_some()
        && get(table, "requires").is_none()
        && get(table, "build-requires").is_none()
    {
        issues.add(
            key_path(path, "plugin-api"),
            "is only allowed with requires or build-requires",
        );
    }
    let builtin = get(table, "builtin").and_then(|n| {
        let p = key_path(path, "builtin");
        let name = as_str(n, &p, issues)?;
        if name.trim().is_empty() {
            issues.add(p, "must not be empty");
            None
        } else {
            Some(name.to_owned())
        }
    });
    let static_properties = read_static_0_2(table, path, issues);

    let kind = if let Some(name) = builtin {
        ProviderKind::Builtin(name)
    } else if !requires.is_empty() {
        ProviderKind::InstallTime
    } else {
        ProviderKind::AheadOfTime
    };
    common.with(kind, requires, build_requires, static_properties)
}

/// 0.2 `static-properties` (feature → values) ordered by `feature-order`.
fn read_static_0_2(
    table: &[(&str, &Node)],
    path: &str,
    issues: &mut Issues,
) -> Option<StaticProperties> {
    let order_path = key_path(path, "feature-order");
    let order = get(table, "feature-order")
        .and_then(|n| name_list::<FeatureName>(n, &order_path, true, issues));
    let Some(node) = get(table, "static-properties") else {
        if order.is_some() {
            issues.add(&order_path, "is only allowed with static-properties");
        }
        return None;
    };
    let static_path = key_path(path, "static-properties");
    let features = read_feature_values(node, &static_path, issues)?;
    if features.is_empty() {
        issues.add(&static_path, "must list at least one feature");
    }
    match order {
        Some(order) => {
            let given: HashSet<&FeatureName> = order.iter().collect();
            let used: HashSet<&FeatureName> = features.iter().map(|(f, _)| f).collect();
            if given != used {
                let mut missing: Vec<&str> = used.difference(&given).map(|f| f.as_str()).collect();
                let mut extra: Vec<&str> = given.difference(&used).map(|f| f.as_str()).collect();
                missing.sort_unstable();
                extra.sort_unstable();
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!("missing: {}", missing.join(", ")));
                }
                if !extra.is_empty() {
                    parts.push(format!("not in static-properties: {}", extra.join(", ")));
                }
                issues.add(
                    &order_path,
                    format!(
                        "must list every feature of static-properties ({})",
                        parts.join("; ")
                    ),
                );
                return Some(features);
            }
            let mut by_name: BTreeMap<FeatureName, Vec<FeatureValue>> =
                features.into_iter().collect();
            Some(
                order
                    .into_iter()
                    .filter_map(|f| by_name.remove(&f).map(|v| (f, v)))
                    .collect(),
            )
        }
        None => {
            if features.len() > 1 {
                issues.add(
                    &order_path,
                    "is required when static-properties lists more than one feature",
                );
            }
            Some(features)
        }
    }
}

/// An object of feature → non-empty list of unique values, in document order.
pub(super) fn read_feature_values(
    node: &Node,
    path: &str,
    issues: &mut Issues,
) -> Option<StaticProperties> {
    read_feature_lists(node, path, true, issues)
}

/// A feature → values table in document order; `non_empty`: an empty value list is an error
/// (static properties), not a no-op (priority lists).
pub(super) fn read_feature_lists(
    node: &Node,
    path: &str,
    non_empty: bool,
    issues: &mut Issues,
) -> Option<StaticProperties> {
    let entries = as_object(node, path, issues)?;
    let mut out = Vec::with_capacity(entries.len());
    for (f, values) in unique_entries(entries, path, issues) {
        let f_path = key_path(path, f);
        let feature = FeatureName::new(f).map_err(|e| issues.add(&f_path, e.to_string()));
        let values = name_list::<FeatureValue>(values, &f_path, non_empty, issues);
        if let (Ok(feature), Some(values)) = (feature, values) {
            out.push((feature, values));
        }
    }
    Some(out)
}

/// A list of PEP 508 requirements under `key` (absent: empty; `None` when it is not a
/// list, so no follow-on error is reported). `non_empty`: a present but empty list is an
/// error (0.2 counts a present key as the provider's kind).
fn read_requires(
    table: &[(&str, &Node)],
    key: &str,
    path: &str,
    non_empty: bool,
    issues: &mut Issues,
) -> Option<Vec<String>> {
    let Some(node) = get(table, key) else {
        return Some(Vec::new());
    };
    let path = key_path(path, key);
    let items = string_list(node, &path, issues)?;
    if non_empty && items.is_empty() {
        issues.add(&path, "must list at least one requirement");
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, s) in items {
        match parse_requirement(s) {
            Ok(_) => out.push(s.to_owned()),
            Err(message) => issues.add(
                index_path(&path, i),
                format!("invalid requirement {s:?}: {message}"),
            ),
        }
    }
    Some(out)
}

/// `enable-if` must be a non-empty PEP 508 marker.
/// `enable-if`, parsed once here for every later evaluation. It describes the target, so
/// it must be a standard PEP 508 marker (no variant variables): checked with the PEP 508
/// parser, whose messages are the clearest, then parsed into the evaluable form.
fn check_marker(marker: &str, path: &str, issues: &mut Issues) -> Option<Marker> {
    if marker.trim().is_empty() {
        issues.add(path, "must not be empty");
        return None;
    }
    if let Err(message) = check_marker_text(marker) {
        issues.add(
            path,
            format!("invalid environment marker {marker:?}: {message}"),
        );
        return None;
    }
    if let Err(e) = MarkerTree::from_str(marker) {
        issues.add(
            path,
            format!("invalid environment marker {marker:?}: {}", e.message),
        );
        return None;
    }
    Marker::parse(marker)
        .map_err(|e| issues.add(path, e.to_string()))
        .ok()
}

/// `plugin-api` is an object reference, `module.path:Object` or `module.path`.
///
/// Checked loosely, like the schema and variantlib: each side is a non-empty run of ASCII
/// letters, digits, `_` and `.`, with optional spaces around the `:`. Whether the parts are
/// valid Python identifiers is left to the plugin loader.
fn check_plugin_api(api: &str, path: &str, issues: &mut Issues) -> bool {
    let part_ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    };
    let ok = match api.split_once(':') {
        Some((module, object)) => part_ok(module.trim_end()) && part_ok(object.trim_start()),
        None => part_ok(api),
    };
    if !ok {
        issues.add(
            path,
            format!("invalid plugin-api {api:?}: expected an object reference like `module.path:Object`"),
        );
    }
    ok
}
