//! The PyTorch 2.10 release (wheels generated from its real `variants.json`) selected from a
//! real HTTP index for several targets: GPU override variables, facts profiles, and Linux
//! x86_64/aarch64, Windows and macOS platforms.

use vari_core::ordering::SelectionOptions;
use vari_select::{CandidateFate, ChosenBecause, IndexOptions, VariantRejection};

use crate::index_support::{
    blackwell_facts, chosen, chosen_because, client, cpython_3_12, fate, profile_target, resolve,
    resolve_from, torch_index, NV_12_8,
};

fn with_dependencies() -> IndexOptions {
    IndexOptions {
        dependencies: true,
        ..IndexOptions::default()
    }
}

#[tokio::test]
async fn override_variables_choose_the_cuda_build_with_its_dependencies() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("x86_64-manylinux_2_28", NV_12_8);
    let client = client(&server.index_url());
    let resolution = resolve(&client, "torch[opt-einsum]", &target, &with_dependencies()).await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl")
    );
    let chosen = resolution.chosen.as_ref().unwrap();
    // cuda13.0 needs a 13.0 driver; cuda12.8 is preferred over cuda12.6 by priority order.
    assert_eq!(chosen.because, ChosenBecause::BestVariant { selectable: 3 });
    assert!(chosen.file.hashes.sha256().is_some());
    let dependencies: Vec<&str> = chosen
        .dependencies
        .as_ref()
        .unwrap()
        .iter()
        .map(|d| d.requirement.as_str())
        .collect();
    assert_eq!(
        dependencies,
        [
            "filelock",
            "nvidia-cuda-runtime-cu12==12.8.90",
            "opt-einsum>=3.3"
        ]
    );
    // Every file of the version has a fate; the sdist and the other platforms' wheels too.
    let report = &resolution.versions[0];
    assert_eq!(report.files.len(), 17);
    assert_eq!(
        fate(
            &resolution,
            "2.10.0",
            "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.6.whl"
        ),
        &CandidateFate::Candidate { rank: 1 }
    );
    assert_eq!(
        fate(
            &resolution,
            "2.10.0",
            "torch-2.10.0-cp312-cp312-win_amd64-cuda12.8.whl"
        ),
        &CandidateFate::WrongTags
    );
    assert_eq!(
        fate(&resolution, "2.10.0", "torch-2.10.0.tar.gz"),
        &CandidateFate::SdistNotConsidered
    );
    let CandidateFate::VariantRejected(VariantRejection::Ranking(rejection)) = fate(
        &resolution,
        "2.10.0",
        "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl",
    ) else {
        panic!("cuda13.0 should be rejected by the ranking")
    };
    assert!(
        rejection.to_string().contains("cuda_version_lower_bound"),
        "{rejection}"
    );
    // The index's variants.json was used, not the wheels.
    assert!(report.metadata_from.as_ref().unwrap()[0]
        .as_str()
        .ends_with("torch-2.10.0-variants.json"));
}

#[tokio::test]
async fn a_facts_profile_with_a_new_driver_gets_cuda_13() {
    let (_dir, server) = torch_index(true).await;
    let dir = tempfile::tempdir().unwrap();
    let target = profile_target(&blackwell_facts(dir.path()), "3.12");
    let resolution = resolve(
        &client(&server.index_url()),
        "torch>=2.9",
        &target,
        &with_dependencies(),
    )
    .await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl")
    );
    let dependencies = resolution
        .chosen
        .as_ref()
        .unwrap()
        .dependencies
        .as_ref()
        .unwrap();
    let names: Vec<&str> = dependencies
        .iter()
        .map(|d| d.requirement.as_str())
        .collect();
    assert_eq!(names, ["filelock", "nvidia-cuda-runtime==13.0.96"]);
}

#[tokio::test]
async fn windows_gets_the_windows_cuda_wheel() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("x86_64-pc-windows-msvc", NV_12_8);
    let resolution = resolve_from(&server, "torch", &target).await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-win_amd64-cuda12.8.whl")
    );
}

#[tokio::test]
async fn a_label_without_a_wheel_for_this_platform_does_not_exist_here() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("aarch64-manylinux_2_28", NV_12_8);
    let resolution = resolve_from(&server, "torch", &target).await;
    // cuda12.8 would be better, but has no aarch64 wheel: cuda12.6 is the best that exists.
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64-cuda12.6.whl")
    );
    let report = &resolution.versions[0];
    let cuda128 = report
        .variants
        .iter()
        .find(|v| v.label.as_str() == "cuda12.8")
        .unwrap();
    assert!(
        matches!(
            &cuda128.rejection,
            Some(VariantRejection::NoFittingWheel { tags }) if tags.len() == 2
        ),
        "{cuda128:?}"
    );
}

#[tokio::test]
async fn macos_gets_the_only_build_it_has() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("aarch64-apple-darwin", &[]);
    let resolution = resolve_from(&server, "torch", &target).await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-none-macosx_11_0_arm64.whl")
    );
    assert_eq!(chosen_because(&resolution), &ChosenBecause::NoVariants);
    // No variant wheel fits macOS, so the variant metadata is not even fetched.
    assert!(!server
        .seen()
        .iter()
        .any(|s| s.path.ends_with("variants.json")));
}

#[tokio::test]
async fn without_a_gpu_the_cpu_build_is_chosen_and_the_gpu_builds_say_why() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("x86_64-manylinux_2_28", &[]);
    let resolution = resolve_from(&server, "torch", &target).await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-null.whl")
    );
    assert_eq!(chosen_because(&resolution), &ChosenBecause::NullVariant);
    let needs = &resolution.versions[0].needs;
    let namespaces: Vec<&str> = needs.iter().map(|n| n.namespace.as_str()).collect();
    assert_eq!(namespaces, ["nvidia", "amd", "intel"]);
    let nvidia = &needs[0];
    let labels: Vec<&str> = nvidia.labels.iter().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["cuda12.6", "cuda12.8", "cuda13.0"]);
    assert!(nvidia.builtin_provider);
    // Detected under an empty root: detection says why the namespace is absent.
    assert!(nvidia.absent_reason.is_some(), "{nvidia:?}");
}

#[tokio::test]
async fn no_variants_takes_the_null_variant_out_too() {
    let (_dir, server) = torch_index(true).await;
    let target = cpython_3_12("x86_64-manylinux_2_28", NV_12_8);
    let options = IndexOptions {
        selection: SelectionOptions {
            no_variants: true,
            ..SelectionOptions::default()
        },
        ..IndexOptions::default()
    };
    let resolution = resolve(&client(&server.index_url()), "torch", &target, &options).await;
    // Linux x86_64 has no non-variant wheel: nothing fits.
    assert_eq!(chosen(&resolution), None);
    assert!(resolution.versions[0]
        .files
        .iter()
        .all(|f| !f.fate.is_installable()));
}

#[tokio::test]
async fn without_variants_json_the_wheels_are_read_with_ranges() {
    let (_dir, server) = torch_index(false).await;
    let target = cpython_3_12("x86_64-manylinux_2_28", NV_12_8);
    let resolution = resolve_from(&server, "torch", &target).await;
    assert_eq!(
        chosen(&resolution),
        Some("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl")
    );
    let from = resolution.versions[0].metadata_from.as_ref().unwrap();
    assert!(
        from.iter().all(|u| u.as_str().ends_with(".whl")),
        "{from:?}"
    );
    assert!(server.seen().iter().any(|s| s.range.is_some()));
}
