//! `present`: what an installer that does not understand variants sees of a project, from a
//! real HTTP index on 127.0.0.1 — the PyTorch 2.10 release generated from its real
//! `variants.json` for several targets, and small releases for the version rules (unusable
//! metadata, yanked files, versions without variants, projects without variants).

use std::path::Path;

use vari_client::{IndexClient, Project, ProjectName};
use vari_core::ordering::SelectionOptions;
use vari_select::{
    present, CandidateFate, ChosenBecause, HiddenBecause, Presentation, Shown, ShownBecause,
    Target, VariantRejection,
};

use crate::index_support::{
    blackwell_facts, client, cpython_3_12, demo_release, fate, level_target, profile_target,
    resolve_from, torch_index, FileAttrs, TestIndex, NV_12_8,
};
use crate::test_wheels::{level_variants, one_variant, wheel};

const LINUX: &str = "x86_64-manylinux_2_28";

async fn project(client: &IndexClient, name: &str) -> Project {
    client
        .project(&ProjectName::new(name).unwrap())
        .await
        .unwrap()
}

/// Serves `dir` and presents `demo` for a Linux x86_64 CPython 3.12 whose CPU supports
/// x86-64 up to `level`; the server is returned for what it saw.
async fn present_demo(dir: &Path, level: u8) -> (TestIndex, Presentation) {
    let server = TestIndex::start(dir).await;
    let presentation = presented(&server, "demo", &level_target(dir, level)).await;
    (server, presentation)
}

/// What an installer is shown of `name` on `server` for `target`, with the default options.
async fn presented(server: &TestIndex, name: &str, target: &Target) -> Presentation {
    let client = client(&server.index_url());
    let project = project(&client, name).await;
    present(&client, &project, target, &SelectionOptions::default())
        .await
        .unwrap()
}

/// The names the installer sees, each with the upstream file and label behind it, sorted.
fn shown(presentation: &Presentation) -> Vec<(String, String, Option<String>)> {
    let mut shown: Vec<_> = presentation
        .shown
        .iter()
        .map(|s| {
            (
                s.filename.clone(),
                s.file.filename.clone(),
                s.variant.as_ref().map(|v| v.label.to_string()),
            )
        })
        .collect();
    shown.sort();
    shown
}

/// What is shown under `name`.
fn shown_as<'p>(presentation: &'p Presentation, name: &str) -> &'p Shown {
    presentation
        .shown
        .iter()
        .find(|s| s.filename == name)
        .unwrap_or_else(|| panic!("nothing shown as {name}: {:?}", shown(presentation)))
}

/// Why `filename` is hidden.
fn why<'p>(presentation: &'p Presentation, filename: &str) -> &'p HiddenBecause {
    &presentation
        .hidden
        .iter()
        .find(|h| h.file.filename == filename)
        .unwrap_or_else(|| panic!("{filename} is not hidden: {:?}", shown(presentation)))
        .why
}

/// Hidden: another variant of the file's tag set, `chosen`, is shown.
fn another_chosen(chosen: &str) -> HiddenBecause {
    HiddenBecause::AnotherVariantChosen {
        chosen: chosen.to_owned(),
    }
}

/// Hidden: the plain wheel's place is taken by the variant wheel `chosen`.
fn replaced_by(chosen: &str) -> HiddenBecause {
    HiddenBecause::ReplacedByVariant {
        chosen: chosen.to_owned(),
    }
}

/// One line of [`shown`]: the name shown, the upstream file behind it, its label.
fn entry(shown: &str, upstream: &str, label: Option<&str>) -> (String, String, Option<String>) {
    (shown.into(), upstream.into(), label.map(str::to_owned))
}

/// The [`entry`] of `demo-{version}`'s pure wheel shown as the variant `label`.
fn demo_as(version: &str, label: &str) -> (String, String, Option<String>) {
    let shown = format!("demo-{version}-py3-none-any.whl");
    entry(
        &shown,
        &format!("demo-{version}-py3-none-any-{label}.whl"),
        Some(label),
    )
}

/// The [`entry`] of `demo-{version}`'s plain pure wheel, shown as it is.
fn demo_plain(version: &str) -> (String, String, Option<String>) {
    let name = format!("demo-{version}-py3-none-any.whl");
    entry(&name, &name, None)
}

