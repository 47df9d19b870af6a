//! `vari mirror --slim`: stand-in CUDA wheels (libraries carrying the real fat-binary sections
//! of `testdata/fatbin/`) mirrored for two machine classes of different GPU families; the
//! mirror holds one slim wheel per family beside the fat one, its lock names each with its
//! hash, and `vari sync` of that lock from the mirror alone (uv and pip) installs each class's
//! family wheel, hash-checked. A wheel whose GPU code cannot be read is mirrored whole and
//! named.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::Digest as _;
use vari_lock::{Artifact, Lock, Package};
use vari_test_support::elf::{code, fatbin, Elf, CUDA12_FATBIN, CUDA13_FATBIN};
use vari_test_support::index::TestIndex;
use vari_test_support::venv::{bare_venv, python};
use vari_test_support::wheels::sha256_hex;

use crate::common::{files_in, run, vari};
use crate::sync::{listed, sync, sync_with};

/// Writes `{name}-1.0-py3-none-any.whl` with these members and a valid RECORD.
fn cuda_wheel(dir: &Path, name: &str, members: &[(&str, Vec<u8>)]) -> PathBuf {
    cuda_variant_wheel(dir, name, None, members)
}

/// [`cuda_wheel`], a variant wheel when `variant` (`(label, variant.json)`) is given.
fn cuda_variant_wheel(
    dir: &Path,
    name: &str,
    variant: Option<(&str, &str)>,
    members: &[(&str, Vec<u8>)],
) -> PathBuf {
    let info = format!("{name}-1.0.dist-info");
    let mut all: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(n, b)| ((*n).to_owned(), b.clone()))
        .collect();
    if let Some((_, json)) = variant {
        all.push((format!("{info}/variant.json"), json.as_bytes().to_vec()));
    }
    all.push((
        format!("{info}/METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n\n").into_bytes(),
    ));
    all.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: false\nTag: py3-none-any\n"
            .to_vec(),
    ));
    let suffix = variant
        .map(|(label, _)| format!("-{label}"))
        .unwrap_or_default();
    let path = dir.join(format!("{name}-1.0-py3-none-any{suffix}.whl"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut record = String::new();
    for (member, bytes) in &all {
        let digest =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(bytes));
        record.push_str(&format!("{member},sha256={digest},{}\n", bytes.len()));
        zip.start_file(member.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    zip.start_file(format!("{info}/RECORD"), options).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

/// One member of a wheel.
fn member(wheel: &Path, name: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut file = zip.by_name(name).unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    bytes
}

/// The upstream: `cudalike` (a CUDA 12 library, sm_50 … sm_90, and a CUDA 13 one, sm_75 …
/// sm_120) and `brokenlike` (a fat binary whose header runs past its section: GPU code vari
/// cannot read).
fn write_upstream(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let (s12, s13) = (fatbin(CUDA12_FATBIN), fatbin(CUDA13_FATBIN));
    let lib_in = |name: &'static str, section: &[u8]| {
        Elf {
            fatbin: Some((name, section)),
            needed: &["libcudart.so.12"],
            ..Elf::x86_64_library(code::RET)
        }
        .build()
    };
    let lib = |section: &[u8]| lib_in(".nv_fatbin", section);
    cuda_wheel(
        dir,
        "cudalike",
        &[
            ("cudalike/__init__.py", b"".to_vec()),
            ("cudalike/_a.so", lib(&s12)),
            ("cudalike/_b.so", lib(&s13)),
            // A fat binary in a section of its own: GPU code vari cannot read, kept whole.
            ("cudalike/_tables.so", lib_in(".kernels", &s12)),
        ],
    );
    // Only GPU code vari cannot read: mirrored whole, named.
    cuda_wheel(
        dir,
        "tableslike",
        &[
            ("tableslike/__init__.py", b"".to_vec()),
            ("tableslike/_tables.so", lib_in(".kernels", &s12)),
        ],
    );
    let mut broken = fatbin(CUDA12_FATBIN);
    broken[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    cuda_wheel(
        dir,
        "brokenlike",
        &[
            ("brokenlike/__init__.py", b"".to_vec()),
            ("brokenlike/_bad.so", lib(&broken)),
        ],
    );
}

/// The lock listing both upstream wheels (with hash, size and upstream URL).
fn upstream_lock(upstream: &Path, server: &TestIndex) -> Lock {
    let package = |name: &str| {
        let file = format!("{name}-1.0-py3-none-any.whl");
        let bytes = std::fs::read(upstream.join(&file)).unwrap();
        Package {
            name: name.to_owned(),
            version: Some("1.0".parse().unwrap()),
            marker: None,
            requires_python: None,
            dependencies: Vec::new(),
            index: Some(server.index_url()),
            sdist: None,
            wheels: vec![Artifact {
                name: Some(file.clone()),
                url: Some(format!("{}/files/{file}", server.base())),
                path: None,
                size: Some(bytes.len() as u64),
                upload_time: None,
                hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(&bytes))]),
            }],
            variants_json: None,
            vari: None,
            other: BTreeMap::new(),
        }
    };
    Lock {
        lock_version: vari_lock::LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: None,
        extras: Vec::new(),
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        created_by: "vari tests".to_owned(),
        packages: vec![
            package("brokenlike"),
            package("cudalike"),
            package("tableslike"),
        ],
        vari: None,
        other_tools: BTreeMap::new(),
    }
}

