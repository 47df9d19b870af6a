//! `repack` with the documented example configs (`examples/repack/`) on small generated builds.

use std::path::{Path, PathBuf};

use vari_core::metadata::{read_json, SourceKind};
use vari_core::NamespaceSupport;
use vari_wheel::{
    repack, validate, InferProperties, RepackConfig, RepackError, ValidValues, WheelErrorKind,
};

use crate::support::{member, members, plain_wheel, testdata};

fn example(name: &str) -> RepackConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/repack")
        .join(name);
    RepackConfig::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The built-in providers' valid values, from vari-detect (as the CLI fills them).
fn built_in() -> ValidValues {
    use vari_detect::{cpu, gpu};
    [
        ("nvidia", gpu::nvidia::all_configs()),
        ("amd", gpu::amd::all_configs()),
        ("intel", gpu::intel::all_configs()),
        ("x86_64", cpu::x86_64::all_configs()),
    ]
    .into_iter()
    .map(|(ns, features)| NamespaceSupport {
        namespace: ns.parse().unwrap(),
        source: None,
        features,
    })
    .collect()
}

fn names(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn pytorch_for_uv_is_a_release_uv_installs_as_intended() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<PathBuf> = ["cu128", "cu130", "rocm7.1", "cpu"]
        .iter()
        .map(|local| {
            plain_wheel(
                dir.path(),
                "torch",
                &format!("2.10.0+{local}"),
                "cp312-cp312-manylinux_2_28_x86_64",
                &["filelock"],
            )
        })
        .collect();
    let out = dir.path().join("site");
    let mut config = example("pytorch.toml");
    config.for_uv = true;
    config
        .requires_dist
        .add
        .push("nvidia-cublas==1.0; \"nvidia\" in variant_namespaces".to_owned());
    let result = repack(&config, &inputs, &out, &built_in(), None).unwrap();
    let text = std::fs::read_to_string(&result.variants_json[0]).unwrap();
    let meta = read_json(&text, SourceKind::IndexFile).unwrap();
    assert!(text.contains("https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json"));
    let view = vari_core::uv::UvView::of(&meta);
    assert_eq!(view.rejected, None);
    let usable: Vec<&str> = view.usable.iter().map(|n| n.as_str()).collect();
    assert_eq!(usable, ["nvidia", "priority"]);
    // amd and intel cannot be expressed for uv: said, not hidden.
    assert!(
        result.warnings.iter().any(|w| w.contains("namespace amd")),
        "{:?}",
        result.warnings
    );
    for w in &result.wheels {
        let m = members(&w.path);
        let metadata = String::from_utf8(
            member(&m, "torch-2.10.0.dist-info/METADATA")
                .contents
                .clone(),
        )
        .unwrap();
        assert!(!metadata.contains("variant_namespaces"), "{metadata}");
        let cuda = w
            .label
            .as_ref()
            .is_some_and(|l| l.as_str().starts_with("cuda"));
        assert_eq!(
            metadata.contains("Requires-Dist: nvidia-cublas==1.0\n"),
            cuda,
            "{metadata}"
        );
        let v = validate(&w.path).unwrap();
        assert!(v.is_ok(), "{}: {:?}", w.path.display(), v.problems);
    }
}

