//! `replace_metadata` on a variant wheel whose dependencies carry variant markers: the copy
//! differs from the source only in METADATA and RECORD's METADATA row, passes `validate`, is
//! the same bytes every time, and the machine's pip installs it with the decided requirements.

use std::io::{Cursor, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};
use vari_core::markers::VariantMarkerContext;
use vari_core::metadata::resolve_variant_markers;
use vari_core::{FeatureSupport, Namespace};
use vari_wheel::{
    make_variant, replace_metadata, validate, ValidValues, VariantSpec, WheelErrorKind,
};

use crate::support::{members, plain_wheel, testdata, venv};

/// The dependencies of the test wheel: unconditional, decided true, decided false, partly
/// decided (both operand orders of the remaining `or`), and untouched.
const REQUIRES: &[&str] = &[
    "filelock",
    r#"fastlib>=2; "x86_64 :: level :: v3" in variant_properties"#,
    r#"slowlib; "x86_64" not in variant_namespaces"#,
    r#"linuxlib>=1; sys_platform == "linux" and "x86_64" in variant_namespaces"#,
    r#"winlib; sys_platform == "win32" or variant_label == "null""#,
    r#"docs; extra == "docs""#,
];

/// What the requirements become for the x86-64-v3 wheel.
const DECIDED: &[&str] = &[
    "filelock",
    "fastlib>=2",
    r#"linuxlib>=1; sys_platform == "linux""#,
    r#"winlib; sys_platform == "win32""#,
    r#"docs; extra == "docs""#,
];

const METADATA: &str = "demo-1.0.dist-info/METADATA";
const RECORD: &str = "demo-1.0.dist-info/RECORD";

/// A variant wheel (`x86_64 :: level :: v3`) of `demo` 1.0 with [`REQUIRES`] in `dir`, and the
/// context its markers are decided in.
fn variant_wheel(dir: &Path) -> (PathBuf, VariantMarkerContext) {
    let plain = plain_wheel(dir, "demo", "1.0", "py3-none-any", REQUIRES);
    let out = dir.join("variant");
    std::fs::create_dir_all(&out).unwrap();
    let mut valid = ValidValues::default();
    valid.insert(
        Namespace::new("x86_64").unwrap(),
        vec![FeatureSupport {
            name: "level".parse().unwrap(),
            values: vec!["v3".parse().unwrap()],
            multi_value: false,
        }],
    );
    let spec = VariantSpec {
        properties: vec!["x86_64 :: level :: v3".parse().unwrap()],
        ..VariantSpec::default()
    };
    let made = make_variant(&plain, &out, &spec, &valid).unwrap();
    // make_variant reports the size it wrote, and no hash (it keeps to copying speed).
    assert_eq!(made.size, std::fs::metadata(&made.path).unwrap().len());
    assert_eq!(made.sha256, None);
    let ctx = VariantMarkerContext {
        label: made.label.clone(),
        properties: ["x86_64 :: level :: v3".parse().unwrap()].into(),
    };
    (made.path, ctx)
}

/// The wheel's METADATA, rewritten for `ctx`.
fn decided_metadata(wheel: &Path, ctx: &VariantMarkerContext) -> String {
    let all = members(wheel);
    let original = &all.iter().find(|m| m.name == METADATA).unwrap().contents;
    resolve_variant_markers(std::str::from_utf8(original).unwrap(), ctx)
        .unwrap()
        .expect("the wheel has variant markers")
}

/// Each member's local header and compressed data, as bytes of the archive file.
fn local_bytes(path: &Path) -> Vec<(String, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let mut zip = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
    (0..zip.len())
        .map(|i| {
            let file = zip.by_index_raw(i).unwrap();
            let start = usize::try_from(file.header_start()).unwrap();
            let end = usize::try_from(file.data_start() + file.compressed_size()).unwrap();
            (file.name().to_owned(), bytes[start..end].to_vec())
        })
        .collect()
}

