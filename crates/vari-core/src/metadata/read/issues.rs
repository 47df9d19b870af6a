//! Collecting problems while walking a document: key paths, scopes and document order.

use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;

use crate::metadata::error::MetadataError;
use std::borrow::Cow;

use crate::metadata::tree::Node;
use crate::names::{NameError, Namespace};

/// One problem, with where it sorts and what it invalidates.
#[derive(Debug)]
pub(super) struct Issue {
    /// Position of the top-level section the problem belongs to, so that problems come out in
    /// document order even though sections are read in dependency order.
    pub(super) order: usize,
    /// The variant label (as written) whose entry is invalid, or `None` when the problem
    /// concerns the document as a whole.
    pub(super) variant: Option<String>,
    /// The problem itself.
    pub(super) error: MetadataError,
}

/// The problems found so far, and the scope new ones are recorded in.
#[derive(Debug, Default)]
pub(super) struct Issues {
    pub(super) list: Vec<Issue>,
    /// Section new problems are ordered under.
    pub(super) order: usize,
    /// Variant new problems invalidate (`None`: the document).
    pub(super) variant: Option<String>,
    /// What was read tolerantly although the schema forbids it (the document stays valid).
    pub(super) warnings: Vec<MetadataError>,
}

impl Issues {
    /// Records a problem at `path` in the current section and scope.
    pub(super) fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.list.push(Issue {
            order: self.order,
            variant: self.variant.clone(),
            error: MetadataError::new(path, message),
        });
    }

    /// Records a problem about the document (no variant scope) at position `at` of the list,
    /// for a problem found after the ones it should precede.
    pub(super) fn insert(
        &mut self,
        at: usize,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        let issue = Issue {
            order: self.order,
            variant: None,
            error: MetadataError::new(path, message),
        };
        self.list.insert(at.min(self.list.len()), issue);
    }

    /// Records a problem in the current section and scope at position `at` of the list, for a
    /// problem known only after the ones it should precede.
    pub(super) fn insert_scoped(
        &mut self,
        at: usize,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        let issue = Issue {
            order: self.order,
            variant: self.variant.clone(),
            error: MetadataError::new(path, message),
        };
        self.list.insert(at.min(self.list.len()), issue);
    }

    /// Adds the problems and warnings of a sub-walk recorded apart, in the current section.
    pub(super) fn append(&mut self, other: Issues) {
        let order = self.order;
        self.list.extend(other.list.into_iter().map(|mut i| {
            i.order = order;
            i
        }));
        self.warnings.extend(other.warnings);
    }

    /// Records something read tolerantly at `path`: not a problem, but worth telling.
    pub(super) fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(MetadataError::new(path, message));
    }

    /// Number of problems recorded so far (to tell whether a sub-walk found any).
    pub(super) fn count(&self) -> usize {
        self.list.len()
    }

    /// The problems in document order (stable within a section), and the warnings.
    pub(super) fn into_sorted(mut self) -> (Vec<Issue>, Vec<MetadataError>) {
        self.list.sort_by_key(|i| i.order);
        (self.list, self.warnings)
    }
}

/// `base.key`, quoting keys that would make the path ambiguous or unreadable.
pub(super) fn key_path(base: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'$'));
    let key = if plain {
        key.to_owned()
    } else {
        // Infallible: serialising a string to JSON cannot fail.
        serde_json::to_string(key).unwrap_or_default()
    };
    if base.is_empty() {
        key
    } else {
        format!("{base}.{key}")
    }
}

/// `base[i]`.
pub(super) fn index_path(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// The entries of an object, or a type error.
pub(super) fn as_object<'n, 'd>(
    node: &'n Node<'d>,
    path: &str,
    issues: &mut Issues,
) -> Option<&'n [(Cow<'d, str>, Node<'d>)]> {
    match node {
        Node::Object(entries) => Some(entries),
        other => {
            issues.add(path, format!("expected an object, found {}", other.kind()));
            None
        }
    }
}

/// The entries of an object with repeated keys reported (at the repeat) and skipped.
pub(super) fn unique_entries<'n, 'd>(
    entries: &'n [(Cow<'d, str>, Node<'d>)],
    path: &str,
    issues: &mut Issues,
) -> Vec<(&'n str, &'n Node<'d>)> {
    let mut seen = HashSet::with_capacity(entries.len());
    let mut out = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        if seen.insert(key.as_ref()) {
            out.push((key.as_ref(), value));
        } else {
            issues.add(key_path(path, key), "duplicate key");
        }
    }
    out
}

