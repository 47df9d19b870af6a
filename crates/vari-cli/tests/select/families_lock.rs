//! `vari lock` through the build-family catalog (issue 35): one lock for CPU, CUDA 12.8 and
//! CUDA 13 classes against stand-ins of PyTorch's per-line indexes and CuPy's by-name builds on
//! 127.0.0.1, resolved by the real uv through vari's proxy.

use std::path::{Path, PathBuf};

use crate::common::{run, vari, Run};
use crate::families::{cpu, gpu, installed_names, pytorch_site, PyTorchSite, CP312};

/// The test venv's bin directory (uv) before the system's.
fn path_with_uv() -> String {
    format!(
        "{}:/usr/bin:/bin",
        vari_test_support::venv::test_venv().join("bin").display()
    )
}

/// The three classes' profiles: cpu, a100 (CUDA 12.8, sm_80), h100 (CUDA 13.0, sm_90).
fn classes(site: &PyTorchSite) -> [(String, PathBuf); 3] {
    let dir = site.dir.path();
    [
        ("cpu".to_owned(), cpu(dir)),
        ("a100".to_owned(), gpu(dir, "a100", "12.8", "8.0")),
        ("h100".to_owned(), gpu(dir, "h100", "13.0", "9.0")),
    ]
}

/// `vari lock REQS` for `classes` (by name) into `lock`, from the stand-in default index with
/// the stand-in's catalog (`catalog`: another catalog file instead).
fn lock(
    site: &PyTorchSite,
    lock: &Path,
    names: &[&str],
    reqs: &[&str],
    extra: &[&str],
    catalog: Option<&Path>,
) -> Run {
    lock_on(site, lock, names, reqs, extra, catalog, "3.12")
}

/// [`lock`] for Python `python`.
fn lock_on(
    site: &PyTorchSite,
    lock: &Path,
    names: &[&str],
    reqs: &[&str],
    extra: &[&str],
    catalog: Option<&Path>,
    python: &str,
) -> Run {
    let mut command = vari();
    command
        .current_dir(site.dir.path())
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", site.dir.path().join("uv-cache"))
        .args(["lock", "--index-url", &site.pypi])
        .args(["--python-version", python, "--python-platform"])
        .arg("x86_64-manylinux_2_28")
        .arg("--families")
        .arg(catalog.map_or_else(|| site.catalog(), Path::to_path_buf))
        .arg("-o")
        .arg(lock);
    for (name, profile) in classes(site) {
        if names.contains(&name.as_str()) {
            command
                .arg("--target")
                .arg(format!("{name}={}", profile.display()));
        }
    }
    command.args(reqs).args(extra);
    run(&mut command)
}

fn read(path: &Path) -> toml::Table {
    std::fs::read_to_string(path).unwrap().parse().unwrap()
}

/// Each `[[packages]]` entry's name, version and the targets that pinned it.
fn entries(lock: &toml::Table) -> Vec<(String, String, Vec<String>)> {
    lock["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let targets = p
                .get("tool")
                .and_then(|t| t.get("vari"))
                .and_then(|v| v.get("targets"))
                .and_then(|t| t.as_array())
                .map(|t| t.iter().map(|t| t.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default();
            (
                p["name"].as_str().unwrap().to_owned(),
                p["version"].as_str().unwrap().to_owned(),
                targets,
            )
        })
        .collect()
}

/// Each `[[packages]]` entry's `builds` as `family:build` texts.
fn builds(lock: &toml::Table) -> Vec<Vec<String>> {
    lock["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p.get("tool")
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
                .unwrap_or_default()
        })
        .collect()
}

/// `[[tool.vari.families]]`: each family's name, group and builds as `name (classes)`.
fn families(lock: &toml::Table) -> Vec<(String, Option<String>, Vec<String>)> {
    lock["tool"]["vari"]["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let builds = f["builds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    let classes: Vec<&str> = b["classes"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|c| c.as_str().unwrap())
                        .collect();
                    format!("{} ({})", b["name"].as_str().unwrap(), classes.join(", "))
                })
                .collect();
            (
                f["name"].as_str().unwrap().to_owned(),
                f.get("group").map(|g| g.as_str().unwrap().to_owned()),
                builds,
            )
        })
        .collect()
}

