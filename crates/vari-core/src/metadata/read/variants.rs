//! `variants`: label → namespace → feature → values, streamed from the JSON text straight into
//! the model.
//!
//! This is the bulk of an index file (thousands of variants), so it is not built into a
//! document tree first: the root is parsed with `variants` kept as raw text (see `tree.rs`),
//! and once the other sections are read (the generation and the known namespaces decide some
//! rules) this module walks that text with serde visitors that validate as they go and build
//! the sorted-vector property sets directly. The rules and key paths are the tree walker's:
//! repeated labels and keys are reported (serde itself would keep the last one silently),
//! values of the wrong type are reported with their kind, and problems come out in document
//! order.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::issues::{index_path, key_path, Issues};
use crate::metadata::model::{FeatureProperties, SchemaGeneration, ValueSet, VariantProperties};
use crate::metadata::tree::Key;
use crate::name_hash::NameMap;
use crate::names::{FeatureName, FeatureValue, NameError, Namespace, VariantLabel};

/// Names already validated, by their text in the document: an index file repeats the same few
/// namespaces, features and values in every variant, and each distinct one is then checked and
/// allocated once (names share their text, see `names.rs`).
///
/// It also lends the buffers a variant's namespaces and features are collected in before they
/// become sorted maps of exactly their size.
#[derive(Default)]
struct Names<'de> {
    namespaces: NameCache<'de, Namespace>,
    features: NameCache<'de, FeatureName>,
    values: NameCache<'de, FeatureValue>,
    namespace_buffer: Vec<(Namespace, FeatureProperties)>,
    feature_buffer: Vec<(FeatureName, ValueSet)>,
}

/// One kind of name. Capped: real files have tens of distinct names, and a cap bounds the
/// work a file of crafted hash collisions could cause with the fast (unkeyed) hash.
struct NameCache<'de, T>(NameMap<'de, T>);

impl<T> Default for NameCache<'_, T> {
    fn default() -> Self {
        Self(NameMap::default())
    }
}

impl<'de, T: Clone> NameCache<'de, T> {
    const CAP: usize = 256;

    /// The name `text` spells, validated by `make` the first time.
    // The `Cow` says whether the text is borrowed from the document, so can key the cache.
    #[allow(clippy::ptr_arg)]
    fn get(
        &mut self,
        text: &Cow<'de, str>,
        make: impl FnOnce(&str) -> Result<T, NameError>,
    ) -> Result<T, NameError> {
        // Only text borrowed from the document can key the cache (escaped text is rare).
        let Cow::Borrowed(text) = *text else {
            return make(text);
        };
        if let Some(name) = self.0.get(text) {
            return Ok(name.clone());
        }
        let name = make(text)?;
        if self.0.len() < Self::CAP {
            self.0.insert(text, name.clone());
        }
        Ok(name)
    }
}

/// `variants` as read.
#[derive(Debug, Default)]
pub(super) struct VariantsRead {
    /// The valid entries.
    pub(super) variants: BTreeMap<VariantLabel, VariantProperties>,
    /// How many entries the object has (valid or not, repeats included).
    pub(super) entries: usize,
}

/// The rules `variants` is read under, which the rest of the document decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VariantRules {
    /// The document's generation.
    pub(super) generation: SchemaGeneration,
    /// The namespaces variants may use (`default-priorities.namespace`, plus `abi_dependency`
    /// where it is implicit), sorted; `None` when `default-priorities.namespace` could not be
    /// read cleanly (then namespaces are not cross-checked).
    pub(super) known_namespaces: Option<Vec<Namespace>>,
}

/// `variants` as read while the document was parsed, under the rules the keys before it gave;
/// used when the whole document gives the same rules.
#[derive(Debug)]
pub(super) struct Streamed {
    pub(super) rules: VariantRules,
    /// `None` when `variants` is not an object.
    pub(super) read: Option<VariantsRead>,
    /// The problems and warnings found, in document order.
    pub(super) issues: Issues,
}

