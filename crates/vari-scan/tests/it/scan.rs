//! Scanning wheels: what each file needs and the properties the wheel's code justifies.

use vari_scan::{scan_wheel, X86Level};

use crate::support::{code, fatbin, wheel, Elf, CUDA12_FATBIN, CUDA13_FATBIN};

fn strings<T: ToString>(items: &[T]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

#[test]
fn x86_64_levels_per_file_and_the_highest_as_a_property() {
    let dir = tempfile::tempdir().unwrap();
    // Each with what a build for its level contains beyond the CPUs just below it (see
    // `partial_levels_are_unknown` for code that has less).
    let v2 = [code::POPCNT, code::PMULLD, code::RET].concat();
    let v3 = [code::ADDPD, code::VPADDD_YMM, code::RET].concat();
    let v4 = [code::VFMADD, code::VPADDB_ZMM, code::RET].concat();
    let v4_lib = Elf {
        functions: &[("add_vectors_avx512", 0, 12)],
        ..Elf::x86_64_library(&v4)
    };
    let path = wheel(
        dir.path(),
        "pkg-1.0-cp312-cp312-linux_x86_64.whl",
        &[
            ("pkg/__init__.py", b"from ._v2 import *\n".to_vec()),
            ("pkg/_v2.so", Elf::x86_64_library(&v2).build()),
            ("pkg/_v3.so", Elf::x86_64_library(&v3).build()),
            // ELF is recognised by content: a misleading name is still scanned…
            ("pkg/kernels.bin", v4_lib.build()),
            // …and a `.so` name that is not ELF is not.
            ("pkg/fake.so", b"INPUT(-lc)\n".to_vec()),
            ("pkg-1.0.dist-info/RECORD", Vec::new()),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    assert_eq!(scan.wheel, path);
    let paths: Vec<&str> = scan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["pkg/_v2.so", "pkg/_v3.so", "pkg/kernels.bin"]);
    let levels: Vec<_> = scan.files.iter().map(|f| f.x86_64_level()).collect();
    assert_eq!(
        levels,
        [Some(X86Level::V2), Some(X86Level::V3), Some(X86Level::V4)]
    );
    assert_eq!(scan.files[0].needs(), ["popcnt (popcnt at 0x1000)"]);
    assert_eq!(scan.files[1].needs(), ["avx2 (vpaddd at 0x1004)"]);
    assert_eq!(
        scan.files[2].needs(),
        ["avx512bw (vpaddb at 0x1005 in add_vectors_avx512)"]
    );
    for file in &scan.files {
        assert!(file.sm_arch().is_empty() && file.cuda_runtime.is_none());
        assert_eq!(file.x86_64.as_ref().unwrap().instructions, 3);
    }
    assert_eq!(strings(&scan.properties()), ["x86_64 :: level :: v4"]);
}

#[test]
fn dispatched_code_is_used_but_not_required() {
    let dir = tempfile::tempdir().unwrap();
    // A dispatcher: asks the CPU, has an AVX-512 path.
    let dispatching = [code::CPUID, code::POPCNT, code::VPADDD_ZMM, code::RET].concat();
    let baseline_v2 = [code::POPCNT, code::PMULLD, code::RET].concat();
    let path = wheel(
        dir.path(),
        "numeric-2.0-cp312-cp312-linux_x86_64.whl",
        &[
            (
                "numeric/_core.so",
                Elf::x86_64_library(&dispatching).build(),
            ),
            (
                "numeric/_linalg.so",
                Elf::x86_64_library(&baseline_v2).build(),
            ),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    let core = scan.files[0].x86_64.as_ref().unwrap();
    assert_eq!(core.level, X86Level::V4);
    assert_eq!(
        core.runtime_dispatch.as_ref().unwrap().cpuid_at,
        Some(0x1000)
    );
    assert_eq!(scan.used_x86_64_level(), Some(X86Level::V4));
    assert_eq!(scan.required_x86_64_level(), Some(X86Level::V2));
    assert_eq!(strings(&scan.properties()), ["x86_64 :: level :: v2"]);
}

#[test]
fn partial_levels_are_unknown() {
    let dir = tempfile::tempdir().unwrap();
    // What a `-mavx` build (jax's plugins) contains: AVX and v2, no AVX2, BMI2 or FMA.
    let avx_only = [code::POPCNT, code::PMULLD, code::VXORPS, code::RET].concat();
    let v2 = [code::POPCNT, code::PMULLD, code::RET].concat();
    let v3 = [code::VPADDD_YMM, code::RET].concat();
    // AVX-512F alone, as GCC's `-march=x86-64-v4` loops are: v4 (see `CPUS_BELOW_LEVELS`).
    let f_only = [code::VPADDD_YMM, code::VPADDD_ZMM, code::RET].concat();
    let scan_of = |name: &str, files: &[(&str, &[u8])]| {
        let members: Vec<(&str, Vec<u8>)> = files
            .iter()
            .map(|&(path, text)| (path, Elf::x86_64_library(text).build()))
            .collect();
        scan_wheel(wheel(dir.path(), name, &members)).unwrap()
    };

    let scan = scan_of(
        "avx-1.0-py3-none-linux_x86_64.whl",
        &[("a/_avx.so", &avx_only)],
    );
    let usage = scan.files[0].x86_64.as_ref().unwrap();
    assert_eq!(usage.level, X86Level::V3);
    assert_eq!(usage.partial_level.unwrap().name, "Intel Ivy Bridge");
    assert_eq!(usage.required_level(), None);
    assert_eq!(
        scan.files[0].needs(),
        [
            "avx (vxorps at 0x100a)",
            "part of v3 only: Intel Ivy Bridge, an x86-64-v2 CPU, runs it (no level fits)"
        ]
    );
    assert_eq!(scan.required_x86_64_level(), None);
    assert!(scan.properties().is_empty(), "{:?}", scan.properties());

    // A v2 file beside it does not make the wheel v2: the AVX code would crash a v2 CPU.
    let scan = scan_of(
        "avx2-1.0-py3-none-linux_x86_64.whl",
        &[("a/_avx.so", &avx_only), ("a/_v2.so", &v2)],
    );
    assert_eq!(scan.required_x86_64_level(), None);
    // A file that requires v3 settles it.
    let scan = scan_of(
        "avx3-1.0-py3-none-linux_x86_64.whl",
        &[("a/_avx.so", &avx_only), ("a/_v3.so", &v3)],
    );
    assert_eq!(strings(&scan.properties()), ["x86_64 :: level :: v3"]);

    let scan = scan_of("knl-1.0-py3-none-linux_x86_64.whl", &[("a/_f.so", &f_only)]);
    assert_eq!(strings(&scan.properties()), ["x86_64 :: level :: v4"]);
}

#[test]
fn a_cuda_12_library_with_lz4_fat_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let section = fatbin(CUDA12_FATBIN);
    let text = [code::ADDPD, code::RET].concat();
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        needed: &[
            "libcudart.so.12",
            "libcublas.so.12",
            "libstdc++.so.6",
            "libc.so.6",
        ],
        ..Elf::x86_64_library(&text)
    };
    let path = wheel(
        dir.path(),
        "jax_cuda12_plugin-0.4.38-cp311-cp311-manylinux2014_x86_64.whl",
        &[("jax_cuda12_plugin/_blas.so", lib.build())],
    );
    let scan = scan_wheel(&path).unwrap();
    let file = &scan.files[0];
    // The architectures hexdump shows in the section's entry headers (see the unit tests).
    assert_eq!(
        file.sm_arch(),
        [
            "50_real",
            "60_real",
            "70_real",
            "80_real",
            "90_real",
            "90_virtual"
        ]
    );
    assert_eq!(file.cuda_runtime, Some(12));
    assert_eq!(file.cuda_libraries, ["libcudart.so.12", "libcublas.so.12"]);
    assert_eq!(
        file.needs(),
        ["libcudart.so.12", "libcublas.so.12", "PTX ISA 8.3"]
    );
    assert_eq!(file.x86_64_level(), Some(X86Level::V1));
    assert_eq!(
        strings(&scan.properties()),
        [
            "nvidia :: cuda_version_lower_bound :: 12.0",
            "nvidia :: sm_arch :: 50_real",
            "nvidia :: sm_arch :: 60_real",
            "nvidia :: sm_arch :: 70_real",
            "nvidia :: sm_arch :: 80_real",
            "nvidia :: sm_arch :: 90_real",
            "nvidia :: sm_arch :: 90_virtual",
        ]
    );
}

#[test]
fn a_cuda_13_library_with_zstd_relocatable_fat_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let section = fatbin(CUDA13_FATBIN);
    let lib = Elf {
        fatbin: Some(("__nv_relfatbin", &section)),
        needed: &["libcudart.so.13"],
        ..Elf::x86_64_library(code::RET)
    };
    let path = wheel(
        dir.path(),
        "jax_cuda13_plugin-0.8.0-cp312-cp312-manylinux_2_27_x86_64.whl",
        &[("jax_cuda13_plugin/_prng.so", lib.build())],
    );
    let scan = scan_wheel(&path).unwrap();
    assert_eq!(
        scan.files[0].sm_arch(),
        [
            "75_real",
            "80_real",
            "90_real",
            "100_real",
            "120_real",
            "120_virtual"
        ]
    );
    assert_eq!(scan.cuda_runtime(), Some(13));
    assert!(strings(&scan.properties())
        .contains(&"nvidia :: cuda_version_lower_bound :: 13.0".to_owned()));
}

#[test]
fn runtimes_that_disagree_give_no_cuda_bound() {
    let dir = tempfile::tempdir().unwrap();
    let lib = |runtime: &str| {
        let needed = [runtime];
        Elf {
            needed: &needed,
            ..Elf::x86_64_library(code::RET)
        }
        .build()
    };
    let path = wheel(
        dir.path(),
        "mixed-1.0-py3-none-linux_x86_64.whl",
        &[
            ("a.so", lib("libcudart.so.11.0")),
            ("b.so", lib("libcudart.so.12")),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    assert_eq!(scan.files[0].cuda_runtime, Some(11));
    assert_eq!(scan.cuda_runtime(), None);
    assert!(scan.properties().is_empty());
}

#[test]
fn standalone_cubins_objects_and_other_architectures() {
    let dir = tempfile::tempdir().unwrap();
    // A cubin for sm_90a (ELF ABI 7: SM in the low byte, 0x800 = architecture-specific).
    let cubin = Elf {
        machine: elf_machine(190),
        file_type: object::elf::ET_EXEC,
        abi_version: 7,
        flags: 0x0500_0d5a,
        ..Elf::x86_64_library(&[0; 16])
    };
    let object_file = Elf {
        file_type: object::elf::ET_REL,
        ..Elf::x86_64_library(code::VPADDD_ZMM)
    };
    let i686 = Elf {
        is_64: false,
        machine: object::elf::EM_386,
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    };
    let path = wheel(
        dir.path(),
        "kernels-1.0-py3-none-any.whl",
        &[
            ("kernels/gemm_sm90a.cubin", cubin.build()),
            ("kernels/unused.o", object_file.build()),
            ("kernels/_x86.so", i686.build()),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    let paths: Vec<&str> = scan.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["kernels/gemm_sm90a.cubin", "kernels/_x86.so"]);
    assert_eq!(scan.files[0].sm_arch(), ["90_real"]);
    assert_eq!(
        scan.files[0].needs(),
        ["sm_90a SASS (runs only on compute capability 9.0)"]
    );
    assert_eq!(
        scan.files[1].x86_64_level(),
        None,
        "32-bit code has no x86-64 level"
    );
    assert_eq!(scan.files[1].cuda_runtime, Some(12));
}

fn elf_machine(n: u16) -> object::elf::Machine {
    object::elf::Machine(n)
}

#[test]
fn many_members_scan_in_archive_order() {
    let dir = tempfile::tempdir().unwrap();
    let members: Vec<(String, Vec<u8>)> = (0..40)
        .map(|i| {
            let text = if i % 3 == 0 {
                code::POPCNT
            } else {
                code::ADDPD
            };
            (format!("pkg/m{i:02}.so"), Elf::x86_64_library(text).build())
        })
        .collect();
    let refs: Vec<(&str, Vec<u8>)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let path = wheel(dir.path(), "many-1.0-py3-none-any.whl", &refs);
    let scan = scan_wheel(&path).unwrap();
    let paths: Vec<&str> = scan.files.iter().map(|f| f.path.as_str()).collect();
    let expected: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(paths, expected);
    for (i, file) in scan.files.iter().enumerate() {
        let level = if i % 3 == 0 {
            X86Level::V2
        } else {
            X86Level::V1
        };
        assert_eq!(file.x86_64_level(), Some(level), "{}", file.path);
    }
}

/// A cuFFT-like library: a small `.nv_fatbin` (CUDA 13's container) and its real kernels in
/// `.ldata` (CUDA 12's, SASS for 5.0 to 9.0), registered through `.nvFatBinSegment`.
#[test]
fn kernels_outside_nv_fatbin_are_read_through_their_wrappers() {
    use object::elf::SHT_PROGBITS;
    use vari_test_support::elf::wrapper;
    let dir = tempfile::tempdir().unwrap();
    let stub = fatbin(CUDA13_FATBIN);
    let kernels = fatbin(CUDA12_FATBIN);
    let segment = [wrapper(0x10_0000), wrapper(0x20_0000)].concat();
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &stub)),
        needed: &["libcudart.so.12"],
        sections: &[
            (".ldata", SHT_PROGBITS, 0x20_0000, &kernels),
            (".nvFatBinSegment", SHT_PROGBITS, 0x30_0000, &segment),
        ],
        ..Elf::x86_64_library(code::RET)
    };
    let stub_only = Elf {
        fatbin: Some((".nv_fatbin", &stub)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    };
    let path = wheel(
        dir.path(),
        "cufft-1.0-py3-none-manylinux_2_28_x86_64.whl",
        &[
            ("cufft/libcufft.so", lib.build()),
            ("stub/libstub.so", stub_only.build()),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    let (full, stub) = (&scan.files[0], &scan.files[1]);
    assert!(full.gpu_code_known());
    for value in ["50_real", "80_real", "90_real", "90_virtual"] {
        assert!(full.sm_arch().contains(&value.to_owned()), "{value}");
    }
    // What `.ldata` holds is added to what `.nv_fatbin` holds.
    assert!(stub.sm_arch().iter().all(|v| full.sm_arch().contains(v)));
    assert!(full.sm_arch().len() > stub.sm_arch().len());
    let properties = strings(&scan.properties());
    assert!(properties.contains(&"nvidia :: sm_arch :: 50_real".to_owned()));
}

/// GPU code no wrapper points at: the file's `sm_arch` is unknown, and the wheel gets no
/// `sm_arch` at all (not the values of what was read), whatever the other files carry.
#[test]
fn unreadable_gpu_code_is_unknown_and_infers_no_sm_arch() {
    use object::elf::SHT_PROGBITS;
    let dir = tempfile::tempdir().unwrap();
    let stub = fatbin(CUDA13_FATBIN);
    let table = fatbin(CUDA12_FATBIN);
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &stub)),
        needed: &["libcudart.so.12"],
        sections: &[(".ldata", SHT_PROGBITS, 0x20_0000, &table)],
        ..Elf::x86_64_library(code::RET)
    };
    let other = Elf {
        fatbin: Some((".nv_fatbin", &stub)),
        ..Elf::x86_64_library(code::RET)
    };
    let path = wheel(
        dir.path(),
        "cufft-1.0-py3-none-manylinux_2_28_x86_64.whl",
        &[
            ("cufft/libcufft.so", lib.build()),
            ("cufft/libother.so", other.build()),
        ],
    );
    let scan = scan_wheel(&path).unwrap();
    let file = &scan.files[0];
    assert!(!file.gpu_code_known());
    assert!(file.has_gpu_code());
    assert!(
        file.needs()
            .iter()
            .any(|n| n.starts_with("GPU code vari cannot read")),
        "{:?}",
        file.needs()
    );
    assert_eq!(
        strings(&scan.properties()),
        ["nvidia :: cuda_version_lower_bound :: 12.0"]
    );
    // Nothing to contradict a declared value with: what the file runs on is unknown.
    let declared: Vec<vari_core::Property> = vec!["nvidia :: sm_arch :: 86_real".parse().unwrap()];
    let warnings = scan.check_declared(&declared);
    assert!(
        warnings
            .iter()
            .all(|w| w.member.as_deref() != Some("cufft/libcufft.so")),
        "{warnings:?}"
    );
}
