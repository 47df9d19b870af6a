//! `vari wheel scan` on generated wheels: ELF files with known instructions and the real
//! fat-binary sections of `testdata/fatbin/`.

use std::path::Path;

use serde_json::json;

use crate::common::{assert_output, vari_run};

// The ELF and wheel builders vari-scan's own integration tests use.
pub(crate) use vari_test_support::elf as support;

use support::{code, fatbin, wheel, Elf, CUDA12_FATBIN, CUDA13_FATBIN};

/// A wheel with a CUDA 12 library (fat binary, libcudart.so.12) and an AVX-512 library.
fn cuda12_wheel(dir: &Path) -> std::path::PathBuf {
    let section = fatbin(CUDA12_FATBIN);
    let gpu = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        needed: &["libcudart.so.12", "libc.so.6"],
        ..Elf::x86_64_library(code::RET)
    };
    let avx512 = [code::VPADDD_ZMM, code::RET].concat();
    let cpu = Elf {
        functions: &[("sum_avx512", 0, 7)],
        ..Elf::x86_64_library(&avx512)
    };
    wheel(
        dir,
        "demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        &[
            ("demo/__init__.py", b"".to_vec()),
            ("demo/_gpu.so", gpu.build()),
            ("demo/_cpu.so", cpu.build()),
        ],
    )
}

#[test]
fn json_lists_properties_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = cuda12_wheel(dir.path());
    let out = vari_run([
        Path::new("wheel"),
        Path::new("scan"),
        Path::new("--json"),
        &path,
    ])
    .expect_code(0)
    .json();
    crate::common::assert_json_schema("wheel-scan", &out);
    assert_eq!(
        out,
        json!({
            "properties": [
                "nvidia :: cuda_version_lower_bound :: 12.0",
                "nvidia :: sm_arch :: 50_real",
                "nvidia :: sm_arch :: 60_real",
                "nvidia :: sm_arch :: 70_real",
                "nvidia :: sm_arch :: 80_real",
                "nvidia :: sm_arch :: 90_real",
                "nvidia :: sm_arch :: 90_virtual",
                "x86_64 :: level :: v4",
            ],
            "files": [
                {
                    "path": "demo/_gpu.so",
                    "sm_arch": ["50_real", "60_real", "70_real", "80_real", "90_real", "90_virtual"],
                    "cuda_runtime": 12,
                    "x86_64_level": "v1",
                    "needs": ["libcudart.so.12", "PTX ISA 8.3"],
                },
                {
                    "path": "demo/_cpu.so",
                    "sm_arch": [],
                    "cuda_runtime": null,
                    "x86_64_level": "v4",
                    "needs": ["avx512f (vpaddd at 0x1000 in sum_avx512)"],
                },
            ],
        })
    );
}