fn record_lines(path: &Path) -> Vec<String> {
    let all = members(path);
    let record = &all.iter().find(|m| m.name == RECORD).unwrap().contents;
    String::from_utf8(record.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn only_metadata_and_its_record_row_change() {
    let dir = tempfile::tempdir().unwrap();
    let (source, ctx) = variant_wheel(dir.path());
    let metadata = decided_metadata(&source, &ctx);
    let source_name = source.file_name().unwrap();
    let dest = dir.path().join("served").join(source_name);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let written = replace_metadata(&source, &dest, metadata.as_bytes()).unwrap();

    // Under the source's name the copy is a valid variant wheel: every RECORD hash checks.
    let validation = validate(&dest).unwrap();
    assert!(validation.is_ok(), "{:?}", validation.problems);
    assert_eq!(written.label, ctx.label);
    assert_eq!(written.path, dest);

    let before = members(&source);
    let after = members(&dest);
    let names = |m: &[crate::support::Member]| m.iter().map(|m| m.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&after), names(&before));
    for (b, a) in before.iter().zip(&after) {
        if a.name == METADATA || a.name == RECORD {
            // Rewritten members keep their place's timestamp and permissions.
            assert_eq!((a.modified, a.mode), (b.modified, b.mode), "{}", a.name);
        } else {
            assert_eq!(a, b, "{}", a.name);
        }
    }
    assert_eq!(
        after.iter().find(|m| m.name == METADATA).unwrap().contents,
        metadata.as_bytes()
    );
    // Unchanged members: local header and compressed data byte for byte.
    for ((name, b), (_, a)) in local_bytes(&source).iter().zip(&local_bytes(&dest)) {
        if name != METADATA && name != RECORD {
            assert_eq!(a, b, "{name}");
        }
    }
    // RECORD: the same rows but METADATA's, which has the new hash and size.
    let (old, new) = (record_lines(&source), record_lines(&dest));
    assert_eq!(old.len(), new.len());
    for (o, n) in old.iter().zip(&new) {
        if o.starts_with(&format!("{METADATA},")) {
            let digest = base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                Sha256::digest(metadata.as_bytes()),
            );
            assert_eq!(n, &format!("{METADATA},sha256={digest},{}", metadata.len()));
            assert_ne!(o, n);
        } else {
            assert_eq!(o, n);
        }
    }
}

#[test]
fn the_same_input_gives_the_same_bytes_and_the_reported_hash() {
    let dir = tempfile::tempdir().unwrap();
    let (source, ctx) = variant_wheel(dir.path());
    let metadata = decided_metadata(&source, &ctx);
    let mut outputs = Vec::new();
    for run in ["a", "b"] {
        let dest = dir.path().join(run).join("demo-1.0-py3-none-any.whl");
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let written = replace_metadata(&source, &dest, metadata.as_bytes()).unwrap();
        let bytes = std::fs::read(&dest).unwrap();
        assert_eq!(written.size, bytes.len() as u64);
        assert_eq!(
            written.sha256.as_deref(),
            Some(format!("{:x}", Sha256::digest(&bytes)).as_str())
        );
        assert_eq!(written.label, None);
        outputs.push(bytes);
    }
    assert_eq!(outputs[0], outputs[1]);
    // A plain name with `variant.json` inside is the one thing `validate` notes.
    let plain = validate(&dir.path().join("a/demo-1.0-py3-none-any.whl")).unwrap();
    assert!(
        matches!(
            plain.problems.as_slice(),
            [WheelErrorKind::VariantJsonWithoutLabel { .. }]
        ),
        "{:?}",
        plain.problems
    );
}

#[test]
fn real_variant_wheels_keep_validating() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "test_package-0-py3-none-any-foo.whl",
        "test_package-0-py3-none-any-null.whl",
        "test_package-0-py3-none-any.whl",
    ] {
        let source = testdata(&format!("wheels/{name}"));
        let dest = dir.path().join(name);
        let metadata = b"Metadata-Version: 2.1\nName: test-package\nVersion: 0\nRequires-Dist: x\n";
        replace_metadata(&source, &dest, metadata).unwrap();
        let validation = validate(&dest).unwrap();
        assert!(validation.is_ok(), "{name}: {:?}", validation.problems);
        let before = members(&source);
        let after = members(&dest);
        assert_eq!(before.len(), after.len());
        for (b, a) in before.iter().zip(&after) {
            if a.name.ends_with(".dist-info/METADATA") {
                assert_eq!(a.contents, metadata);
            } else if !a.name.ends_with(".dist-info/RECORD") {
                assert_eq!(a, b, "{name}: {}", a.name);
            }
        }
    }
}

