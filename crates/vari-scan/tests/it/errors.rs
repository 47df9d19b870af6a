//! Broken wheels: one error naming the wheel, the member and what is wrong.

use vari_scan::{scan_wheel, ScanProblem};

use crate::support::{code, fatbin, wheel, Elf, CUDA12_FATBIN};

#[test]
fn a_file_that_is_not_a_zip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.whl");
    std::fs::write(&path, b"not a zip").unwrap();
    let e = scan_wheel(&path).unwrap_err();
    assert_eq!(e.member, None);
    assert!(matches!(e.problem, ScanProblem::Archive(_)), "{e}");
    assert!(e.to_string().starts_with(&path.display().to_string()));
}

#[test]
fn a_missing_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let e = scan_wheel(dir.path().join("missing.whl")).unwrap_err();
    assert!(matches!(e.problem, ScanProblem::Io(_)), "{e}");
}

#[test]
fn a_truncated_elf_member_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut lib = Elf::x86_64_library(code::RET).build();
    lib.truncate(40);
    let path = wheel(
        dir.path(),
        "t.whl",
        &[("ok.py", b"".to_vec()), ("pkg/_broken.so", lib)],
    );
    let e = scan_wheel(&path).unwrap_err();
    assert_eq!(e.member.as_deref(), Some("pkg/_broken.so"));
    assert!(matches!(e.problem, ScanProblem::Elf(_)), "{e}");
    assert!(
        e.to_string()
            .contains(": pkg/_broken.so: not a readable ELF file"),
        "{e}"
    );
}

#[test]
fn a_malformed_fat_binary_names_its_section() {
    let dir = tempfile::tempdir().unwrap();
    let mut section = fatbin(CUDA12_FATBIN);
    section.truncate(section.len() - 100);
    let lib = Elf {
        fatbin: Some((".nv_fatbin", &section)),
        ..Elf::x86_64_library(code::RET)
    };
    let path = wheel(dir.path(), "f.whl", &[("gpu.so", lib.build())]);
    let e = scan_wheel(&path).unwrap_err();
    assert_eq!(e.member.as_deref(), Some("gpu.so"));
    let text = e.to_string();
    assert!(
        text.contains("gpu.so: section .nv_fatbin: fat binary at offset 0x0: container of"),
        "{text}"
    );
}

#[test]
fn with_several_broken_members_the_first_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let good = Elf::x86_64_library(code::POPCNT).build();
    let mut bad = good.clone();
    bad.truncate(30);
    let mut members: Vec<(String, Vec<u8>)> = (0..30)
        .map(|i| (format!("m{i:02}.so"), good.clone()))
        .collect();
    for i in [7, 19, 25] {
        members[i].1 = bad.clone();
    }
    let refs: Vec<(&str, Vec<u8>)> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    let path = wheel(dir.path(), "several.whl", &refs);
    for _ in 0..5 {
        let e = scan_wheel(&path).unwrap_err();
        assert_eq!(e.member.as_deref(), Some("m07.so"));
    }
}

#[test]
fn a_member_whose_data_fails_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let lib = Elf::x86_64_library(&[code::ADDPD; 64].concat()).build();
    // Stored (uncompressed) so that a byte of the data can be changed in place.
    let path = dir.path().join("crc.whl");
    {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file("lib.so", stored).unwrap();
        zip.write_all(&lib).unwrap();
        zip.finish().unwrap();
    }
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(4).position(|w| w == b"\x7fELF").unwrap() + 0x200;
    bytes[at] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let e = scan_wheel(&path).unwrap_err();
    assert_eq!(e.member.as_deref(), Some("lib.so"));
    assert!(matches!(e.problem, ScanProblem::Io(_)), "{e}");
}

/// Issue 32: what `vari wheel validate` refuses of a wheel's members (a name outside the
/// install directory, a link, data shared by two members), scanning refuses too, before any
/// member is read: one error naming the wheel and the member.
#[test]
fn members_that_validate_refuses_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lib = Elf::x86_64_library(code::RET).build();
    for name in ["../evil.so", "/abs/evil.so", "pkg\\evil.so"] {
        let path = wheel(
            dir.path(),
            "demo-1.0-py3-none-any.whl",
            &[("demo/__init__.py", b"".to_vec()), (name, lib.clone())],
        );
        let e = scan_wheel(&path).unwrap_err();
        assert!(matches!(e.problem, ScanProblem::Layout(_)), "{e}");
        let text = e.to_string();
        assert!(text.starts_with(&path.display().to_string()), "{text}");
        assert!(text.contains(&format!("member `{name}`")), "{text}");
        // The same members read one by one (`wheel slim`) are refused the same way.
        let e = vari_scan::read_elf_members(&path, |_, _| Ok(())).unwrap_err();
        assert!(matches!(e.problem, ScanProblem::Layout(_)), "{e}");
    }
}