/// Reads `variants` (at key path `path`) from a deserializer, under `rules`.
///
/// Every problem is recorded in the scope of its label, so a lenient reader can drop just
/// that entry. A repeated label is an error (and drops the label: which of the two property
/// sets was meant is unknowable). `None` when `variants` is not an object (reported).
pub(super) struct VariantsSeed<'c> {
    pub(super) path: &'c str,
    pub(super) rules: &'c VariantRules,
    pub(super) issues: &'c mut Issues,
}

impl<'de> DeserializeSeed<'de> for VariantsSeed<'_> {
    type Value = Option<VariantsRead>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let VariantsSeed {
            path,
            rules,
            issues,
        } = self;
        issues.variant = None;
        let mut context = Context {
            path,
            known_namespaces: rules.known_namespaces.as_deref(),
            generation: rules.generation,
            issues,
            seen: HashSet::new(),
            null_label: None,
            names: Names::default(),
            out: VariantsRead::default(),
        };
        match d.deserialize_any(VariantsVisitor(&mut context))? {
            Ok(()) => Ok(Some(context.out)),
            Err(kind) => {
                context
                    .issues
                    .add(path, format!("expected an object, found {kind}"));
                Ok(None)
            }
        }
    }
}

/// [`VariantsSeed`] over `variants` kept as raw JSON text.
pub(super) fn read_variants_raw(
    raw: &str,
    path: &str,
    rules: &VariantRules,
    issues: &mut Issues,
) -> Option<VariantsRead> {
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let seed = VariantsSeed {
        path,
        rules,
        issues: &mut *issues,
    };
    match seed.deserialize(&mut deserializer) {
        Ok(read) => read,
        // The text was checked as JSON with the rest of the document, so this is unreachable;
        // report rather than panic all the same.
        Err(e) => {
            issues.add(path, format!("invalid JSON: {e}"));
            None
        }
    }
}

/// What every level of the walk needs.
struct Context<'c, 'de> {
    /// Key path of `variants`.
    path: &'c str,
    /// See [`VariantRules::known_namespaces`] (a handful: a scan beats hashing).
    known_namespaces: Option<&'c [Namespace]>,
    generation: SchemaGeneration,
    issues: &'c mut Issues,
    /// Labels seen so far, as written, that are not in the model (to report repeats: the
    /// model's labels are looked up there, which spares hashing every label of a large file).
    seen: HashSet<Cow<'de, str>>,
    /// The label of the variant without properties, once one is read.
    null_label: Option<VariantLabel>,
    names: Names<'de>,
    out: VariantsRead,
}

/// Implements the `visit_*` methods of every JSON type a visitor does not accept, so that the
/// walk can say what it found ("expected an object, found a list") instead of failing.
macro_rules! other_kinds {
    ($($skip:ident)*) => {
        other_kinds!(@ scalars);
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Err("a string"))
        }
        $(other_kinds!(@ $skip);)*
    };
    // Everything but strings and containers: booleans, numbers, null.
    (@ scalars) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Err("a boolean"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Err("a number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Err("a number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Err("a number"))
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Err("null"))
        }
    };
    (@ seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Err("a list"))
        }
    };
    (@ map) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Err("an object"))
        }
    };
}

/// A visited value: what was built, or the kind of JSON value found instead.
type Shaped<T> = Result<T, &'static str>;

/// The `variants` object.
struct VariantsVisitor<'v, 'c, 'de>(&'v mut Context<'c, 'de>);

