//! Ordering against the shared vectors, and against a direct transcription of the PEP 825
//! pseudocode (extended with user preferences) on deterministic pseudo-random packages.

use std::collections::{BTreeMap, BTreeSet};

use vari_core::markers::TargetEnvironment;
use vari_core::metadata::{
    read_json, DefaultPriorities, FeatureProperties, SchemaGeneration, SourceKind, ValueSet,
    VariantMetadata, VariantProperties,
};
use vari_core::ordering::{rank, rank_labels, Pattern, SelectionOptions};
use vari_core::{FeatureSupport, NamespaceSupport, Profile, VariantLabel};

fn env() -> TargetEnvironment {
    TargetEnvironment::from_platform(None, "3.12").unwrap()
}

#[test]
fn shared_vectors() {
    let text = include_str!("../../../../testdata/vectors/ordering.json");
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let meta = read_json(&case["variants_json"].to_string(), SourceKind::IndexFile)
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let profile = Profile::from_value(&case["profile"]).unwrap();
        let expected: Vec<&str> = case["expected"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let options = SelectionOptions::default();
        let ranking = rank(&meta, &profile, &env(), &options);
        let order: Vec<&str> = ranking.order.iter().map(VariantLabel::as_str).collect();
        assert_eq!(order, expected, "{name}");
        let fast: Vec<&str> = rank_labels(&meta, &profile, &env(), &options)
            .into_iter()
            .map(VariantLabel::as_str)
            .collect();
        assert_eq!(fast, expected, "{name} (rank_labels)");
        // Every variant is reported; the rejected ones say why.
        assert_eq!(ranking.variants.len(), meta.variants.len(), "{name}");
        for v in &ranking.variants {
            assert_eq!(v.compatible, v.rejection.is_none(), "{name} {}", v.label);
            assert_eq!(v.compatible, expected.contains(&v.label.as_str()), "{name}");
        }
    }
}

