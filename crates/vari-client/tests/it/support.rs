//! Helpers shared by the scenarios: settings for a test server, wheels made on the fly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use vari_client::{CacheMode, ClientSettings, IndexClient, IndexUrl, NetrcSource, ProjectName};

pub(crate) use vari_test_support::paths::file_names as entries;
pub(crate) use vari_test_support::wheels::level_variants as variants_doc;

/// The workspace's test data directory.
pub(crate) fn testdata() -> PathBuf {
    vari_test_support::paths::testdata("")
}

/// Copies the variantlib fixture wheels (and, if asked, their variants.json) into `dir`.
pub(crate) fn copy_fixture_wheels(dir: &Path, with_variants_json: bool) {
    for entry in std::fs::read_dir(testdata().join("wheels")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if name.ends_with(".whl") || (with_variants_json && name.ends_with("-variants.json")) {
            std::fs::copy(&path, dir.join(&name)).unwrap();
        }
    }
}

/// Settings for tests: the given indexes, no cache, no netrc, short retries.
pub(crate) fn settings(indexes: &[String]) -> ClientSettings {
    ClientSettings {
        indexes: indexes
            .iter()
            .map(|u| IndexUrl::parse(u).unwrap())
            .collect(),
        find_links: Vec::new(),
        cache_dir: None,
        cache_mode: CacheMode::Normal,
        connect_timeout: Duration::from_secs(10),
        read_timeout: Duration::from_secs(30),
        retries: 0,
        retry_backoff: Duration::from_millis(10),
        netrc: NetrcSource::Disabled,
        ..ClientSettings::default()
    }
}

pub(crate) fn client(settings: ClientSettings) -> IndexClient {
    IndexClient::new(settings).unwrap()
}

pub(crate) fn name(name: &str) -> ProjectName {
    ProjectName::new(name).unwrap()
}

/// Writes a wheel `filename` into `dir`: an incompressible payload of `payload` bytes first
/// (so range reads of the metadata at the end can be told from whole downloads), then
/// `METADATA`, `variant.json` when given, and `RECORD`.
pub(crate) fn write_wheel(
    dir: &Path,
    filename: &str,
    variant_json: Option<&str>,
    payload: usize,
) -> PathBuf {
    let parts: Vec<&str> = filename.trim_end_matches(".whl").split('-').collect();
    let (dist, version) = (parts[0], parts[1]);
    let info = format!("{dist}-{version}.dist-info");
    let path = dir.join(filename);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(format!("{dist}/payload.bin"), stored)
        .unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15 ^ payload as u64;
    let mut bytes = Vec::with_capacity(payload);
    while bytes.len() < payload {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(payload);
    zip.write_all(&bytes).unwrap();
    zip.start_file(format!("{info}/METADATA"), deflated)
        .unwrap();
    write!(
        zip,
        "Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nRequires-Dist: numpy>=2 ; variant_label == \"x86_64_v3\"\n"
    )
    .unwrap();
    if let Some(json) = variant_json {
        zip.start_file(format!("{info}/variant.json"), deflated)
            .unwrap();
        zip.write_all(json.as_bytes()).unwrap();
    }
    zip.start_file(format!("{info}/RECORD"), deflated).unwrap();
    writeln!(zip, "{info}/METADATA,,").unwrap();
    zip.finish().unwrap();
    path
}
