//! Rules of `rank`: support sources, provider gating, user options and rejection reasons.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::markers::TargetEnvironment;
use crate::metadata::{
    DefaultPriorities, ProviderInfo, ProviderKind, SchemaGeneration, VariantMetadata,
    VariantProperties,
};
use crate::names::{FeatureName, Namespace, VariantLabel};
use crate::profile::{FeatureSupport, NamespaceSupport, Platform, Profile};

fn ns(s: &str) -> Namespace {
    s.parse().unwrap()
}

/// Variant properties from `ns::f::v` strings (values of one feature accumulate).
fn props(list: &[&str]) -> VariantProperties {
    let mut out = VariantProperties::new();
    for p in list {
        let p: crate::Property = p.parse().unwrap();
        out.get_or_insert_with(p.namespace, Default::default)
            .get_or_insert_with(p.feature, Default::default)
            .insert(p.value);
    }
    out
}

fn meta(namespaces: &[&str], variants: &[(&str, &[&str])]) -> VariantMetadata {
    VariantMetadata {
        generation: SchemaGeneration::V0_0_3,
        schema_url: None,
        priorities: DefaultPriorities {
            namespace: namespaces.iter().map(|n| ns(n)).collect(),
            ..Default::default()
        },
        providers: BTreeMap::new(),
        static_properties: BTreeMap::new(),
        variants: variants
            .iter()
            .map(|(label, p)| (label.parse().unwrap(), props(p)))
            .collect(),
    }
}

fn provider(kind: ProviderKind) -> ProviderInfo {
    ProviderInfo {
        kind,
        requires: vec!["some-provider>=1; python_version >= '3.9'".into()],
        build_requires: vec![],
        enable_if: None,
        optional: false,
        plugin_api: None,
    }
}

