//! `vari wheel slim` / `split` on generated wheels whose libraries carry the real fat-binary
//! sections of `testdata/fatbin/`: the slim wheel holds only the kept code, `vari wheel scan`
//! agrees with its label, everything else is byte-identical, and bad input writes nothing.
//! (`slim_nvcc.rs` does the same on libraries nvcc builds.)

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;
use sha2::Digest as _;

use crate::common::{files_in, vari_run};
use crate::scan::support::{code, fatbin, Elf, CUDA12_FATBIN, CUDA13_FATBIN};

/// Writes a wheel of `demo` 1.0 with these members and a valid RECORD.
pub(crate) fn wheel_with_record(dir: &Path, members: &[(&str, Vec<u8>)]) -> PathBuf {
    let info = "demo-1.0.dist-info";
    let mut all: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(n, b)| ((*n).to_owned(), b.clone()))
        .collect();
    all.push((
        format!("{info}/METADATA"),
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n".to_vec(),
    ));
    all.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n".to_vec(),
    ));
    let path = dir.join("demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
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

/// Every member of a wheel, by name, in order.
pub(crate) fn members(wheel: &Path) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut file = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            (file.name().to_owned(), bytes)
        })
        .collect()
}

/// A wheel with a CUDA 12 library (sm_50 … sm_90, compute_90), a CUDA 13 library (sm_75 …
/// sm_120, compute_120) and a Python file.
fn fat_wheel(dir: &Path) -> PathBuf {
    let (s12, s13) = (fatbin(CUDA12_FATBIN), fatbin(CUDA13_FATBIN));
    let lib12 = Elf {
        fatbin: Some((".nv_fatbin", &s12)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    };
    let lib13 = Elf {
        fatbin: Some((".nv_fatbin", &s13)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    };
    wheel_with_record(
        dir,
        &[
            ("demo/__init__.py", b"print('demo')\n".to_vec()),
            ("demo/_a.so", lib12.build()),
            ("demo/_b.so", lib13.build()),
        ],
    )
}

fn slim_json(wheel: &Path, out: &Path, keep: &[&str]) -> Value {
    let mut args: Vec<PathBuf> = vec!["wheel".into(), "slim".into(), wheel.into()];
    for k in keep {
        args.extend(["--keep".into(), (*k).into()]);
    }
    args.extend(["-o".into(), out.into(), "--json".into()]);
    let json = vari_run(&args).expect_code(0).json();
    crate::common::assert_json_schema("wheel-slim", &json);
    json
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

fn scan_properties(wheel: &Path) -> Vec<String> {
    let scan = vari_run([
        Path::new("wheel"),
        Path::new("scan"),
        Path::new("--json"),
        wheel,
    ])
    .expect_code(0)
    .json();
    strings(&scan["properties"])
}

/// The byte range where `needle` (a section's bytes) is in `file`.
fn find(file: &[u8], needle: &[u8]) -> std::ops::Range<usize> {
    let at = file
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("section bytes in the file");
    at..at + needle.len()
}

#[test]
fn slim_keeps_the_code_for_one_capability_and_scan_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let out = dir.path().join("out");
    let report = slim_json(&fat, &out, &["9.0"]);
    let wheel = &report["wheels"][0];
    let slim = PathBuf::from(wheel["output"].as_str().unwrap());
    assert_eq!(
        files_in(&out),
        [slim.file_name().unwrap().to_str().unwrap()]
    );
    let label = wheel["label"].as_str().unwrap();
    assert!(slim.to_str().unwrap().ends_with(&format!("-{label}.whl")));

    // The label claims what the code holds, as scan reads it.
    let properties = strings(&wheel["properties"]);
    assert_eq!(
        properties,
        [
            "nvidia :: cuda_version_lower_bound :: 12.0",
            "nvidia :: sm_arch :: 90_real"
        ]
    );
    assert_eq!(scan_properties(&slim), properties);
    let inspect = vari_run([
        Path::new("wheel"),
        Path::new("inspect"),
        Path::new("--json"),
        &slim,
    ])
    .expect_code(0)
    .json();
    crate::common::assert_json_schema("wheel-inspect", &inspect);
    assert_eq!(strings(&inspect["properties"]), properties);
    vari_run([Path::new("wheel"), Path::new("validate"), &slim]).expect_code(0);

    // Code per architecture: only sm_90 stays (PTX is not needed where SASS runs).
    for code in wheel["code"].as_array().unwrap() {
        let name = code["code"].as_str().unwrap();
        let (before, after) = (
            code["before"].as_u64().unwrap(),
            code["after"].as_u64().unwrap(),
        );
        assert!(before > 0, "{name}");
        assert_eq!(after, if name == "sm_90" { before } else { 0 }, "{name}");
    }
    assert!(wheel["size"]["after"].as_u64() < wheel["size"]["before"].as_u64());

    // Members: the libraries differ only inside .nv_fatbin; the rest is byte-identical.
    let (fat_members, slim_members) = (members(&fat), members(&slim));
    let sections = [fatbin(CUDA12_FATBIN), fatbin(CUDA13_FATBIN)];
    for (name, bytes) in &fat_members {
        let (_, new) = slim_members.iter().find(|(n, _)| n == name).unwrap();
        if name.ends_with(".so") {
            let section = &sections[usize::from(name.ends_with("_b.so"))];
            let range = find(bytes, section);
            assert_eq!(new.len(), bytes.len(), "{name}");
            assert_eq!(new[..range.start], bytes[..range.start], "{name}");
            assert_eq!(new[range.end..], bytes[range.end..], "{name}");
            assert_ne!(new[range.clone()], bytes[range], "{name}");
        } else if !name.ends_with("/RECORD") {
            assert_eq!(new, bytes, "{name}");
        }
    }
    assert!(slim_members
        .iter()
        .any(|(n, _)| n == "demo-1.0.dist-info/variant.json"));
}

#[test]
fn split_makes_one_wheel_per_architecture_family() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let out = dir.path().join("out");
    let run = vari_run([
        Path::new("wheel"),
        Path::new("split"),
        &fat,
        Path::new("-o"),
        &out,
        Path::new("--json"),
    ])
    .expect_code(0);
    // Its progress (which family it writes, i of n) is for a terminal: none on a pipe.
    assert!(!run.stderr.contains("splitting"), "{}", run.stderr);
    assert!(!run.stderr.contains(" of 7"), "{}", run.stderr);
    let report = run.json();
    crate::common::assert_json_schema("wheel-split", &report);
    let wheels = report["wheels"].as_array().unwrap();
    // SASS majors 5, 6, 7, 8, 9 (CUDA 12) and 7, 8, 9, 10, 12 (CUDA 13).
    assert_eq!(wheels.len(), 7);
    assert_eq!(files_in(&out).len(), 7);
    let mut families = Vec::new();
    for wheel in wheels {
        let slim = PathBuf::from(wheel["output"].as_str().unwrap());
        let sm: Vec<String> = scan_properties(&slim)
            .into_iter()
            .filter_map(|p| p.strip_prefix("nvidia :: sm_arch :: ").map(str::to_owned))
            .collect();
        // SASS of one major; PTX only below it, for a library without SASS there (the CUDA 12
        // library's compute_90, JIT-compiled on 10.x and 12.x).
        let arch = |v: &String| v.split('_').next().unwrap().parse::<u32>().unwrap();
        let majors: std::collections::BTreeSet<u32> = sm
            .iter()
            .filter(|v| v.ends_with("_real"))
            .map(|v| arch(v) / 10)
            .collect();
        assert_eq!(majors.len(), 1, "{sm:?}");
        let major = *majors.first().unwrap();
        for v in sm.iter().filter(|v| v.ends_with("_virtual")) {
            assert!(arch(v) < major * 10, "{sm:?}");
        }
        families.push(major);
    }
    assert_eq!(families, [5, 6, 7, 8, 9, 10, 12]);
}

#[test]
fn a_variant_wheel_keeps_its_declared_features_and_gets_a_new_label() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let variant_dir = dir.path().join("variant");
    vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &fat,
        Path::new("-p"),
        Path::new("nvidia :: cuda_version_lower_bound :: 12.8"),
        Path::new("-p"),
        Path::new("nvidia :: sm_arch :: 90_real"),
        Path::new("--label"),
        Path::new("fat"),
        Path::new("-o"),
        &variant_dir,
    ])
    .expect_code(0);
    let variant = variant_dir.join("demo-1.0-cp312-cp312-manylinux_2_28_x86_64-fat.whl");
    let out = dir.path().join("out");
    let report = slim_json(&variant, &out, &["8.x"]);
    let wheel = &report["wheels"][0];
    assert_eq!(
        strings(&wheel["properties"]),
        [
            "nvidia :: cuda_version_lower_bound :: 12.8",
            "nvidia :: sm_arch :: 80_real"
        ]
    );
    let slim = wheel["output"].as_str().unwrap();
    assert!(!slim.contains("-fat"), "{slim}");
    vari_run([Path::new("wheel"), Path::new("validate"), Path::new(slim)]).expect_code(0);
}

