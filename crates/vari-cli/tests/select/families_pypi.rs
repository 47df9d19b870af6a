//! Selection within the built-in families against PyPI itself (issue 35): `vari select NAME
//! --no-deps` for cupy, cudf (RAPIDS), onnxruntime, faiss, tensorflow, tensorrt, jax and JAX's
//! CUDA plugin on simulated CPU, CUDA 11.8, 12.8 and 13.0 machines (profiles written here).
//!
//! The assertions are the rule, not today's versions: the chosen build is the one of the
//! machine's CUDA line (or the CPU build, or an error naming each build's reason where none
//! fits), its version is the newest that build offers on PyPI for CPython 3.12 on
//! manylinux_2_28 x86_64 (read here with vari's own index client, from PyPI's simple pages and,
//! where the line is in a build's requirements, its wheels' core metadata), and the family's
//! explanation names the other builds. Metadata only: select reads simple pages and, for builds
//! whose line is in their requirements, a wheel's core metadata by range requests, never a
//! whole wheel. Skipped with a message when PyPI cannot be reached.

use std::path::{Path, PathBuf};

use pep440_rs::Version;
use vari_client::{ClientSettings, IndexClient, IndexFile, IndexUrl};

use crate::common::{run, vari, Run};

/// The simulated machines: a name, and the CUDA driver and compute capability of its GPU.
const CPU: (&str, Option<(&str, &str)>) = ("cpu", None);
const CU118: (&str, Option<(&str, &str)>) = ("t4-cu118", Some(("11.8", "7.5")));
const CU128: (&str, Option<(&str, &str)>) = ("a100-cu128", Some(("12.8", "8.0")));
const CU130: (&str, Option<(&str, &str)>) = ("h100-cu130", Some(("13.0", "9.0")));

/// A hardware-facts profile for `machine`, as `dir/NAME.toml` (the format of the profiles in
/// families.rs).
fn profile(dir: &Path, machine: (&str, Option<(&str, &str)>)) -> PathBuf {
    let (name, gpu) = machine;
    let path = dir.join(format!("{name}.toml"));
    let text = match gpu {
        Some((cuda, capability)) => format!(
            "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[nvidia]\ncuda_version = \
             \"{cuda}\"\ncompute_capability = \"{capability}\"\n"
        ),
        None => {
            "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 3\n".to_owned()
        }
    };
    std::fs::write(&path, text).unwrap();
    path
}

/// PyPI as the test reads it, with vari's own index client (its own HTTP cache).
struct PyPI {
    client: IndexClient,
    runtime: tokio::runtime::Runtime,
}

impl PyPI {
    /// Connects, or says why PyPI cannot be reached (one simple page is asked for).
    fn connect(cache: &Path) -> Result<Self, String> {
        let settings = ClientSettings {
            indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
            cache_dir: Some(cache.to_owned()),
            ..ClientSettings::default()
        };
        let pypi = PyPI {
            client: IndexClient::new(settings).map_err(|e| e.to_string())?,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        };
        pypi.runtime
            .block_on(pypi.client.project(&"cupy-cuda12x".parse().unwrap()))
            .map_err(|e| e.to_string())?;
        Ok(pypi)
    }

    /// The files of `name` a CPython 3.12 manylinux_2_28 x86_64 machine can install (wheels
    /// only, not yanked, not pre-releases, `requires-python` allowing 3.12), oldest first.
    fn installable(&self, name: &str) -> Vec<IndexFile> {
        self.wheels(name, false)
    }

    /// [`PyPI::installable`], pre-releases included when `pre`.
    fn wheels(&self, name: &str, pre: bool) -> Vec<IndexFile> {
        let project = self
            .runtime
            .block_on(self.client.project(&name.parse().unwrap()))
            .unwrap_or_else(|e| panic!("{name} on PyPI: {e}"));
        let python = Version::new([3, 12, 0]);
        let mut files: Vec<IndexFile> = project
            .files
            .into_iter()
            .filter(|f| {
                f.yanked.is_none()
                    && (pre || !f.version().any_prerelease())
                    && f.requires_python
                        .as_ref()
                        .is_none_or(|r| r.contains(&python))
                    && cp312_manylinux_2_28_x86_64(&f.filename)
            })
            .collect();
        files.sort_by(|a, b| a.version().cmp(b.version()));
        files
    }