/// The torch release, plus a non-variant Linux x86_64 wheel (the index lists what its
/// directory holds when asked).
async fn torch_index_with_a_plain_linux_wheel() -> (tempfile::TempDir, TestIndex) {
    let (dir, server) = torch_index(true).await;
    wheel(
        dir.path(),
        "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        None,
        &["filelock"],
    );
    (dir, server)
}

const TORCH_X86: &str = "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64";
const TORCH_WIN: &str = "torch-2.10.0-cp312-cp312-win_amd64";
const TORCH_ARM: &str = "torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64";
const TORCH_MAC: &str = "torch-2.10.0-cp312-none-macosx_11_0_arm64.whl";

#[tokio::test]
async fn a_cuda_machine_sees_one_renamed_variant_per_tag_set() {
    let (_dir, server) = torch_index_with_a_plain_linux_wheel().await;
    let target = cpython_3_12(LINUX, NV_12_8);
    let presentation = presented(&server, "torch", &target).await;

    assert!(presentation.has_variants);
    assert!(presentation.hidden_versions.is_empty());
    assert_eq!(
        shown(&presentation),
        [
            entry(
                &format!("{TORCH_ARM}.whl"),
                &format!("{TORCH_ARM}-cuda12.6.whl"),
                Some("cuda12.6")
            ),
            entry(
                &format!("{TORCH_X86}.whl"),
                &format!("{TORCH_X86}-cuda12.8.whl"),
                Some("cuda12.8")
            ),
            entry(
                &format!("{TORCH_WIN}.whl"),
                &format!("{TORCH_WIN}-cuda12.8.whl"),
                Some("cuda12.8")
            ),
            entry(TORCH_MAC, TORCH_MAC, None),
            entry("torch-2.10.0.tar.gz", "torch-2.10.0.tar.gz", None),
        ]
    );
    // Every listed file is either shown or hidden, once; variants.json is neither.
    assert_eq!(
        presentation.shown.len() + presentation.hidden.len(),
        18,
        "15 variant wheels, 2 plain wheels, the sdist"
    );

    let chosen = format!("{TORCH_X86}-cuda12.8.whl");
    let linux = presentation
        .shown
        .iter()
        .find(|s| s.file.filename == chosen)
        .unwrap();
    let variant = linux.variant.as_ref().unwrap();
    assert_eq!(
        variant.because,
        ChosenBecause::BestVariant { selectable: 3 }
    );
    assert_eq!(variant.markers.label.as_ref().unwrap().as_str(), "cuda12.8");
    let properties: Vec<String> = variant
        .markers
        .properties
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        properties.contains(&"nvidia :: cuda_version_lower_bound :: 12.0".to_owned()),
        "{properties:?}"
    );
    // The upstream file is served as listed: its URL and hash are the variant wheel's.
    assert!(linux.file.url.as_str().ends_with(&chosen));
    assert!(linux.file.hashes.sha256().is_some());

    assert_eq!(
        why(&presentation, &format!("{TORCH_X86}.whl")),
        &replaced_by(&chosen)
    );
    assert_eq!(
        why(&presentation, &format!("{TORCH_X86}-cuda12.6.whl")),
        &another_chosen(&chosen)
    );
    assert_eq!(
        why(&presentation, &format!("{TORCH_X86}-null.whl")),
        &another_chosen(&chosen)
    );
    // Rejected variants carry the fate `select` gives them.
    let resolution = resolve_from(&server, "torch", &target).await;
    for label in ["cuda13.0", "rocm7.0", "rocm7.1", "xpu"] {
        let name = format!("{TORCH_X86}-{label}.whl");
        let HiddenBecause::Unusable(hidden) = why(&presentation, &name) else {
            panic!("{name} should be unusable")
        };
        assert!(
            matches!(
                hidden,
                CandidateFate::VariantRejected(VariantRejection::Ranking(_))
            ),
            "{name}: {hidden:?}"
        );
        assert_eq!(hidden, fate(&resolution, "2.10.0", &name), "{name}");
    }
    // Other tags: hidden in favour of their own tag set's best variant.
    assert_eq!(
        why(&presentation, &format!("{TORCH_ARM}-null.whl")),
        &another_chosen(&format!("{TORCH_ARM}-cuda12.6.whl"))
    );
    assert!(matches!(
        why(&presentation, &format!("{TORCH_WIN}-cuda13.0.whl")),
        HiddenBecause::Unusable(CandidateFate::VariantRejected(_))
    ));
}

