//! `vari wheel inspect` on the real wheels and on broken ones.

use std::path::{Path, PathBuf};

use crate::common::{data, vari_run};

fn inspect_json(wheel: &Path) -> serde_json::Value {
    let json = vari_run([
        Path::new("wheel"),
        Path::new("inspect"),
        Path::new("--json"),
        wheel,
    ])
    .expect_code(0)
    .json();
    crate::common::assert_json_schema("wheel-inspect", &json);
    json
}

#[test]
fn variant_wheels_report_label_properties_and_metadata() {
    let index = crate::common::data_json("wheels/test_package-0-variants.json");
    for (label, variant) in index["variants"].as_object().unwrap() {
        let wheel = data(&format!("wheels/test_package-0-py3-none-any-{label}.whl"));
        let out = inspect_json(&wheel);
        assert_eq!(out["name"], "test_package");
        assert_eq!(out["version"], "0");
        assert_eq!(out["label"], label.as_str());
        // The properties are the index entry's, written `ns :: f :: v`.
        let mut expected: Vec<String> = Vec::new();
        for (ns, features) in variant.as_object().unwrap() {
            for (f, values) in features.as_object().unwrap() {
                for v in values.as_array().unwrap() {
                    expected.push(format!("{ns} :: {f} :: {}", v.as_str().unwrap()));
                }
            }
        }
        expected.sort();
        assert_eq!(out["properties"], serde_json::json!(expected), "{label}");
        // The metadata is the wheel's variant.json: exactly this variant.
        let meta = &out["metadata"];
        assert_eq!(meta["variants"].as_object().unwrap().len(), 1, "{label}");
        assert_eq!(&meta["variants"][label], variant, "{label}");
        assert!(meta["$schema"].is_string());

        let human = vari_run([Path::new("wheel"), Path::new("inspect"), &wheel]).expect_code(0);
        assert!(human.stdout.contains(label.as_str()), "{}", human.stdout);
        assert!(human.stdout.contains("RECORD"), "{}", human.stdout);
    }
}

#[test]
fn a_plain_wheel_is_not_a_variant_wheel() {
    let wheel = data("wheels/test_package-0-py3-none-any.whl");
    let out = inspect_json(&wheel);
    assert_eq!(out["label"], serde_json::Value::Null);
    assert_eq!(out["metadata"], serde_json::Value::Null);
    assert_eq!(out["properties"], serde_json::json!([]));
    let human = vari_run([Path::new("wheel"), Path::new("inspect"), &wheel]).expect_code(0);
    crate::common::assert_output(
        &human.stdout,
        r#"[WHEEL]
  name       test_package
  version    0
  tags       py3-none-any
  label      not a variant wheel
  dist-info  test_package-0.dist-info
  RECORD     well-formed, 4 entries
"#,
        &[(&wheel, "[WHEEL]")],
    );
}

/// Copies a fixture wheel to `dir/name`, optionally cut to `len` bytes.
fn copy_wheel(dir: &Path, fixture: &str, name: &str, len: Option<usize>) -> PathBuf {
    let mut bytes = std::fs::read(data(&format!("wheels/{fixture}"))).unwrap();
    if let Some(len) = len {
        bytes.truncate(len);
    }
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Each broken wheel and a fragment its one error line must contain.
fn broken_wheels(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let labelled = "test_package-0-py3-none-any-foo.whl";
    let size = std::fs::metadata(data(&format!("wheels/{labelled}")))
        .unwrap()
        .len() as usize;
    let not_zip = dir.join("test_package-0-py3-none-any-baz.whl");
    std::fs::write(&not_zip, b"this is not a zip archive").unwrap();
    vec![
        (
            copy_wheel(
                dir,
                labelled,
                "test_package-0-py3-none-any-cut.whl",
                Some(size / 2),
            ),
            "zip",
        ),
        (not_zip, "zip"),
        // The variant.json says `foo`, the filename says `bar2`.
        (
            copy_wheel(dir, labelled, "test_package-0-py3-none-any-bar2.whl", None),
            "bar2",
        ),
        // A label in the filename of a wheel without variant.json.
        (
            copy_wheel(
                dir,
                "test_package-0-py3-none-any.whl",
                "test_package-0-py3-none-any-lonely.whl",
                None,
            ),
            "lonely",
        ),
        // A variant.json in a wheel whose filename has no label.
        (
            copy_wheel(dir, labelled, "test_package-0-py3-none-any.whl", None),
            "variant.json",
        ),
    ]
}

#[test]
fn broken_wheels_fail_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (wheel, fragment)) in broken_wheels(dir.path()).into_iter().enumerate() {
        let name = wheel.display().to_string();
        let human = vari_run([Path::new("wheel"), Path::new("inspect"), &wheel]);
        let json = vari_run([
            Path::new("wheel"),
            Path::new("inspect"),
            Path::new("--json"),
            &wheel,
        ]);
        if i < 2 {
            // Not a zip archive: nothing to show.
            human.expect_one_error(&[&name, fragment]);
            json.expect_one_error(&[&name, fragment]);
        } else {
            // Readable but inconsistent: shown with the problem flagged, and still a failure.
            for run in [&human, &json] {
                assert_eq!(run.code, 1, "{}", run.stderr);
                assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
                assert!(run.stderr.starts_with("error: ") && run.stderr.contains(fragment));
            }
            assert!(human.stdout.contains("✗"), "{}", human.stdout);
            crate::common::assert_json_schema("wheel-inspect", &json.json());
            let problems = json.json()["problems"].as_array().unwrap().clone();
            assert!(!problems.is_empty());
            assert!(json.json()["tags"][0] == "py3-none-any");
        }
        let run = vari_run([
            Path::new("metadata"),
            Path::new("validate"),
            Path::new("--json"),
            &wheel,
        ])
        .expect_code(1);
        crate::common::assert_json_schema("metadata-validate", &run.json());
        assert_eq!(run.json()["files"][0]["ok"], false);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
}

