//! Deciding variant markers ahead of an installer that cannot parse them: for many generated
//! markers, wheels and environments, the residue says what the original said; residues and
//! rewritten core metadata are read by Python's `packaging` (the parser pip and uv's users
//! meet) with the same answers; and torch 2.10's kind of `Requires-Dist` fields, with the
//! contexts of its real `variants.json`, come out as expected.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use vari_core::markers::{
    requirement_applies_with_extras, Marker, Resolved, TargetEnvironment, VariantMarkerContext,
    MARKER_NAMES,
};
use vari_core::metadata::{read_json, resolve_variant_markers, SourceKind};
use vari_core::{Platform, Profile, VariantLabel};

/// Variant comparisons: every variable, every operator, both operand orders.
const VARIANT_ATOMS: &[&str] = &[
    r#"variant_label == "cu128""#,
    r#""cu128" == variant_label"#,
    r#"variant_label != 'null'"#,
    r#"'null' != variant_label"#,
    r#"variant_label === "rocm7.0""#,
    r#"variant_label == """#,
    r#""cu" in variant_label"#,
    r#""rocm" not in variant_label"#,
    r#"variant_label in "cu126 cu128""#,
    r#"variant_label not in 'null cpu'"#,
    r#""nvidia" in variant_namespaces"#,
    r#""amd" not in variant_namespaces"#,
    r#""nvidia :: sm_arch" in variant_features"#,
    r#""amd::gfx_arch" not in variant_features"#,
    r#""nvidia :: cuda_version_lower_bound :: 12.8" in variant_properties"#,
    r#""nvidia::sm_arch::90_real" not in variant_properties"#,
    r#"" x86_64 :: level :: v3 " in variant_properties"#,
];

/// Standard comparisons, including extras and the `in` forms.
const STANDARD_ATOMS: &[&str] = &[
    r#"python_version >= "3.10""#,
    r#"python_version<'3.11'"#,
    r#""3.9" < python_version"#,
    r#"python_full_version == "3.12.3""#,
    r#"sys_platform == "linux""#,
    r#""win32" == sys_platform"#,
    r#"platform_system != "Darwin""#,
    r#"platform_machine == "x86_64""#,
    r#"'arm' in platform_machine"#,
    r#"platform_machine not in "x86_64 AMD64""#,
    r#"os_name == "nt""#,
    r#"implementation_name == "cpython""#,
    r#"platform_python_implementation == 'CPython'"#,
    r#"extra == "cuda""#,
    r#"python_version ~= "3.10""#,
];

/// A small deterministic generator (splitmix64): the same markers on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// A random marker: atoms joined by `and`/`or`, operands parenthesised at random — so some
/// nested `or`s lose their parentheses and test precedence instead.
fn marker(rng: &mut Rng, depth: u32) -> String {
    if depth == 0 || rng.below(4) == 0 {
        return if rng.below(2) == 0 {
            VARIANT_ATOMS[rng.below(VARIANT_ATOMS.len())].to_owned()
        } else {
            STANDARD_ATOMS[rng.below(STANDARD_ATOMS.len())].to_owned()
        };
    }
    let separator = if rng.below(2) == 0 { " and " } else { " or " };
    let operands: Vec<String> = (0..2 + rng.below(3))
        .map(|_| {
            let inner = marker(rng, depth - 1);
            if rng.below(2) == 0 {
                format!("({inner})")
            } else {
                inner
            }
        })
        .collect();
    operands.join(separator)
}

fn markers(count: usize) -> Vec<String> {
    let mut rng = Rng(0x5eed);
    (0..count).map(|_| marker(&mut rng, 3)).collect()
}

fn context(label: &str, properties: &[&str]) -> VariantMarkerContext {
    VariantMarkerContext {
        label: Some(label.parse().unwrap()),
        properties: properties.iter().map(|p| p.parse().unwrap()).collect(),
    }
}

fn contexts() -> Vec<VariantMarkerContext> {
    vec![
        VariantMarkerContext::non_variant(),
        context("null", &[]),
        context(
            "cu128",
            &[
                "nvidia :: cuda_version_lower_bound :: 12.8",
                "nvidia :: sm_arch :: 90_real",
                "x86_64 :: level :: v3",
            ],
        ),
        context("cu126", &["nvidia :: sm_arch :: 80_real"]),
        context("rocm7.0", &["amd :: gfx_arch :: gfx90a"]),
        context("x86_64_v3", &["x86_64 :: level :: v3"]),
    ]
}