#[tokio::test]
async fn another_machine_sees_another_label() {
    let (_dir, server) = torch_index_with_a_plain_linux_wheel().await;
    let dir = tempfile::tempdir().unwrap();

    let target_13 = profile_target(&blackwell_facts(dir.path()), "3.12");
    let presentation = presented(&server, "torch", &target_13).await;
    let linux = shown_as(&presentation, &format!("{TORCH_X86}.whl"));
    assert_eq!(linux.file.filename, format!("{TORCH_X86}-cuda13.0.whl"));
    let variant = linux.variant.as_ref().unwrap();
    assert_eq!(variant.markers.label.as_ref().unwrap().as_str(), "cuda13.0");

    // No GPU: the null variant takes the plain wheel's place, and says so.
    let cpu = cpython_3_12(LINUX, &[]);
    let presentation = presented(&server, "torch", &cpu).await;
    let linux = shown_as(&presentation, &format!("{TORCH_X86}.whl"));
    assert_eq!(linux.file.filename, format!("{TORCH_X86}-null.whl"));
    let variant = linux.variant.as_ref().unwrap();
    assert_eq!(variant.because, ChosenBecause::NullVariant);
    assert!(variant.markers.properties.is_empty());
    assert_eq!(
        why(&presentation, &format!("{TORCH_X86}.whl")),
        &replaced_by(&format!("{TORCH_X86}-null.whl"))
    );
}

#[tokio::test]
async fn tag_sets_the_target_cannot_install_get_their_own_best_variant() {
    let (_dir, server) = torch_index_with_a_plain_linux_wheel().await;
    // On aarch64 cuda12.8 has no wheel: the target's choice is cuda12.6, while the x86_64 and
    // Windows tag sets still show their best for this hardware, cuda12.8.
    let target = cpython_3_12("aarch64-manylinux_2_28", NV_12_8);
    let presentation = presented(&server, "torch", &target).await;
    let labels: Vec<(String, Option<String>)> = shown(&presentation)
        .into_iter()
        .map(|(name, _, label)| (name, label))
        .collect();
    assert_eq!(
        labels,
        [
            (format!("{TORCH_ARM}.whl"), Some("cuda12.6".to_owned())),
            (format!("{TORCH_X86}.whl"), Some("cuda12.8".to_owned())),
            (format!("{TORCH_WIN}.whl"), Some("cuda12.8".to_owned())),
            (TORCH_MAC.to_owned(), None),
            ("torch-2.10.0.tar.gz".to_owned(), None),
        ]
    );
    // The plain x86_64 wheel is replaced in its own tag set.
    assert_eq!(
        why(&presentation, &format!("{TORCH_X86}.whl")),
        &replaced_by(&format!("{TORCH_X86}-cuda12.8.whl"))
    );
}

#[tokio::test]
async fn without_a_supported_variant_the_plain_wheel_is_shown_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v4", "v3"], true);
    let (_server, presentation) = present_demo(dir.path(), 2).await;
    assert_eq!(shown(&presentation), [demo_plain("1.0")]);
    for label in ["v4", "v3"] {
        let name = format!("demo-1.0-py3-none-any-{label}.whl");
        assert!(
            matches!(
                why(&presentation, &name),
                HiddenBecause::Unusable(CandidateFate::VariantRejected(_))
            ),
            "{name}"
        );
    }
    assert!(presentation.hidden_versions.is_empty());
}

#[tokio::test]
async fn versions_with_only_unsupported_variants_are_hidden_with_what_would_fit() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v3", "null"], true);
    demo_release(dir.path(), "2.0", &["v4"], false);
    demo_release(dir.path(), "3.0", &["v4"], false);
    let (_server, presentation) = present_demo(dir.path(), 3).await;
    assert_eq!(shown(&presentation), [demo_as("1.0", "v3")]);
    let hidden: Vec<String> = presentation
        .hidden_versions
        .iter()
        .map(|r| r.version.to_string())
        .collect();
    assert_eq!(hidden, ["3.0", "2.0"]);
    let report = &presentation.hidden_versions[1];
    assert_eq!(report.needs.len(), 1);
    assert_eq!(report.needs[0].namespace.as_str(), "x86_64");
    assert!(
        report.needs[0].rejection.to_string().contains("v4"),
        "{}",
        report.needs[0].rejection
    );
    assert!(matches!(
        why(&presentation, "demo-2.0-py3-none-any-v4.whl"),
        HiddenBecause::Unusable(CandidateFate::VariantRejected(_))
    ));
}