fn entry(name: &str, version: &str, targets: &[&str]) -> (String, String, Vec<String>) {
    (
        name.to_owned(),
        version.to_owned(),
        targets.iter().map(|t| t.to_string()).collect(),
    )
}

/// torch from its per-line indexes: the CPU class locks `+cpu`, the CUDA 12.8 class `+cu128`
/// and the CUDA 13 class `+cu130`, each from its own index, in one lock; numpy, which every
/// class pins alike, is one entry from the default index (never from PyTorch's, which lists a
/// newer one). Made again, the lock is the same bytes; `--check` says it is up to date, and
/// out of date once the catalog changes.
#[test]
fn a_lock_holds_each_class_s_torch_build() {
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
        ],
        CP312,
    );
    let path = site.dir.path().join("pylock.toml");
    let all = ["cpu", "a100", "h100"];
    lock(&site, &path, &all, &["torch", "numpy"], &[], None).expect_code(0);
    let text = std::fs::read_to_string(&path).unwrap();
    let locked = read(&path);
    assert_eq!(
        entries(&locked),
        [
            entry("numpy", "1.26.0", &all),
            entry("torch", "2.9.0+cpu", &["cpu"]),
            entry("torch", "2.9.0+cu128", &["a100"]),
            entry("torch", "2.9.0+cu130", &["h100"]),
        ],
        "{text}"
    );
    assert_eq!(
        builds(&locked),
        [
            Vec::<String>::new(),
            vec!["torch:cpu".to_owned()],
            vec!["torch:cu128".to_owned()],
            vec!["torch:cu130".to_owned()],
        ]
    );
    assert_eq!(
        families(&locked),
        [(
            "torch".to_owned(),
            Some("pytorch".to_owned()),
            vec![
                "cu130 (h100)".to_owned(),
                "cu128 (a100)".to_owned(),
                "cpu (cpu)".to_owned()
            ]
        )]
    );
    let cpu_build = &locked["tool"]["vari"]["families"][0]["builds"][2];
    assert_eq!(cpu_build["null"].as_bool(), Some(true), "{text}");
    let cu128 = &locked["tool"]["vari"]["families"][0]["builds"][1];
    assert!(
        cu128["requires"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str() == Some("nvidia :: cuda_version_lower_bound :: 12.0")),
        "{text}"
    );
    let packages = locked["packages"].as_array().unwrap();
    let wheel_url = |at: usize| {
        packages[at]["wheels"][0]["url"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        wheel_url(0).starts_with(&site.pypi.replace("/simple/", "/")),
        "{text}"
    );
    for (at, line) in [(1, "cpu"), (2, "cu128"), (3, "cu130")] {
        assert!(
            wheel_url(at).starts_with(&format!("{}/whl/{line}/torch-2.9.0%2B{line}", site.base)),
            "{text}"
        );
    }
    // Made again: the same bytes; checked: up to date.
    lock(&site, &path, &all, &["torch", "numpy"], &[], None).expect_code(0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    lock(&site, &path, &all, &["torch", "numpy"], &["--check"], None).expect_code(0);
    // The same catalog by another path: still up to date (its content is hashed, not its path).
    let copy_dir = site.dir.path().join("elsewhere");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let copy = copy_dir.join("catalog-copy.toml");
    std::fs::copy(site.catalog(), &copy).unwrap();
    lock(
        &site,
        &path,
        &all,
        &["torch", "numpy"],
        &["--check"],
        Some(&copy),
    )
    .expect_code(0);
    // Another catalog: the lock is out of date.
    let other = site.dir.path().join("other.toml");
    let changed = std::fs::read_to_string(site.catalog()).unwrap().replacen(
        "[[family]]\nname = \"xformers\"\n",
        "[[family]]\nname = \"xformers\"\nsummary = \"changed\"\n",
        1,
    );
    std::fs::write(&other, changed).unwrap();
    let stale = lock(
        &site,
        &path,
        &all,
        &["torch", "numpy"],
        &["--check"],
        Some(&other),
    )
    .expect_code(1);
    assert!(
        stale.stderr.contains("build-family catalog"),
        "{}",
        stale.stderr
    );
    // Without machine classes, no build is chosen: the default index's torch, as before.
    let any = site.dir.path().join("any.toml");
    lock(&site, &any, &[], &["torch"], &[], None).expect_code(0);
    let versions: Vec<(String, String)> = entries(&read(&any))
        .into_iter()
        .map(|(name, version, _)| (name, version))
        .collect();
    assert_eq!(versions, [("torch".to_owned(), "2.9.0".to_owned())]);
    // Without the catalog, every class locks PyPI's one build.
    let plain = site.dir.path().join("plain.toml");
    lock(&site, &plain, &all, &["torch"], &["--no-families"], None).expect_code(0);
    assert_eq!(entries(&read(&plain)), [entry("torch", "2.9.0", &all)]);
}

/// CuPy by name: the CUDA 12.8 class locks `cupy-cuda12x`, the CUDA 13 class `cupy-cuda13x`,
/// and the selector the proxy serves for `cupy` is no entry of the lock. A CPU class, for which
/// no CuPy build fits, is one error naming the family, the class and each build's reason.
#[test]
fn a_lock_holds_each_class_s_cupy_build_and_no_selector() {
    let site = pytorch_site(&[("torch", "cpu", "2.9.0", ">=3.10")], CP312);
    let path = site.dir.path().join("pylock.toml");
    lock(&site, &path, &["a100", "h100"], &["cupy"], &[], None).expect_code(0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        entries(&read(&path)),
        [
            entry("cupy-cuda12x", "14.2.0", &["a100"]),
            entry("cupy-cuda13x", "14.2.0", &["h100"]),
        ],
        "{text}"
    );
    assert!(!text.contains("vari:selector"), "{text}");
    assert_eq!(
        builds(&read(&path)),
        [vec!["cupy:cu12".to_owned()], vec!["cupy:cu13".to_owned()]]
    );

    let failed = lock(&site, &path, &["cpu", "a100"], &["cupy"], &[], None).expect_code(1);
    assert!(
        failed.stderr.contains(
            "cannot lock cupy for target cpu: no build of cupy fits: cu13 (cupy-cuda13x): "
        ),
        "{}",
        failed.stderr
    );
    assert_eq!(failed.stderr.trim().lines().count(), 1, "{}", failed.stderr);
}

/// The group rule in a lock: torchvision has no cu130 build, so the CUDA 13 class takes cu128
/// for both torch and torchvision, while torch alone would take cu130.
#[test]
fn torch_and_torchvision_lock_one_line_per_class() {
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
            ("torchvision", "cu128", "0.24.0", ">=3.10"),
            ("torchvision", "cpu", "0.24.0", ">=3.10"),
        ],
        CP312,
    );
    let path = site.dir.path().join("pylock.toml");
    let all = ["cpu", "a100", "h100"];
    lock(&site, &path, &all, &["torch", "torchvision"], &[], None).expect_code(0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        entries(&read(&path)),
        [
            entry("torch", "2.9.0+cpu", &["cpu"]),
            entry("torch", "2.9.0+cu128", &["a100", "h100"]),
            entry("torchvision", "0.24.0+cpu", &["cpu"]),
            entry("torchvision", "0.24.0+cu128", &["a100", "h100"]),
        ],
        "{text}"
    );
    let locked = read(&path);
    assert_eq!(
        families(&locked),
        [
            (
                "torch".to_owned(),
                Some("pytorch".to_owned()),
                vec!["cu128 (a100, h100)".to_owned(), "cpu (cpu)".to_owned()]
            ),
            (
                "torchvision".to_owned(),
                Some("pytorch".to_owned()),
                vec!["cu128 (a100, h100)".to_owned(), "cpu (cpu)".to_owned()]
            ),
        ]
    );
}

