//! Combining the metadata of several sources (wheels, index files) into one
//! (`spec/format.md` §5, PEP 825 "Default priorities" and "Variants").
//!
//! - The same label must carry the same properties.
//! - `default-priorities.namespace` lists must be equal or one a prefix of the other; the
//!   longer one is kept.
//! - Per namespace, providers, static properties, feature priorities and property
//!   priorities must be identical where two sources both have them; the result has the
//!   union of namespaces.
//! - The result has the union of the variants.
//!
//! Every check is between a source and the accumulated result, and every rule is symmetric
//! (prefix-compatibility with the longest list implies it with every shorter one), so the
//! result does not depend on the order of the sources. Error messages name the two sources
//! in sorted order for the same reason.

use std::collections::BTreeMap;

use super::model::{SchemaGeneration, VariantMetadata};
use crate::names::{Namespace, VariantLabel};

/// Why sources could not be combined. Each variant names both sources and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CombineError {
    /// Nothing to combine.
    #[error("no metadata to combine")]
    NoSources,
    /// The sources use different schema generations.
    #[error("{first} uses schema {first_generation} but {second} uses schema {second_generation}; convert them to one generation first")]
    Generation {
        /// One source.
        first: String,
        /// Its generation.
        first_generation: SchemaGeneration,
        /// The other source.
        second: String,
        /// Its generation.
        second_generation: SchemaGeneration,
    },
    /// A label with different properties.
    #[error("variants.{label}: the label has different properties in {first} and {second}")]
    Label {
        /// The label.
        label: VariantLabel,
        /// One source.
        first: String,
        /// The other source.
        second: String,
    },
    /// Namespace priorities where neither is a prefix of the other.
    #[error("default-priorities.namespace: {first} has [{first_list}] and {second} has [{second_list}]; one must be a prefix of the other")]
    NamespacePriorities {
        /// One source.
        first: String,
        /// Its list, comma-separated.
        first_list: String,
        /// The other source.
        second: String,
        /// Its list, comma-separated.
        second_list: String,
    },
    /// Different data for the same namespace under `key` (`providers`, `static-properties`,
    /// `default-priorities.feature`, `default-priorities.property`).
    #[error("{key}.{namespace}: differs between {first} and {second}")]
    Namespace {
        /// The table.
        key: &'static str,
        /// The namespace.
        namespace: Namespace,
        /// One source.
        first: String,
        /// The other source.
        second: String,
    },
}

/// Sorts two source names so messages do not depend on the order of the sources.
fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_owned(), b.to_owned())
    } else {
        (b.to_owned(), a.to_owned())
    }
}

/// Combines `(source name, metadata)` pairs into one document.
///
/// The result keeps the generation of the sources, and their `$schema` URL when they all
/// agree on it.
///
/// ```
/// use vari_core::metadata::{combine, read_json, SourceKind};
/// let a = read_json(r#"{"default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"v3": {"x86_64": {"level": ["v3"]}}}}"#, SourceKind::WheelFile).unwrap();
/// let b = read_json(r#"{"default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"null": {}}}"#, SourceKind::WheelFile).unwrap();
/// let all = combine([("a.whl", &a), ("b.whl", &b)]).unwrap();
/// assert_eq!(all.variants.len(), 2);
/// ```
pub fn combine<'a>(
    sources: impl IntoIterator<Item = (&'a str, &'a VariantMetadata)>,
) -> Result<VariantMetadata, CombineError> {
    let mut sources = sources.into_iter();
    let (first_name, first) = sources.next().ok_or(CombineError::NoSources)?;
    let mut acc = Accumulator::new(first_name, first);
    for (name, meta) in sources {
        acc.add(name, meta)?;
    }
    Ok(acc.result)
}

/// The combination so far, and which source each piece came from (for messages).
struct Accumulator<'a> {
    result: VariantMetadata,
    generation_source: &'a str,
    namespace_source: &'a str,
    label_source: BTreeMap<VariantLabel, &'a str>,
    namespace_sources: BTreeMap<(&'static str, Namespace), &'a str>,
    schema_urls_agree: bool,
}