#[test]
fn a_missing_wheel_is_one_error_line() {
    vari_run(["wheel", "inspect", "/nonexistent/a-1-py3-none-any.whl"])
        .expect_one_error(&["/nonexistent/a-1-py3-none-any.whl"]);
}

#[test]
fn a_directory_is_not_a_zip_error() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir.path().join("d-1.0-py3-none-any.whl");
    std::fs::create_dir(&wheel).unwrap();
    vari_run([Path::new("wheel"), Path::new("inspect"), &wheel])
        .expect_one_error(&["is a directory"]);
}

#[test]
fn make_variant_unmake_and_validate_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let plain = copy_wheel(
        dir.path(),
        "test_package-0-py3-none-any.whl",
        "test_package-0-py3-none-any.whl",
        None,
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let made = vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &plain,
        Path::new("-p"),
        Path::new("x86_64::level::v3"),
        Path::new("--label"),
        Path::new("v3"),
        Path::new("-o"),
        &out,
    ])
    .expect_code(0);
    let path = PathBuf::from(made.stdout.trim());
    assert_eq!(path, out.join("test_package-0-py3-none-any-v3.whl"));
    let info = inspect_json(&path);
    assert_eq!(
        info["properties"],
        serde_json::json!(["x86_64 :: level :: v3"])
    );
    assert_eq!(
        info["record"]["verified"][0],
        "test_package-0.dist-info/variant.json"
    );
    let v = vari_run([
        Path::new("wheel"),
        Path::new("validate"),
        Path::new("--json"),
        &path,
    ])
    .expect_code(0);
    assert_eq!(v.json()["files"][0]["ok"], true);

    // An invalid value is refused, names the property and the flag, and writes nothing.
    vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &plain,
        Path::new("-p"),
        Path::new("nvidia::sm_arch::45_real"),
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["nvidia :: sm_arch :: 45_real", "not a valid value"]);
    vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &plain,
        Path::new("-p"),
        Path::new("acme::f::v"),
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["acme", "--skip-validation"]);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);

    let back = dir.path().join("back");
    std::fs::create_dir(&back).unwrap();
    let run = vari_run([
        Path::new("wheel"),
        Path::new("unmake"),
        &path,
        Path::new("-o"),
        &back,
    ])
    .expect_code(0);
    let plain_again = PathBuf::from(run.stdout.trim());
    assert_eq!(plain_again, back.join("test_package-0-py3-none-any.whl"));
    vari_run([Path::new("wheel"), Path::new("validate"), &plain_again]).expect_code(0);
}

#[test]
fn validate_reports_a_record_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let bad = crate::common::tampered_wheel(dir.path());
    let run = vari_run([Path::new("wheel"), Path::new("validate"), &bad]).expect_code(1);
    assert!(run.stdout.contains("hash mismatch"), "{}", run.stdout);
    assert!(run.stderr.contains("hash mismatch"), "{}", run.stderr);
}

#[test]
fn repack_writes_the_release_and_its_variants_json() {
    let dir = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/repack/cupy.toml");
    let mut inputs = Vec::new();
    for dist in ["cupy_cuda11x", "cupy_cuda12x"] {
        // The fixture plain wheel, renamed inside: test_package → the cupy build's name.
        let src = data("wheels/test_package-0-py3-none-any.whl");
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&src).unwrap()).unwrap();
        let path = dir.path().join(format!("{dist}-13.4.0-py3-none-any.whl"));
        let mut out = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let mut record = String::new();
        let mut members = Vec::new();
        for i in 0..zip.len() {
            use std::io::Read;
            let mut file = zip.by_index(i).unwrap();
            let name = file.name().replace(
                "test_package-0.dist-info",
                &format!("{dist}-13.4.0.dist-info"),
            );
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            if name.ends_with("METADATA") {
                bytes = format!("Metadata-Version: 2.1\nName: {dist}\nVersion: 13.4.0\n\n")
                    .into_bytes();
            }
            if !name.ends_with("RECORD") {
                members.push((name, bytes));
            }
        }
        // The example reads sm_arch from the build's fat binaries.
        members.push((
            "cupy/_core.so".to_owned(),
            crate::repack_select::cupy_core(dist),
        ));
        for (name, bytes) in &members {
            use base64::Engine as _;
            use sha2::Digest as _;
            let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(bytes));
            record.push_str(&format!("{name},sha256={digest},{}\n", bytes.len()));
            use std::io::Write;
            out.start_file(name.as_str(), zip::write::SimpleFileOptions::default())
                .unwrap();
            out.write_all(bytes).unwrap();
        }
        record.push_str(&format!("{dist}-13.4.0.dist-info/RECORD,,\n"));
        use std::io::Write;
        out.start_file(
            format!("{dist}-13.4.0.dist-info/RECORD"),
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        out.write_all(record.as_bytes()).unwrap();
        out.finish().unwrap();
        inputs.push(path);
    }
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    let mut args: Vec<PathBuf> = ["wheel", "repack", "--config"]
        .iter()
        .map(PathBuf::from)
        .collect();
    args.push(config);
    args.extend(inputs);
    args.push("-o".into());
    args.push(site.clone());
    let run = vari_run(&args).expect_code(0);
    let printed: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(printed.len(), 3, "{}", run.stdout);
    assert!(printed[2].ends_with("cupy-13.4.0-variants.json"));
    let v = vari_run([
        Path::new("metadata"),
        Path::new("validate"),
        Path::new(printed[0]),
        Path::new(printed[1]),
        Path::new(printed[2]),
    ]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}