/// Lock for three classes, then `vari sync` each class's profile into an environment of its own
/// with the real uv: each gets its class's torch build and the shared numpy, nothing else.
#[test]
fn each_class_syncs_its_own_builds_from_one_lock() {
    use vari_test_support::venv::{bare_venv, uv};
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
        ],
        "py3-none-any",
    );
    let path = site.dir.path().join("pylock.toml");
    let all = ["cpu", "a100", "h100"];
    let python = "3.11";
    lock_on(&site, &path, &all, &["torch", "numpy"], &[], None, python).expect_code(0);
    for ((name, profile), line) in classes(&site).into_iter().zip(["cpu", "cu128", "cu130"]) {
        let venv = site.dir.path().join(format!("venv-{name}"));
        bare_venv(&venv);
        let mut command = vari();
        command
            .env("VARI_CACHE_DIR", site.dir.path().join("cache"))
            .env("UV_CACHE_DIR", site.dir.path().join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .arg("sync")
            .arg(&path)
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(&profile)
            .arg("--installer")
            .arg(uv());
        run(&mut command).expect_code(0);
        assert_eq!(
            installed_names(&venv, |n| n.ends_with(".dist-info")),
            [
                "numpy-1.26.0.dist-info".to_owned(),
                format!("torch-2.9.0+{line}.dist-info")
            ],
            "class {name}"
        );
    }
}

