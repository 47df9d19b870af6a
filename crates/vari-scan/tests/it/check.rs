//! Declared properties against the scanned code.

use std::path::Path;

use vari_core::Property;
use vari_scan::{scan_wheel, WheelScan};

use crate::support::{code, fatbin, wheel, Elf, CUDA12_FATBIN, CUDA13_FATBIN};

fn props(list: &[&str]) -> Vec<Property> {
    list.iter().map(|p| p.parse().unwrap()).collect()
}

fn gpu_wheel(dir: &Path, name: &str, section: &str, runtime: &str) -> WheelScan {
    let bytes = fatbin(section);
    let needed = [runtime];
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &bytes)),
        needed: &needed,
        ..Elf::x86_64_library(code::RET)
    };
    let cpu_only = Elf::x86_64_library(code::ADDPD);
    scan_wheel(wheel(
        dir,
        name,
        &[
            ("pkg/_gpu.so", lib.build()),
            ("pkg/_cpu.so", cpu_only.build()),
        ],
    ))
    .unwrap()
}

#[test]
fn sm_arch_is_covered_by_sass_of_the_same_major_or_older_ptx() {
    let dir = tempfile::tempdir().unwrap();
    // SASS 75 80 90 100 120, PTX 120.
    let scan = gpu_wheel(dir.path(), "cu13.whl", CUDA13_FATBIN, "libcudart.so.13");
    let covered = props(&[
        "nvidia :: sm_arch :: 75_real",
        "nvidia :: sm_arch :: 86_real", // SASS 80 runs on 8.6
        "nvidia :: sm_arch :: 90_real",
        "nvidia :: sm_arch :: 103_real", // SASS 100
        "nvidia :: sm_arch :: 121_real", // SASS 120, and PTX 120
        "nvidia :: sm_arch :: 120_virtual",
    ]);
    assert_eq!(scan.check_declared(&covered), []);

    let warnings = scan.check_declared(&props(&[
        "nvidia :: sm_arch :: 70_real", // SASS 75 is newer than 7.0; PTX only for 12.0
        "nvidia :: sm_arch :: 110_real", // no SASS for 11.x
    ]));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let w = &warnings[0];
    assert_eq!(
        w.member.as_deref(),
        Some("pkg/_gpu.so"),
        "the CPU-only file is not blamed"
    );
    assert!(
        w.message.contains("`nvidia :: sm_arch :: 70_real`"),
        "{}",
        w.message
    );
    assert!(
        w.message.contains("compute capability 7.0"),
        "{}",
        w.message
    );
    assert!(
        w.message
            .contains("sm_75 sm_80 sm_90 sm_100 sm_120 compute_120"),
        "{}",
        w.message
    );
    assert!(warnings[1].message.contains("compute capability 11.0"));
    assert!(w.to_string().starts_with(&format!(
        "{}: pkg/_gpu.so: declares",
        dir.path().join("cu13.whl").display()
    )));
}

#[test]
fn ptx_covers_every_later_architecture() {
    let dir = tempfile::tempdir().unwrap();
    // SASS 50 60 70 80 90, PTX 90: anything from 9.0 up JIT-compiles.
    let scan = gpu_wheel(dir.path(), "cu12.whl", CUDA12_FATBIN, "libcudart.so.12");
    let declared = props(&[
        "nvidia :: sm_arch :: 100_real",
        "nvidia :: sm_arch :: 120_real",
    ]);
    assert_eq!(scan.check_declared(&declared), []);
    let warnings = scan.check_declared(&props(&["nvidia :: sm_arch :: 35_real"]));
    assert_eq!(warnings.len(), 1);
}

#[test]
fn declared_sm_arch_without_any_gpu_code_is_a_wheel_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = wheel(
        dir.path(),
        "cpu.whl",
        &[("m.so", Elf::x86_64_library(code::ADDPD).build())],
    );
    let warnings = scan_wheel(path)
        .unwrap()
        .check_declared(&props(&["nvidia :: sm_arch :: 86_real"]));
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].member, None);
    assert!(warnings[0]
        .message
        .contains("no binary in the wheel carries CUDA code"));
}

#[test]
fn cuda_lower_bound_below_the_linked_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let scan = gpu_wheel(dir.path(), "cu12.whl", CUDA12_FATBIN, "libcudart.so.12");
    let ok = props(&["nvidia :: cuda_version_lower_bound :: 12.0"]);
    assert_eq!(scan.check_declared(&ok), []);
    let warnings = scan.check_declared(&props(&["nvidia :: cuda_version_lower_bound :: 11.8"]));
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("links libcudart.so.12"),
        "{warnings:?}"
    );
}

#[test]
fn x86_64_level_below_what_the_code_uses() {
    let dir = tempfile::tempdir().unwrap();
    let avx512 = [code::VPADDD_ZMM, code::RET].concat();
    let dispatching = [code::CPUID, code::VPADDD_ZMM, code::RET].concat();
    let scan = scan_wheel(wheel(
        dir.path(),
        "v3.whl",
        &[
            ("a/_plain.so", Elf::x86_64_library(code::POPCNT).build()),
            ("a/_avx512.so", Elf::x86_64_library(&avx512).build()),
            ("a/_dispatch.so", Elf::x86_64_library(&dispatching).build()),
        ],
    ))
    .unwrap();
    assert_eq!(scan.check_declared(&props(&["x86_64 :: level :: v4"])), []);
    let warnings = scan.check_declared(&props(&["x86_64 :: level :: v3"]));
    let members: Vec<_> = warnings.iter().map(|w| w.member.as_deref()).collect();
    assert_eq!(members, [Some("a/_avx512.so"), Some("a/_dispatch.so")]);
    assert!(warnings[0]
        .message
        .contains("uses v4 instructions: avx512f (vpaddd at 0x1000)"));
    assert!(
        warnings[0].message.contains("may crash with SIGILL"),
        "{}",
        warnings[0].message
    );
    assert!(
        warnings[1]
            .message
            .contains("checks the CPU at run time (cpuid at 0x1000)"),
        "{}",
        warnings[1].message
    );
    // Other namespaces are not this check's business.
    assert_eq!(
        scan.check_declared(&props(&["blas :: provider :: mkl"])),
        []
    );
}