/// An object keyed by namespace, each value read by `read` at its key path. An invalid
/// namespace name is reported and its value still read, so that the value's own problems are
/// reported too; it is left out, as is a value `read` refuses.
pub(super) fn namespace_entries<T>(
    node: &Node,
    path: &str,
    issues: &mut Issues,
    mut read: impl FnMut(&Node, &str, &mut Issues) -> Option<T>,
) -> BTreeMap<Namespace, T> {
    let mut out = BTreeMap::new();
    let Some(entries) = as_object(node, path, issues) else {
        return out;
    };
    for (ns, value) in unique_entries(entries, path, issues) {
        let ns_path = key_path(path, ns);
        let namespace = Namespace::new(ns).map_err(|e| issues.add(&ns_path, e.to_string()));
        let value = read(value, &ns_path, issues);
        if let (Ok(namespace), Some(value)) = (namespace, value) {
            out.insert(namespace, value);
        }
    }
    out
}

/// Reports every key of `entries` not in `allowed` (drafts that define a table reject
/// unknown keys in it).
pub(super) fn reject_unknown_keys(
    entries: &[(&str, &Node)],
    allowed: &[&str],
    path: &str,
    issues: &mut Issues,
) {
    for (key, _) in entries {
        if !allowed.contains(key) {
            issues.add(
                key_path(path, key),
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            );
        }
    }
}

/// Looks up a key among unique entries.
pub(super) fn get<'n, 'd>(entries: &[(&str, &'n Node<'d>)], key: &str) -> Option<&'n Node<'d>> {
    entries.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// A string value, or a type error.
pub(super) fn as_str<'n>(node: &'n Node, path: &str, issues: &mut Issues) -> Option<&'n str> {
    match node {
        Node::String(s) => Some(s),
        other => {
            issues.add(path, format!("expected a string, found {}", other.kind()));
            None
        }
    }
}

/// A boolean value, or a type error.
pub(super) fn as_bool(node: &Node, path: &str, issues: &mut Issues) -> Option<bool> {
    match node {
        Node::Bool(b) => Some(*b),
        other => {
            issues.add(path, format!("expected a boolean, found {}", other.kind()));
            None
        }
    }
}

/// A list of strings: type errors for the list and for each item, and duplicate items
/// reported at the repeat. Returns the unique strings (with their index) when the value is a
/// list at all.
pub(super) fn string_list<'n>(
    node: &'n Node,
    path: &str,
    issues: &mut Issues,
) -> Option<Vec<(usize, &'n str)>> {
    let Node::Array(items) = node else {
        issues.add(
            path,
            format!("expected a list of strings, found {}", node.kind()),
        );
        return None;
    };
    let mut seen = HashSet::with_capacity(items.len());
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Node::String(s) => {
                if seen.insert(s.as_ref()) {
                    out.push((i, s.as_ref()));
                } else {
                    issues.add(index_path(path, i), format!("duplicate value {s:?}"));
                }
            }
            other => issues.add(
                index_path(path, i),
                format!("expected a string, found {}", other.kind()),
            ),
        }
    }
    Some(out)
}

/// A list of unique names (namespaces, features, values): every item that fails the name
/// grammar is reported at its index. `non_empty` rejects an empty list.
pub(super) fn name_list<T: FromStr<Err = NameError>>(
    node: &Node,
    path: &str,
    non_empty: bool,
    issues: &mut Issues,
) -> Option<Vec<T>> {
    let items = string_list(node, path, issues)?;
    if non_empty && matches!(node, Node::Array(a) if a.is_empty()) {
        issues.add(path, "must not be empty");
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, s) in items {
        match s.parse::<T>() {
            Ok(v) => out.push(v),
            Err(e) => issues.add(index_path(path, i), e.to_string()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_quote_only_unusual_keys() {
        assert_eq!(key_path("", "variants"), "variants");
        assert_eq!(key_path("variants", "cuda12.8"), "variants.cuda12.8");
        assert_eq!(key_path("providers", "plugin-api"), "providers.plugin-api");
        assert_eq!(key_path("variants", "cu 128"), "variants.\"cu 128\"");
        assert_eq!(key_path("variants", ""), "variants.\"\"");
        assert_eq!(index_path("a.b", 2), "a.b[2]");
    }

    #[test]
    fn issues_sort_by_section_and_keep_insertion_order_within() {
        let mut issues = Issues {
            order: 2,
            ..Issues::default()
        };
        issues.add("b", "first in b");
        issues.order = 1;
        issues.add("a", "only in a");
        issues.order = 2;
        issues.add("b", "second in b");
        let msgs: Vec<String> = issues
            .into_sorted()
            .0
            .into_iter()
            .map(|i| i.error.message)
            .collect();
        assert_eq!(msgs, ["only in a", "first in b", "second in b"]);
    }
}