#[tokio::test]
async fn a_corrupt_variants_json_hides_only_that_versions_variant_wheels() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v4", "v3", "null"], true);
    demo_release(dir.path(), "2.0", &["v4", "v3", "null"], true);
    std::fs::write(
        dir.path().join("demo-2.0-variants.json"),
        "{\"variants\": [",
    )
    .unwrap();
    let (_server, presentation) = present_demo(dir.path(), 3).await;
    assert_eq!(
        shown(&presentation),
        [demo_as("1.0", "v3"), demo_plain("2.0")]
    );
    for label in ["v4", "v3", "null"] {
        let name = format!("demo-2.0-py3-none-any-{label}.whl");
        assert!(
            matches!(
                why(&presentation, &name),
                HiddenBecause::Unusable(CandidateFate::UnusableMetadata { why })
                    if why.contains("demo-2.0-variants.json")
            ),
            "{name}: {:?}",
            why(&presentation, &name)
        );
    }
    assert!(presentation
        .warnings
        .iter()
        .any(|w| w.contains("unusable variant metadata")));
    assert!(presentation.hidden_versions.is_empty());
}

/// Every shown file carries why as data: the chosen variant with the selector's reason, and
/// the plain wheel shown in place of variants that cannot be used with the first one's fate
/// (the proxy words both, and `vari install` words the journal's copy, without judging again).
#[tokio::test]
async fn shown_files_carry_their_reason_fallbacks_included() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v4", "v3", "null"], true);
    demo_release(dir.path(), "2.0", &["v4", "v3", "null"], true);
    std::fs::write(
        dir.path().join("demo-2.0-variants.json"),
        "{\"variants\": [",
    )
    .unwrap();
    let (_server, presentation) = present_demo(dir.path(), 3).await;
    let variant = shown_as(&presentation, "demo-1.0-py3-none-any.whl");
    assert!(
        matches!(
            &variant.because,
            ShownBecause::Variant {
                because: ChosenBecause::BestVariant { .. },
                needs,
            } if needs.is_empty()
        ),
        "{:?}",
        variant.because
    );
    let fallback = shown_as(&presentation, "demo-2.0-py3-none-any.whl");
    assert!(
        matches!(
            &fallback.because,
            ShownBecause::Fallback {
                first_fate: CandidateFate::UnusableMetadata { why },
                ..
            } if why.contains("demo-2.0-variants.json")
        ),
        "{:?}",
        fallback.because
    );
}

#[tokio::test]
async fn a_project_without_variants_is_passed_through() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "plain-1.0-py3-none-any.whl",
        "plain-2.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        "plain-2.0-py3-none-any.whl",
    ] {
        wheel(dir.path(), name, None, &[]);
    }
    std::fs::write(dir.path().join("plain-2.0.tar.gz"), b"sdist").unwrap();
    let server = TestIndex::start(dir.path()).await;
    let client = client(&server.index_url());
    let project = project(&client, "plain").await;
    server.clear_seen();
    let presentation = present(
        &client,
        &project,
        &level_target(dir.path(), 3),
        &SelectionOptions::default(),
    )
    .await
    .unwrap();
    assert!(!presentation.has_variants);
    assert!(presentation.hidden.is_empty());
    assert!(presentation.hidden_versions.is_empty());
    let files: Vec<_> = presentation.shown.iter().map(|s| s.file.clone()).collect();
    assert_eq!(files, project.files);
    assert!(presentation
        .shown
        .iter()
        .all(|s| s.filename == s.file.filename && s.variant.is_none()));
    // Nothing was fetched to decide.
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}

#[tokio::test]
async fn versions_without_variant_wheels_are_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v3", "null"], true);
    // 0.9 has no variant wheel; its variants.json is broken, and never read.
    wheel(dir.path(), "demo-0.9-py3-none-any.whl", None, &[]);
    std::fs::write(dir.path().join("demo-0.9-variants.json"), "{").unwrap();
    let (server, presentation) = present_demo(dir.path(), 3).await;
    assert_eq!(
        shown(&presentation),
        [demo_plain("0.9"), demo_as("1.0", "v3")]
    );
    assert!(
        presentation.warnings.is_empty(),
        "{:?}",
        presentation.warnings
    );
    let seen: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert!(!seen.iter().any(|p| p.contains("demo-0.9")), "{seen:?}");
    assert!(seen.iter().any(|p| p.ends_with("demo-1.0-variants.json")));
}