#[test]
fn several_wheels_keep_their_own_properties() {
    let dir = tempfile::tempdir().unwrap();
    let first = cuda12_wheel(dir.path());
    let section = fatbin(CUDA13_FATBIN);
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        needed: &["libcudart.so.13"],
        ..Elf::x86_64_library(code::RET)
    };
    let second = wheel(
        dir.path(),
        "demo-1.0-cu13.whl",
        &[("demo/_gpu.so", lib.build())],
    );
    let out = vari_run([
        Path::new("wheel"),
        Path::new("scan"),
        &first,
        &second,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    let wheels = out["wheels"].as_array().unwrap();
    assert_eq!(wheels.len(), 2);
    assert_eq!(wheels[0]["wheel"], first.display().to_string());
    assert_eq!(wheels[1]["wheel"], second.display().to_string());
    assert_eq!(wheels[0]["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        wheels[1]["properties"],
        // Architectures in numeric order (issue 33: text order put 100_real before 75_real).
        json!([
            "nvidia :: cuda_version_lower_bound :: 13.0",
            "nvidia :: sm_arch :: 75_real",
            "nvidia :: sm_arch :: 80_real",
            "nvidia :: sm_arch :: 90_real",
            "nvidia :: sm_arch :: 100_real",
            "nvidia :: sm_arch :: 120_real",
            "nvidia :: sm_arch :: 120_virtual",
        ])
    );
}

#[test]
fn the_table_shows_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = cuda12_wheel(dir.path());
    let run = vari_run([Path::new("wheel"), Path::new("scan"), &path]).expect_code(0);
    let text = run.stdout;
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    assert!(text.contains("nvidia :: sm_arch :: 90_virtual"), "{text}");
    let header = text.lines().find(|l| l.starts_with("file")).unwrap();
    for column in ["sm_arch", "cuda", "x86-64 (uses)", "needs"] {
        assert!(header.contains(column), "{header}");
    }
    let cpu = text
        .lines()
        .find(|l| l.starts_with("demo/_cpu.so"))
        .unwrap();
    assert!(
        cpu.contains("v4") && cpu.contains("avx512f (vpaddd"),
        "{cpu}"
    );
    let gpu = text
        .lines()
        .find(|l| l.starts_with("demo/_gpu.so"))
        .unwrap();
    assert!(
        gpu.contains("50_real 60_real 70_real 80_real") && gpu.contains(" 12 "),
        "{gpu}"
    );
}

#[test]
fn a_broken_member_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = cuda12_wheel(dir.path());
    let mut lib = Elf::x86_64_library(code::RET).build();
    lib.truncate(40);
    let bad = wheel(dir.path(), "bad.whl", &[("pkg/_broken.so", lib)]);
    vari_run([
        Path::new("wheel"),
        Path::new("scan"),
        Path::new("--json"),
        &good,
        &bad,
    ])
    .expect_one_error(&[&format!(
        "{}: pkg/_broken.so: not a readable ELF file",
        bad.display()
    )]);
}

#[test]
fn a_wheel_is_required() {
    vari_run(["wheel", "scan"]).expect_code(2);
}

#[test]
fn validate_warns_when_declared_properties_disagree_with_the_code() {
    let dir = tempfile::tempdir().unwrap();
    let plain = installable_cpu_wheel(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // Declared x86-64-v3, but `_cpu.so` uses AVX-512 with no runtime dispatch: SIGILL on v3.
    let made = vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &plain,
        Path::new("-p"),
        Path::new("x86_64::level::v3"),
        Path::new("-o"),
        &out,
    ])
    .expect_code(0);
    let variant = std::path::PathBuf::from(made.stdout.trim());
    // Both commands give the one warning, whole: the file, the member, what it declares and
    // what its code needs.
    let expected = "warning: [VARIANT]: demo/_cpu.so: declares `x86_64 :: level :: v3` but its code uses \
                    v4 instructions: avx512f (vpaddd at 0x1000 in sum_avx512); no runtime CPU check \
                    was found in this file: a v3 CPU may crash with SIGILL\n";
    for command in [["wheel", "validate"], ["metadata", "validate"]] {
        let run = vari_run([Path::new(command[0]), Path::new(command[1]), &variant]).expect_code(0);
        assert_output(&run.stderr, expected, &[(&variant, "[VARIANT]")]);
    }
    // Declared what the code needs: no warning.
    let out4 = dir.path().join("out4");
    std::fs::create_dir(&out4).unwrap();
    let made = vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &plain,
        Path::new("-p"),
        Path::new("x86_64::level::v4"),
        Path::new("-o"),
        &out4,
    ])
    .expect_code(0);
    let variant = std::path::PathBuf::from(made.stdout.trim());
    let run = vari_run([Path::new("wheel"), Path::new("validate"), &variant]).expect_code(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// A wheel with an AVX-512 library and the dist-info (METADATA, WHEEL, RECORD with hashes) that
/// `make-variant` needs.
fn installable_cpu_wheel(dir: &Path) -> std::path::PathBuf {
    use base64::Engine as _;
    use sha2::Digest as _;
    let avx512 = [code::VPADDD_ZMM, code::RET].concat();
    let cpu = Elf {
        functions: &[("sum_avx512", 0, 7)],
        ..Elf::x86_64_library(&avx512)
    };
    let mut members: Vec<(&str, Vec<u8>)> = vec![
        ("demo/__init__.py", b"".to_vec()),
        ("demo/_cpu.so", cpu.build()),
        (
            "demo-1.0.dist-info/METADATA",
            b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n".to_vec(),
        ),
        (
            "demo-1.0.dist-info/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp312-cp312-manylinux_2_28_x86_64\n".to_vec(),
        ),
    ];
    let mut record = String::new();
    for (name, bytes) in &members {
        let hash =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(bytes));
        record.push_str(&format!("{name},sha256={hash},{}\n", bytes.len()));
    }
    record.push_str("demo-1.0.dist-info/RECORD,,\n");
    members.push(("demo-1.0.dist-info/RECORD", record.into_bytes()));
    wheel(
        dir,
        "demo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        &members,
    )
}