/// xorshift64: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    /// A random subset of `items` in random order.
    fn subset<T: Clone>(&mut self, items: &[T], percent: u64) -> Vec<T> {
        let mut out: Vec<T> = items
            .iter()
            .filter(|_| self.chance(percent))
            .cloned()
            .collect();
        for i in (1..out.len()).rev() {
            let j = self.below(i + 1);
            out.swap(i, j);
        }
        out
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// A random package and target: vocabularies, supported subsets, priorities, variants and user
/// preferences.
fn random_case(rng: &mut Rng) -> (VariantMetadata, Profile, SelectionOptions) {
    let namespaces = names("n", 1 + rng.below(4));
    let features = names("f", 1 + rng.below(4));
    let values = names("v", 1 + rng.below(5));

    let mut profile = Profile::default();
    for ns in rng.subset(&namespaces, 80) {
        let feats = rng
            .subset(&features, 80)
            .into_iter()
            .map(|f| FeatureSupport {
                name: f.parse().unwrap(),
                values: rng
                    .subset(&values, 70)
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect(),
                multi_value: true,
            })
            .collect();
        profile.namespaces.push(NamespaceSupport {
            namespace: ns.parse().unwrap(),
            source: None,
            features: feats,
        });
    }

    let mut priorities = DefaultPriorities {
        // Sometimes a namespace used by variants is missing (invalid metadata, rejected).
        namespace: rng
            .subset(&namespaces, 95)
            .iter()
            .map(|n| n.parse().unwrap())
            .collect(),
        ..Default::default()
    };
    for ns in &namespaces {
        if rng.chance(40) {
            priorities.feature.insert(
                ns.parse().unwrap(),
                rng.subset(&features, 50)
                    .iter()
                    .map(|f| f.parse().unwrap())
                    .collect(),
            );
        }
        for f in &features {
            if rng.chance(30) {
                priorities
                    .property
                    .entry(ns.parse().unwrap())
                    .or_default()
                    .insert(
                        f.parse().unwrap(),
                        rng.subset(&values, 50)
                            .iter()
                            .map(|v| v.parse().unwrap())
                            .collect(),
                    );
            }
        }
    }

    let mut variants = BTreeMap::new();
    if rng.chance(50) {
        variants.insert(VariantLabel::null(), VariantProperties::new());
    }
    for i in 0..rng.below(25) {
        let mut props = VariantProperties::new();
        for ns in rng.subset(&namespaces, 50) {
            let mut feats = FeatureProperties::new();
            for f in rng.subset(&features, 50) {
                let mut vals: ValueSet = rng
                    .subset(&values, 30)
                    .iter()
                    .map(|v| v.parse().unwrap())
                    .collect();
                if vals.is_empty() {
                    vals.insert(values[rng.below(values.len())].parse().unwrap());
                }
                feats.insert(f.parse().unwrap(), vals);
            }
            if !feats.is_empty() {
                props.insert(ns.parse().unwrap(), feats);
            }
        }
        variants.insert(format!("l{i}").parse().unwrap(), props);
    }

    let mut options = SelectionOptions::default();
    for _ in 0..rng.below(4) {
        let ns = &namespaces[rng.below(namespaces.len())];
        let f = &features[rng.below(features.len())];
        let v = &values[rng.below(values.len())];
        let text = match rng.below(3) {
            0 => ns.clone(),
            1 => format!("{ns}::{f}"),
            _ => format!("{ns}::{f}::{v}"),
        };
        options.prefer.push(text.parse().unwrap());
    }

    let meta = VariantMetadata {
        generation: SchemaGeneration::V0_1,
        schema_url: None,
        priorities,
        providers: BTreeMap::new(),
        static_properties: BTreeMap::new(),
        variants,
    };
    (meta, profile, options)
}

/// `list` with `extra` appended, keeping first occurrences.
fn extend_unique(list: &mut Vec<String>, extra: impl IntoIterator<Item = String>) {
    for item in extra {
        if !list.contains(&item) {
            list.push(item);
        }
    }
}

/// A compatible wheel of the reference: its label and sorted best-value keys.
type Wheel = (String, Vec<(usize, usize, usize)>);

/// PEP 825's pseudocode, transcribed with plain strings and `index()` look-ups; user preferences
/// are prepended to each list as variantlib's `variants.toml` does.
fn reference_order(
    meta: &VariantMetadata,
    profile: &Profile,
    options: &SelectionOptions,
) -> Vec<String> {
    let supported_values = |ns: &str, f: &str| -> Vec<String> {
        profile
            .namespace(ns)
            .and_then(|n| n.feature(f))
            .map(|f| f.values.iter().map(|v| v.to_string()).collect())
            .unwrap_or_default()
    };
    let mut namespace_order = Vec::new();
    for p in &options.prefer {
        if let Pattern::Namespace(ns) = p {
            extend_unique(&mut namespace_order, [ns.to_string()]);
        }
    }
    extend_unique(
        &mut namespace_order,
        meta.priorities.namespace.iter().map(|n| n.to_string()),
    );
    let mut feature_order: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut value_order: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for ns in &namespace_order {
        let mut features = Vec::new();
        for p in &options.prefer {
            if let Pattern::Feature(f) = p {
                if f.namespace.as_str() == ns {
                    extend_unique(&mut features, [f.feature.to_string()]);
                }
            }
        }
        if let Some(list) = meta.priorities.feature.get(ns.as_str()) {
            extend_unique(&mut features, list.iter().map(|f| f.to_string()));
        }
        if let Some(n) = profile.namespace(ns) {
            extend_unique(&mut features, n.features.iter().map(|f| f.name.to_string()));
        }
        for f in &features {
            let mut values = Vec::new();
            for p in &options.prefer {
                if let Pattern::Property(p) = p {
                    if p.namespace.as_str() == ns && p.feature.as_str() == f {
                        extend_unique(&mut values, [p.value.to_string()]);
                    }
                }
            }
            if let Some(list) = meta
                .priorities
                .property
                .get(ns.as_str())
                .and_then(|m| m.get(f.as_str()))
            {
                extend_unique(&mut values, list.iter().map(|v| v.to_string()));
            }
            extend_unique(&mut values, supported_values(ns, f));
            value_order.insert((ns.clone(), f.clone()), values);
        }
        feature_order.insert(ns.clone(), features);
    }

    // Compatibility: every namespace prioritised and supported, every feature with a supported
    // value.
    let compatible = |props: &VariantProperties| {
        props.iter().all(|(ns, features)| {
            meta.priorities.namespace.contains(ns)
                && profile.namespace(ns.as_str()).is_some()
                && features.iter().all(|(f, vals)| {
                    let supported = supported_values(ns.as_str(), f.as_str());
                    vals.iter().any(|v| supported.contains(&v.to_string()))
                })
        })
    };
    let value_order = &value_order;
    let supported_values = &supported_values;
    let key = &|ns: &str, f: &str, v: &str| -> (usize, usize, usize) {
        (
            namespace_order.iter().position(|x| x == ns).unwrap(),
            feature_order[ns].iter().position(|x| x == f).unwrap(),
            value_order[&(ns.to_owned(), f.to_owned())]
                .iter()
                .position(|x| x == v)
                .unwrap(),
        )
    };
    let mut wheels: Vec<Wheel> = meta
        .variants
        .iter()
        .filter(|(_, props)| compatible(props))
        .map(|(label, props)| {
            let mut best: Vec<_> = props
                .iter()
                .flat_map(|(ns, features)| {
                    features.iter().map(move |(f, vals)| {
                        let supported = supported_values(ns.as_str(), f.as_str());
                        let best_value = value_order[&(ns.to_string(), f.to_string())]
                            .iter()
                            .find(|v| {
                                supported.contains(v) && vals.iter().any(|x| x.as_str() == *v)
                            })
                            .unwrap();
                        key(ns.as_str(), f.as_str(), best_value)
                    })
                })
                .collect();
            best.sort();
            (label.to_string(), best)
        })
        .collect();
    let less = |a: &(String, Vec<(usize, usize, usize)>),
                b: &(String, Vec<(usize, usize, usize)>)| {
        for (x, y) in a.1.iter().zip(&b.1) {
            if x != y {
                return x < y;
            }
        }
        if a.1.len() != b.1.len() {
            return a.1.len() > b.1.len();
        }
        a.0 < b.0
    };
    // Insertion sort with the pseudocode's `__lt__`, exactly as written.
    for i in 1..wheels.len() {
        let mut j = i;
        while j > 0 && less(&wheels[j], &wheels[j - 1]) {
            wheels.swap(j, j - 1);
            j -= 1;
        }
    }
    wheels.into_iter().map(|(label, _)| label).collect()
}

#[test]
fn matches_the_pep_pseudocode_on_random_packages() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut selectable = 0;
    for case in 0..3000 {
        let (meta, profile, options) = random_case(&mut rng);
        let expected = reference_order(&meta, &profile, &options);
        let got: Vec<String> = rank(&meta, &profile, &env(), &options)
            .order
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got, expected,
            "case {case}: {meta:#?}\n{profile:#?}\n{options:#?}"
        );
        selectable += got.len();
    }
    // The generator must exercise sorting, not only rejection.
    assert!(selectable > 5000, "only {selectable} selectable variants");
}