/// `source` rewritten through the zip crate with RECORD's METADATA row left out.
fn without_metadata_row(source: &Path, dest: &Path) {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(source).unwrap()).unwrap();
    let mut out = zip::ZipWriter::new(std::fs::File::create(dest).unwrap());
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let mut contents = Vec::new();
        file.read_to_end(&mut contents).unwrap();
        let name = file.name().to_owned();
        if name == RECORD {
            let text = String::from_utf8(contents).unwrap();
            contents = text
                .lines()
                .filter(|l| !l.starts_with(METADATA))
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .into_bytes();
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&contents).unwrap();
    }
    out.finish().unwrap();
}

#[test]
fn failures_name_the_problem_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = variant_wheel(dir.path());
    let unlisted = dir
        .path()
        .join("unlisted")
        .join(source.file_name().unwrap());
    std::fs::create_dir_all(unlisted.parent().unwrap()).unwrap();
    without_metadata_row(&source, &unlisted);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let dest = out.join("demo-1.0-py3-none-any.whl");
    let err = replace_metadata(&unlisted, &dest, b"Name: demo\n").unwrap_err();
    assert!(
        matches!(&*err.kind, WheelErrorKind::NotInRecord { member, .. } if member == METADATA),
        "{err}"
    );
    assert_eq!(err.path, unlisted);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);

    let nowhere = dir
        .path()
        .join("missing-dir")
        .join("demo-1.0-py3-none-any.whl");
    let err = replace_metadata(&source, &nowhere, b"Name: demo\n").unwrap_err();
    assert!(matches!(&*err.kind, WheelErrorKind::Write { .. }), "{err}");
    assert!(!nowhere.exists());
}

/// Reads what the installed distribution requires, and parses and evaluates each requirement
/// with the `packaging` vendored in pip (the parser that rejects variant markers).
const REQUIRES_SCRIPT: &str = r#"
import importlib.metadata, json, sys
from pip._vendor.packaging.requirements import Requirement
requires = importlib.metadata.requires("demo")
applies = []
for text in requires:
    r = Requirement(text)
    applies.append(r.marker is None or r.marker.evaluate({"extra": ""}))
json.dump({"requires": requires, "applies": applies}, sys.stdout)
"#;

/// Whether pip's vendored `packaging` parses `requirement`.
const PARSES_SCRIPT: &str = r#"
import sys
from pip._vendor.packaging.requirements import Requirement, InvalidRequirement
try:
    Requirement(sys.argv[1])
except InvalidRequirement:
    sys.exit(3)
"#;

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_machines_pip_installs_the_copy_with_decided_requirements() {
    let dir = tempfile::tempdir().unwrap();
    let (source, ctx) = variant_wheel(dir.path());
    let metadata = decided_metadata(&source, &ctx);
    // Released pip rejects labels: the copy is served under the plain name.
    let dest = dir.path().join("served/demo-1.0-py3-none-any.whl");
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    replace_metadata(&source, &dest, metadata.as_bytes()).unwrap();

    // The pip that `python -m venv` bundles (ensurepip: offline).
    let fresh = dir.path().join("venv");
    run(Command::new(venv().join("bin/python"))
        .args(["-m", "venv"])
        .arg(&fresh));
    run(Command::new(fresh.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(&dest));
    let python = fresh.join("bin/python");
    let answer: serde_json::Value =
        serde_json::from_str(&run(Command::new(&python).args(["-c", REQUIRES_SCRIPT]))).unwrap();
    assert_eq!(answer["requires"], serde_json::json!(DECIDED));
    // On this Linux machine, without extras.
    assert_eq!(
        answer["applies"],
        serde_json::json!([true, true, cfg!(target_os = "linux"), false, false])
    );
    // The installed copy is the served bytes' code.
    let site =
        run(Command::new(&python)
            .args(["-c", "import demo, sys; sys.stdout.write(str(demo.VALUE))"]));
    assert_eq!(site, "42");

    // The control: the same pip cannot parse the original requirements.
    for requirement in REQUIRES.iter().filter(|r| r.contains("variant_")) {
        let status = Command::new(&python)
            .args(["-c", PARSES_SCRIPT, requirement])
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(3), "{requirement}");
    }
}
