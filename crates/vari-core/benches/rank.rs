//! Ranking speed on a synthetic package version: 1,000 variants × 20 properties over 4 namespaces
//! of 5 features with 8 values each. The target supports every value (in reverse order), and one
//! variant in ten has an extra unsupported value, so about 90% are compatible and must be sorted.

// criterion's `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, Criterion};
use vari_core::markers::TargetEnvironment;
use vari_core::metadata::{
    DefaultPriorities, FeatureProperties, SchemaGeneration, ValueSet, VariantMetadata,
    VariantProperties,
};
use vari_core::ordering::{rank, rank_labels, SelectionOptions};
use vari_core::{FeatureSupport, NamespaceSupport, Profile};

const NAMESPACES: usize = 4;
const FEATURES: usize = 5;
const VALUES: usize = 8;
const VARIANTS: usize = 1_000;

/// xorshift64: deterministic, dependency-free.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn synthetic() -> (VariantMetadata, Profile) {
    let ns = |i: usize| format!("ns{i}").parse().unwrap();
    let mut variants = BTreeMap::new();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for v in 0..VARIANTS {
        let mut props = VariantProperties::new();
        for n in 0..NAMESPACES {
            let mut features = FeatureProperties::new();
            for f in 0..FEATURES {
                let value = (next(&mut state) % VALUES as u64) as usize;
                let mut values: ValueSet = [format!("val{value}").parse().unwrap()].into();
                // A second, multi-value entry now and then exercises the best-value search.
                if next(&mut state) % 4 == 0 {
                    let other = (next(&mut state) % VALUES as u64) as usize;
                    values.insert(format!("val{other}").parse().unwrap());
                }
                features.insert(format!("feat{f}").parse().unwrap(), values);
            }
            props.insert(ns(n), features);
        }
        if v % 10 == 9 {
            // An unsupported feature makes this variant incompatible.
            let features = props.get_mut(&ns(0)).unwrap();
            features.insert(
                "feat_unknown".parse().unwrap(),
                ["x".parse().unwrap()].into(),
            );
        }
        variants.insert(format!("v{v:05}").parse().unwrap(), props);
    }
    let meta = VariantMetadata {
        generation: SchemaGeneration::V0_1,
        schema_url: None,
        priorities: DefaultPriorities {
            namespace: (0..NAMESPACES).map(ns).collect(),
            ..Default::default()
        },
        providers: BTreeMap::new(),
        static_properties: BTreeMap::new(),
        variants,
    };
    let profile = Profile {
        namespaces: (0..NAMESPACES)
            .map(|n| NamespaceSupport {
                namespace: ns(n),
                source: None,
                features: (0..FEATURES)
                    .map(|f| FeatureSupport {
                        name: format!("feat{f}").parse().unwrap(),
                        values: (0..VALUES)
                            .rev()
                            .map(|v| format!("val{v}").parse().unwrap())
                            .collect(),
                        multi_value: false,
                    })
                    .collect(),
            })
            .collect(),
        ..Profile::default()
    };
    (meta, profile)
}

fn bench(c: &mut Criterion) {
    let (meta, profile) = synthetic();
    let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
    let options = SelectionOptions::default();
    assert!(rank_labels(&meta, &profile, &env, &options).len() > VARIANTS * 8 / 10);
    c.bench_function("rank_labels 1000 variants x 20 properties", |b| {
        b.iter(|| rank_labels(&meta, &profile, &env, &options))
    });
    c.bench_function("rank (full report) 1000 variants x 20 properties", |b| {
        b.iter(|| rank(&meta, &profile, &env, &options))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