impl<'a> Accumulator<'a> {
    fn new(name: &'a str, meta: &VariantMetadata) -> Self {
        let mut namespace_sources = BTreeMap::new();
        for key in TABLES {
            for ns in namespaces_of(meta, key) {
                namespace_sources.insert((key, ns), name);
            }
        }
        Self {
            result: meta.clone(),
            generation_source: name,
            namespace_source: name,
            label_source: meta.variants.keys().map(|l| (l.clone(), name)).collect(),
            namespace_sources,
            schema_urls_agree: true,
        }
    }

    fn add(&mut self, name: &'a str, meta: &VariantMetadata) -> Result<(), CombineError> {
        if meta.generation != self.result.generation {
            let ((first, first_generation), (second, second_generation)) = sorted_by_name(
                (self.generation_source, self.result.generation),
                (name, meta.generation),
            );
            return Err(CombineError::Generation {
                first,
                first_generation,
                second,
                second_generation,
            });
        }
        if self.schema_urls_agree && meta.schema_url != self.result.schema_url {
            self.schema_urls_agree = false;
        }
        self.add_namespace_priorities(name, &meta.priorities.namespace)?;
        for key in TABLES {
            self.add_table(key, name, meta)?;
        }
        for (label, properties) in &meta.variants {
            match self.result.variants.get(label) {
                Some(existing) if existing != properties => {
                    let (first, second) = pair(self.label_source[label], name);
                    return Err(CombineError::Label {
                        label: label.clone(),
                        first,
                        second,
                    });
                }
                Some(_) => {}
                None => {
                    self.result
                        .variants
                        .insert(label.clone(), properties.clone());
                    self.label_source.insert(label.clone(), name);
                }
            }
        }
        if !self.schema_urls_agree {
            self.result.schema_url = None;
        }
        Ok(())
    }