/// A machine class's hardware facts: an NVIDIA GPU of this compute capability.
fn profile(dir: &Path, name: &str, capability: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n\
             libc = \"glibc 2.36\"\n[nvidia]\ncuda_version = \"12.8\"\n\
             compute_capability = \"{capability}\"\n[x86_64]\nlevel = 3\n"
        ),
    )
    .unwrap();
    path
}

/// The `nvidia :: sm_arch` values a variant wheel's `variant.json` declares (what the slim
/// wheel was labelled by: the code it keeps of the fat binaries vari reads).
fn sm_arch(wheel: &Path) -> Vec<String> {
    sm_arch_of(wheel, "cudalike")
}

/// [`sm_arch`] of a wheel of project `name`.
fn sm_arch_of(wheel: &Path, name: &str) -> Vec<String> {
    let text = member(wheel, &format!("{name}-1.0.dist-info/variant.json"));
    let value: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let variants = value["variants"].as_object().unwrap();
    assert_eq!(variants.len(), 1, "{value}");
    let (_, properties) = variants.iter().next().unwrap();
    properties["nvidia"]["sm_arch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_slim_mirror_holds_one_wheel_per_family_and_each_class_syncs_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = dir.path().join("upstream");
    write_upstream(&upstream);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&upstream));
    let lock = dir.path().join("pylock.toml");
    std::fs::write(
        &lock,
        vari_lock::write_lock(&upstream_lock(&upstream, &server)).unwrap(),
    )
    .unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let classes = [
        ("a100", profile(&profiles, "a100", "8.0"), "80_real"),
        ("h100", profile(&profiles, "h100", "9.0"), "90_real"),
    ];
    let site = dir.path().join("site");
    let mirror_lock = dir.path().join("mirror.toml");
    let mut command = vari();
    command.arg("mirror").arg("--lock").arg(&lock).arg("--slim");
    for (name, path, _) in &classes {
        command
            .arg("--target")
            .arg(format!("{name}={}", path.display()));
    }
    command
        .arg("-o")
        .arg(&site)
        .arg("--lock-output")
        .arg(&mirror_lock)
        .env("VARI_PYTHON", python());
    let mirrored = run(&mut command).expect_code(0);
    // A second run downloads nothing and writes the same slim wheels: nothing to publish.
    let again = run(&mut command).expect_code(0);
    assert!(
        again
            .stdout
            .contains("downloaded 0 file(s) (0 B); published 0 new or changed"),
        "{}",
        again.stdout
    );
    // The fat wheels, and one cudalike wheel per family the classes have.
    let wheels: Vec<String> = files_in(&site.join("files"))
        .into_iter()
        .filter(|f| f.ends_with(".whl"))
        .collect();
    assert_eq!(wheels.len(), 5, "{wheels:?}");
    let fat = site.join("files/cudalike-1.0-py3-none-any.whl");
    let fat_size = std::fs::metadata(&fat).unwrap().len();
    let slim: Vec<&String> = wheels
        .iter()
        .filter(|w| w.starts_with("cudalike-1.0-py3-none-any-"))
        .collect();
    assert_eq!(slim.len(), 2, "{wheels:?}");
    let mut families: Vec<Vec<String>> = slim
        .iter()
        .map(|w| sm_arch(&site.join("files").join(w)))
        .collect();
    families.sort();
    assert_eq!(families, [vec!["80_real"], vec!["90_real"]]);
    for w in &slim {
        let size = std::fs::metadata(site.join("files").join(w)).unwrap().len();
        assert!(size < fat_size, "{w}: {size} >= {fat_size}");
    }
    // The saved-bytes line says what slimming saved and names the wheel left whole.
    let line = mirrored.stdout.lines().next().unwrap();
    assert!(
        line.starts_with("mirrored 3 files (")
            && line.contains("; slimmed: ")
            && line.contains(" in 2 per-family wheel(s) for GPU families 8.x, 9.x; GPU code vari cannot read kept whole: 1 file(s): cudalike-1.0-py3-none-any.whl: cudalike/_tables.so: ")
            && line.contains("; left whole: 2 file(s): ")
            && line.contains(
                "tableslike-1.0-py3-none-any.whl (tableslike/_tables.so: GPU code vari cannot read: "
            )
            && line.contains("brokenlike-1.0-py3-none-any.whl ("),
        "{}",
        mirrored.stdout
    );

    // Each class's index lists the plain fat wheel, not its labelled slim ones: plain pip and
    // uv, which read it, reject a labelled file name (only a fat variant wheel is replaced).
    for (name, _, _) in &classes {
        let page =
            std::fs::read_to_string(site.join(format!("t/{name}/simple/cudalike/index.html")))
                .unwrap();
        assert!(
            page.contains("files/cudalike-1.0-py3-none-any.whl#sha256=")
                && !slim.iter().any(|w| page.contains(w.as_str())),
            "{name}: {page}"
        );
    }

    // The mirror's lock names each slim wheel with its own hash.
    let written = vari_lock::read_lock(&std::fs::read_to_string(&mirror_lock).unwrap()).unwrap();
    let entry = written
        .packages
        .iter()
        .find(|p| p.name == "cudalike")
        .unwrap();
    for w in &slim {
        let artifact = entry
            .wheels
            .iter()
            .find(|a| a.name.as_deref() == Some(w.as_str()))
            .unwrap_or_else(|| panic!("{w} not in the mirror's lock"));
        let bytes = std::fs::read(site.join("files").join(w)).unwrap();
        assert_eq!(artifact.hashes["sha256"], sha256_hex(&bytes), "{w}");
        assert_eq!(
            artifact.path.as_deref(),
            Some(format!("site/files/{w}").as_str())
        );
    }

    // The upstream stops; each class syncs the mirror's lock from the mirror's files alone,
    // with uv and with pip, and gets its family's wheel.
    drop(runtime);
    for (name, profile, arch) in &classes {
        for installer in ["uv", "pip"] {
            let scratch = dir.path().join(format!("sync-{name}-{installer}"));
            let venv = scratch.join("venv");
            let mut command = if installer == "uv" {
                bare_venv(&venv);
                sync(&scratch, &mirror_lock, &venv, profile)
            } else {
                let status = std::process::Command::new(python())
                    .args(["-m", "venv"])
                    .arg(&venv)
                    .status()
                    .unwrap();
                assert!(status.success());
                sync_with(&scratch, &mirror_lock, &venv, profile, Path::new("pip"))
            };
            command
                .arg("--offline")
                .arg("--find-links")
                .arg(site.join("files"));
            run(&mut command).expect_code(0);
            let label = listed(&venv)
                .into_iter()
                .find(|(n, _)| n == "cudalike")
                .and_then(|(_, label)| label)
                .unwrap_or_else(|| panic!("{name} {installer}: cudalike not a variant"));
            let chosen = site
                .join("files")
                .join(format!("cudalike-1.0-py3-none-any-{label}.whl"));
            assert_eq!(sm_arch(&chosen), [*arch], "{name} {installer}");
            let installed = std::fs::read(
                files_in(&venv.join("lib"))
                    .first()
                    .map(|python| venv.join("lib").join(python))
                    .unwrap()
                    .join("site-packages/cudalike/_a.so"),
            )
            .unwrap();
            assert_eq!(installed, member(&chosen, "cudalike/_a.so"), "{name}");
            assert_eq!(
                member(&chosen, "cudalike/_tables.so"),
                member(&fat, "cudalike/_tables.so"),
                "{name}: the GPU code vari cannot read is kept whole"
            );
            assert_ne!(installed, member(&fat, "cudalike/_a.so"), "{name}");
        }
    }
}

