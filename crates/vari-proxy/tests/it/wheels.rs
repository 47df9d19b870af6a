//! The releases the tests serve: a torch 2.10.0 built from its real `variants.json` with its
//! real variant markers (tags `py3-none-any`, so the machine's Python installs it), its
//! dependencies, a variant project without markers, a project without variants, one with a
//! corrupt `variants.json`, and one that only has GPU builds. The wheels themselves are
//! the shared test support's.

use std::path::Path;

pub(crate) use vari_test_support::wheels::{level_variants, one_variant, sha256_hex, wheel};
use vari_test_support::{paths::testdata, wheels::member_text, wheels::TORCH_REQUIRES};

/// The METADATA member of a wheel's bytes.
pub(crate) fn metadata_of(wheel: &[u8]) -> String {
    member_text(wheel, ".dist-info/METADATA")
}

/// The labels of the generated torch 2.10.0.
pub(crate) const TORCH_LABELS: &[&str] = &[
    "cuda12.6", "cuda12.8", "cuda13.0", "rocm7.0", "rocm7.1", "xpu", "null",
];

/// Writes torch 2.10.0 (every label, `py3-none-any`, the real `variants.json`), its
/// dependencies, and the sdist into `dir`.
pub(crate) fn torch_release(dir: &Path) {
    let document =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    for label in TORCH_LABELS {
        wheel(
            dir,
            &format!("torch-2.10.0-py3-none-any-{label}.whl"),
            Some(&one_variant(&document, label)),
            TORCH_REQUIRES,
        );
    }
    std::fs::write(dir.join("torch-2.10.0-variants.json"), &document).unwrap();
    std::fs::write(dir.join("torch-2.10.0.tar.gz"), b"not really a tarball").unwrap();
    for (name, version) in [
        ("filelock", "3.20.0"),
        ("nvidia_cuda_runtime_cu12", "12.8.90"),
        ("nvidia_cuda_runtime", "13.0.96"),
        ("pytorch_triton_rocm", "3.6.0"),
        ("pytorch_triton_xpu", "3.6.0"),
        ("opt_einsum", "3.4.0"),
    ] {
        wheel(
            dir,
            &format!("{name}-{version}-py3-none-any.whl"),
            None,
            &[],
        );
    }
}

/// `fastpkg` 1.0: x86-64 level variants v1, v3, v4 and a non-variant wheel; no variant
/// markers, so the chosen wheel is served as its original bytes.
pub(crate) fn fastpkg_release(dir: &Path) {
    let document = level_variants(&["v1", "v3", "v4"]);
    for level in ["v1", "v3", "v4"] {
        wheel(
            dir,
            &format!("fastpkg-1.0-py3-none-any-{level}.whl"),
            Some(&one_variant(&document, level)),
            &["filelock"],
        );
    }
    wheel(dir, "fastpkg-1.0-py3-none-any.whl", None, &["filelock"]);
    std::fs::write(dir.join("fastpkg-1.0-variants.json"), document).unwrap();
}

/// `plainpkg` 1.0 and 2.0: no variants at all.
pub(crate) fn plainpkg_release(dir: &Path) {
    wheel(dir, "plainpkg-1.0-py3-none-any.whl", None, &[]);
    wheel(dir, "plainpkg-2.0-py3-none-any.whl", None, &["filelock"]);
    std::fs::write(dir.join("plainpkg-2.0.tar.gz"), b"an sdist").unwrap();
}

/// `corrupt` 1.0 (good variant metadata) and 2.0 (a `variants.json` that is not JSON), each
/// with x86-64 level variants and a non-variant wheel.
pub(crate) fn corrupt_release(dir: &Path) {
    let document = level_variants(&["v1", "v3"]);
    for version in ["1.0", "2.0"] {
        for level in ["v1", "v3"] {
            wheel(
                dir,
                &format!("corrupt-{version}-py3-none-any-{level}.whl"),
                Some(&one_variant(&document, level)),
                &[],
            );
        }
        wheel(
            dir,
            &format!("corrupt-{version}-py3-none-any.whl"),
            None,
            &[],
        );
    }
    std::fs::write(dir.join("corrupt-1.0-variants.json"), &document).unwrap();
    std::fs::write(
        dir.join("corrupt-2.0-variants.json"),
        "{\"variants\": [not json",
    )
    .unwrap();
}

/// `gpuonly` 1.0: CUDA builds only (the torch metadata's `cuda12.8`), nothing for a CPU.
pub(crate) fn gpuonly_release(dir: &Path) {
    let torch =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    let document = one_variant(&torch, "cuda12.8");
    wheel(
        dir,
        "gpuonly-1.0-py3-none-any-cuda12.8.whl",
        Some(&document),
        &[],
    );
    std::fs::write(dir.join("gpuonly-1.0-variants.json"), document).unwrap();
}

/// The dependencies of `markedpkg`'s wheels: variant markers, in the non-variant wheel too.
pub(crate) const MARKED_REQUIRES: &[&str] = &[
    "nvidia-cuda-runtime-cu12==12.8.90; \"nvidia\" in variant_namespaces",
    "filelock; \"nvidia\" not in variant_namespaces and variant_label == \"\"",
];

/// `markedpkg` 1.0: a CUDA build (the torch metadata's `cuda12.8`) and a non-variant wheel,
/// both stating their dependencies with variant markers (a CUDA runtime for the CUDA build,
/// `filelock` for the non-variant one).
pub(crate) fn markedpkg_release(dir: &Path) {
    let torch =
        std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap();
    let document = one_variant(&torch, "cuda12.8");
    wheel(
        dir,
        "markedpkg-1.0-py3-none-any-cuda12.8.whl",
        Some(&document),
        MARKED_REQUIRES,
    );
    wheel(dir, "markedpkg-1.0-py3-none-any.whl", None, MARKED_REQUIRES);
    std::fs::write(dir.join("markedpkg-1.0-variants.json"), document).unwrap();
}