    fn add_namespace_priorities(
        &mut self,
        name: &'a str,
        list: &[Namespace],
    ) -> Result<(), CombineError> {
        let current = &self.result.priorities.namespace;
        let (short, long) = if list.len() <= current.len() {
            (list, current.as_slice())
        } else {
            (current.as_slice(), list)
        };
        if long[..short.len()] != *short {
            let join = |l: &[Namespace]| {
                l.iter()
                    .map(Namespace::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let ((first, first_list), (second, second_list)) =
                sorted_by_name((self.namespace_source, join(current)), (name, join(list)));
            return Err(CombineError::NamespacePriorities {
                first,
                first_list,
                second,
                second_list,
            });
        }
        if list.len() > current.len() {
            self.result.priorities.namespace = list.to_vec();
            self.namespace_source = name;
        }
        Ok(())
    }

    fn add_table(
        &mut self,
        key: &'static str,
        name: &'a str,
        meta: &VariantMetadata,
    ) -> Result<(), CombineError> {
        for ns in namespaces_of(meta, key) {
            let same = match key {
                PROVIDERS => merge_entry(&mut self.result.providers, &meta.providers, &ns),
                STATIC => merge_entry(
                    &mut self.result.static_properties,
                    &meta.static_properties,
                    &ns,
                ),
                FEATURE => merge_entry(
                    &mut self.result.priorities.feature,
                    &meta.priorities.feature,
                    &ns,
                ),
                _ => merge_entry(
                    &mut self.result.priorities.property,
                    &meta.priorities.property,
                    &ns,
                ),
            };
            match same {
                Merge::Added => {
                    self.namespace_sources.insert((key, ns), name);
                }
                Merge::Same => {}
                Merge::Conflict => {
                    let (first, second) = pair(self.namespace_sources[&(key, ns.clone())], name);
                    return Err(CombineError::Namespace {
                        key,
                        namespace: ns,
                        first,
                        second,
                    });
                }
            }
        }
        Ok(())
    }
}

const PROVIDERS: &str = "providers";
const STATIC: &str = "static-properties";
const FEATURE: &str = "default-priorities.feature";
const PROPERTY: &str = "default-priorities.property";
const TABLES: [&str; 4] = [PROVIDERS, STATIC, FEATURE, PROPERTY];

fn namespaces_of(meta: &VariantMetadata, key: &str) -> Vec<Namespace> {
    match key {
        PROVIDERS => meta.providers.keys().cloned().collect(),
        STATIC => meta.static_properties.keys().cloned().collect(),
        FEATURE => meta.priorities.feature.keys().cloned().collect(),
        _ => meta.priorities.property.keys().cloned().collect(),
    }
}

enum Merge {
    Added,
    Same,
    Conflict,
}

fn merge_entry<V: Clone + PartialEq>(
    into: &mut BTreeMap<Namespace, V>,
    from: &BTreeMap<Namespace, V>,
    ns: &Namespace,
) -> Merge {
    let Some(value) = from.get(ns) else {
        return Merge::Same;
    };
    match into.get(ns) {
        None => {
            into.insert(ns.clone(), value.clone());
            Merge::Added
        }
        Some(existing) if existing == value => Merge::Same,
        Some(_) => Merge::Conflict,
    }
}

fn sorted_by_name<T>(a: (&str, T), b: (&str, T)) -> ((String, T), (String, T)) {
    if a.0 <= b.0 {
        ((a.0.to_owned(), a.1), (b.0.to_owned(), b.1))
    } else {
        ((b.0.to_owned(), b.1), (a.0.to_owned(), a.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{read_json, SourceKind};
    use serde_json::{json, Value};

    fn wheel(namespaces: &[&str], label: &str, props: Value) -> VariantMetadata {
        let providers: serde_json::Map<String, Value> = namespaces
            .iter()
            .map(|ns| {
                (
                    ns.to_string(),
                    json!({"requires": [format!("{ns}-plugin")]}),
                )
            })
            .collect();
        let doc = json!({
            "$schema": SchemaGeneration::V0_0_3.url(),
            "default-priorities": {"namespace": namespaces},
            "providers": providers,
            "variants": {label: props}
        });
        read_json(&doc.to_string(), SourceKind::WheelFile).unwrap()
    }

    fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut out = Vec::new();
        for i in 0..items.len() {
            let mut rest = items.to_vec();
            let first = rest.remove(i);
            for mut p in permutations(&rest) {
                p.insert(0, first.clone());
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn union_of_variants_with_the_longest_namespace_list_in_any_order() {
        let a = wheel(&["x86_64"], "v3", json!({"x86_64": {"level": ["v3"]}}));
        let b = wheel(
            &["x86_64", "blas"],
            "mkl",
            json!({"blas": {"lib": ["mkl"]}}),
        );
        let c = wheel(&["x86_64"], "null", json!({}));
        let d = wheel(
            &["x86_64", "blas"],
            "v3",
            json!({"x86_64": {"level": ["v3"]}}),
        );
        let sources = [("a", &a), ("b", &b), ("c", &c), ("d", &d)];
        let expected = combine(sources).unwrap();
        let labels: Vec<&str> = expected.variants.keys().map(|l| l.as_str()).collect();
        assert_eq!(labels, ["mkl", "null", "v3"]);
        let ns: Vec<&str> = expected
            .priorities
            .namespace
            .iter()
            .map(|n| n.as_str())
            .collect();
        assert_eq!(ns, ["x86_64", "blas"]);
        assert_eq!(expected.providers.len(), 2);
        for order in permutations(&sources) {
            assert_eq!(combine(order).unwrap(), expected);
        }
    }

    #[test]
    fn same_label_different_properties_is_a_conflict_naming_both_sources() {
        let a = wheel(&["x86_64"], "v3", json!({"x86_64": {"level": ["v3"]}}));
        let b = wheel(&["x86_64"], "v3", json!({"x86_64": {"level": ["v4"]}}));
        for order in [
            [("b.whl", &b), ("a.whl", &a)],
            [("a.whl", &a), ("b.whl", &b)],
        ] {
            let e = combine(order).unwrap_err();
            assert_eq!(
                e.to_string(),
                "variants.v3: the label has different properties in a.whl and b.whl"
            );
        }
    }

    #[test]
    fn namespace_lists_must_be_prefixes() {
        let a = wheel(
            &["x86_64", "blas"],
            "a",
            json!({"x86_64": {"level": ["v3"]}}),
        );
        let b = wheel(
            &["blas", "x86_64"],
            "b",
            json!({"x86_64": {"level": ["v3"]}}),
        );
        let e = combine([("a", &a), ("b", &b)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "default-priorities.namespace: a has [x86_64, blas] and b has [blas, x86_64]; one must be a prefix of the other"
        );
    }

    #[test]
    fn providers_of_one_namespace_must_be_identical() {
        let a = wheel(&["x86_64"], "a", json!({"x86_64": {"level": ["v3"]}}));
        let mut b = wheel(&["x86_64"], "b", json!({"x86_64": {"level": ["v4"]}}));
        b.providers.values_mut().for_each(|p| p.optional = true);
        let e = combine([("b", &b), ("a", &a)]).unwrap_err();
        assert_eq!(e.to_string(), "providers.x86_64: differs between a and b");
    }

    #[test]
    fn static_properties_and_priorities_must_be_identical() {
        let a = wheel(&["x86_64"], "a", json!({"x86_64": {"level": ["v3"]}}));
        let mut b = a.clone();
        b.static_properties.insert(
            "x86_64".parse().unwrap(),
            vec![("level".parse().unwrap(), vec!["v3".parse().unwrap()])],
        );
        let mut c = a.clone();
        c.static_properties.insert(
            "x86_64".parse().unwrap(),
            vec![("level".parse().unwrap(), vec!["v4".parse().unwrap()])],
        );
        assert!(
            combine([("a", &a), ("b", &b)]).is_ok(),
            "only one source has them"
        );
        assert_eq!(
            combine([("b", &b), ("c", &c)]).unwrap_err().to_string(),
            "static-properties.x86_64: differs between b and c"
        );
        let mut d = a.clone();
        d.priorities
            .feature
            .insert("x86_64".parse().unwrap(), vec!["level".parse().unwrap()]);
        let mut e = a.clone();
        e.priorities
            .feature
            .insert("x86_64".parse().unwrap(), vec![]);
        assert_eq!(
            combine([("d", &d), ("e", &e)]).unwrap_err().to_string(),
            "default-priorities.feature.x86_64: differs between d and e"
        );
    }

    #[test]
    fn generations_must_agree_and_nothing_is_an_error() {
        let a = wheel(&["x86_64"], "a", json!({"x86_64": {"level": ["v3"]}}));
        let mut b = a.clone();
        b.generation = SchemaGeneration::V0_2;
        assert_eq!(
            combine([("b", &b), ("a", &a)]).unwrap_err().to_string(),
            "a uses schema 0.0.3 but b uses schema 0.2.x; convert them to one generation first"
        );
        assert_eq!(
            combine(std::iter::empty()).unwrap_err(),
            CombineError::NoSources
        );
    }

    #[test]
    fn schema_url_is_kept_only_when_all_agree() {
        let a = wheel(&["x86_64"], "a", json!({"x86_64": {"level": ["v3"]}}));
        let mut b = a.clone();
        assert_eq!(
            combine([("a", &a), ("b", &b)]).unwrap().schema_url,
            a.schema_url
        );
        b.schema_url = None;
        assert_eq!(combine([("a", &a), ("b", &b)]).unwrap().schema_url, None);
        assert_eq!(combine([("b", &b), ("a", &a)]).unwrap().schema_url, None);
    }
}
