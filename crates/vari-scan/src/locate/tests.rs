//! Finding containers through their wrappers, in ELF files built around the real fat binaries of
//! `testdata/fatbin/`: in `.ldata` as cuFFT keeps them, beside `.nv_fatbin` as torch does, with
//! the pointer in place or in a `RELATIVE` relocation; and what cannot be read, said so.

use super::*;
use object::elf::{SHT_PROGBITS, SHT_RELA};
use vari_test_support::elf::{
    code, fatbin, relative_rela, wrapper, Elf, CUDA12_FATBIN, CUDA13_FATBIN,
};

/// Where the test builder loads `.nv_fatbin`.
const NV_FATBIN_ADDRESS: u64 = 0x10_0000;
const LDATA: u64 = 0x20_0000;
const SEGMENT: u64 = 0x30_0000;

fn regions(data: &[u8]) -> Vec<(String, RegionKind, usize)> {
    let layout = fatbin_layout(data).unwrap();
    assert_eq!(layout.unreadable, None, "{layout:?}");
    layout
        .regions
        .iter()
        .map(|r| (r.section.clone(), r.kind, r.range.len()))
        .collect()
}

#[test]
fn a_container_in_ldata_is_found_through_its_wrapper() {
    let container = fatbin(CUDA12_FATBIN);
    let segment = wrapper(LDATA);
    let data = Elf {
        sections: &[
            (".ldata", SHT_PROGBITS, LDATA, &container),
            (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
        ],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    assert_eq!(
        regions(&data),
        [(".ldata".to_owned(), RegionKind::Container, container.len())]
    );
    let layout = fatbin_layout(&data).unwrap();
    assert_eq!(&data[layout.regions[0].range.clone()], &container[..]);
}

#[test]
fn a_relative_relocation_names_the_container_of_a_position_independent_library() {
    // The pointer is zero in place; the relocation's addend is the container's address.
    let container = fatbin(CUDA12_FATBIN);
    let segment = wrapper(0);
    let rela = [relative_rela(SEGMENT + 8, LDATA as i64)].concat();
    let data = Elf {
        sections: &[
            (".rela.dyn", SHT_RELA, 0x40_0000, &rela),
            (".lrodata", SHT_PROGBITS, LDATA, &container),
            (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
        ],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    assert_eq!(
        regions(&data),
        [(
            ".lrodata".to_owned(),
            RegionKind::Container,
            container.len()
        )]
    );
}

#[test]
fn containers_in_two_places_are_all_found_once() {
    // torch: most containers in `.nv_fatbin`, some in `.lrodata`; every one has a wrapper.
    let standard = fatbin(CUDA13_FATBIN);
    let large = fatbin(CUDA12_FATBIN);
    let segment = [wrapper(NV_FATBIN_ADDRESS), wrapper(LDATA), wrapper(LDATA)].concat();
    let data = Elf {
        fatbin: Some((".nv_fatbin", &standard)),
        sections: &[
            (".lrodata", SHT_PROGBITS, LDATA, &large),
            (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
        ],
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    assert_eq!(
        regions(&data),
        [
            (".nv_fatbin".to_owned(), RegionKind::Section, standard.len()),
            (".lrodata".to_owned(), RegionKind::Container, large.len()),
        ]
    );
}

/// The layout's reason, for a file whose GPU code cannot all be read.
fn unreadable(sections: &[(&str, object::elf::SectionType, u64, &[u8])]) -> String {
    let data = Elf {
        sections,
        ..Elf::x86_64_library(code::RET)
    }
    .build();
    fatbin_layout(&data)
        .unwrap()
        .unreadable
        .expect("unreadable GPU code")
}

#[test]
fn gpu_code_that_cannot_be_read_is_said_so() {
    let container = fatbin(CUDA12_FATBIN);
    // No wrapper points at it: a table of the library's own.
    let why = unreadable(&[(".ldata", SHT_PROGBITS, LDATA, &container)]);
    assert!(why.contains("in no fat binary nvcc registers"), "{why}");
    // The wrapper points where the file has no bytes.
    let segment = wrapper(0x90_0000);
    let why = unreadable(&[
        (".ldata", SHT_PROGBITS, LDATA, &container),
        (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
    ]);
    assert!(why.contains("which no section of the file holds"), "{why}");
    // The wrapper points at bytes that are not a container.
    let segment = wrapper(LDATA + 8);
    let why = unreadable(&[
        (".ldata", SHT_PROGBITS, LDATA, &container),
        (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
    ]);
    assert!(
        why.contains("where no fat-binary container starts"),
        "{why}"
    );
    // Nothing in place and no relocation to say where.
    let segment = wrapper(0);
    let why = unreadable(&[
        (".ldata", SHT_PROGBITS, LDATA, &container),
        (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
    ]);
    assert!(why.contains("resolved only at load time"), "{why}");
    // A record that is not a wrapper.
    let mut segment = wrapper(LDATA);
    segment[0] ^= 1;
    let why = unreadable(&[
        (".ldata", SHT_PROGBITS, LDATA, &container),
        (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
    ]);
    assert!(why.contains("has magic"), "{why}");
    // A container whose size runs past its section.
    let segment = wrapper(LDATA);
    let why = unreadable(&[
        (
            ".ldata",
            SHT_PROGBITS,
            LDATA,
            &container[..container.len() - 8],
        ),
        (".nvFatBinSegment", SHT_PROGBITS, SEGMENT, &segment),
    ]);
    assert!(
        why.contains("where no fat-binary container starts"),
        "{why}"
    );
}

#[test]
fn a_file_without_gpu_code_has_no_regions() {
    let data = Elf::x86_64_library(code::RET).build();
    assert_eq!(fatbin_layout(&data).unwrap(), FatbinLayout::default());
}
