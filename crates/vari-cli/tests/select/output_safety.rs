//! Writing output files: through links, keeping modes, never replacing a device, naming the
//! user's path in errors; `-` for standard input and output.

use std::path::Path;

use crate::common::{data, files_in, vari, vari_run};

fn torch() -> std::path::PathBuf {
    data("variants-json/torch-2.10.0-variants.json")
}

#[cfg(unix)]
#[test]
fn an_output_link_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        &link,
    ])
    .expect_code(0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("cuda12.8"));
}

#[cfg(unix)]
#[test]
fn modes_are_kept_and_new_files_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("torch-2.10.0-variants.json");
    std::fs::copy(torch(), &out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
    // In place, as a maintainer would before uploading.
    vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &out,
        Path::new("-o"),
        &out,
    ])
    .expect_code(0);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let fresh = dir.path().join("fresh.json");
    vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        &fresh,
    ])
    .expect_code(0);
    let made = dir.path().join("made-by-std");
    std::fs::write(&made, "").unwrap();
    let expected = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, expected, "{mode:o} vs the umask's {expected:o}");
}

#[cfg(target_os = "linux")]
#[test]
fn devices_are_written_through_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        Path::new("/dev/null"),
    ])
    .expect_code(0);
    vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        Path::new("/dev/full"),
    ])
    .expect_one_error(&["/dev/full"]);
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn errors_name_the_given_path_not_a_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/out.json");
    let run = vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        &missing,
    ])
    .expect_one_error(&["no/such/dir/out.json"]);
    assert!(!run.stderr.contains(".vari-"), "{}", run.stderr);
    let as_dir = format!("{}/", dir.path().display());
    let run = vari_run([
        Path::new("metadata"),
        Path::new("convert"),
        &torch(),
        Path::new("-o"),
        Path::new(&as_dir),
    ]);
    let run = run.expect_code(1);
    assert!(run.stderr.contains("directory"), "{}", run.stderr);
    assert!(!run.stderr.contains("Not a directory"), "{}", run.stderr);
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn dash_is_standard_input_and_output() {
    let text = std::fs::read(torch()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["metadata", "convert", "-", "--schema", "0.2"],
        vec!["metadata", "convert", "-", "-o", "-"],
        vec!["metadata", "validate", "-"],
    ] {
        let mut child = vari()
            .args(&args)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&text).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!output.stdout.is_empty(), "{args:?}");
    }
    // No file named `-` was created.
    assert!(files_in(dir.path()).is_empty());
}

/// No URL with credentials is ever printed: a WebDAV destination whose server refuses
/// (its password was printed twice in the error line: the destination, then the store's own
/// message repeating the URL), and an index URL whose server fails, with debug logs on.
#[test]
fn credentials_in_urls_are_never_printed() {
    use vari_test_support::raw::{head, raw_server};
    use vari_test_support::wheels::TestWheel;
    let secret = "s3cretPassw0rd";
    let refusing = raw_server(|_, _, stream| head(stream, "500 Internal Server Error", &[]));
    let authority = refusing.trim_start_matches("http://");
    let dir = tempfile::tempdir().unwrap();
    TestWheel::new("plain_pkg-1.0-py3-none-any.whl").write(dir.path());
    let destination = format!("http://alice:{secret}@{authority}/site");
    let built = crate::common::run(
        vari()
            .args(["-v", "index", "build"])
            .arg(dir.path())
            .arg("-o")
            .arg(&destination),
    )
    .expect_code(1);
    for text in [&built.stdout, &built.stderr] {
        assert!(!text.contains(secret), "{text}");
        assert!(!text.contains("alice"), "{text}");
    }
    assert!(
        built
            .stderr
            .contains(&format!("error: http://****@{authority}/site")),
        "{}",
        built.stderr
    );
    // An index URL: neither the error nor the debug log shows its credentials.
    let index = format!("http://bob:{secret}@{authority}/simple/");
    let selected = crate::common::run(
        vari()
            .args(["-v", "select", "plain-pkg", "--index-url"])
            .arg(&index),
    );
    assert_ne!(selected.code, 0);
    for text in [&selected.stdout, &selected.stderr] {
        assert!(!text.contains(secret), "{text}");
    }
}