#[test]
fn pytorch_builds_become_the_real_torch_2_10_release() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<PathBuf> = [
        "cu126", "cu128", "cu130", "xpu", "rocm7.0", "rocm7.1", "cpu",
    ]
    .iter()
    .map(|local| {
        plain_wheel(
            dir.path(),
            "torch",
            &format!("2.10.0+{local}"),
            "cp312-cp312-manylinux_2_28_x86_64",
            &[
                "filelock",
                "pytorch-triton-rocm==3.5.0; platform_system == \"Linux\"",
            ],
        )
    })
    .collect();
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    let result = repack(&example("pytorch.toml"), &inputs, &out, &built_in(), None).unwrap();

    let wheel_names = names(
        &result
            .wheels
            .iter()
            .map(|w| w.path.clone())
            .collect::<Vec<_>>(),
    );
    assert_eq!(
        wheel_names,
        ["cuda12.6", "cuda12.8", "cuda13.0", "xpu", "rocm7.0", "rocm7.1", "null"]
            .map(|l| format!("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-{l}.whl"))
    );
    for w in &result.wheels {
        let v = validate(&w.path).unwrap();
        assert!(v.is_ok(), "{}: {:?}", w.path.display(), v.problems);
        assert_eq!(v.dist_info.as_deref(), Some("torch-2.10.0.dist-info"));
        let m = members(&w.path);
        let metadata = String::from_utf8(
            member(&m, "torch-2.10.0.dist-info/METADATA")
                .contents
                .clone(),
        )
        .unwrap();
        assert!(metadata.contains("\nVersion: 2.10.0\n"), "{metadata}");
        assert!(m.iter().any(|x| x.name == "torch-2.10.0.data/scripts/tool"));
    }
    assert_eq!(names(&result.variants_json), ["torch-2.10.0-variants.json"]);
    let ours = read_json(
        &std::fs::read_to_string(&result.variants_json[0]).unwrap(),
        SourceKind::IndexFile,
    )
    .unwrap();
    let real = read_json(
        &std::fs::read_to_string(testdata("variants-json/torch-2.10.0-variants.json")).unwrap(),
        SourceKind::IndexFile,
    )
    .unwrap();
    assert_eq!(ours.generation, real.generation);
    assert_eq!(ours.priorities, real.priorities);
    assert_eq!(ours.providers, real.providers);
    assert_eq!(ours.static_properties, real.static_properties);
    assert_eq!(ours.variants, real.variants);
    // The CPU build is the null variant: installers that do not know variants have a fallback.
    assert!(
        result
            .warnings
            .iter()
            .all(|w| !w.contains("no null variant")),
        "{:?}",
        result.warnings
    );
}

/// What vari-scan reads from CuPy's fat binaries, by build (vari-wheel cannot depend on the
/// scanner; vari-cli's repack tests scan real fat-binary sections): CUDA 13 has no code for
/// compute capability 7.0 and older.
struct CupyFatBinaries;

impl InferProperties for CupyFatBinaries {
    fn infer(&self, wheel: &Path) -> Result<Vec<vari_core::Property>, String> {
        let name = wheel.file_name().unwrap().to_string_lossy();
        let archs: &[&str] = if name.starts_with("cupy_cuda13x") {
            &["75_real", "80_real", "90_real", "100_real", "120_real"]
        } else {
            &["50_real", "60_real", "70_real", "80_real", "90_real"]
        };
        Ok(archs
            .iter()
            .map(|a| format!("nvidia :: sm_arch :: {a}").parse().unwrap())
            .collect())
    }
}

