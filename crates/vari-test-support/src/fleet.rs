//! A local upstream built like the real indexes, and the machine classes of a mixed fleet, for
//! the tests of `vari lock`, `sync`, `export`, `mirror` and the multi-target proxy.
//!
//! The upstream ([`upstream`]) is a flat directory of wheels with their `*-variants.json`
//! (serve it with [`crate::index`] or build a site from it):
//!
//! - `vari-demo 1.0.0`, the PyTorch-like release of `examples/demo`: six variants (`null`,
//!   `cu126`, `cu128`, `cu130`, `rocm6.4`, `xpu`) and a plain wheel; every variant wheel
//!   requires `vari-demo-cuda-runtime` behind `"nvidia" in variant_namespaces`, so only the
//!   CUDA builds bring it in;
//! - `numlike 2.3.4`, NumPy-like x86-64 level builds (`null`, `x86_64_v2`, `x86_64_v3`,
//!   `x86_64_v4`) and a plain wheel;
//! - an ordinary tree: `app-like 1.0` requires `vari-demo`, `numlike` and `reqlike`;
//!   `reqlike` (1.0 and 1.1) requires `idnalike`, and `sockslike` with its `socks` extra;
//!   `idnalike 3.0`, `sockslike 1.0`.
//!
//! The classes ([`write_profiles`]) are facts profiles: a CPU-only x86-64-v3 machine, an
//! A100-like node with a CUDA 12.8 driver, a node with a CUDA 13.0 driver, and an AMD MI300-like
//! node with ROCm 6.4; [`expected`] says what each installs.

use std::path::{Path, PathBuf};

use crate::paths::demo;
use crate::wheels::{level_variants, one_variant, TestWheel};

/// The labels of `numlike`'s variants.
pub const NUMLIKE_LABELS: [&str; 4] = ["null", "x86_64_v2", "x86_64_v3", "x86_64_v4"];

/// Writes the upstream's wheels and `*-variants.json` into `dir` (created if missing);
/// returns `dir`.
pub fn upstream(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create the upstream directory");
    // vari-demo and its CUDA runtime, as shipped in examples/demo.
    for entry in std::fs::read_dir(demo()).expect("read examples/demo") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.ends_with(".whl") || name.ends_with("-variants.json") {
            std::fs::copy(&path, dir.join(name)).expect("copy a demo file");
        }
    }
    // numlike: x86-64 level builds, a null variant and a plain wheel.
    let document = level_variants(&NUMLIKE_LABELS);
    std::fs::write(dir.join("numlike-2.3.4-variants.json"), &document)
        .expect("write numlike's variants.json");
    for label in NUMLIKE_LABELS {
        let filename = format!("numlike-2.3.4-py3-none-any-{label}.whl");
        let json = one_variant(&document, label);
        TestWheel::new(&filename)
            .variant_json(Some(&json))
            .write(dir);
    }
    TestWheel::new("numlike-2.3.4-py3-none-any.whl").write(dir);
    // The ordinary tree.
    TestWheel::new("app_like-1.0-py3-none-any.whl")
        .requires(&["vari-demo>=1.0", "numlike>=2", "reqlike>=1.0"])
        .write(dir);
    for version in ["1.0", "1.1"] {
        TestWheel::new(&format!("reqlike-{version}-py3-none-any.whl"))
            .requires(&["idnalike>=3", "sockslike>=1; extra == \"socks\""])
            .write(dir);
    }
    TestWheel::new("idnalike-3.0-py3-none-any.whl").write(dir);
    TestWheel::new("sockslike-1.0-py3-none-any.whl").write(dir);
    dir.to_owned()
}

/// The facts of each machine class, by name.
pub const PROFILES: [(&str, &str); 4] = [
    (
        "cpu",
        "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[x86_64]\nlevel = 3\n",
    ),
    (
        "a100",
        "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.0\"\n[x86_64]\nlevel = 3\n",
    ),
    (
        "cuda13",
        "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[nvidia]\ncuda_version = \"13.0\"\ncompute_capability = \"9.0\"\n[x86_64]\nlevel = 4\n",
    ),
    (
        "mi300",
        "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[amd]\ngfx_arch = \"gfx942\"\nrocm_version = \"6.4\"\n[x86_64]\nlevel = 2\n",
    ),
];

/// Writes each class's profile as `{dir}/{name}.toml`; returns `(name, path)` in
/// [`PROFILES`]'s order.
pub fn write_profiles(dir: &Path) -> Vec<(String, PathBuf)> {
    std::fs::create_dir_all(dir).expect("create the profiles directory");
    PROFILES
        .iter()
        .map(|(name, facts)| {
            let path = dir.join(format!("{name}.toml"));
            std::fs::write(&path, facts).expect("write a profile");
            (name.to_string(), path)
        })
        .collect()
}

/// What a class installs from the upstream: `vari-demo`'s label, `numlike`'s label, and
/// whether `vari-demo-cuda-runtime` comes with it.
pub fn expected(class: &str) -> (&'static str, &'static str, bool) {
    match class {
        "cpu" => ("null", "x86_64_v3", false),
        "a100" => ("cu128", "x86_64_v3", true),
        "cuda13" => ("cu130", "x86_64_v4", true),
        "mi300" => ("rocm6.4", "x86_64_v2", false),
        other => panic!("no class {other:?} in vari_test_support::fleet::PROFILES"),
    }
}

/// Everything a class ends up with when it installs `app-like`, as `vari list` names them
/// (normalised name, label), sorted: the tree, the two variant projects with the class's
/// labels, and the CUDA runtime where the class's variant asks for it.
pub fn installed(class: &str) -> Vec<(String, Option<String>)> {
    let (demo, numlike, cuda) = expected(class);
    let mut installed = vec![
        ("app-like".to_owned(), None),
        ("idnalike".to_owned(), None),
        ("numlike".to_owned(), Some(numlike.to_owned())),
        ("reqlike".to_owned(), None),
        ("vari-demo".to_owned(), Some(demo.to_owned())),
    ];
    if cuda {
        installed.push(("vari-demo-cuda-runtime".to_owned(), None));
    }
    installed.sort();
    installed
}