/// Target environments, each with the extras requested.
fn environments() -> Vec<(TargetEnvironment, Vec<&'static str>)> {
    let env = |system: &str, machine: &str, python: &str| {
        let platform = Platform {
            system: Some(system.into()),
            machine: Some(machine.into()),
            libc: None,
        };
        TargetEnvironment::from_platform(Some(&platform), python).unwrap()
    };
    vec![
        (env("Linux", "x86_64", "3.12.3"), vec![]),
        (env("Linux", "x86_64", "3.12.3"), vec!["cuda"]),
        (env("Linux", "aarch64", "3.10"), vec!["cuda"]),
        (env("Windows", "AMD64", "3.11.2"), vec![]),
        (env("Darwin", "arm64", "3.9"), vec![]),
        (env("Windows", "x86_64", "3.13"), vec!["cuda"]),
    ]
}

/// The residue's value in `env`; the residue is evaluated with a context unrelated to the
/// wheel's, which cannot matter once no variant variable is left.
fn residue_value(resolved: &Resolved, env: &TargetEnvironment, extras: &[&str]) -> bool {
    match resolved {
        Resolved::Always => true,
        Resolved::Never => false,
        Resolved::Marker(text) => {
            let residue =
                Marker::parse(text).unwrap_or_else(|e| panic!("residue {text:?} parses: {e}"));
            assert!(!residue.uses_variants(), "{text}");
            let unrelated = context("zzz", &["other :: f :: v"]);
            residue.evaluate_with_extras(env, &unrelated, extras)
        }
    }
}

#[test]
fn residues_agree_with_the_original_for_every_context_and_environment() {
    let envs = environments();
    let mut seen = [0usize; 3];
    for text in markers(3000) {
        let original = Marker::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        for ctx in contexts() {
            let resolved = original.resolve_variants(&ctx);
            seen[match resolved {
                Resolved::Always => 0,
                Resolved::Never => 1,
                Resolved::Marker(_) => 2,
            }] += 1;
            for (env, extras) in &envs {
                assert_eq!(
                    residue_value(&resolved, env, extras),
                    original.evaluate_with_extras(env, &ctx, extras),
                    "{text}\nwith {ctx:?} resolves to {resolved:?}, which disagrees in {env} \
                     with extras {extras:?}"
                );
            }
        }
    }
    // The generated markers exercise all three outcomes, each many times.
    assert!(seen.iter().all(|&n| n > 500), "{seen:?}");
}