#[test]
fn a_slim_lock_needs_the_site_below_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let h100 = profile(&profiles, "h100", "9.0");
    let lock = dir.path().join("pylock.toml");
    std::fs::write(&lock, "lock-version = \"1.0\"\ncreated-by = \"t\"\n").unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let site = dir.path().join("site");
    run(vari()
        .arg("mirror")
        .arg("--lock")
        .arg(&lock)
        .arg("--slim")
        .arg("--target")
        .arg(format!("h100={}", h100.display()))
        .arg("-o")
        .arg(&site)
        .arg("--lock-output")
        .arg(elsewhere.join("mirror.toml"))
        .env("VARI_PYTHON", python()))
    .expect_code(1)
    .expect_one_error(&["--lock-output", "--slim", "must be in"]);
    assert!(!site.join("files").exists());
}

#[test]
fn a_class_of_one_gpu_family_lists_its_slim_variant_wheel_in_its_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let upstream = dir.path().join("upstream");
    // (The other upstream wheels only give the lock its shape; the lock names gpulike alone.)
    write_upstream(&upstream);
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &fatbin(CUDA12_FATBIN))),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let json = vari_test_support::wheels::variant_json(
        &["nvidia"],
        "cu12",
        &[("nvidia", "cuda_version_lower_bound", "12.0")],
    );
    let fat = cuda_variant_wheel(
        &upstream,
        "gpulike",
        Some(("cu12", &json)),
        &[
            ("gpulike/__init__.py", b"".to_vec()),
            ("gpulike/_a.so", lib),
        ],
    );
    let fat_name = fat.file_name().unwrap().to_str().unwrap().to_owned();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&upstream));
    let bytes = std::fs::read(&fat).unwrap();
    let mut lock = upstream_lock(&upstream, &server);
    let mut package = lock.packages[0].clone();
    package.name = "gpulike".to_owned();
    package.wheels = vec![Artifact {
        name: Some(fat_name.clone()),
        url: Some(format!("{}/files/{fat_name}", server.base())),
        path: None,
        size: Some(bytes.len() as u64),
        upload_time: None,
        hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(&bytes))]),
    }];
    package.variants_json = Some(
        vari_core::metadata::read_json(&json, vari_core::metadata::SourceKind::IndexFile).unwrap(),
    );
    lock.packages = vec![package];
    let lock_path = dir.path().join("pylock.toml");
    std::fs::write(&lock_path, vari_lock::write_lock(&lock).unwrap()).unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let h100 = profile(&profiles, "h100", "9.0");
    let site = dir.path().join("site");
    run(vari()
        .arg("mirror")
        .arg("--lock")
        .arg(&lock_path)
        .arg("--slim")
        .arg("--target")
        .arg(format!("h100={}", h100.display()))
        .arg("-o")
        .arg(&site)
        .env("VARI_PYTHON", python()))
    .expect_code(0);
    let page = std::fs::read_to_string(site.join("t/h100/simple/gpulike/index.html")).unwrap();
    let slim: Vec<String> = files_in(&site.join("files"))
        .into_iter()
        .filter(|f| f.starts_with("gpulike-1.0-py3-none-any-cu12_") && f.ends_with(".whl"))
        .collect();
    assert_eq!(slim.len(), 1, "{slim:?}");
    // The class's index lists its family's slim wheel, not the fat one (which the site's own
    // index still lists), and its own `*-variants.json` names the slim label only.
    assert!(
        page.contains(&format!("files/{}#sha256=", slim[0])) && !page.contains(&fat_name),
        "{page}"
    );
    assert_eq!(
        sm_arch_of(&site.join("files").join(&slim[0]), "gpulike"),
        ["90_real"]
    );
    let site_page = std::fs::read_to_string(site.join("simple/gpulike/index.html")).unwrap();
    assert!(site_page.contains(&fat_name), "{site_page}");
    let own = std::fs::read_to_string(site.join("t/h100/files/gpulike-1.0-variants.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&own).unwrap();
    let labels: Vec<&String> = value["variants"].as_object().unwrap().keys().collect();
    assert_eq!(
        labels,
        [&slim[0]["gpulike-1.0-py3-none-any-".len()..slim[0].len() - 4].to_owned()]
    );
    run(vari().args(["index", "validate"]).arg(&site)).expect_code(0);
    // vari reading the class's index chooses that slim wheel for the class's machine.
    let host = vari_test_support::site::StaticSite::serve(
        &site,
        vari_test_support::site::SiteOptions::default(),
    );
    let chosen = run(vari()
        .args(["select", "--json", "gpulike", "--index-url"])
        .arg(format!("{}/t/h100/simple/", host.base))
        .arg("--profile")
        .arg(&h100)
        .env("VARI_PYTHON", python()))
    .expect_code(0)
    .json();
    assert_eq!(
        chosen["selections"][0]["filename"].as_str(),
        Some(slim[0].as_str()),
        "{chosen}"
    );
}