#[test]
fn nothing_to_keep_is_one_error_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let out = dir.path().join("out");
    vari_run([
        Path::new("wheel"),
        Path::new("slim"),
        &fat,
        Path::new("--keep"),
        Path::new("3.5"),
        Path::new("-o"),
        &out,
    ])
    .expect_code(1)
    .expect_one_error(&[
        "demo-1.0",
        "none of its GPU code runs",
        "sm_90",
        "compute_120",
    ]);
    assert!(!out.exists() || files_in(&out).is_empty());
}

#[test]
fn a_broken_fat_binary_names_the_member_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut section = fatbin(CUDA12_FATBIN);
    section[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    };
    let fat = wheel_with_record(dir.path(), &[("demo/_bad.so", lib.build())]);
    let out = dir.path().join("out");
    for command in ["slim", "split"] {
        let mut args: Vec<&Path> = vec![Path::new("wheel"), Path::new(command), &fat];
        if command == "slim" {
            args.extend([Path::new("--keep"), Path::new("9.0")]);
        }
        args.extend([Path::new("-o"), &out]);
        vari_run(&args).expect_code(1).expect_one_error(&[
            "demo/_bad.so",
            ".nv_fatbin",
            "runs past the end",
        ]);
        assert!(!out.exists() || files_in(&out).is_empty());
    }
}