    /// The newest version of `name` this machine can install, if any.
    fn newest(&self, name: &str) -> Option<Version> {
        self.installable(name).last().map(|f| f.version().clone())
    }

    /// The CUDA major line `file`'s requirements name (read from its core metadata), if any.
    fn line(&self, file: &IndexFile) -> Option<u32> {
        let text = self
            .runtime
            .block_on(self.client.core_metadata(file))
            .unwrap_or_else(|e| panic!("{}: core metadata: {e}", file.filename));
        text.lines()
            .filter_map(|l| l.strip_prefix("Requires-Dist:"))
            .filter_map(|r| requirement_line(r.trim()))
            .max()
    }

    /// The newest version of `name` whose requirements name CUDA `major` or an older line, or
    /// no line (newest first, at most eight reads: vari reads as many), with the newest
    /// version of all.
    fn newest_of_line(&self, name: &str, major: u32) -> (Version, Version) {
        let mut versions: Vec<IndexFile> = self.installable(name);
        versions.dedup_by(|a, b| a.version() == b.version());
        let newest = versions.last().expect("a version").version().clone();
        for file in versions.iter().rev().take(8) {
            if self.line(file).is_none_or(|line| line <= major) {
                return (file.version().clone(), newest);
            }
        }
        panic!("{name}: none of its newest eight versions is a CUDA {major} build")
    }
}

/// The CUDA major line one `Requires-Dist` names: a `-cuNN` suffix or extra on an NVIDIA
/// library, or the version a toolkit-versioned library (`nvidia-cuda-runtime~=13.0`) starts
/// from. Other libraries (cuDNN, cuFFT) version on their own.
fn requirement_line(requirement: &str) -> Option<u32> {
    let spec = requirement.split(';').next()?.trim().to_ascii_lowercase();
    let spec = spec.replace('_', "-");
    if !spec.starts_with("nvidia-") {
        return None;
    }
    for major in [11, 12, 13] {
        for suffix in [format!("-cu{major}"), format!("[cu{major}]")] {
            if let Some(at) = spec.find(&suffix) {
                let next = spec[at + suffix.len()..].chars().next();
                if next.is_none_or(|c| !c.is_ascii_alphanumeric()) {
                    return Some(major);
                }
            }
        }
    }
    const TOOLKIT: [&str; 6] = [
        "nvidia-cuda-runtime",
        "nvidia-cuda-nvrtc",
        "nvidia-cuda-cupti",
        "nvidia-cublas",
        "nvidia-nvjitlink",
        "nvidia-cuda-nvcc",
    ];
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .unwrap_or(spec.len());
    if !TOOLKIT.contains(&&spec[..name_end]) {
        return None;
    }
    let rest = spec[name_end..].trim_start_matches([' ', '(']);
    let version = rest.trim_start_matches(['~', '=', '>']);
    (rest.len() != version.len())
        .then(|| version.split('.').next()?.trim().parse().ok())
        .flatten()
}

/// Whether a wheel file name's tags let CPython 3.12 on manylinux_2_28 x86_64 install it.
fn cp312_manylinux_2_28_x86_64(filename: &str) -> bool {
    let Some(stem) = filename.strip_suffix(".whl") else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return false;
    }
    let (python, abi, platform) = (
        parts[parts.len() - 3],
        parts[parts.len() - 2],
        parts[parts.len() - 1],
    );
    let python_ok = python.split('.').any(|p| match p {
        "cp312" => abi == "cp312" || abi == "abi3" || abi == "none",
        "py3" | "py312" => abi == "none",
        _ => {
            abi == "abi3"
                && p.strip_prefix("cp3")
                    .and_then(|m| m.parse::<u32>().ok())
                    .is_some_and(|m| m <= 12)
        }
    });
    let platform_ok = platform.split('.').any(|p| match p {
        "any" | "manylinux1_x86_64" | "manylinux2010_x86_64" | "manylinux2014_x86_64" => true,
        _ => p
            .strip_prefix("manylinux_2_")
            .and_then(|rest| rest.strip_suffix("_x86_64"))
            .and_then(|minor| minor.parse::<u32>().ok())
            .is_some_and(|minor| minor <= 28),
    });
    python_ok && platform_ok
}