#[tokio::test]
async fn labels_rank_before_tags_among_the_wheels_the_target_installs() {
    let dir = tempfile::tempdir().unwrap();
    let document = level_variants(&["v3", "v2"]);
    let better_tags = "demo-1.0-cp312-cp312-manylinux_2_28_x86_64";
    wheel(
        dir.path(),
        "demo-1.0-py3-none-any-v3.whl",
        Some(&one_variant(&document, "v3")),
        &[],
    );
    wheel(
        dir.path(),
        &format!("{better_tags}-v2.whl"),
        Some(&one_variant(&document, "v2")),
        &[],
    );
    wheel(dir.path(), &format!("{better_tags}.whl"), None, &[]);
    std::fs::write(dir.path().join("demo-1.0-variants.json"), &document).unwrap();
    let (_server, presentation) = present_demo(dir.path(), 3).await;
    // An installer preferring cp312 manylinux tags would take v2 or the plain wheel: both hidden.
    assert_eq!(shown(&presentation), [demo_as("1.0", "v3")]);
    let chosen = "demo-1.0-py3-none-any-v3.whl";
    assert_eq!(
        why(&presentation, &format!("{better_tags}-v2.whl")),
        &another_chosen(chosen)
    );
    assert_eq!(
        why(&presentation, &format!("{better_tags}.whl")),
        &replaced_by(chosen)
    );
}

#[tokio::test]
async fn yanked_files_stay_shown_and_yanked() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v3", "null"], true);
    demo_release(dir.path(), "2.0", &["v3", "null"], true);
    let server = TestIndex::start(dir.path()).await;
    for label in ["-v3", "-null", ""] {
        server.attrs(
            &format!("demo-2.0-py3-none-any{label}.whl"),
            FileAttrs {
                yanked: Some(Some("broken build".into())),
                ..FileAttrs::default()
            },
        );
    }
    let presentation = presented(&server, "demo", &level_target(dir.path(), 3)).await;
    let two = shown_as(&presentation, "demo-2.0-py3-none-any.whl");
    assert_eq!(two.file.filename, "demo-2.0-py3-none-any-v3.whl");
    assert_eq!(
        two.file.yanked.as_ref().unwrap().reason.as_deref(),
        Some("broken build")
    );
    assert!(presentation
        .shown
        .iter()
        .any(|s| s.file.filename == "demo-1.0-py3-none-any-v3.whl"));
}

/// PEP 592: an installer passes over a yanked file when another fits. A yanked best variant
/// must not stand in the way of the version's other builds: it is hidden, and the choice is
/// made among the rest.
#[tokio::test]
async fn a_yanked_best_variant_gives_way_to_the_next_build() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "2.0", &["v3", "null"], true);
    let server = TestIndex::start(dir.path()).await;
    server.attrs(
        "demo-2.0-py3-none-any-v3.whl",
        FileAttrs {
            yanked: Some(Some("miscompiled".into())),
            ..FileAttrs::default()
        },
    );
    let presentation = presented(&server, "demo", &level_target(dir.path(), 3)).await;
    let two = shown_as(&presentation, "demo-2.0-py3-none-any.whl");
    assert_eq!(two.file.filename, "demo-2.0-py3-none-any-null.whl");
    assert!(two.file.yanked.is_none());
    assert_eq!(
        why(&presentation, "demo-2.0-py3-none-any-v3.whl"),
        &HiddenBecause::Unusable(CandidateFate::Yanked {
            reason: Some("miscompiled".into())
        })
    );
    assert_eq!(
        why(&presentation, "demo-2.0-py3-none-any.whl"),
        &replaced_by("demo-2.0-py3-none-any-null.whl")
    );
}

#[tokio::test]
async fn no_variants_shows_plain_wheels_only() {
    let dir = tempfile::tempdir().unwrap();
    demo_release(dir.path(), "1.0", &["v3", "null"], true);
    let server = TestIndex::start(dir.path()).await;
    let client = client(&server.index_url());
    let project = project(&client, "demo").await;
    let options = SelectionOptions {
        no_variants: true,
        ..SelectionOptions::default()
    };
    let presentation = present(&client, &project, &level_target(dir.path(), 3), &options)
        .await
        .unwrap();
    assert_eq!(shown(&presentation), [demo_plain("1.0")]);
    assert_eq!(presentation.hidden.len(), 2);
}