#[test]
fn a_wheel_without_gpu_code_cannot_be_split() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = Elf::x86_64_library(code::RET).build();
    let plain = wheel_with_record(dir.path(), &[("demo/_cpu.so", cpu)]);
    let out = dir.path().join("out");
    vari_run([
        Path::new("wheel"),
        Path::new("split"),
        &plain,
        Path::new("-o"),
        &out,
    ])
    .expect_code(1)
    .expect_one_error(&["no SASS"]);
}

#[test]
fn an_unknown_keep_spec_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let run = vari_run([
        Path::new("wheel"),
        Path::new("slim"),
        &fat,
        Path::new("--keep"),
        Path::new("sm_86b"),
        Path::new("-o"),
        dir.path(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("sm_86b"), "{}", run.stderr);
}

#[test]
fn the_table_shows_sizes_and_code_per_architecture() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let run = vari_run([
        Path::new("wheel"),
        Path::new("slim"),
        &fat,
        Path::new("--keep"),
        Path::new("12.0"),
        Path::new("-o"),
        &dir.path().join("out"),
    ])
    .expect_code(0);
    for fragment in [
        "label",
        "smaller",
        "sm_120",
        "compute_90",
        "nvidia :: sm_arch :: 120_real",
    ] {
        assert!(run.stdout.contains(fragment), "{fragment}:\n{}", run.stdout);
    }
}

/// A repack config for `demo` that splits it, labelled `cu12`.
const SPLIT_CONFIG: &str = r#"
[variant.default-priorities]
namespace = ["nvidia"]