#[test]
fn cupy_distributions_are_renamed_into_one_release() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = ["cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x"].map(|name| {
        plain_wheel(
            dir.path(),
            name,
            "13.4.0",
            "cp312-cp312-manylinux_2_28_x86_64",
            &["numpy<2.5,>=1.22", "fastrlock>=0.5"],
        )
    });
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    let config = example("cupy.toml");
    // The example infers sm_arch: without a scanner it stops, writing nothing.
    let e = repack(&config, &inputs, &out, &built_in(), None).unwrap_err();
    assert!(matches!(e, RepackError::Wheel(_)), "{e}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    let result = repack(&config, &inputs, &out, &built_in(), Some(&CupyFatBinaries)).unwrap();
    let written: Vec<PathBuf> = result.wheels.iter().map(|w| w.path.clone()).collect();
    assert_eq!(
        names(&written),
        [
            "cupy-13.4.0-cp312-cp312-manylinux_2_28_x86_64-cu11.whl",
            "cupy-13.4.0-cp312-cp312-manylinux_2_28_x86_64-cu12.whl",
            "cupy-13.4.0-cp312-cp312-manylinux_2_28_x86_64-cu13.whl"
        ]
    );
    for (input, output) in inputs.iter().zip(&written) {
        let v = validate(output).unwrap();
        assert!(v.is_ok(), "{:?}", v.problems);
        let before = members(input);
        let after = members(output);
        let metadata = String::from_utf8(
            member(&after, "cupy-13.4.0.dist-info/METADATA")
                .contents
                .clone(),
        )
        .unwrap();
        assert!(metadata.contains("\nName: cupy\n"), "{metadata}");
        assert!(
            metadata.contains("Requires-Dist: fastrlock>=0.5\n"),
            "{metadata}"
        );
        // Members outside the renamed directories are the same raw bytes.
        let package = member(&before, "cupy/_native.so");
        assert_eq!(member(&after, "cupy/_native.so"), package);
        let old_data = before
            .iter()
            .find(|m| m.name.ends_with(".data/scripts/tool"))
            .unwrap();
        let new_data = member(&after, "cupy-13.4.0.data/scripts/tool");
        assert_eq!(new_data.compressed, old_data.compressed);
        assert_eq!(new_data.modified, old_data.modified);
    }
    assert_eq!(names(&result.variants_json), ["cupy-13.4.0-variants.json"]);
    let combined = read_json(
        &std::fs::read_to_string(&result.variants_json[0]).unwrap(),
        SourceKind::IndexFile,
    )
    .unwrap();
    let labels: Vec<&str> = combined.variants.keys().map(|l| l.as_str()).collect();
    assert_eq!(labels, ["cu11", "cu12", "cu13"]);
    let (_, cu13) = combined
        .variants
        .iter()
        .find(|(label, _)| label.as_str() == "cu13")
        .unwrap();
    let cu13: Vec<String> = vari_core::metadata::properties_of(cu13)
        .map(|p| p.to_string())
        .collect();
    assert!(
        cu13.contains(&"nvidia :: sm_arch :: 75_real".to_owned())
            && !cu13.iter().any(|p| p.ends_with(":: 70_real")),
        "{cu13:?}"
    );
    // Only GPU builds: an installer that does not know variants finds nothing to install.
    let warned: Vec<&String> = result
        .warnings
        .iter()
        .filter(|w| w.contains("no plain wheel and no null variant"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", result.warnings);
    assert!(warned[0].starts_with("cupy 13.4.0: "), "{}", warned[0]);
}

#[test]
fn jax_config_needs_a_scanner_and_leaves_no_output_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [plain_wheel(
        dir.path(),
        "jax-cuda12-plugin",
        "0.8.0",
        "cp312-cp312-manylinux_2_27_x86_64",
        &[],
    )];
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    let config = example("jax-cuda-plugin.toml");
    assert_eq!(config.builds.len(), 2);
    let e = repack(&config, &inputs, &out, &built_in(), None).unwrap_err();
    match e {
        RepackError::Wheel(e) => assert!(matches!(*e.kind, WheelErrorKind::Infer { .. }), "{e}"),
        other => panic!("{other}"),
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn conflicts_and_unmatched_builds_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let a = plain_wheel(
        dir.path(),
        "cupy-cuda12x",
        "13.4.0",
        "cp312-cp312-manylinux_2_28_x86_64",
        &[],
    );
    let b = plain_wheel(
        dir.path(),
        "cupy-cuda11x",
        "13.4.0",
        "cp312-cp312-manylinux_2_28_x86_64",
        &[],
    );
    let out = dir.path().join("site");
    std::fs::create_dir(&out).unwrap();
    let config = RepackConfig::parse(
        Path::new("same-label.toml"),
        "name = \"cupy\"\n[variant.default-priorities]\nnamespace = [\"nvidia\"]\n\
         [[build]]\nmatch = { name = \"cupy-cuda12x\" }\nlabel = \"cu\"\n\
         properties = [\"nvidia :: cuda_version_lower_bound :: 12.0\"]\n\
         [[build]]\nmatch = { name = \"cupy-cuda11x\" }\nlabel = \"cu\"\n\
         properties = [\"nvidia :: cuda_version_lower_bound :: 11.2\"]\n",
    )
    .unwrap();
    let e = repack(&config, &[a.clone(), b], &out, &built_in(), None).unwrap_err();
    assert!(
        e.to_string().contains("written there too")
            || e.to_string().contains("different properties"),
        "{e}"
    );
    let unmatched = RepackConfig::parse(
        Path::new("c.toml"),
        "[[build]]\nmatch = { name = \"other\" }\nlabel = \"null\"\n",
    )
    .unwrap();
    let e = repack(&unmatched, &[a], &out, &built_in(), None).unwrap_err();
    assert!(e.to_string().contains("no [[build]] matches"), "{e}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}
