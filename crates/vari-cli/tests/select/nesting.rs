//! Markers nested 60,000 deep, in a wheel's METADATA or on the command line: refused by the
//! nesting limit (vari-core's `MAX_MARKER_DEPTH`), never a stack overflow.

use std::io::Write;
use std::path::Path;

use crate::common::{run, vari, Run};

/// `atom` inside 60,000 parentheses.
fn nested(atom: &str) -> String {
    format!("{}{atom}{}", "(".repeat(60_000), ")".repeat(60_000))
}

/// `demo-1.0-py3-none-any.whl` in `dir`, requiring `filelock` and each of `requires`.
fn demo_wheel(dir: &Path, requires: &[String]) {
    let mut zip =
        zip::ZipWriter::new(std::fs::File::create(dir.join("demo-1.0-py3-none-any.whl")).unwrap());
    zip.start_file(
        "demo-1.0.dist-info/METADATA",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    write!(
        zip,
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: filelock\n"
    )
    .unwrap();
    for requirement in requires {
        writeln!(zip, "Requires-Dist: {requirement}").unwrap();
    }
    zip.finish().unwrap();
}

fn select(dir: &Path, requirement: &str) -> Run {
    let profile = dir.join("profile.toml");
    std::fs::write(
        &profile,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 3\n",
    )
    .unwrap();
    run(vari()
        .args(["select", requirement, "--find-links"])
        .arg(dir)
        .arg("--profile")
        .arg(&profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]))
}

#[test]
fn a_requires_dist_nested_too_deep_is_skipped_with_a_warning_naming_the_wheel() {
    let dir = tempfile::tempdir().unwrap();
    // A standard marker and a variant marker: the two take different paths through the parser.
    demo_wheel(
        dir.path(),
        &[
            format!("deep-standard; {}", nested("os_name == 'posix'")),
            format!("deep-variant; {}", nested("'x86_64' in variant_namespaces")),
        ],
    );
    let run = select(dir.path(), "demo").expect_code(0);
    assert!(run.stdout.contains("requires: filelock"), "{}", run.stdout);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("parentheses nested 60000 deep, more than the limit of 64"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    for warning in warnings {
        assert!(warning.contains("demo-1.0-py3-none-any.whl"), "{warning}");
        // The warning quotes the start of the marker, not all 120,000 characters of it.
        assert!(warning.len() < 400, "{} characters", warning.len());
    }
}

#[test]
fn a_requirement_nested_too_deep_on_the_command_line_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    demo_wheel(dir.path(), &[]);
    select(
        dir.path(),
        &format!("demo; {}", nested("os_name == 'posix'")),
    )
    .expect_one_error(&["parentheses nested 60000 deep, more than the limit of 64"]);
}

/// A 12 KB TOML document nesting thousands of tables: inline tables of dotted keys inside each
/// other, which the `toml` parser's own limit lets through (they overflowed the stack), under
/// `header`.
fn deep_toml(header: &str) -> String {
    let key = ["b"; 78].join(".");
    let mut text = format!("{header}\n{key} = ");
    for _ in 0..78 {
        text.push_str(&format!("{{{key} = "));
    }
    text.push('1');
    text.push_str(&"}".repeat(78));
    text
}

#[test]
fn toml_inputs_nested_too_deep_are_one_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    demo_wheel(dir.path(), &[]);
    let deep = dir.path().join("deep.toml");
    let fragment = "levels deep, more than the limit of 64 (first exceeded on line 2)";

    // A profile.
    std::fs::write(&deep, deep_toml("[platform]")).unwrap();
    run(vari()
        .args(["select", "demo", "--find-links"])
        .arg(dir.path())
        .arg("--profile")
        .arg(&deep))
    .expect_one_error(&["deep.toml", fragment]);

    // A configuration file.
    std::fs::write(&deep, deep_toml("[tool.vari]")).unwrap();
    run(vari()
        .env("VARI_CONFIG", &deep)
        .args(["select", "demo", "--find-links"])
        .arg(dir.path()))
    .expect_one_error(&["deep.toml", fragment]);

    // A repack configuration.
    std::fs::write(&deep, deep_toml("[variant]")).unwrap();
    run(vari()
        .args(["wheel", "repack", "--config"])
        .arg(&deep)
        .arg(dir.path().join("demo-1.0-py3-none-any.whl"))
        .arg("-o")
        .arg(dir.path().join("out")))
    .expect_one_error(&["deep.toml", fragment]);
    assert!(!dir.path().join("out").exists());
}
