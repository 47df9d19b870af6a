use super::*;
use crate::metadata::{read_json, write_json, SourceKind};

const PEP_850: &str = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json";

fn read(text: &str) -> VariantMetadata {
    read_json(text, SourceKind::IndexFile).unwrap()
}

fn env() -> TargetEnvironment {
    let platform = crate::Platform {
        system: Some("Linux".into()),
        machine: Some("x86_64".into()),
        ..Default::default()
    };
    TargetEnvironment::from_platform(Some(&platform), "3.12").unwrap()
}

/// The demo release (`examples/demo`): PEP 825 without providers.
fn demo() -> VariantMetadata {
    read(include_str!(
        "../../../../examples/demo/vari_demo-1.0.0-variants.json"
    ))
}

fn torch_like(nvidia_requires: &str, extra: &str) -> VariantMetadata {
    read(&format!(
        r#"{{"$schema": "{PEP_850}",
        "default-priorities": {{"namespace": ["nvidia", "priority"]}},
        "providers": {{
            "nvidia": {{"requires": ["{nvidia_requires}"],
                        "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"{extra}}},
            "priority": {{"static-properties": {{"order": ["1", "2"]}}}}}},
        "variants": {{"null": {{}},
            "cu126": {{"nvidia": {{"cuda_version_lower_bound": ["12.0"]}}, "priority": {{"order": ["2"]}}}},
            "cu130": {{"nvidia": {{"cuda_version_lower_bound": ["13.0"]}}, "priority": {{"order": ["1"]}}}}}}}}"#
    ))
}

#[test]
fn the_drafts_are_rejected_whole() {
    for (file, url) in [
        (
            include_str!("../../../../testdata/variants-json/torch-2.10.0-variants.json"),
            "v0.0.3.json",
        ),
        (
            include_str!("../../../../testdata/variants-json/torch-2.9.0-variants.json"),
            "v0.0.2.json",
        ),
    ] {
        let meta = crate::metadata::read_json_lenient(file, SourceKind::IndexFile)
            .unwrap()
            .0;
        let view = UvView::of(&meta);
        let why = view.rejected.clone().unwrap();
        assert!(
            why.contains("Unknown variant metadata schema") && why.contains(url),
            "{why}"
        );
        let differences = view.compare(&meta, &env());
        assert!(!differences.is_empty());
        assert!(differences
            .iter()
            .all(|d| d.uv.is_none() && d.vari.is_some()));
    }
}

#[test]
fn a_vendored_provider_is_used_only_as_uv_vendors_it() {
    for ok in [
        "nvidia-variant-provider",
        "nvidia-variant-provider==0.0.1",
        "nvidia-variant-provider>=0.0.1,<1.0.0",
    ] {
        let view = UvView::of(&torch_like(ok, ""));
        assert_eq!(view.skipped, Vec::<String>::new(), "{ok}");
        assert!(view
            .usable
            .contains(&"nvidia".parse::<Namespace>().unwrap()));
        assert!(view.compare(&torch_like(ok, ""), &env()).is_empty());
    }
    // torch's own requirement: 0.0.1 is not admitted, uv skips nvidia and installs null.
    let torch = torch_like("nvidia-variant-provider>=0.0.2,<1.0.0", "");
    let view = UvView::of(&torch);
    assert!(
        view.skipped[0].starts_with("providers.nvidia: requires"),
        "{:?}",
        view.skipped
    );
    let differences = view.compare(&torch, &env());
    assert_eq!(differences.len(), 2);
    assert!(differences
        .iter()
        .all(|d| d.uv.as_ref().map(VariantLabel::as_str) == Some("null")));
    assert!(!view.installs_as_intended(&differences));

    let optional = torch_like("nvidia-variant-provider", r#", "optional": true"#);
    assert!(UvView::of(&optional).skipped[0].contains("optional"));

    let mut other_api = torch_like("nvidia-variant-provider", "");
    other_api
        .providers
        .get_mut(&"nvidia".parse::<Namespace>().unwrap())
        .unwrap()
        .plugin_api = Some("nvidia_variant_provider:Other".into());
    assert!(UvView::of(&other_api).skipped[0].contains("plugin-api"));
}

#[test]
fn enable_if_makes_uv_fail_and_providerless_metadata_gets_null() {
    let text = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": ["x86_64"]},
        "providers": {"x86_64": {"requires": ["x86-64-variant-provider"], "enable-if": "platform_system == 'Linux'"}},
        "variants": {"null": {}, "v3": {"x86_64": {"level": ["v3"]}}}}"#;
    let view = UvView::of(&read(text));
    assert!(view.rejected.unwrap().contains("enable-if"));

    let meta = demo();
    let view = UvView::of(&meta);
    assert!(view.rejected.is_none());
    assert!(view.usable.is_empty());
    let differences = view.compare(&meta, &env());
    // Every GPU build goes to null in uv.
    assert_eq!(differences.len(), 5, "{differences:?}");
}

