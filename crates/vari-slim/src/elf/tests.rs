//! Slimming ELF files built around the real fat-binary sections of `testdata/fatbin/`: only
//! the `.nv_fatbin` bytes change; what is not in standard sections is left whole.

use super::*;
use crate::keep::KeepSpec;

use vari_test_support::elf::{code, fatbin, Elf, CUDA12_FATBIN};

fn keep(spec: &str) -> Keep {
    Keep::new([spec.parse::<KeepSpec>().unwrap()])
}

const FATBIN_SECTION: &[u8] = b".nv_fatbin";

/// Where the named section's bytes are in the file.
fn section_range(data: &[u8], name: &[u8]) -> std::ops::Range<usize> {
    let found = fatbin_layout(data).unwrap();
    let region = found
        .regions
        .iter()
        .find(|r| r.section.as_bytes() == name)
        .unwrap();
    region.range.clone()
}

#[test]
fn only_the_fatbin_section_changes() {
    let section = fatbin(CUDA12_FATBIN);
    let fat = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        needed: &["libcudart.so.12"],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let mut slim = fat.clone();
    let outcome = slim_elf(&mut slim, &keep("9.0")).unwrap();
    assert!(outcome.changed());
    assert_eq!(outcome.left_whole, None);
    assert_eq!(outcome.entries.iter().filter(|e| e.kept).count(), 1);
    let range = section_range(&fat, FATBIN_SECTION);
    assert_eq!(slim.len(), fat.len());
    assert_eq!(slim[..range.start], fat[..range.start]);
    assert_eq!(slim[range.end..], fat[range.end..]);
    let mut expected = section.clone();
    slim_section(&mut expected, &keep("9.0")).unwrap();
    assert_eq!(slim[range], expected[..]);
}

#[test]
fn keeping_everything_changes_nothing() {
    let section = fatbin(CUDA12_FATBIN);
    let fat = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let mut slim = fat.clone();
    let all =
        Keep::new(["5.x", "6.x", "7.x", "8.x", "9.x", "compute_90"].map(|s| s.parse().unwrap()));
    let outcome = slim_elf(&mut slim, &all).unwrap();
    assert!(!outcome.changed());
    assert_eq!(slim, fat);
}

#[test]
fn relocatable_device_code_is_left_as_it_is() {
    let section = fatbin(CUDA12_FATBIN);
    let fat = Elf {
        fatbin: Some(("__nv_relfatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let mut slim = fat.clone();
    let outcome = slim_elf(&mut slim, &keep("9.0")).unwrap();
    assert_eq!(outcome.left_whole, Some(LeftWhole::Relocatable));
    assert!(!outcome.changed());
    assert_eq!(slim, fat);
}

#[test]
fn gpu_code_outside_the_standard_sections_leaves_the_file_whole() {
    // A library that keeps a container in its own data (here: in `.text`).
    let section = fatbin(CUDA12_FATBIN);
    let fat = Elf::x86_64_library(&section).build();
    let mut slim = fat.clone();
    let outcome = slim_elf(&mut slim, &keep("9.0")).unwrap();
    assert_eq!(outcome.left_whole, Some(LeftWhole::NonStandard));
    assert_eq!(slim, fat);

    // An embedded cubin: an ELF header for machine 190 inside the file.
    let mut cubin = b"\x7fELF\x02\x01\x01".to_vec();
    cubin.resize(64, 0);
    cubin[18..20].copy_from_slice(&190u16.to_le_bytes());
    let other = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(&cubin)
    }
    .build();
    let mut slim = other.clone();
    let outcome = slim_elf(&mut slim, &keep("9.0")).unwrap();
    assert_eq!(outcome.left_whole, Some(LeftWhole::NonStandard));
    assert_eq!(slim, other);
}

#[test]
fn a_standalone_cubin_is_left_whole() {
    let cubin = Elf {
        machine: object::elf::EM_CUDA,
        file_type: object::elf::ET_EXEC,
        flags: 90,
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let mut slim = cubin.clone();
    let outcome = slim_elf(&mut slim, &keep("8.0")).unwrap();
    assert_eq!(outcome.left_whole, Some(LeftWhole::Cubin));
    assert_eq!(slim, cubin);
}

#[test]
fn broken_files_are_errors() {
    let mut truncated = Elf::x86_64_library(code::RET).build();
    truncated.truncate(40);
    assert!(matches!(
        slim_elf(&mut truncated, &keep("8.0")),
        Err(ElfProblem::Elf(_))
    ));
    let mut section = fatbin(CUDA12_FATBIN);
    section[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut bad = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let e = slim_elf(&mut bad, &keep("8.0")).unwrap_err();
    assert!(e.to_string().starts_with("section .nv_fatbin: "), "{e}");
}

#[test]
fn containers_outside_nv_fatbin_are_slimmed_where_they_lie() {
    // torch's libtorch_cuda.so: containers in `.nv_fatbin` and, with the large code model, in
    // `.lrodata`, each registered through a `.nvFatBinSegment` wrapper.
    use object::elf::SHT_PROGBITS;
    use vari_test_support::elf::wrapper;
    let section = fatbin(CUDA12_FATBIN);
    let segment = [wrapper(0x10_0000), wrapper(0x20_0000)].concat();
    let fat = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        sections: &[
            (".lrodata", SHT_PROGBITS, 0x20_0000, &section),
            (".nvFatBinSegment", SHT_PROGBITS, 0x30_0000, &segment),
        ],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    let mut slim = fat.clone();
    let outcome = slim_elf(&mut slim, &keep("9.0")).unwrap();
    assert_eq!(outcome.left_whole, None);
    assert_eq!(outcome.entries.iter().filter(|e| e.kept).count(), 2);
    let mut expected = section.clone();
    slim_section(&mut expected, &keep("9.0")).unwrap();
    let standard = section_range(&fat, FATBIN_SECTION);
    let large = section_range(&fat, b".lrodata");
    assert!(standard.end <= large.start);
    assert_eq!(slim[standard.clone()], expected[..]);
    assert_eq!(slim[large.clone()], expected[..]);
    // Every other byte as it was.
    assert_eq!(slim.len(), fat.len());
    assert_eq!(slim[..standard.start], fat[..standard.start]);
    assert_eq!(
        slim[standard.end..large.start],
        fat[standard.end..large.start]
    );
    assert_eq!(slim[large.end..], fat[large.end..]);
}
