//! `inspect` on the shared fixture wheels (from variantlib, Apache-2.0, see
//! `testdata/LICENSE-variantlib-Apache-2.0`) and on broken wheels built here.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256};
use vari_core::label::default_label;
use vari_core::metadata::properties_of;
use vari_wheel::{inspect, inspect_reader, WheelError, WheelErrorKind, WheelInfo};
use zip::write::SimpleFileOptions;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/wheels")
        .join(name)
}

fn fixture(name: &str) -> WheelInfo {
    inspect(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn property_strings(info: &WheelInfo) -> Vec<String> {
    let metadata = info.metadata.as_ref().unwrap();
    let (_, props) = metadata.variants.iter().next().unwrap();
    properties_of(props).map(|p| p.to_string()).collect()
}

#[test]
fn labelled_fixtures_are_read_with_their_properties() {
    let cases: [(&str, &[&str]); 5] = [
        (
            "5d8be4b9",
            &[
                "installable_plugin :: feat1 :: val1c",
                "installable_plugin :: feat2 :: val2b",
            ],
        ),
        ("60567bd9", &["installable_plugin :: feat1 :: val1c"]),
        ("fbe82642", &["installable_plugin :: feat2 :: val2b"]),
        ("foo", &["installable_plugin :: feat1 :: val1c"]),
        ("bar", &["installable_plugin :: feat2 :: val2b"]),
    ];
    for (label, expected) in cases {
        let name = format!("test_package-0-py3-none-any-{label}.whl");
        let info = fixture(&name);
        assert_eq!(info.path, data(&name));
        assert_eq!(info.filename.label.as_ref().unwrap().as_str(), label);
        assert_eq!(info.dist_info, "test_package-0.dist-info");
        let metadata = info.metadata.as_ref().unwrap();
        let labels: Vec<&str> = metadata.variants.keys().map(|l| l.as_str()).collect();
        assert_eq!(labels, [label]);
        assert_eq!(property_strings(&info), expected, "{name}");
        assert_eq!(info.record.member, "test_package-0.dist-info/RECORD");
        assert_eq!(info.record.entries, 5);
        assert_eq!(
            info.record.verified,
            ["test_package-0.dist-info/variant.json"]
        );
        assert!(!metadata.priorities.namespace.is_empty());
    }
}

#[test]
fn hashed_fixture_labels_are_default_labels() {
    for label in ["5d8be4b9", "60567bd9", "fbe82642"] {
        let info = fixture(&format!("test_package-0-py3-none-any-{label}.whl"));
        let (_, props) = info
            .metadata
            .as_ref()
            .unwrap()
            .variants
            .iter()
            .next()
            .unwrap();
        let props: Vec<_> = properties_of(props).collect();
        assert_eq!(default_label(&props).as_str(), label);
    }
}

#[test]
fn null_fixture_is_the_null_variant() {
    let info = fixture("test_package-0-py3-none-any-null.whl");
    assert!(info.filename.is_null_variant());
    let metadata = info.metadata.as_ref().unwrap();
    assert_eq!(metadata.variants.len(), 1);
    let (label, props) = metadata.variants.iter().next().unwrap();
    assert!(label.is_null());
    assert_eq!(properties_of(props).count(), 0);
}

#[test]
fn plain_fixture_has_no_metadata() {
    let info = fixture("test_package-0-py3-none-any.whl");
    assert!(!info.filename.is_variant());
    assert!(info.metadata.is_none());
    assert_eq!(info.record.entries, 4);
    assert!(info.record.verified.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Broken wheels.

const DIST_INFO: &str = "test_package-0.dist-info";

fn variant_json(label: &str, properties: &str) -> String {
    format!(
        r#"{{
    "$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
    "default-priorities": {{
        "namespace": ["installable_plugin"]
    }},
    "providers": {{
        "installable_plugin": {{
            "requires": ["test-plugin-package"]
        }}
    }},
    "variants": {{
        "{label}": {properties}
    }}
}}
"#
    )
}

fn feat1(label: &str) -> String {
    variant_json(label, r#"{"installable_plugin": {"feat1": ["val1c"]}}"#)
}

fn record_line(name: &str, bytes: &[u8]) -> String {
    format!(
        "{name},sha256={},{}\n",
        URL_SAFE_NO_PAD.encode(Sha256::digest(bytes)),
        bytes.len()
    )
}

/// Members of a minimal wheel (besides RECORD).
fn base_members() -> Vec<(String, Vec<u8>)> {
    vec![
        ("test_package.py".into(), Vec::new()),
        (
            format!("{DIST_INFO}/WHEEL"),
            b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
        ),
        (
            format!("{DIST_INFO}/METADATA"),
            b"Metadata-Version: 2.1\nName: test_package\nVersion: 0\n".to_vec(),
        ),
    ]
}

fn with_variant_json(text: &str) -> Vec<(String, Vec<u8>)> {
    let mut members = base_members();
    members.push((
        format!("{DIST_INFO}/variant.json"),
        text.as_bytes().to_vec(),
    ));
    members
}

/// A RECORD listing every member with its true hash.
fn true_record(members: &[(String, Vec<u8>)]) -> String {
    let mut record: String = members.iter().map(|(n, b)| record_line(n, b)).collect();
    record.push_str(&format!("{DIST_INFO}/RECORD,,\n"));
    record
}

fn zip_bytes(members: &[(String, Vec<u8>)], record: Option<&str>) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        zip.start_file(name.as_str(), options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    if let Some(record) = record {
        zip.start_file(format!("{DIST_INFO}/RECORD"), options)
            .unwrap();
        zip.write_all(record.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// A wheel whose RECORD is correct.
fn good_zip(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    zip_bytes(members, Some(&true_record(members)))
}

/// Writes `bytes` as `name` in a fresh temp dir and inspects it.
fn inspect_bytes(name: &str, bytes: &[u8]) -> Result<WheelInfo, WheelError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    inspect(&path)
}

/// Inspects and expects an error whose message names the wheel and contains every needle.
fn expect_error(name: &str, bytes: &[u8], needles: &[&str]) -> WheelError {
    let error = match inspect_bytes(name, bytes) {
        Ok(info) => panic!("{name} should fail, got {info:?}"),
        Err(e) => e,
    };
    let message = error.to_string();
    // Shown with `--nocapture`, to review the wording.
    eprintln!("{message}");
    assert!(
        message.contains(name),
        "message does not name the wheel: {message}"
    );
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in: {message}");
    }
    error
}

const FOO: &str = "test_package-0-py3-none-any-foo.whl";

#[test]
fn a_built_good_wheel_passes() {
    let info = inspect_bytes(FOO, &good_zip(&with_variant_json(&feat1("foo")))).unwrap();
    assert_eq!(info.record.verified, [format!("{DIST_INFO}/variant.json")]);
    assert_eq!(info.record.entries, 5);
}

#[test]
fn inspect_reader_reads_from_memory() {
    let bytes = good_zip(&with_variant_json(&feat1("foo")));
    let info = inspect_reader(Path::new(FOO), Cursor::new(bytes)).unwrap();
    assert_eq!(info.filename.label.unwrap().as_str(), "foo");
}

#[test]
fn not_a_zip() {
    let e = expect_error(FOO, b"this is not a zip file", &["not a valid zip archive"]);
    assert!(matches!(*e.kind, WheelErrorKind::NotAZip { .. }));
    let e = expect_error(FOO, b"", &["not a valid zip archive"]);
    assert!(matches!(*e.kind, WheelErrorKind::NotAZip { .. }));
}

#[test]
fn truncated_zip() {
    let bytes = std::fs::read(data(FOO)).unwrap();
    // Every proper prefix loses (part of) the central directory or its end record.
    for cut in [bytes.len() / 2, bytes.len() - 1, bytes.len() - 30] {
        let e = expect_error(
            FOO,
            &bytes[..cut],
            &["not a valid zip archive", "truncated"],
        );
        assert!(
            matches!(*e.kind, WheelErrorKind::NotAZip { .. }),
            "cut {cut}: {e}"
        );
    }
}

#[test]
fn corrupt_member_data_is_a_member_error() {
    let members = with_variant_json(&feat1("foo"));
    let mut bytes = good_zip(&members);
    // Flip bytes inside the compressed variant.json (found by its local header name).
    let name = format!("{DIST_INFO}/variant.json");
    let at = bytes
        .windows(name.len())
        .position(|w| w == name.as_bytes())
        .unwrap()
        + name.len();
    for b in &mut bytes[at + 4..at + 12] {
        *b ^= 0x5a;
    }
    let e = inspect_bytes(FOO, &bytes).unwrap_err();
    match *e.kind {
        WheelErrorKind::Member { ref member, .. } => assert_eq!(member, &name),
        // Corruption may also leave a valid deflate stream with other text.
        WheelErrorKind::HashMismatch { .. } | WheelErrorKind::InvalidVariantJson { .. } => {}
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn label_mismatch() {
    let e = expect_error(
        FOO,
        &good_zip(&with_variant_json(&feat1("bar"))),
        &["label `foo`", "variants.bar", "variant.json"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::LabelMismatch { .. }));
}

#[test]
fn variant_json_missing_from_record() {
    let members = with_variant_json(&feat1("foo"));
    let record = true_record(&base_members());
    let e = expect_error(
        FOO,
        &zip_bytes(&members, Some(&record)),
        &["variant.json` is not listed in", "RECORD"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::NotInRecord { .. }));
}

#[test]
fn bad_hash() {
    let members = with_variant_json(&feat1("foo"));
    let mut record = true_record(&base_members());
    record.push_str(&record_line(
        &format!("{DIST_INFO}/variant.json"),
        feat1("bar").as_bytes(),
    ));
    let e = expect_error(
        FOO,
        &zip_bytes(&members, Some(&record)),
        &["hash mismatch", "variant.json", "sha256="],
    );
    assert!(matches!(*e.kind, WheelErrorKind::HashMismatch { .. }));
}

#[test]
fn size_mismatch() {
    let members = with_variant_json(&feat1("foo"));
    let text = feat1("foo");
    let mut record = true_record(&base_members());
    record.push_str(&format!(
        "{DIST_INFO}/variant.json,sha256={},{}\n",
        URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes())),
        text.len() + 1
    ));
    let e = expect_error(
        FOO,
        &zip_bytes(&members, Some(&record)),
        &["size mismatch", "variant.json"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::SizeMismatch { .. }));
}

#[test]
fn malformed_record() {
    let members = with_variant_json(&feat1("foo"));
    let record = format!("{}garbage line\n", true_record(&members));
    let e = expect_error(
        FOO,
        &zip_bytes(&members, Some(&record)),
        &["RECORD` line 6", "expected 3 fields"],
    );
    assert!(matches!(
        *e.kind,
        WheelErrorKind::InvalidRecord { line: 6, .. }
    ));
}

#[test]
fn missing_record() {
    let e = expect_error(
        FOO,
        &zip_bytes(&with_variant_json(&feat1("foo")), None),
        &["no `test_package-0.dist-info/RECORD`"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::MissingRecord { .. }));
}

#[test]
fn variant_json_but_no_label() {
    let name = "test_package-0-py3-none-any.whl";
    let e = expect_error(
        name,
        &good_zip(&with_variant_json(&feat1("foo"))),
        &["variant.json", "no variant label"],
    );
    assert!(matches!(
        *e.kind,
        WheelErrorKind::VariantJsonWithoutLabel { .. }
    ));
}

#[test]
fn label_but_no_variant_json() {
    let e = expect_error(
        FOO,
        &good_zip(&base_members()),
        &[
            "variant label `foo`",
            "no `test_package-0.dist-info/variant.json`",
        ],
    );
    assert!(matches!(
        *e.kind,
        WheelErrorKind::LabelWithoutVariantJson { .. }
    ));
}

#[test]
fn null_label_with_properties() {
    let name = "test_package-0-py3-none-any-null.whl";
    let e = expect_error(
        name,
        &good_zip(&with_variant_json(&feat1("null"))),
        &["null"],
    );
    // The metadata reader may catch this first; either way the message names the problem.
    assert!(
        matches!(
            *e.kind,
            WheelErrorKind::NullVariant { .. } | WheelErrorKind::InvalidVariantJson { .. }
        ),
        "{e}"
    );
}

#[test]
fn properties_free_variant_must_be_null() {
    let e = expect_error(
        FOO,
        &good_zip(&with_variant_json(&variant_json("foo", "{}"))),
        &["null"],
    );
    assert!(
        matches!(
            *e.kind,
            WheelErrorKind::NullVariant { .. } | WheelErrorKind::InvalidVariantJson { .. }
        ),
        "{e}"
    );
}

#[test]
fn two_variants_in_variant_json() {
    let text = variant_json(
        "foo",
        r#"{"installable_plugin": {"feat1": ["val1c"]}},
        "bar": {"installable_plugin": {"feat2": ["val2b"]}}"#,
    );
    let e = expect_error(FOO, &good_zip(&with_variant_json(&text)), &["variant.json"]);
    assert!(
        matches!(
            *e.kind,
            WheelErrorKind::VariantCount { .. } | WheelErrorKind::InvalidVariantJson { .. }
        ),
        "{e}"
    );
}

#[test]
fn invalid_variant_json_names_the_key() {
    let text = variant_json("foo", r#"{"installable_plugin": {"Feat1": ["val1c"]}}"#);
    let e = expect_error(
        FOO,
        &good_zip(&with_variant_json(&text)),
        &["invalid `test_package-0.dist-info/variant.json`", "Feat1"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::InvalidVariantJson { .. }));
    let e = expect_error(
        FOO,
        &good_zip(&with_variant_json("{not json")),
        &["invalid `test_package-0.dist-info/variant.json`"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::InvalidVariantJson { .. }));
}

#[test]
fn variant_json_not_utf8() {
    let mut members = base_members();
    members.push((format!("{DIST_INFO}/variant.json"), vec![0xff, 0xfe, b'{']));
    let e = expect_error(FOO, &good_zip(&members), &["not valid UTF-8"]);
    assert!(matches!(*e.kind, WheelErrorKind::NotUtf8 { .. }));
}

#[test]
fn oversized_variant_json_is_refused() {
    // Highly compressible: a ~17 KiB zip entry that inflates past the 16 MiB cap.
    let mut text = feat1("foo").into_bytes();
    text.resize(vari_wheel::MAX_VARIANT_JSON_BYTES as usize + 1, b' ');
    let mut members = base_members();
    members.push((format!("{DIST_INFO}/variant.json"), text));
    let e = expect_error(FOO, &good_zip(&members), &["variant.json` is too large"]);
    assert!(matches!(*e.kind, WheelErrorKind::MemberTooLarge { .. }));
}

#[test]
fn no_dist_info() {
    let members = vec![("test_package.py".to_owned(), Vec::new())];
    let e = expect_error(
        FOO,
        &zip_bytes(&members, None),
        &["no `test_package-0.dist-info` directory"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::NoDistInfo { ref found, .. } if found.is_empty()));
}

#[test]
fn dist_info_of_another_version_does_not_count() {
    let name = "test_package-1.0-py3-none-any-foo.whl";
    let e = expect_error(
        name,
        &good_zip(&with_variant_json(&feat1("foo"))),
        &[
            "no `test_package-1.0.dist-info`",
            "found: test_package-0.dist-info",
        ],
    );
    assert!(matches!(*e.kind, WheelErrorKind::NoDistInfo { .. }));
}

#[test]
fn dist_info_name_case_and_separators_are_tolerated() {
    let dir = "Test.Package-0.0.dist-info";
    let members: Vec<(String, Vec<u8>)> = with_variant_json(&feat1("foo"))
        .into_iter()
        .map(|(n, b)| (n.replace(DIST_INFO, dir), b))
        .collect();
    let mut record: String = members.iter().map(|(n, b)| record_line(n, b)).collect();
    record.push_str(&format!("{dir}/RECORD,,\n"));
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in &members {
        zip.start_file(name.as_str(), SimpleFileOptions::default())
            .unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.start_file(format!("{dir}/RECORD"), SimpleFileOptions::default())
        .unwrap();
    zip.write_all(record.as_bytes()).unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let info = inspect_bytes(FOO, &bytes).unwrap();
    assert_eq!(info.dist_info, dir);
}

#[test]
fn bad_filename_is_reported_with_the_path() {
    let e = expect_error(
        "test_package-0-py3-none-any-FOO.whl",
        &good_zip(&with_variant_json(&feat1("foo"))),
        &["variant label"],
    );
    assert!(matches!(*e.kind, WheelErrorKind::Filename { .. }));
}

#[test]
fn missing_file() {
    let e = inspect(Path::new("/nonexistent/test_package-0-py3-none-any.whl")).unwrap_err();
    assert!(matches!(*e.kind, WheelErrorKind::Open { .. }));
    assert!(e
        .to_string()
        .contains("/nonexistent/test_package-0-py3-none-any.whl"));
}