#[test]
fn preferences_and_removal_never_change_compatibility_or_relative_order() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..1000 {
        let (meta, profile, options) = random_case(&mut rng);
        let plain = SelectionOptions::default();
        let with_prefs = rank(&meta, &profile, &env(), &options);
        let without = rank(&meta, &profile, &env(), &plain);
        // Preferences reorder but never widen or narrow the selectable set.
        let a: BTreeSet<_> = with_prefs.order.iter().collect();
        let b: BTreeSet<_> = without.order.iter().collect();
        assert_eq!(a, b, "case {case}");

        // Removing one variant leaves the others in the same relative order.
        if let Some(victim) = without.order.get(rng.below(without.order.len().max(1))) {
            let mut smaller = meta.clone();
            smaller.variants.remove(victim);
            let rest: Vec<_> = rank(&smaller, &profile, &env(), &plain).order;
            let expected: Vec<_> = without
                .order
                .iter()
                .filter(|l| *l != victim)
                .cloned()
                .collect();
            assert_eq!(rest, expected, "case {case}");
        }

        // Forbidding only removes matching variants.
        if let Some(pattern) = options.prefer.first() {
            let forbid = SelectionOptions {
                forbid: vec![pattern.clone()],
                ..Default::default()
            };
            let narrowed = rank(&meta, &profile, &env(), &forbid);
            for (label, props) in &meta.variants {
                let matches = props.iter().any(|(ns, fs)| {
                    fs.iter().any(|(f, vs)| {
                        vs.iter().any(|v| {
                            pattern.matches(&vari_core::Property::new(
                                ns.clone(),
                                f.clone(),
                                v.clone(),
                            ))
                        })
                    })
                });
                let kept = narrowed.order.contains(label);
                assert_eq!(
                    kept,
                    !matches && without.order.contains(label),
                    "case {case} {label}"
                );
            }
            let expected: Vec<_> = without
                .order
                .iter()
                .filter(|l| narrowed.order.contains(l))
                .cloned()
                .collect();
            assert_eq!(narrowed.order, expected, "case {case}");
        }
    }
}

#[test]
fn insertion_order_of_variants_does_not_matter() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..200 {
        let (meta, profile, options) = random_case(&mut rng);
        let mut entries: Vec<_> = meta.variants.clone().into_iter().collect();
        entries.reverse();
        let shuffled = VariantMetadata {
            variants: entries.into_iter().collect(),
            ..meta.clone()
        };
        assert_eq!(
            rank(&meta, &profile, &env(), &options),
            rank(&shuffled, &profile, &env(), &options)
        );
    }
}