impl<'de> Visitor<'de> for VariantsVisitor<'_, '_, 'de> {
    type Value = Shaped<()>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of variants")
    }

    other_kinds!(seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let cx = self.0;
        while let Some(Key(label)) = map.next_key::<Key<'de>>()? {
            cx.out.entries += 1;
            let first_issue = cx.issues.count();
            let label_path = || key_path(cx.path, &label);
            // A label read before is either in the model (valid) or among those set aside.
            let repeated = cx.out.variants.contains_key(label.as_ref())
                || (!cx.seen.is_empty() && cx.seen.contains(label.as_ref()));
            if repeated {
                cx.issues.add(
                    label_path(),
                    "duplicate variant label (each label must appear once)",
                );
                map.next_value::<IgnoredAny>()?;
            } else {
                let parsed = check_label(&label, &label_path, cx.generation, cx.issues);
                let properties = map.next_value_seed(PropertiesSeed {
                    label: &label,
                    cx: &mut *cx,
                })?;
                let mut accepted = false;
                if let (Some(parsed), Some(properties)) = (parsed, properties) {
                    if cx.issues.count() == first_issue {
                        accepted = accept(cx, &label, parsed, properties);
                    }
                }
                if !accepted {
                    cx.seen.insert(label.clone());
                }
            }
            scope_issues(cx.issues, first_issue, &label);
        }
        Ok(Ok(()))
    }
}

/// The label itself: the name grammar and, in the 0.0.x drafts, the length cap.
fn check_label(
    label: &str,
    label_path: &dyn Fn() -> String,
    generation: SchemaGeneration,
    issues: &mut Issues,
) -> Option<VariantLabel> {
    let label = VariantLabel::new(label)
        .map_err(|e| issues.add(label_path(), e.to_string()))
        .ok()?;
    // PEP 817 and the 0.0.x schemas cap labels; later generations lift the cap.
    let len = label.as_str().len();
    if generation.caps_label_length() && len > VariantLabel::MAX_LEN_0_0_3 {
        issues.add(
            label_path(),
            format!(
                "the label is {len} characters long; schema {generation} allows at most {}",
                VariantLabel::MAX_LEN_0_0_3
            ),
        );
    }
    Some(label)
}

/// Adds a variant whose label and properties are each valid: the null-variant rules decide.
/// Whether it was added.
fn accept(
    cx: &mut Context<'_, '_>,
    written: &str,
    label: VariantLabel,
    properties: VariantProperties,
) -> bool {
    let label_path = || key_path(cx.path, written);
    let empty = properties.is_empty();
    if empty && !label.is_null() && !cx.generation.has_feature_priorities() {
        cx.issues.add(
            label_path(),
            format!(
                "the null variant must use the label \"{}\"",
                VariantLabel::NULL
            ),
        );
        return false;
    }
    if !empty && label.is_null() {
        cx.issues.add(
            label_path(),
            format!(
                "the label \"{}\" is reserved for the variant with no properties",
                VariantLabel::NULL
            ),
        );
        return false;
    }
    if empty {
        if let Some(first) = &cx.null_label {
            cx.issues.add(
                label_path(),
                format!(
                    "a second variant without properties (\"{first}\" is the null variant \
                     already)"
                ),
            );
            return false;
        }
        if !label.is_null() {
            // PyTorch 2.8's metadata (0.0.x era) labels its null variant `00000000`: read it as
            // the null variant (selection and wheels keep the label; writers write `null`).
            cx.issues.warn(
                label_path(),
                format!(
                    "the null variant should use the label \"{}\"; read as the null variant \
                     (written as \"{}\")",
                    VariantLabel::NULL,
                    VariantLabel::NULL
                ),
            );
        }
        cx.null_label = Some(label.clone());
    }
    cx.out.variants.insert(label, properties);
    true
}

/// The entries of `buffer` moved into a vector of exactly their number, leaving `buffer` empty
/// with its capacity for the next variant.
fn exact<T>(buffer: &mut Vec<T>) -> Vec<T> {
    let mut exact = Vec::with_capacity(buffer.len());
    exact.append(buffer);
    exact
}

/// Scopes the problems recorded since `first_issue` to `label`, so that a lenient reader
/// drops that entry only.
fn scope_issues(issues: &mut Issues, first_issue: usize, label: &str) {
    if issues.count() != first_issue {
        let scope = label.to_owned();
        for issue in &mut issues.list[first_issue..] {
            issue.variant = Some(scope.clone());
        }
    }
}