/// `vari select NAME --no-deps --json` for CPython 3.12 on manylinux_2_28 x86_64 under
/// `profile`, against PyPI (vari's default index).
fn select(name: &str, profile: &Path) -> Run {
    let mut cmd = vari();
    cmd.args([
        "select",
        name,
        "--no-deps",
        "--json",
        "--python-version",
        "3.12",
        "--python-platform",
        "x86_64-manylinux_2_28",
    ])
    .arg("--profile")
    .arg(profile);
    run(&mut cmd)
}

/// Asserts that selecting `family` chose the build asked for as `requirement` (`cupy-cuda12x`,
/// `tensorflow[and-cuda]`, `faiss-cpu`), published as `distribution`, at `version`, and that
/// the explanation lists each of `others` (by their requirements) with a verdict. Returns the
/// family's `choice` object.
fn expect_build(
    out: Run,
    family: &str,
    requirement: &str,
    distribution: &str,
    version: &Version,
    others: &[&str],
) -> serde_json::Value {
    let json = out.expect_code(0).json();
    crate::common::assert_json_schema("select", &json);
    let context = format!("{family}: {json:#}");
    assert_eq!(json["families"][0]["requirement"], family, "{context}");
    let choice = json["families"][0]["choice"].clone();
    assert_eq!(choice["chosen"]["requirement"], requirement, "{context}");
    assert_eq!(choice["chosen"]["distribution"], distribution, "{context}");
    let selection = &json["selections"][0];
    assert_eq!(selection["name"], distribution, "{context}");
    let chosen: Version = selection["version"].as_str().unwrap().parse().unwrap();
    assert_eq!(&chosen, version, "{context}");
    let builds = choice["builds"].as_array().unwrap();
    for other in others.iter().chain([&requirement]) {
        let entry = builds
            .iter()
            .find(|b| b["distribution"] == *other)
            .unwrap_or_else(|| panic!("the explanation does not name {other}: {context}"));
        assert!(entry["verdict"]["kind"].is_string(), "{context}");
    }
    choice
}

/// The entry of `choice`'s explanation for the build published as `distribution` whose verdict
/// is `kind`.
fn verdict<'a>(
    choice: &'a serde_json::Value,
    distribution: &str,
    kind: &str,
) -> &'a serde_json::Value {
    choice["builds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["distribution"] == distribution && b["verdict"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} entry for {distribution}: {choice:#}"))
}

/// The error when no build of `family` fits: one line naming each build and its reason.
fn expect_none_fits(out: Run, family: &str, builds: &[&str], reason: &str) {
    let mut fragments = vec![format!("{family}: no build of {family} fits: ")];
    fragments.extend(builds.iter().map(|b| format!("{b}: ")));
    fragments.push(reason.to_owned());
    let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
    out.expect_one_error(&fragments);
}

const NO_NVIDIA: &str = "namespace `nvidia` is not supported by the target";
const CUDA_BOUND: &str = "no supported value for `nvidia :: cuda_version_lower_bound`";