[variant.providers.nvidia]
requires = ["nvidia-variant-provider>=0.0.2,<1.0.0"]
enable-if = "platform_system == 'Linux'"
plugin-api = "nvidia_variant_provider.plugin:NvidiaVariantPlugin"

[[build]]
match = { name = "demo" }
label = "cu12"
infer = ["nvidia"]
split = "nvidia :: sm_arch"
"#;

/// `vari select demo` from `site` on a machine with this compute capability.
fn selected_label(site: &Path, sm: &str) -> String {
    let mut cmd = crate::common::vari();
    cmd.args(["select", "demo", "--json", "--find-links"])
        .arg(site)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ])
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_DEFAULT_INDEX")
        .env_remove("PIP_INDEX_URL")
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.8")
        .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", sm);
    let chosen = crate::common::run(&mut cmd).expect_code(0).json();
    chosen["selections"][0]["label"]
        .as_str()
        .unwrap_or_else(|| panic!("{chosen}"))
        .to_owned()
}

#[test]
fn repack_splits_a_build_and_each_machine_selects_the_smallest_that_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let config = dir.path().join("split.toml");
    std::fs::write(&config, SPLIT_CONFIG).unwrap();
    let site = dir.path().join("site");
    vari_run([
        Path::new("wheel"),
        Path::new("repack"),
        Path::new("--config"),
        &config,
        &fat,
        Path::new("-o"),
        &site,
    ])
    .expect_code(0);
    let stem = "demo-1.0-cp312-cp312-manylinux_2_28_x86_64";
    let mut expected: Vec<String> = ["all", "5x", "6x", "7x", "8x", "9x", "10x", "12x"]
        .iter()
        .map(|l| format!("{stem}-cu12_{l}.whl"))
        .collect();
    expected.push("demo-1.0-variants.json".to_owned());
    expected.sort();
    assert_eq!(files_in(&site), expected);
    let index: Value =
        serde_json::from_slice(&std::fs::read(site.join("demo-1.0-variants.json")).unwrap())
            .unwrap();
    let labels: Vec<&String> = index["variants"].as_object().unwrap().keys().collect();
    assert_eq!(labels.len(), 8, "{index}");

    // Each machine gets its family's wheel, never the fat one it also matches.
    for (sm, label) in [
        ("8.6", "cu12_8x"),
        ("9.0", "cu12_9x"),
        ("7.5", "cu12_7x"),
        ("12.0", "cu12_12x"),
    ] {
        assert_eq!(selected_label(&site, sm), label, "{sm}");
    }
    let fat_size = std::fs::metadata(site.join(format!("{stem}-cu12_all.whl")))
        .unwrap()
        .len();
    let slim_size = std::fs::metadata(site.join(format!("{stem}-cu12_9x.whl")))
        .unwrap()
        .len();
    assert!(slim_size < fat_size, "{slim_size} >= {fat_size}");
}

#[test]
fn a_split_build_needs_a_label_and_writes_nothing_without() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let config = dir.path().join("split.toml");
    std::fs::write(&config, SPLIT_CONFIG.replace("label = \"cu12\"\n", "")).unwrap();
    let site = dir.path().join("site");
    vari_run([
        Path::new("wheel"),
        Path::new("repack"),
        Path::new("--config"),
        &config,
        &fat,
        Path::new("-o"),
        &site,
    ])
    .expect_code(1)
    .expect_one_error(&[
        "split.toml",
        "build[0].label",
        "a split build needs a label",
    ]);
    assert!(!site.exists() || files_in(&site).is_empty());
    std::fs::write(
        &config,
        SPLIT_CONFIG.replace(
            "nvidia :: sm_arch\"",
            "nvidia :: cuda_version_lower_bound\"",
        ),
    )
    .unwrap();
    vari_run([
        Path::new("wheel"),
        Path::new("repack"),
        Path::new("--config"),
        &config,
        &fat,
        Path::new("-o"),
        &site,
    ])
    .expect_code(1)
    .expect_one_error(&["build[0].split", "only `nvidia :: sm_arch` can be split"]);
}