/// One variant's properties: namespace → features. `None` when it is not an object
/// (reported).
struct PropertiesSeed<'v, 'c, 'de> {
    label: &'v str,
    cx: &'v mut Context<'c, 'de>,
}

impl<'de> DeserializeSeed<'de> for PropertiesSeed<'_, '_, 'de> {
    type Value = Option<VariantProperties>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let PropertiesSeed { label, cx } = self;
        let found = d.deserialize_any(PropertiesVisitor {
            label,
            cx: &mut *cx,
        })?;
        Ok(found
            .map_err(|kind| {
                cx.issues.add(
                    key_path(cx.path, label),
                    format!("expected an object, found {kind}"),
                )
            })
            .ok())
    }
}

struct PropertiesVisitor<'v, 'c, 'de> {
    label: &'v str,
    cx: &'v mut Context<'c, 'de>,
}

impl<'de> Visitor<'de> for PropertiesVisitor<'_, '_, 'de> {
    type Value = Shaped<VariantProperties>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of namespaces")
    }

    other_kinds!(seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let PropertiesVisitor { label, cx } = self;
        let mut out = std::mem::take(&mut cx.names.namespace_buffer);
        while let Some(Key(ns)) = map.next_key::<Key<'de>>()? {
            let ns_path = || key_path(&key_path(cx.path, label), &ns);
            let namespace = match cx.names.namespaces.get(&ns, |s| Namespace::new(s)) {
                Ok(n) => n,
                Err(e) => {
                    cx.issues.add(ns_path(), e.to_string());
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if out.iter().any(|(n, _)| *n == namespace) {
                cx.issues.add(ns_path(), "duplicate key");
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            // Where a problem with the namespace itself goes: before its features' problems,
            // but only known once the table is read (an empty table is dropped, not checked).
            let namespace_issue_at = cx.issues.count();
            let found = map.next_value_seed(FeaturesSeed {
                namespace: &namespace,
                path: &ns_path,
                issues: &mut *cx.issues,
                names: &mut cx.names,
            })?;
            let empty_table = matches!(found, Ok((_, 0)));
            if let (Some(known), false) = (cx.known_namespaces, empty_table) {
                if !known.contains(&namespace) {
                    cx.issues.insert_scoped(
                        namespace_issue_at,
                        ns_path(),
                        format!("namespace \"{ns}\" is not listed in default-priorities.namespace"),
                    );
                }
            }
            match found {
                Ok((_, 0)) => {
                    // The schemas (PEP 817, PEP 825 0.1.1) allow an empty namespace table; it
                    // says nothing about the variant, so it is dropped (as uv does), with a
                    // warning: vari itself never writes one.
                    cx.issues
                        .warn(ns_path(), "empty namespace table (no features); ignored");
                }
                Ok((features, _)) => out.push((namespace, features)),
                Err(kind) => cx
                    .issues
                    .add(ns_path(), format!("expected an object, found {kind}")),
            }
        }
        let properties = VariantProperties::from_unique(exact(&mut out));
        cx.names.namespace_buffer = out;
        Ok(Ok(properties))
    }
}

/// The features of one namespace of a variant.
struct FeaturesSeed<'v, 'de> {
    namespace: &'v Namespace,
    path: &'v dyn Fn() -> String,
    issues: &'v mut Issues,
    names: &'v mut Names<'de>,
}

impl<'de> DeserializeSeed<'de> for FeaturesSeed<'_, 'de> {
    type Value = Shaped<(FeatureProperties, usize)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FeaturesSeed<'_, 'de> {
    type Value = Shaped<(FeatureProperties, usize)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of features")
    }

    other_kinds!(seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let FeaturesSeed {
            namespace,
            path,
            issues,
            names,
        } = self;
        let mut out = std::mem::take(&mut names.feature_buffer);
        // Keys, valid or not: an object with none is its own problem.
        let mut keys = 0;
        while let Some(Key(f)) = map.next_key::<Key<'de>>()? {
            keys += 1;
            let f_path = || key_path(&path(), &f);
            let feature = match names.features.get(&f, |s| FeatureName::new(s)) {
                Ok(f) => f,
                Err(e) => {
                    issues.add(f_path(), e.to_string());
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if out.iter().any(|(f, _)| *f == feature) {
                issues.add(f_path(), "duplicate key");
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let found = map.next_value_seed(ValuesSeed {
                path: &f_path,
                issues: &mut *issues,
                values: &mut names.values,
            })?;
            match found {
                Ok(values) => {
                    if namespace.is_abi_dependency() {
                        check_abi_dependency_values(&values, &f_path, issues);
                    }
                    out.push((feature, values));
                }
                Err(kind) => issues.add(
                    f_path(),
                    format!("expected a list of feature values, found {kind}"),
                ),
            }
        }
        let features = FeatureProperties::from_unique(exact(&mut out));
        names.feature_buffer = out;
        Ok(Ok((features, keys)))
    }
}

/// A non-empty list of unique feature values. Values are sets: repeated values are errors,
/// order is lost.
struct ValuesSeed<'v, 'de> {
    path: &'v dyn Fn() -> String,
    issues: &'v mut Issues,
    values: &'v mut NameCache<'de, FeatureValue>,
}

impl<'de> DeserializeSeed<'de> for ValuesSeed<'_, 'de> {
    type Value = Shaped<ValueSet>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValuesSeed<'_, 'de> {
    type Value = Shaped<ValueSet>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of feature values")
    }

    other_kinds!(map);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let ValuesSeed {
            path,
            issues,
            values,
        } = self;
        // Most features of an index file have one value: room for exactly one to start with.
        let mut out = ValueSet::with_capacity(1);
        let mut i = 0;
        while let Some(item) = seq.next_element::<Item<'de>>()? {
            match item.0 {
                Ok(s) => match values.get(&s, |s| FeatureValue::new(s)) {
                    Ok(v) => {
                        if !out.insert(v) {
                            issues.add(index_path(&path(), i), format!("duplicate value {s:?}"));
                        }
                    }
                    Err(e) => issues.add(index_path(&path(), i), e.to_string()),
                },
                Err(kind) => issues.add(
                    index_path(&path(), i),
                    format!("expected a string, found {kind}"),
                ),
            }
            i += 1;
        }
        if i == 0 {
            issues.add(path(), "must list at least one value");
        }
        Ok(Ok(out))
    }
}

/// One item of a value list: a string (borrowed when it has no escapes), or the kind found.
struct Item<'de>(Shaped<Cow<'de, str>>);

impl<'de> serde::Deserialize<'de> for Item<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemVisitor(std::marker::PhantomData))
            .map(Item)
    }
}

struct ItemVisitor<'de>(std::marker::PhantomData<&'de ()>);

impl<'de> Visitor<'de> for ItemVisitor<'de> {
    type Value = Shaped<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a feature value")
    }

    other_kinds!(@ scalars);
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Ok(Cow::Owned(v.to_owned())))
    }
    other_kinds!(@ seq);
    other_kinds!(@ map);
}

/// PEP 817: an `abi_dependency` value is a release segment of at most three components
/// (`2`, `2.9`, `2.8.0`), matched like `=={value}.*`.
fn check_abi_dependency_values(values: &ValueSet, path: &dyn Fn() -> String, issues: &mut Issues) {
    for value in values {
        let parts: Vec<&str> = value.as_str().split('.').collect();
        let numeric = parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !numeric || parts.len() > 3 {
            issues.add(
                path(),
                format!(
                    "abi_dependency value {:?} must be a release of one to three numbers \
                     (like 2, 2.9 or 2.8.0)",
                    value.as_str()
                ),
            );
        }
    }
}