#[test]
fn builtin_families_choose_by_the_machines_cuda_line_on_pypi() {
    let dir = tempfile::tempdir().unwrap();
    let pypi = match PyPI::connect(&dir.path().join("cache")) {
        Ok(pypi) => pypi,
        Err(e) => {
            eprintln!("skipped: PyPI cannot be reached ({e})");
            return;
        }
    };
    let newest = |name: &str| {
        pypi.newest(name)
            .unwrap_or_else(|| panic!("{name}: no wheel for CPython 3.12 on PyPI"))
    };
    let cpu = profile(dir.path(), CPU);
    let cu118 = profile(dir.path(), CU118);
    let cu128 = profile(dir.path(), CU128);
    let cu130 = profile(dir.path(), CU130);

    // CuPy: one name per CUDA major; `cupy` itself is an sdist, so a CPU machine gets none.
    let cupy = ["cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"];
    expect_none_fits(
        select("cupy", &cpu),
        "cupy",
        &[
            "cu13 (cupy-cuda13x)",
            "cu12 (cupy-cuda12x)",
            "cu11 (cupy-cuda11x)",
        ],
        NO_NVIDIA,
    );
    for (machine, build) in [
        (&cu118, "cupy-cuda11x"),
        (&cu128, "cupy-cuda12x"),
        (&cu130, "cupy-cuda13x"),
    ] {
        let choice = expect_build(
            select("cupy", machine),
            "cupy",
            build,
            build,
            &newest(build),
            &cupy,
        );
        // The lines newer than the machine's are unsupported, with the reason.
        if build != "cupy-cuda13x" {
            assert!(
                verdict(&choice, "cupy-cuda13x", "unsupported")["verdict"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains(CUDA_BOUND),
                "{choice:#}"
            );
        }
    }

    // RAPIDS (cudf): CUDA 12 and 13 builds only.
    let cudf = ["cu13 (cudf-cu13)", "cu12 (cudf-cu12)"];
    expect_none_fits(select("cudf", &cpu), "cudf", &cudf, NO_NVIDIA);
    expect_none_fits(select("cudf", &cu118), "cudf", &cudf, CUDA_BOUND);
    for (machine, build) in [(&cu128, "cudf-cu12"), (&cu130, "cudf-cu13")] {
        expect_build(
            select("cudf", machine),
            "cudf",
            build,
            build,
            &newest(build),
            &["cudf-cu13", "cudf-cu12"],
        );
    }

    // ONNX Runtime: `onnxruntime` is the CPU build; onnxruntime-gpu's line is read from each
    // version's requirements, so a CUDA 12 machine gets its newest CUDA 12 version and the
    // explanation names the newer CUDA 13 versions it could not take.
    let ort = ["onnxruntime", "onnxruntime-gpu"];
    for machine in [&cpu, &cu118] {
        let choice = expect_build(
            select("onnxruntime", machine),
            "onnxruntime",
            "onnxruntime",
            "onnxruntime",
            &newest("onnxruntime"),
            &ort,
        );
        assert_eq!(choice["chosen"]["null"], true, "{choice:#}");
        verdict(&choice, "onnxruntime-gpu", "unsupported");
    }
    let (cuda12, gpu_newest) = pypi.newest_of_line("onnxruntime-gpu", 12);
    let choice = expect_build(
        select("onnxruntime", &cu128),
        "onnxruntime",
        "onnxruntime-gpu",
        "onnxruntime-gpu",
        &cuda12,
        &ort,
    );
    if cuda12 != gpu_newest {
        let newer = verdict(&choice, "onnxruntime-gpu", "unsupported");
        assert_eq!(newer["newest"], gpu_newest.to_string(), "{choice:#}");
        assert_eq!(newer["newer_than_chosen"], true, "{choice:#}");
        assert!(
            newer["verdict"]["reason"]
                .as_str()
                .unwrap()
                .contains(CUDA_BOUND),
            "{choice:#}"
        );
    }
    expect_build(
        select("onnxruntime", &cu130),
        "onnxruntime",
        "onnxruntime-gpu",
        "onnxruntime-gpu",
        &gpu_newest,
        &ort,
    );

    // Faiss: faiss-cpu, faiss-gpu-cu11 and faiss-gpu-cu12 release on their own schedules; a
    // CUDA 13 driver runs the CUDA 12 build (there is no CUDA 13 build).
    let faiss = ["faiss-gpu-cu12", "faiss-gpu-cu11", "faiss-cpu"];
    for (machine, build) in [
        (&cpu, "faiss-cpu"),
        (&cu118, "faiss-gpu-cu11"),
        (&cu128, "faiss-gpu-cu12"),
        (&cu130, "faiss-gpu-cu12"),
    ] {
        let choice = expect_build(
            select("faiss", machine),
            "faiss",
            build,
            build,
            &newest(build),
            &faiss,
        );
        assert_eq!(choice["chosen"]["null"], build == "faiss-cpu", "{choice:#}");
    }

    // TensorFlow: plain `tensorflow` is the CPU build, `tensorflow[and-cuda]` the CUDA build
    // whose line is read from the libraries the extra requires.
    let tf = ["tensorflow[and-cuda]", "tensorflow"];
    for machine in [&cpu, &cu118] {
        let choice = expect_build(
            select("tensorflow", machine),
            "tensorflow",
            "tensorflow",
            "tensorflow",
            &newest("tensorflow"),
            &tf,
        );
        assert_eq!(choice["chosen"]["null"], true, "{choice:#}");
    }
    for (machine, major) in [(&cu128, 12), (&cu130, 13)] {
        let (version, _) = pypi.newest_of_line("tensorflow", major);
        expect_build(
            select("tensorflow", machine),
            "tensorflow",
            "tensorflow[and-cuda]",
            "tensorflow",
            &version,
            &tf,
        );
    }

    // TensorRT: tensorrt-cu12 and tensorrt-cu13 are published on PyPI as sdists that fetch
    // NVIDIA's libraries when built (tensorrt-cu13 has one 0.0.0a0 placeholder wheel), so where
    // PyPI has no wheel for this Python the error names each build and why.
    let trt = ["cu13 (tensorrt-cu13)", "cu12 (tensorrt-cu12)"];
    expect_none_fits(select("tensorrt", &cpu), "tensorrt", &trt, NO_NVIDIA);
    expect_none_fits(select("tensorrt", &cu118), "tensorrt", &trt, CUDA_BOUND);
    for (machine, build, own) in [
        (&cu128, "tensorrt-cu12", "cu12"),
        (&cu130, "tensorrt-cu13", "cu13"),
    ] {
        let out = select("tensorrt", machine);
        match pypi.newest(build) {
            Some(version) => {
                expect_build(
                    out,
                    "tensorrt",
                    build,
                    build,
                    &version,
                    &["tensorrt-cu13", "tensorrt-cu12"],
                );
            }
            // No wheel at all (tensorrt-cu12), or pre-releases only (tensorrt-cu13's
            // 0.0.0a0 placeholder), which a plain requirement does not allow.
            None if pypi.wheels(build, true).is_empty() => expect_none_fits(
                out,
                "tensorrt",
                &trt,
                &format!("{own} ({build}): fits, but offers no wheel this target can install"),
            ),
            None => expect_none_fits(
                out,
                "tensorrt",
                &trt,
                &format!("{own} ({build}): fits, but of its "),
            ),
        }
    }

    // JAX: plain `jax` is the CPU build, `jax[cuda12]` / `jax[cuda13]` the CUDA builds; the
    // plugin family asked for by its own name.
    let jax = ["jax[cuda13]", "jax[cuda12]", "jax"];
    for (machine, build) in [
        (&cpu, "jax"),
        (&cu118, "jax"),
        (&cu128, "jax[cuda12]"),
        (&cu130, "jax[cuda13]"),
    ] {
        expect_build(
            select("jax", machine),
            "jax",
            build,
            "jax",
            &newest("jax"),
            &jax,
        );
    }
    let plugin = ["cu13 (jax-cuda13-plugin)", "cu12 (jax-cuda12-plugin)"];
    expect_none_fits(
        select("jax-cuda-plugin", &cpu),
        "jax-cuda-plugin",
        &plugin,
        NO_NVIDIA,
    );
    expect_none_fits(
        select("jax-cuda-plugin", &cu118),
        "jax-cuda-plugin",
        &plugin,
        CUDA_BOUND,
    );
    for (machine, build) in [(&cu128, "jax-cuda12-plugin"), (&cu130, "jax-cuda13-plugin")] {
        expect_build(
            select("jax-cuda-plugin", machine),
            "jax-cuda-plugin",
            build,
            build,
            &newest(build),
            &["jax-cuda13-plugin", "jax-cuda12-plugin"],
        );
    }
}

#[test]
fn the_test_reads_wheel_tags_and_cuda_lines_as_pip_would() {
    for (name, ok) in [
        (
            "cupy_cuda12x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl",
            true,
        ),
        (
            "cudf_cu12-26.10.2-cp311-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
            true,
        ),
        ("jax-0.12.0.1-py3-none-any.whl", true),
        ("x-1.0-cp312-cp312-manylinux_2_34_x86_64.whl", false),
        ("x-1.0-cp313-cp313-manylinux_2_28_x86_64.whl", false),
        ("x-1.0-cp312-cp312-win_amd64.whl", false),
        ("x-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", false),
        ("x-1.0.tar.gz", false),
    ] {
        assert_eq!(cp312_manylinux_2_28_x86_64(name), ok, "{name}");
    }
    for (requirement, line) in [
        (
            "nvidia-cuda-runtime-cu12~=12.0; extra == \"cuda\"",
            Some(12),
        ),
        ("nvidia-cuda-runtime~=13.0; extra == \"cuda\"", Some(13)),
        ("nvidia-cufft~=12.0; extra == \"cuda\"", None),
        ("nvidia-cudnn-cu13~=9.0; extra == \"cudnn\"", Some(13)),
        ("nvidia_cublas_cu11", Some(11)),
        ("nvidia-cutlass-dsl[cu13]==4.8.0", Some(13)),
        ("numpy>=1.21", None),
    ] {
        assert_eq!(requirement_line(requirement), line, "{requirement}");
    }
}

/// One `vari lock cupy faiss onnxruntime` against PyPI itself for a CUDA 12.8 and a CUDA 13.0
/// class (metadata only: uv reads PEP 658 metadata, the files' hashes come from PyPI's pages):
/// each class locks the builds `vari select` chooses for it, CuPy's of its own CUDA line, and
/// each build's entry says which build brings it in. Skipped with a message when PyPI cannot be
/// reached.
#[test]
fn one_lock_on_pypi_holds_each_class_s_builds() {
    let dir = tempfile::tempdir().unwrap();
    let pypi = match PyPI::connect(&dir.path().join("cache")) {
        Ok(pypi) => pypi,
        Err(e) => {
            eprintln!("skipped: PyPI cannot be reached ({e})");
            return;
        }
    };
    let cu128 = profile(dir.path(), CU128);
    let cu130 = profile(dir.path(), CU130);
    let lock = dir.path().join("pylock.toml");
    let mut command = vari();
    command
        .current_dir(dir.path())
        .env(
            "PATH",
            format!(
                "{}:/usr/bin:/bin",
                vari_test_support::venv::test_venv().join("bin").display()
            ),
        )
        .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
        .env("VARI_CACHE_DIR", dir.path().join("cache"))
        .args(["lock", "--index-url", "https://pypi.org/simple/"])
        .args(["--python-version", "3.12", "--python-platform"])
        .arg("x86_64-manylinux_2_28")
        .arg("--target")
        .arg(format!("a100={}", cu128.display()))
        .arg("--target")
        .arg(format!("h100={}", cu130.display()))
        .args(["cupy", "faiss", "onnxruntime", "-o"])
        .arg(&lock);
    run(&mut command).expect_code(0);
    let text = std::fs::read_to_string(&lock).unwrap();
    let locked: toml::Table = text.parse().unwrap();
    // Per package name, its versions and each one's builds.
    let mut entries: Vec<(String, String, Vec<String>)> = Vec::new();
    for package in locked["packages"].as_array().unwrap() {
        let builds = package
            .get("tool")
            .and_then(|t| t.get("vari"))
            .and_then(|v| v.get("builds"))
            .and_then(|b| b.as_array())
            .map(|b| {
                b.iter()
                    .map(|b| {
                        format!(
                            "{}:{}",
                            b["family"].as_str().unwrap(),
                            b["build"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        entries.push((
            package["name"].as_str().unwrap().to_owned(),
            package["version"].as_str().unwrap().to_owned(),
            builds,
        ));
    }
    let find = |name: &str| {
        entries
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, v, b)| (v.clone(), b.clone()))
            .collect::<Vec<_>>()
    };
    let newest = |name: &str| pypi.newest(name).unwrap().to_string();
    assert_eq!(
        find("cupy-cuda12x"),
        [(newest("cupy-cuda12x"), vec!["cupy:cu12".to_owned()])],
        "{text}"
    );
    assert_eq!(
        find("cupy-cuda13x"),
        [(newest("cupy-cuda13x"), vec!["cupy:cu13".to_owned()])],
        "{text}"
    );
    // Faiss: the CUDA 12 build on both classes, at its own newest version; no faiss-cpu.
    assert_eq!(
        find("faiss-gpu-cu12"),
        [(newest("faiss-gpu-cu12"), Vec::new())],
        "{text}"
    );
    assert!(
        find("faiss-cpu").is_empty() && find("faiss").is_empty(),
        "{text}"
    );
    // ONNX Runtime: the GPU build on both, each at the newest version of its class's line
    // (the line is read from each version's requirements); never the CPU build.
    let (cuda12, newest_gpu) = pypi.newest_of_line("onnxruntime-gpu", 12);
    let mut wanted = vec![cuda12.to_string(), newest_gpu.to_string()];
    wanted.dedup();
    let mut versions: Vec<String> = find("onnxruntime-gpu")
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    versions.sort();
    wanted.sort();
    assert_eq!(versions, wanted, "{text}");
    assert!(find("onnxruntime").is_empty(), "{text}");
}
