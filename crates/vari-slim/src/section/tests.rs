//! Slimming the real sections of `testdata/fatbin/` (CUDA 12, LZ4 entries; CUDA 13, Zstandard
//! entries), checked by parsing the result again and comparing bytes with the fat section.

use super::*;
use crate::keep::KeepSpec;
use vari_scan::{parse_fatbin, CodeKind};

fn section(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../testdata/fatbin/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const CUDA12: &str = "jax_cuda12_plugin-0.4.38-_blas.so.nv_fatbin";
const CUDA13: &str = "jax_cuda13_plugin-0.8.0-_prng.so.nv_fatbin";

fn keep(specs: &[&str]) -> Keep {
    Keep::new(specs.iter().map(|s| s.parse::<KeepSpec>().unwrap()))
}

/// `sm_80` / `compute_90` for every entry of a section.
fn names(section: &[u8]) -> Vec<String> {
    parse_fatbin(section)
        .unwrap()
        .iter()
        .map(|e| match e.kind {
            Some(CodeKind::Sass) => format!("sm_{}", e.arch),
            Some(CodeKind::Ptx) => format!("compute_{}", e.arch),
            None => format!("kind {}", e.raw_kind),
        })
        .collect()
}

/// Slims a copy of `fat` and checks what every slim section must be: same length, each kept
/// entry byte-identical to the fat one and in the same order, zeros after the last one, the
/// container header unchanged but for its size.
fn slim_and_check(fat: &[u8], keep: &Keep) -> Vec<u8> {
    let mut slim = fat.to_vec();
    let outcomes = slim_section(&mut slim, keep).unwrap();
    assert_eq!(slim.len(), fat.len());
    let containers = parse_fatbin_containers(&slim).unwrap();
    let fat_containers = parse_fatbin_containers(fat).unwrap();
    assert_eq!(containers.len(), fat_containers.len());
    let kept: Vec<&FatbinEntry> = outcomes
        .iter()
        .filter(|o| o.kept)
        .map(|o| &o.entry)
        .collect();
    let slim_entries: Vec<&FatbinEntry> = containers.iter().flat_map(|c| &c.entries).collect();
    assert_eq!(slim_entries.len(), kept.len());
    for (new, old) in slim_entries.iter().zip(&kept) {
        assert_eq!(
            slim[new.offset..new.offset + new.len],
            fat[old.offset..old.offset + old.len]
        );
        assert_eq!((new.arch, new.kind), (old.arch, old.kind));
    }
    for (new, old) in containers.iter().zip(&fat_containers) {
        assert_eq!(new.offset, old.offset);
        assert_eq!(
            slim[new.offset..new.offset + 8],
            fat[old.offset..old.offset + 8]
        );
        assert!(slim[new.end..old.end].iter().all(|&b| b == 0));
    }
    slim
}

#[test]
fn keeps_the_sass_for_a_capability_and_drops_the_rest() {
    let fat = section(CUDA12);
    assert_eq!(
        names(&fat),
        ["sm_90", "compute_90", "sm_60", "sm_80", "sm_50", "sm_70"]
    );
    assert_eq!(names(&slim_and_check(&fat, &keep(&["8.6"]))), ["sm_80"]);
    // SASS serves 9.0, so its PTX is not needed there.
    assert_eq!(names(&slim_and_check(&fat, &keep(&["9.0"]))), ["sm_90"]);
    assert_eq!(
        names(&slim_and_check(&fat, &keep(&["7.x", "8.x"]))),
        ["sm_80", "sm_70"]
    );
    // No SASS for 12.0: the PTX the driver would JIT.
    assert_eq!(
        names(&slim_and_check(&fat, &keep(&["12.0"]))),
        ["compute_90"]
    );
    assert_eq!(
        names(&slim_and_check(&fat, &keep(&["9.0", "compute_90"]))),
        ["sm_90", "compute_90"]
    );
}

#[test]
fn zstd_entries_of_cuda_13_move_whole() {
    let fat = section(CUDA13);
    assert_eq!(
        names(&fat),
        ["sm_120", "compute_120", "sm_80", "sm_100", "sm_75", "sm_90"]
    );
    assert_eq!(
        names(&slim_and_check(&fat, &keep(&["10.0", "12.x"]))),
        ["sm_120", "sm_100"]
    );
    assert_eq!(names(&slim_and_check(&fat, &keep(&["7.5"]))), ["sm_75"]);
}

#[test]
fn the_slim_section_deflates_to_less() {
    let fat = section(CUDA12);
    let slim = slim_and_check(&fat, &keep(&["9.0"]));
    let zeros = slim.iter().rev().take_while(|&&b| b == 0).count();
    // The five dropped entries are zeros at the end.
    assert!(zeros > fat.len() * 2 / 3, "{zeros} of {}", fat.len());
}

#[test]
fn several_containers_each_keep_their_offset() {
    let (a, b) = (section(CUDA12), section(CUDA13));
    let mut fat = a.clone();
    fat.extend_from_slice(&[0; 16]);
    let second = fat.len();
    fat.extend_from_slice(&b);
    let slim = slim_and_check(&fat, &keep(&["8.0"]));
    let containers = parse_fatbin_containers(&slim).unwrap();
    assert_eq!(
        containers.iter().map(|c| c.offset).collect::<Vec<_>>(),
        [0, second]
    );
    assert_eq!(names(&slim), ["sm_80", "sm_80"]);
}

#[test]
fn a_container_with_nothing_kept_is_empty_and_still_parses() {
    let fat = section(CUDA12);
    let slim = slim_and_check(&fat, &keep(&["7.5"]));
    assert_eq!(names(&slim), ["sm_70"]);
    let slim = slim_and_check(&fat, &keep(&["3.5"]));
    assert!(names(&slim).is_empty());
    assert!(slim[16..].iter().all(|&b| b == 0));
}

#[test]
fn a_broken_section_is_refused_unchanged() {
    let mut fat = section(CUDA12);
    // The container's size now runs past the section.
    fat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    let before = fat.clone();
    let e = slim_section(&mut fat, &keep(&["8.0"])).unwrap_err();
    assert!(e.problem.contains("runs past the end"), "{e}");
    assert_eq!(fat, before);
}

#[test]
fn a_move_that_would_break_alignment_is_refused_unchanged() {
    // Entry lengths are multiples of 8 in every real section; make the first one 4 bytes
    // longer (its payload length, and the container's size, grow by 4).
    let mut fat = section(CUDA12);
    let payload = u64::from_le_bytes(fat[16 + 8..16 + 16].try_into().unwrap());
    fat[16 + 8..16 + 16].copy_from_slice(&(payload + 4).to_le_bytes());
    let body = u64::from_le_bytes(fat[8..16].try_into().unwrap());
    fat[8..16].copy_from_slice(&(body + 4).to_le_bytes());
    let first_end = 16 + 64 + payload as usize;
    fat.splice(first_end..first_end, [0u8; 4]);
    let before = fat.clone();
    let e = slim_section(&mut fat, &keep(&["8.0"])).unwrap_err();
    assert!(e.problem.contains("alignment"), "{e}");
    assert_eq!(fat, before);
}

#[test]
fn damaged_sections_never_panic_and_what_is_accepted_still_parses() {
    // Deterministic damage (a linear congruential generator): bytes overwritten in the headers
    // and anywhere, thousands of times; every outcome is an error or a section that parses.
    let fat = section(CUDA12);
    let mut state: u64 = 0x5eed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let keep = keep(&["8.6", "compute_90"]);
    for _ in 0..3000 {
        let mut damaged = fat.clone();
        for _ in 0..1 + next() % 4 {
            // Half the time in the first entry headers, where the sizes are.
            let at = if next() % 2 == 0 {
                next() % 200
            } else {
                next() % damaged.len()
            };
            damaged[at] = next() as u8;
        }
        if slim_section(&mut damaged, &keep).is_ok() {
            assert!(parse_fatbin_containers(&damaged).is_ok());
        }
    }
}