#[test]
fn converted_for_uv_the_demo_agrees_where_uv_has_providers() {
    let (converted, warnings) = for_uv(&demo());
    let written = write_json(&converted, SchemaGeneration::V0_2).unwrap();
    assert!(written.text.contains(PEP_850));
    let back = read(&written.text);
    let view = UvView::of(&back);
    assert!(view.rejected.is_none());
    assert_eq!(
        view.usable
            .iter()
            .map(Namespace::as_str)
            .collect::<Vec<_>>(),
        ["nvidia"]
    );
    // What cannot be expressed is said: amd and intel have no provider in uv.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let differences = view.compare(&back, &env());
    let targets: Vec<&str> = differences.iter().map(|d| d.target.as_str()).collect();
    assert_eq!(targets, ["rocm6.4", "xpu"]);
}

#[test]
fn converting_drops_enable_if_and_keeps_static_properties() {
    let torch = crate::metadata::read_json_lenient(
        include_str!("../../../../testdata/variants-json/torch-2.10.0-variants.json"),
        SourceKind::IndexFile,
    )
    .unwrap()
    .0;
    let (converted, warnings) = for_uv(&torch);
    assert!(converted.providers.values().all(|p| p.enable_if.is_none()));
    assert_eq!(
        converted.providers[&"priority".parse::<Namespace>().unwrap()].kind,
        ProviderKind::AheadOfTime
    );
    assert!(warnings
        .iter()
        .any(|w| w.contains("providers.nvidia: dropped enable-if")));
    let written = write_json(&converted, SchemaGeneration::V0_2).unwrap();
    let back = read(&written.text);
    let view = UvView::of(&back);
    assert!(view
        .usable
        .contains(&"nvidia".parse::<Namespace>().unwrap()));
    assert!(view
        .usable
        .contains(&"priority".parse::<Namespace>().unwrap()));
    let differences = view.compare(&back, &env());
    assert!(
        differences
            .iter()
            .all(|d| d.target.as_str().starts_with("rocm") || d.target.as_str() == "xpu"),
        "{differences:?}"
    );
}

/// x86-64 levels, which uv cannot be told (it takes no profile): the model compares vari's
/// choice with uv's through a profile per level, and a release converted for uv agrees.
#[test]
fn x86_64_levels_agree_through_profiles_once_converted() {
    let meta = read(
        r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["x86_64"]},
        "variants": {"null": {}, "v2": {"x86_64": {"level": ["v2"]}},
                     "v3": {"x86_64": {"level": ["v3"]}}, "v4": {"x86_64": {"level": ["v4"]}}}}"#,
    );
    let before = UvView::of(&meta);
    assert_eq!(before.compare(&meta, &env()).len(), 3);
    let (converted, warnings) = for_uv(&meta);
    assert!(warnings.is_empty(), "{warnings:?}");
    let view = UvView::of(&converted);
    assert!(view.skipped.is_empty(), "{:?}", view.skipped);
    assert!(view.compare(&converted, &env()).is_empty());
    assert!(view.reasons(&[]).is_empty());
}