/// A family by extra: JAX's CUDA 12 class locks JAX's own upstream wheel (its upstream URL and
/// hash, no rewritten copy) with the CUDA 12 plugin, the CUDA 13 class the CUDA 13 plugin, the
/// CPU class neither; each plugin says the build of jax that brings it in.
#[test]
fn a_family_by_extra_locks_the_upstream_wheel_and_each_class_s_extra() {
    let site = pytorch_site(&[("torch", "cpu", "2.9.0", ">=3.10")], CP312);
    let (_jax, index) = crate::families::jax_site(site.dir.path());
    let path = site.dir.path().join("pylock.toml");
    let mut command = vari();
    command
        .current_dir(site.dir.path())
        .env("PATH", path_with_uv())
        .env("UV_CACHE_DIR", site.dir.path().join("uv-cache"))
        .args(["lock", "--index-url", &index])
        .args(["--python-version", "3.12", "--python-platform"])
        .arg("x86_64-manylinux_2_28")
        .arg("-o")
        .arg(&path);
    for (name, profile) in classes(&site) {
        command
            .arg("--target")
            .arg(format!("{name}={}", profile.display()));
    }
    command.arg("jax");
    run(&mut command).expect_code(0);
    let text = std::fs::read_to_string(&path).unwrap();
    let locked = read(&path);
    assert_eq!(
        entries(&locked),
        [
            entry("jax", "0.7.2", &["cpu", "a100", "h100"]),
            entry("jax-cuda12-plugin", "0.7.2", &["a100"]),
            entry("jax-cuda13-plugin", "0.7.2", &["h100"]),
            entry("jaxlib", "0.7.2", &["cpu", "a100", "h100"]),
        ],
        "{text}"
    );
    assert_eq!(
        builds(&locked),
        [
            Vec::<String>::new(),
            vec!["jax:cu12".to_owned()],
            vec!["jax:cu13".to_owned()],
            Vec::new(),
        ],
        "{text}"
    );
    let jax = &locked["packages"].as_array().unwrap()[0];
    assert!(
        jax["wheels"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with(&index.replace("/simple/", "/")),
        "{text}"
    );
    assert_eq!(
        families(&locked),
        [(
            "jax".to_owned(),
            Some("jax".to_owned()),
            vec![
                "cu13 (h100)".to_owned(),
                "cu12 (a100)".to_owned(),
                "cpu (cpu)".to_owned()
            ]
        )],
        "{text}"
    );
}
