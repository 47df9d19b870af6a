//! Small generated wheels for the writing tests: real zip archives with a correct RECORD,
//! mixed compression, timestamps and permissions, so that raw copying can be checked.

use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime};

/// The repository's test data.
pub(crate) fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The Python tools' environment (`scripts/test-env`).
pub(crate) fn venv() -> PathBuf {
    let venv = std::env::var_os("VARI_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv"));
    assert!(
        venv.join("bin/python").exists(),
        "no Python test environment at {}: run scripts/test-env",
        venv.display()
    );
    venv
}

/// A RECORD row with the true hash.
pub(crate) fn record_row(name: &str, bytes: &[u8]) -> String {
    format!(
        "{name},sha256={},{}\n",
        URL_SAFE_NO_PAD.encode(Sha256::digest(bytes)),
        bytes.len()
    )
}

/// A plain wheel `{dist}-{version}-{tags}.whl` in `dir` with a package, a data file, METADATA
/// (with `requires`), WHEEL and RECORD. Returns its path.
pub(crate) fn plain_wheel(
    dir: &Path,
    dist: &str,
    version: &str,
    tags: &str,
    requires: &[&str],
) -> PathBuf {
    let escaped = dist.replace('-', "_");
    let dist_info = format!("{escaped}-{version}.dist-info");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n");
    for r in requires {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    metadata.push_str("\nA test package.\n");
    let package = escaped.split('_').next().unwrap_or("pkg").to_owned();
    let members: Vec<(String, Vec<u8>, CompressionMethod, u32)> = vec![
        (
            format!("{package}/__init__.py"),
            b"VALUE = 42\n".to_vec(),
            CompressionMethod::Deflated,
            0o644,
        ),
        (
            format!("{package}/_native.so"),
            (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect(),
            CompressionMethod::Stored,
            0o755,
        ),
        (
            format!("{escaped}-{version}.data/scripts/tool"),
            b"#!/bin/sh\necho tool\n".to_vec(),
            CompressionMethod::Deflated,
            0o755,
        ),
        (
            format!("{dist_info}/METADATA"),
            metadata.into_bytes(),
            CompressionMethod::Deflated,
            0o644,
        ),
        (
            format!("{dist_info}/WHEEL"),
            format!(
                "Wheel-Version: 1.0\nGenerator: vari-tests\nRoot-Is-Purelib: false\nTag: {tags}\n"
            )
            .into_bytes(),
            CompressionMethod::Deflated,
            0o644,
        ),
    ];
    let mut record: String = members
        .iter()
        .map(|(n, b, _, _)| record_row(n, b))
        .collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (i, (name, bytes, method, mode)) in members.iter().enumerate() {
        let time = DateTime::from_date_and_time(2024, 3, 1 + i as u8, 12, 30, 10).unwrap();
        let options = SimpleFileOptions::default()
            .compression_method(*method)
            .unix_permissions(*mode)
            .last_modified_time(time);
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .unix_permissions(0o644)
        .last_modified_time(DateTime::from_date_and_time(2024, 3, 9, 8, 0, 0).unwrap());
    zip.start_file(format!("{dist_info}/RECORD"), options)
        .unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let path = dir.join(format!("{escaped}-{version}-{tags}.whl"));
    std::fs::write(&path, bytes).unwrap();
    path
}

/// One member as seen in an archive: name, contents, and the raw facts a copy must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) contents: Vec<u8>,
    pub(crate) compressed: Vec<u8>,
    pub(crate) method: CompressionMethod,
    pub(crate) modified: Option<DateTime>,
    pub(crate) mode: Option<u32>,
}

/// Every member of a wheel, in archive order.
pub(crate) fn members(path: &Path) -> Vec<Member> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let mut compressed = Vec::new();
        {
            let file = zip.by_index_raw(i).unwrap();
            let mut raw = file;
            raw.read_to_end(&mut compressed).unwrap();
        }
        let mut file = zip.by_index(i).unwrap();
        let mut contents = Vec::new();
        file.read_to_end(&mut contents).unwrap();
        out.push(Member {
            name: file.name().to_owned(),
            contents,
            compressed,
            method: file.compression(),
            modified: file.last_modified(),
            mode: file.unix_mode(),
        });
    }
    out
}

/// A member's contents by name.
pub(crate) fn member<'a>(members: &'a [Member], name: &str) -> &'a Member {
    members
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no member {name}"))
}