/// Supported features of one namespace: `(feature, [values…])`, most preferred first.
type Features<'a> = &'a [(&'a str, &'a [&'a str])];

/// A profile from `(namespace, features)` pairs.
fn profile(list: &[(&str, Features<'_>)]) -> Profile {
    Profile {
        namespaces: list
            .iter()
            .map(|(n, features)| NamespaceSupport {
                namespace: ns(n),
                source: None,
                features: features
                    .iter()
                    .map(|(f, values)| FeatureSupport {
                        name: f.parse().unwrap(),
                        values: values.iter().map(|v| v.parse().unwrap()).collect(),
                        multi_value: true,
                    })
                    .collect(),
            })
            .collect(),
        ..Profile::default()
    }
}

fn linux() -> TargetEnvironment {
    let platform = Platform {
        system: Some("Linux".into()),
        machine: Some("x86_64".into()),
        libc: None,
    };
    TargetEnvironment::from_platform(Some(&platform), "3.12").unwrap()
}

fn order<'a>(r: &'a Ranking<'_>) -> Vec<&'a str> {
    r.order.iter().map(VariantLabel::as_str).collect()
}

fn reason(r: &Ranking, label: &str) -> String {
    r.get(label)
        .unwrap_or_else(|| panic!("{label} missing"))
        .rejection
        .as_ref()
        .unwrap_or_else(|| panic!("{label} not rejected"))
        .to_string()
}

/// A GPU package: two CUDA builds, a CPU-level build and the null fallback.
fn gpu_package() -> VariantMetadata {
    meta(
        &["nvidia", "x86_64"],
        &[
            (
                "cu126",
                &[
                    "nvidia :: cuda :: 12.6",
                    "nvidia :: sm_arch :: 80_real",
                    "nvidia :: sm_arch :: 90_real",
                ],
            ),
            (
                "cu128",
                &[
                    "nvidia :: cuda :: 12.8",
                    "nvidia :: sm_arch :: 90_real",
                    "nvidia :: sm_arch :: 100_real",
                ],
            ),
            ("v3", &["x86_64 :: level :: v3"]),
            ("null", &[]),
        ],
    )
}

fn gpu_profile() -> Profile {
    profile(&[
        (
            "nvidia",
            &[
                ("cuda", &["12.8", "12.6"]),
                ("sm_arch", &["90_real", "80_real"]),
            ],
        ),
        ("x86_64", &[("level", &["v3", "v2", "v1"])]),
    ])
}

#[test]
fn default_ranking_and_report_shape() {
    let package = gpu_package();
    let r = rank(
        &package,
        &gpu_profile(),
        &linux(),
        &SelectionOptions::default(),
    );
    assert_eq!(order(&r), ["cu128", "cu126", "v3", "null"]);
    assert_eq!(r.best().map(VariantLabel::as_str), Some("cu128"));
    let labels: Vec<&str> = r.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["cu128", "cu126", "v3", "null"]);
    let cu128 = r.get("cu128").unwrap();
    let shown: Vec<String> = cu128
        .properties()
        .map(|(ns, f, v)| format!("{ns} :: {f} :: {v}"))
        .collect();
    assert_eq!(
        shown,
        [
            "nvidia :: cuda :: 12.8",
            "nvidia :: sm_arch :: 100_real",
            "nvidia :: sm_arch :: 90_real"
        ]
    );
    assert!(r.unmatched_variant.is_none());
}

#[test]
fn preferences_reorder_but_never_select_unsupported() {
    let m = gpu_package();
    let p = gpu_profile();
    let with = |prefer: &[&str]| {
        let options = SelectionOptions {
            prefer: prefer.iter().map(|s| s.parse().unwrap()).collect(),
            ..Default::default()
        };
        rank(&m, &p, &linux(), &options)
    };
    assert_eq!(order(&with(&["x86_64"])), ["v3", "cu128", "cu126", "null"]);
    // Feature preference: sm_arch before cuda. Both builds reach 90_real, so cuda still decides.
    assert_eq!(
        order(&with(&["nvidia::sm_arch"])),
        ["cu128", "cu126", "v3", "null"]
    );
    assert_eq!(
        order(&with(&["nvidia :: cuda :: 12.6"])),
        ["cu126", "cu128", "v3", "null"]
    );
    // Preferring a value the target lacks changes nothing and selects nothing new.
    assert_eq!(
        order(&with(&["nvidia::sm_arch::100_real", "nvidia::cuda::13.0"])),
        ["cu128", "cu126", "v3", "null"]
    );
    // Value preference inside a feature: 80_real first puts cu126 (which has it) ahead.
    assert_eq!(
        order(&with(&["nvidia::sm_arch", "nvidia::sm_arch::80_real"])),
        ["cu126", "cu128", "v3", "null"]
    );
}

#[test]
fn default_priorities_for_features_and_values_come_before_the_provider_order() {
    let mut m = gpu_package();
    m.priorities
        .feature
        .insert(ns("nvidia"), vec!["sm_arch".parse().unwrap()]);
    m.priorities.property.insert(
        ns("nvidia"),
        [(
            "sm_arch".parse::<FeatureName>().unwrap(),
            vec!["80_real".parse().unwrap()],
        )]
        .into(),
    );
    let r = rank(&m, &gpu_profile(), &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["cu126", "cu128", "v3", "null"]);
}

#[test]
fn incompatible_variants_explain_themselves() {
    let m = meta(
        &["nvidia"],
        &[
            ("hopper", &["nvidia :: sm_arch :: 90_real"]),
            (
                "blackwell",
                &[
                    "nvidia :: sm_arch :: 100_real",
                    "nvidia :: sm_arch :: 120_real",
                ],
            ),
            ("newfeat", &["nvidia :: fp8 :: on"]),
            ("stray", &["amd :: gfx :: gfx90a"]),
        ],
    );
    let p = profile(&[("nvidia", &[("sm_arch", &["90_real", "80_real"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["hopper"]);
    assert_eq!(
        reason(&r, "blackwell"),
        "no supported value for `nvidia :: sm_arch`: the wheel has 100_real, 120_real; the target \
         supports 90_real, 80_real"
    );
    assert!(reason(&r, "newfeat").contains("does not support `nvidia :: fp8` at all"));
    assert!(reason(&r, "stray").contains("not listed in default-priorities"));
    // Rejected variants follow the selectable ones, sorted by label.
    let labels: Vec<&str> = r.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["hopper", "blackwell", "newfeat", "stray"]);
    assert!(r
        .variants
        .iter()
        .all(|v| v.compatible == v.rejection.is_none()));
}

#[test]
fn namespace_missing_from_the_profile() {
    let mut m = meta(&["nvidia"], &[("cu", &["nvidia :: cuda :: 12.8"])]);
    m.providers
        .insert(ns("nvidia"), provider(ProviderKind::InstallTime));
    let r = rank(
        &m,
        &Profile::empty(),
        &linux(),
        &SelectionOptions::default(),
    );
    let why = reason(&r, "cu");
    assert!(why.contains("namespace `nvidia` is not supported"), "{why}");
    assert!(why.contains("`some-provider`"), "{why}");
    m.providers
        .insert(ns("nvidia"), provider(ProviderKind::Builtin("cuda".into())));
    let r = rank(
        &m,
        &Profile::empty(),
        &linux(),
        &SelectionOptions::default(),
    );
    assert!(reason(&r, "cu").contains("built-in `cuda`"));
}

#[test]
fn ahead_of_time_namespaces_use_static_properties_in_their_order() {
    let mut m = meta(
        &["blas"],
        &[
            ("openblas", &["blas :: provider :: openblas"]),
            ("mkl", &["blas :: provider :: mkl"]),
            ("accelerate", &["blas :: provider :: accelerate"]),
        ],
    );
    m.providers
        .insert(ns("blas"), provider(ProviderKind::AheadOfTime));
    m.static_properties.insert(
        ns("blas"),
        vec![(
            "provider".parse().unwrap(),
            vec!["mkl".parse().unwrap(), "openblas".parse().unwrap()],
        )],
    );
    // The profile is ignored for ahead-of-time namespaces, even when it lists them.
    let p = profile(&[("blas", &[("provider", &["accelerate"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["mkl", "openblas"]);
    assert!(reason(&r, "accelerate").contains("the target supports mkl, openblas"));
    m.static_properties.clear();
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert!(reason(&r, "mkl").contains("lists no static properties"));
}

#[test]
fn enable_if_is_evaluated_on_the_target() {
    let mut m = meta(
        &["x86_64"],
        &[("v3", &["x86_64 :: level :: v3"]), ("null", &[])],
    );
    let mut info = provider(ProviderKind::InstallTime);
    info.enable_if = Some(
        r#"platform_machine == "x86_64" and python_version >= "3.10""#
            .parse()
            .unwrap(),
    );
    m.providers.insert(ns("x86_64"), info.clone());
    let p = profile(&[("x86_64", &[("level", &["v3"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["v3", "null"]);

    let arm = linux().with_value("platform_machine", "aarch64").unwrap();
    let r = rank(&m, &p, &arm, &SelectionOptions::default());
    assert_eq!(order(&r), ["null"]);
    let why = reason(&r, "v3");
    assert!(why.contains("disabled on the target"), "{why}");
    assert!(why.contains(r#"platform_machine == "x86_64""#), "{why}");
}

#[test]
fn optional_providers_need_enabling() {
    let mut m = meta(
        &["abi"],
        &[("t28", &["abi :: torch :: 2.8"]), ("null", &[])],
    );
    let mut info = provider(ProviderKind::InstallTime);
    info.optional = true;
    m.providers.insert(ns("abi"), info);
    let p = profile(&[("abi", &[("torch", &["2.8"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["null"]);
    assert!(reason(&r, "t28").contains("`abi` comes from an optional provider that is off"));
    let options = SelectionOptions {
        enable_optional: BTreeSet::from([ns("abi")]),
        ..Default::default()
    };
    assert_eq!(order(&rank(&m, &p, &linux(), &options)), ["t28", "null"]);
}

#[test]
fn forbid_removes_matching_variants_at_every_level() {
    let m = gpu_package();
    let p = gpu_profile();
    let with = |forbid: &[&str]| {
        let options = SelectionOptions {
            forbid: forbid.iter().map(|s| s.parse().unwrap()).collect(),
            ..Default::default()
        };
        rank(&m, &p, &linux(), &options)
    };
    let r = with(&["nvidia"]);
    assert_eq!(order(&r), ["v3", "null"]);
    assert_eq!(reason(&r, "cu128"), "forbidden by the user's `nvidia`");
    assert_eq!(
        order(&with(&["nvidia::cuda::12.8"])),
        ["cu126", "v3", "null"]
    );
    // Declared but unsupported values count too: cu128 ships 100_real code.
    assert_eq!(
        order(&with(&["nvidia::sm_arch::100_real"])),
        ["cu126", "v3", "null"]
    );
    assert_eq!(order(&with(&["x86_64::level"])), ["cu128", "cu126", "null"]);
    assert_eq!(order(&with(&["amd"])), ["cu128", "cu126", "v3", "null"]);
}

#[test]
fn requested_variant_is_the_only_candidate_and_must_be_compatible() {
    let m = gpu_package();
    let p = gpu_profile();
    let with = |label: &str| {
        let options = SelectionOptions {
            variant: Some(label.parse().unwrap()),
            ..Default::default()
        };
        rank(&m, &p, &linux(), &options)
    };
    let r = with("cu126");
    assert_eq!(order(&r), ["cu126"]);
    assert_eq!(reason(&r, "cu128"), "not the requested variant (`cu126`)");
    assert_eq!(order(&with("null")), ["null"]);

    // A requested but unsupported variant stays unselectable and says why.
    let weak = profile(&[("x86_64", &[("level", &["v2"])])]);
    let options = SelectionOptions {
        variant: Some("v3".parse().unwrap()),
        ..Default::default()
    };
    let r = rank(&m, &weak, &linux(), &options);
    assert!(r.order.is_empty());
    assert!(reason(&r, "v3").contains("`x86_64 :: level`"));

    let r = with("rocm");
    assert!(r.order.is_empty());
    assert_eq!(
        r.unmatched_variant.as_ref().map(VariantLabel::as_str),
        Some("rocm")
    );
}

#[test]
fn no_variants_rejects_everything_including_null() {
    let options = SelectionOptions {
        no_variants: true,
        ..Default::default()
    };
    let package = gpu_package();
    let r = rank(&package, &gpu_profile(), &linux(), &options);
    assert!(r.order.is_empty());
    assert_eq!(reason(&r, "null"), "variant wheels are disabled");
    assert_eq!(reason(&r, "cu128"), "variant wheels are disabled");
    // An incompatible variant reports its incompatibility, the more useful fact.
    let weak = profile(&[]);
    let r = rank(&package, &weak, &linux(), &options);
    assert!(reason(&r, "cu128").contains("not supported"));
}

#[test]
fn rank_labels_agrees_with_rank() {
    let m = gpu_package();
    let p = gpu_profile();
    let options = SelectionOptions {
        prefer: vec!["x86_64".parse().unwrap()],
        forbid: vec!["nvidia::cuda::12.6".parse().unwrap()],
        ..Default::default()
    };
    let full = rank(&m, &p, &linux(), &options);
    let fast: Vec<&VariantLabel> = rank_labels(&m, &p, &linux(), &options);
    assert_eq!(fast.into_iter().cloned().collect::<Vec<_>>(), full.order);
}

#[test]
fn null_sorts_last_even_against_empty_non_null_variants() {
    // An (invalid) zero-property variant with another label ties with null on keys; null still
    // goes last.
    let m = meta(&["x"], &[("null", &[]), ("zzz", &[]), ("aaa", &[])]);
    let r = rank(
        &m,
        &Profile::empty(),
        &linux(),
        &SelectionOptions::default(),
    );
    assert_eq!(order(&r), ["aaa", "zzz", "null"]);
}

#[test]
fn multi_value_features_use_their_best_supported_value() {
    let m = meta(
        &["gpu"],
        &[
            ("ac", &["gpu :: arch :: a", "gpu :: arch :: c"]),
            ("b", &["gpu :: arch :: b"]),
            ("ab", &["gpu :: arch :: a", "gpu :: arch :: b"]),
        ],
    );
    let p = profile(&[("gpu", &[("arch", &["b", "a"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    // `ab` and `b` both reach `b` (best); the tie breaks by label.
    assert_eq!(order(&r), ["ab", "b", "ac"]);
}

#[test]
fn abi_dependency_is_an_implicit_last_namespace() {
    // PEP 817: abi_dependency has no provider and no priority entry; it sorts after every
    // listed namespace and is compatible only with the installed versions.
    let m = meta(
        &["nvidia"],
        &[
            (
                "t28",
                &[
                    "abi_dependency :: torch :: 2.8",
                    "nvidia :: sm_arch :: 90_real",
                ],
            ),
            (
                "t29",
                &[
                    "abi_dependency :: torch :: 2.9",
                    "nvidia :: sm_arch :: 90_real",
                ],
            ),
            ("gpu", &["nvidia :: sm_arch :: 90_real"]),
            ("cpu28", &["abi_dependency :: torch :: 2.8"]),
            ("null", &[]),
        ],
    );
    let p = profile(&[
        ("nvidia", &[("sm_arch", &["90_real"])]),
        ("abi_dependency", &[("torch", &["2", "2.8", "2.8.0"])]),
    ]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["t28", "gpu", "cpu28", "null"]);
    assert!(
        reason(&r, "t29").contains("abi_dependency :: torch"),
        "{}",
        reason(&r, "t29")
    );

    // Without the dependency installed, only the variants that do not need it remain.
    let p = profile(&[("nvidia", &[("sm_arch", &["90_real"])])]);
    let r = rank(&m, &p, &linux(), &SelectionOptions::default());
    assert_eq!(order(&r), ["gpu", "null"]);
}