/// The real wheels the x86-64 level rules were wrong on, from PyPI (skipped, saying so, when
/// PyPI cannot be reached): numpy 2.3.4, whose bundled libgfortran picks AVX-512 code by reading
/// libgcc_s's `__cpu_model` (it was inferred `v4`), and jax-cuda12-plugin 0.8.0, built with
/// `-mavx` alone (it was inferred `v3`).
#[test]
fn real_numpy_and_jax_wheels_get_no_wrong_level() {
    let dir = tempfile::tempdir().unwrap();
    let python = crate::common::test_python();
    let download = std::process::Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
        ])
        .args([
            "--python-version",
            "3.12",
            "--platform",
            "manylinux_2_27_x86_64",
        ])
        .args([
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux2014_x86_64",
        ])
        .args(["--timeout", "20", "--retries", "0", "-d"])
        .arg(dir.path())
        .args(["numpy==2.3.4", "jax-cuda12-plugin==0.8.0"])
        .output()
        .unwrap();
    if !download.status.success() {
        eprintln!(
            "skipped: PyPI cannot be reached to download numpy 2.3.4 and jax-cuda12-plugin \
             0.8.0 ({})",
            String::from_utf8_lossy(&download.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
        return;
    }
    let wheel = |prefix: &str| {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap()
    };
    let scan = |path: &Path| {
        vari_run([
            Path::new("wheel"),
            Path::new("scan"),
            Path::new("--json"),
            path,
        ])
        .expect_code(0)
        .json()
    };
    let numpy = scan(&wheel("numpy-2.3.4"));
    let levels: Vec<&str> = numpy["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .filter(|p| p.starts_with("x86_64 :: level"))
        .collect();
    assert!(
        levels
            .iter()
            .all(|l| l.ends_with("v1") || l.ends_with("v2")),
        "{numpy}"
    );
    let gfortran = numpy["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().contains("libgfortran"))
        .unwrap_or_else(|| panic!("{numpy}"));
    assert_eq!(
        gfortran["x86_64_level"], "v4",
        "it uses AVX-512: {gfortran}"
    );
    let jax = scan(&wheel("jax_cuda12_plugin-0.8.0"));
    let properties: Vec<&str> = jax["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(
        !properties.iter().any(|p| p.starts_with("x86_64")),
        "{properties:?}"
    );
    assert!(
        properties.contains(&"nvidia :: sm_arch :: 70_real"),
        "{properties:?}"
    );
}

/// Issue 32: `wheel scan` exits 1 with one error line on a wheel whose members
/// `wheel validate` refuses (here a name outside the install directory); it used to scan it
/// and exit 0.
#[test]
fn a_member_validate_refuses_fails_the_scan_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let lib = Elf::x86_64_library(code::RET).build();
    let path = wheel(
        dir.path(),
        "demo-1.0-py3-none-any.whl",
        &[
            ("demo/__init__.py", b"".to_vec()),
            ("../demo/_evil.so", lib),
        ],
    );
    for json in [false, true] {
        let mut args = vec![Path::new("wheel"), Path::new("scan")];
        if json {
            args.push(Path::new("--json"));
        }
        args.push(&path);
        vari_run(args)
            .expect_one_error(&["demo-1.0-py3-none-any.whl", "member `../demo/_evil.so`"]);
    }
}