#[test]
fn markers_without_variant_variables_come_back_as_written_but_for_spacing() {
    let ctx = context("cu128", &[]);
    for (marker, expected) in [
        (
            r#"python_version>='3.10'  and  (os_name=="nt" or 'arm' in platform_machine)"#,
            r#"python_version >= '3.10' and (os_name == "nt" or 'arm' in platform_machine)"#,
        ),
        (r#"((extra == "cuda"))"#, r#"extra == "cuda""#),
    ] {
        assert_eq!(
            Marker::parse(marker).unwrap().resolve_variants(&ctx),
            Resolved::Marker(expected.to_owned())
        );
    }
}

use vari_test_support::venv::python as venv_python;

/// Runs `script` with the test venv's Python, `input` on its standard input; its standard
/// output parsed as JSON.
fn python_json(script: &str, input: &serde_json::Value) -> serde_json::Value {
    let mut child = Command::new(venv_python())
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test venv's python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Parses each marker with `packaging.markers.Marker` (and inside a `Requirement`) and
/// evaluates it in each environment.
const EVALUATE: &str = r#"
import json, sys
from packaging.markers import Marker
from packaging.requirements import Requirement
data = json.load(sys.stdin)
out = []
for text in data["markers"]:
    marker = Marker(text)
    Requirement("pkg>=1; " + text)
    out.append([marker.evaluate(env) for env in data["envs"]])
json.dump(out, sys.stdout)
"#;

#[test]
fn packaging_parses_the_residues_and_agrees_with_the_original() {
    let envs = environments();
    let mut cases: Vec<(String, usize, bool)> = Vec::new();
    let mut residues: Vec<String> = Vec::new();
    for text in markers(1000) {
        let original = Marker::parse(&text).unwrap();
        for ctx in contexts() {
            if let Resolved::Marker(residue) = original.resolve_variants(&ctx) {
                for (i, (env, extras)) in envs.iter().enumerate() {
                    let expected = original.evaluate_with_extras(env, &ctx, extras);
                    cases.push((residue.clone(), i, expected));
                }
                residues.push(residue);
            }
        }
    }
    residues.sort();
    residues.dedup();
    assert!(residues.len() > 500, "{}", residues.len());
    let python_envs: Vec<serde_json::Value> = envs
        .iter()
        .map(|(env, extras)| {
            let mut map: serde_json::Map<String, serde_json::Value> = MARKER_NAMES
                .iter()
                .map(|name| ((*name).to_owned(), env.get(name).unwrap_or("").into()))
                .collect();
            // One extra at a time is what `packaging` evaluates.
            map.insert(
                "extra".to_owned(),
                extras.first().copied().unwrap_or("").into(),
            );
            serde_json::Value::Object(map)
        })
        .collect();
    let answers = python_json(
        EVALUATE,
        &serde_json::json!({ "markers": residues, "envs": python_envs }),
    );
    for (residue, env, expected) in cases {
        let index = residues.binary_search(&residue).unwrap();
        assert_eq!(
            answers[index][env].as_bool(),
            Some(expected),
            "packaging evaluates {residue:?} in {} differently",
            envs[env].0
        );
    }
}

/// A torch 2.10 CUDA 12.8 wheel's core metadata in the form of the real release: variant
/// markers next to standard ones, extras, a folded field, and a description that quotes a
/// `Requires-Dist` line.
const TORCH_METADATA: &str = concat!(
    "Metadata-Version: 2.4\n",
    "Name: torch\n",
    "Version: 2.10.0\n",
    "Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration\n",
    "Home-page: https://pytorch.org\n",
    "Author: PyTorch Team\n",
    "License-Expression: BSD-3-Clause\n",
    "Keywords: pytorch,machine learning\n",
    "Requires-Python: >=3.10\n",
    "Description-Content-Type: text/markdown\n",
    "License-File: LICENSE\n",
    "Requires-Dist: filelock\n",
    "Requires-Dist: typing-extensions>=4.10.0\n",
    "Requires-Dist: setuptools; python_version >= \"3.12\"\n",
    "Requires-Dist: sympy>=1.13.3\n",
    "Requires-Dist: networkx>=2.5.1\n",
    "Requires-Dist: jinja2\n",
    "Requires-Dist: fsspec>=0.8.5\n",
    "Requires-Dist: nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == \"Linux\" and \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties\n",
    "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\" and \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties\n",
    "Requires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\" and \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties\n",
    "Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and\n",
    "  \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties\n",
    "Requires-Dist: nvidia-nccl-cu12==2.27.5; \"nvidia\" in variant_namespaces\n",
    "Requires-Dist: nvidia-cuda-nvrtc==13.0.48; platform_system == \"Linux\" and \"nvidia :: cuda_version_lower_bound :: 13.0\" in variant_properties\n",
    "Requires-Dist: pytorch-triton-rocm==3.6.0; platform_system == \"Linux\" and \"amd\" in variant_namespaces\n",
    "Requires-Dist: pytorch-triton-xpu==3.6.0; variant_label == \"xpu\"\n",
    "Requires-Dist: triton==3.6.0; platform_system == \"Linux\" and (variant_label == \"null\" or \"nvidia\" in variant_namespaces)\n",
    "Requires-Dist: optree>=0.13.0; extra == \"optree\"\n",
    "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n",
    "Requires-Dist: pyyaml; extra == \"pyyaml\"\n",
    "Provides-Extra: optree\n",
    "Provides-Extra: opt-einsum\n",
    "Provides-Extra: pyyaml\n",
    "\n",
    "# PyTorch\n",
    "\n",
    "Install the CUDA libraries yourself with a line such as\n",
    "Requires-Dist: nvidia-cublas-cu12; \"nvidia\" in variant_namespaces\n",
);

/// The wheel context of `label` in the real torch 2.10 `variants.json`, on a machine with a
/// CUDA 12.9 driver and an sm_90 GPU, an MI210 (gfx90a) with ROCm 7.0, and an Intel GPU.
fn torch_context(label: &str) -> VariantMarkerContext {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/variants-json/torch-2.10.0-variants.json");
    let meta = read_json(
        &std::fs::read_to_string(path).unwrap(),
        SourceKind::IndexFile,
    )
    .unwrap();
    let profile = Profile::from_json(
        r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "nvidia", "features": [
            {"name": "cuda_version_lower_bound", "values": ["12.9", "12.8", "12.6", "12.0"]},
            {"name": "sm_arch", "values": ["90_real", "80_real"]}]},
            {"namespace": "amd", "features": [{"name": "gfx_arch", "values": ["gfx90a"]},
            {"name": "rocm_version", "values": ["7.0"]}]},
            {"namespace": "intel", "features": [{"name": "device_ip", "values": ["12.55.8"]}]}]}"#,
    )
    .unwrap();
    let label: VariantLabel = label.parse().unwrap();
    VariantMarkerContext::for_selection(&meta, &label, &profile).unwrap()
}