/// Ten libraries of 12 MiB each (a fat binary, then padding), stored: `slim` rewrites every one,
/// and held them all in memory until the output was written (a 57 MB wheel of large ELF
/// members took 4 GB). Each rewritten member now waits on disk: the peak memory of `vari`
/// (read from `wait4`) stays under two thirds of what the ten take.
#[test]
fn slim_memory_is_bounded_by_one_member_whatever_the_wheel_holds() {
    const MEMBERS: usize = 10;
    const PADDING: usize = 12 << 20;
    let dir = tempfile::tempdir().unwrap();
    let s12 = fatbin(CUDA12_FATBIN);
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &s12)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let info = "demo-1.0.dist-info";
    let mut all: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..MEMBERS {
        // Padding the scan skips and the rewrite keeps: different in each member.
        let mut bytes = lib.clone();
        bytes.extend((0..PADDING).map(|j| (j as u32).wrapping_mul(2_654_435_761 + i as u32) as u8));
        all.push((format!("demo/_lib{i}.so"), bytes));
    }
    all.push((
        format!("{info}/METADATA"),
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n\n".to_vec(),
    ));
    all.push((
        format!("{info}/WHEEL"),
        b"Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n".to_vec(),
    ));
    let wheel = dir
        .path()
        .join("demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&wheel).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut record = String::new();
    for (member, bytes) in &all {
        let digest =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(bytes));
        record.push_str(&format!("{member},sha256={digest},{}\n", bytes.len()));
        zip.start_file(member.as_str(), stored).unwrap();
        zip.write_all(bytes).unwrap();
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    zip.start_file(format!("{info}/RECORD"), stored).unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    zip.finish().unwrap();
    drop(all);

    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();
    let run = crate::scan_limits::measured(
        &["wheel", "slim", "--keep", "9.0", "-o", out_arg, "--json"],
        &wheel,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let peak_kib = run.peak_kib as i64;
    // Only the output is left in the output directory (no member set aside stays), and it
    // holds every library rewritten and whole.
    let written = files_in(&out);
    assert_eq!(written.len(), 1, "{written:?}");
    let slim = out.join(&written[0]);
    let slim_members = members(&slim);
    for i in 0..MEMBERS {
        let name = format!("demo/_lib{i}.so");
        let (_, bytes) = slim_members.iter().find(|(n, _)| *n == name).unwrap();
        assert_eq!(bytes.len(), lib.len() + PADDING, "{name}");
        assert_ne!(bytes[..lib.len()], lib[..], "{name} was rewritten");
    }
    let all_members_kib = (MEMBERS * PADDING / 1024) as i64;
    eprintln!("slim: peak RSS {} MiB", peak_kib / 1024);
    assert!(
        peak_kib < all_members_kib * 2 / 3,
        "peak RSS {peak_kib} KiB: the rewritten members ({all_members_kib} KiB) were held"
    );
}

#[test]
fn keep_takes_the_property_form_and_scan_lists_architectures_in_numeric_order() {
    let dir = tempfile::tempdir().unwrap();
    let fat = fat_wheel(dir.path());
    let by_capability = slim_json(&fat, &dir.path().join("a"), &["9.0"]);
    let by_property = slim_json(
        &fat,
        &dir.path().join("b"),
        &["nvidia :: sm_arch :: 90_real"],
    );
    assert_eq!(
        by_property["wheels"][0]["properties"],
        by_capability["wheels"][0]["properties"]
    );
    // sm_50 … sm_120: by architecture number, not as text (`100_real` after `90_virtual`).
    let properties = scan_properties(&fat);
    let arch: Vec<&str> = properties
        .iter()
        .filter_map(|p| p.strip_prefix("nvidia :: sm_arch :: "))
        .collect();
    let numbers: Vec<u32> = arch
        .iter()
        .map(|v| v.split('_').next().unwrap().parse().unwrap())
        .collect();
    let mut sorted = numbers.clone();
    sorted.sort();
    assert_eq!(numbers, sorted, "{arch:?}");
    assert!(numbers.contains(&50) && numbers.contains(&120), "{arch:?}");
}