/// The `Requires-Dist` values of the header block, folded lines joined.
fn requires_dist(metadata: &str) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    let mut in_requires = false;
    for line in metadata.lines() {
        if line.trim().is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if in_requires {
                let last = fields.last_mut().unwrap();
                last.push(' ');
                last.push_str(line.trim());
            }
            continue;
        }
        in_requires = line.starts_with("Requires-Dist:");
        if let Some(value) = line.strip_prefix("Requires-Dist:") {
            fields.push(value.trim().to_owned());
        }
    }
    fields
}

#[test]
fn torch_metadata_for_each_variant_of_the_real_release() {
    let cuda = torch_context("cuda12.8");
    let rewritten = resolve_variant_markers(TORCH_METADATA, &cuda)
        .unwrap()
        .unwrap();
    let header_end = TORCH_METADATA
        .find("Requires-Dist: nvidia-cuda-nvrtc-cu12")
        .unwrap();
    let body_start = TORCH_METADATA.find("Requires-Dist: optree").unwrap();
    assert_eq!(
        rewritten,
        format!(
            "{}{}{}",
            &TORCH_METADATA[..header_end],
            concat!(
                "Requires-Dist: nvidia-cuda-nvrtc-cu12==12.8.93; platform_system == \"Linux\"\n",
                "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == \"Linux\"\n",
                "Requires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\"\n",
                "Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\"\n",
                "Requires-Dist: nvidia-nccl-cu12==2.27.5\n",
                "Requires-Dist: triton==3.6.0; platform_system == \"Linux\"\n",
            ),
            &TORCH_METADATA[body_start..]
        )
    );

    let rocm = resolve_variant_markers(TORCH_METADATA, &torch_context("rocm7.0"))
        .unwrap()
        .unwrap();
    assert!(rocm.contains(
        "Requires-Dist: pytorch-triton-rocm==3.6.0; platform_system == \"Linux\"\n\
         Requires-Dist: optree"
    ));
    let null = resolve_variant_markers(TORCH_METADATA, &torch_context("null"))
        .unwrap()
        .unwrap();
    assert_eq!(
        requires_dist(&null)
            .iter()
            .filter(|r| r.contains("nvidia") || r.contains("triton"))
            .collect::<Vec<_>>(),
        ["triton==3.6.0; platform_system == \"Linux\""]
    );

    // Whatever the wheel, environment and extras, the rewritten requirements that apply are
    // the original ones that apply, with variant markers decided.
    for label in [
        "null", "cuda12.6", "cuda12.8", "cuda13.0", "xpu", "rocm7.0", "rocm7.1",
    ] {
        let ctx = torch_context(label);
        let text = resolve_variant_markers(TORCH_METADATA, &ctx)
            .unwrap()
            .unwrap();
        assert!(text.ends_with(&TORCH_METADATA[body_start..]), "{label}");
        for (env, extras) in environments() {
            let names = |metadata: &str, ctx: &VariantMarkerContext| -> Vec<String> {
                requires_dist(metadata)
                    .into_iter()
                    .filter(|r| requirement_applies_with_extras(r, &env, ctx, &extras).unwrap())
                    .map(|r| r.split(';').next().unwrap().trim().to_owned())
                    .collect()
            };
            assert_eq!(
                names(&text, &VariantMarkerContext::non_variant()),
                names(TORCH_METADATA, &ctx),
                "{label} in {env}"
            );
        }
    }
}

/// Reads core metadata the way pip does (the `email` parser) and parses every
/// `Requires-Dist` with `packaging`.
const READ_METADATA: &str = r#"
import email.parser, json, sys
from packaging.requirements import Requirement
out = []
for text in json.load(sys.stdin):
    message = email.parser.Parser().parsestr(text)
    out.append([str(Requirement(r)) for r in message.get_all("Requires-Dist") or []])
json.dump(out, sys.stdout)
"#;

#[test]
fn packaging_reads_the_rewritten_torch_metadata() {
    let labels = ["null", "cuda12.6", "cuda12.8", "cuda13.0", "xpu", "rocm7.0"];
    let texts: Vec<String> = labels
        .iter()
        .map(|l| {
            resolve_variant_markers(TORCH_METADATA, &torch_context(l))
                .unwrap()
                .unwrap()
        })
        .collect();
    let answers = python_json(READ_METADATA, &serde_json::json!(texts));
    for (i, label) in labels.iter().enumerate() {
        let read: Vec<&str> = answers[i]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(read.len(), requires_dist(&texts[i]).len(), "{label}");
        assert!(read.iter().all(|r| !r.contains("variant_")), "{label}");
        assert!(read.contains(&"filelock"), "{label}: {read:?}");
    }
    // What packaging made of the CUDA wheel's folded field.
    let cuda = answers[2].as_array().unwrap();
    assert!(cuda.contains(&serde_json::json!(
        "nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\""
    )));
}
