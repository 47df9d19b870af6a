//! Hostile file-system inputs and interruptions, against the real binary: state files naming
//! paths outside the site, distribution names that are not names, FIFOs and devices given as
//! inputs, signals in the middle of a download or an installation, left-overs of killed runs.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};
use vari_test_support::raw::raw_server;

use crate::common::{test_python, vari, vari_run};

/// A safety net for commands that would hang without the fix: far above what any run needs.
const SAFETY_NET: Duration = Duration::from_secs(120);

/// Waits for `child` within [`SAFETY_NET`]; a child still running then is killed and the test
/// fails (the bug it guards against is a hang).
fn wait_bounded(child: &mut Child, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > SAFETY_NET {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {SAFETY_NET:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `command` to completion within the safety net; (exit code, stderr).
fn run_bounded(command: &mut Command, what: &str) -> (i32, String) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let status = wait_bounded(&mut child, what);
    (status.code().unwrap_or(-1), reader.join().unwrap())
}

/// A child killed (and reaped) if the test fails before it ends, so no run outlives its test.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

fn send(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

/// Sets `path`'s modification time `days` days back.
fn age_days(path: &Path, days: u64) {
    let file = std::fs::File::options()
        .read(true)
        .open(path)
        .or_else(|_| std::fs::File::open(path))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(days * 24 * 3600))
        .unwrap();
}

use crate::common::files_in as names;

fn partials(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with(".vari-") && n.ends_with(".partial"))
        .collect()
}

// --- index build: the state file and distribution names -------------------------------------

#[test]
fn index_build_refuses_a_state_file_naming_paths_outside_the_site() {
    for outside in ["../victim", "ABSOLUTE", "files/../../victim", "simple/a//b"] {
        let dir = tempfile::tempdir().unwrap();
        let (input, site) = (dir.path().join("in"), dir.path().join("site"));
        std::fs::create_dir_all(&input).unwrap();
        std::fs::create_dir_all(&site).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let listed = match outside {
            "ABSOLUTE" => victim.display().to_string(),
            other => other.to_owned(),
        };
        let state = serde_json::json!({
            "format": "vari-index-state/1",
            "inputs": {},
            "outputs": ["files/gone-1.0.tar.gz", listed],
        });
        std::fs::write(
            site.join(".vari-index-state.json"),
            serde_json::to_vec(&state).unwrap(),
        )
        .unwrap();
        vari_run([
            "index".as_ref(),
            "build".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            site.as_os_str(),
        ])
        .expect_one_error(&[".vari-index-state.json", "outputs[", "remove the file"]);
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep me",
            "{outside}"
        );
    }
}

#[test]
fn index_build_publishes_only_distribution_names_that_follow_their_grammar() {
    let dir = tempfile::tempdir().unwrap();
    let (input, site) = (dir.path().join("in"), dir.path().join("site"));
    std::fs::create_dir_all(&input).unwrap();
    let hostile = [
        "javascript:alert(1)+%2fx-1.0.tar.gz",
        "line\nbreak-1.0.tar.gz",
        "esc\u{1b}[31m-1.0.tar.gz",
        "..-1.0.tar.gz",
        "a b-1.0.zip",
        "<script>-1.0.tar.gz",
    ];
    for name in hostile.iter().chain(&["good-1.0.tar.gz"]) {
        std::fs::write(input.join(name), b"sdist").unwrap();
    }
    let run = vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        site.as_os_str(),
        "--json".as_ref(),
    ])
    .expect_code(0);
    assert_eq!(run.json()["projects"], 1, "{}", run.stdout);
    // Each refused file is named in a warning, none dropped silently.
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: ") && l.contains("not published"))
        .collect();
    assert_eq!(warnings.len(), hostile.len(), "{}", run.stderr);
    for fragment in ["alert(1)", "..-1.0.tar.gz", "<script>", "a b-1.0.zip"] {
        assert!(run.stderr.contains(fragment), "{fragment}: {}", run.stderr);
    }
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    // Only the valid project has a directory, and the pages name nothing else.
    assert_eq!(
        names(&site.join("simple")),
        ["good", "index.html", "index.json"]
    );
    assert_eq!(names(&site.join("files")), ["good-1.0.tar.gz"]);
    let root = std::fs::read_to_string(site.join("simple/index.html")).unwrap();
    assert!(root.contains("<a href=\"good/\">"), "{root}");
    assert!(!root.contains("javascript"), "{root}");
}

#[test]
fn a_stale_partial_file_goes_with_the_next_build_a_fresh_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (input, site) = (dir.path().join("in"), dir.path().join("site"));
    std::fs::create_dir_all(&input).unwrap();
    std::fs::create_dir_all(site.join("simple")).unwrap();
    std::fs::write(input.join("good-1.0.tar.gz"), b"sdist").unwrap();
    let old = site.join("simple/.vari-killed1.partial");
    let fresh = site.join("simple/.vari-running.partial");
    std::fs::write(&old, vec![0; 1000]).unwrap();
    std::fs::write(&fresh, vec![0; 1000]).unwrap();
    age_days(&old, 2);
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.as_os_str(),
        "-o".as_ref(),
        site.as_os_str(),
    ])
    .expect_code(0);
    assert!(!old.exists(), "a partial file two days old is a left-over");
    assert!(fresh.exists(), "a fresh one may be another process's");
}

// --- inputs that must be regular files ----------------------------------------------------------

#[test]
fn fifos_devices_and_sparse_giants_given_as_inputs_are_errors_not_hangs() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("input.json");
    mkfifo(&fifo);
    let sparse = dir.path().join("profile.json");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let fifo_text = fifo.display().to_string();
    let sparse_text = sparse.display().to_string();
    let cases: Vec<(Command, &str, &str)> = vec![
        (
            {
                let mut c = vari();
                c.arg("rank").arg(&fifo);
                c
            },
            fifo_text.as_str(),
            "is a FIFO",
        ),
        (
            {
                let mut c = vari();
                c.args(["rank", "/dev/zero"]);
                c
            },
            "/dev/zero",
            "is a character device",
        ),
        (
            {
                let mut c = vari();
                c.args(["config", "show"]).env("VARI_CONFIG", &fifo);
                c
            },
            fifo_text.as_str(),
            "is a FIFO",
        ),
        (
            {
                let mut c = vari();
                c.args(["detect", "--profile"]).arg(&fifo);
                c
            },
            fifo_text.as_str(),
            "is a FIFO",
        ),
        (
            {
                let mut c = vari();
                c.args(["detect", "--profile"]).arg(&sparse);
                c
            },
            sparse_text.as_str(),
            "larger than the limit",
        ),
    ];
    for (mut command, path, problem) in cases {
        let what = format!("{command:?}");
        let (code, stderr) = run_bounded(&mut command, &what);
        assert_eq!(code, 1, "{what}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: {stderr}");
        assert!(
            lines[0].starts_with("error: ")
                && lines[0].contains(path)
                && lines[0].contains(problem),
            "{what}: {stderr}"
        );
    }
}

#[test]
fn a_sysroot_with_a_fifo_or_a_sparse_cpuinfo_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("proc")).unwrap();
    let cpuinfo = root.join("proc/cpuinfo");
    mkfifo(&cpuinfo);
    let (code, stderr) = run_bounded(
        vari().arg("detect").arg("--sysroot").arg(&root),
        "detect --sysroot with a FIFO cpuinfo",
    );
    assert_eq!(code, 0, "{stderr}");
    std::fs::remove_file(&cpuinfo).unwrap();
    std::fs::File::create(&cpuinfo)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let (code, stderr) = run_bounded(
        vari().arg("detect").arg("--sysroot").arg(&root),
        "detect --sysroot with a 3 GiB sparse cpuinfo",
    );
    assert_eq!(code, 0, "{stderr}");
}

// --- interruptions ------------------------------------------------------------------------------

/// A PEP 503 index on 127.0.0.1 whose one wheel never finishes arriving: the headers promise
/// 100 MB, then the body drips 4 KiB at a time until the client goes away.
fn dripping_index() -> String {
    let base = raw_server(|path, _range, stream| {
        if path.ends_with(".whl") {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\
                         Content-Length: 100000000\r\nConnection: close\r\n\r\n"
            );
            let block = [b'x'; 4096];
            while stream.write_all(&block).is_ok() {
                std::thread::sleep(Duration::from_millis(10));
            }
        } else {
            let body = "<!DOCTYPE html><html><body>\
                        <a href=\"/files/demo-1.0-py3-none-any.whl#sha256=\
                        0000000000000000000000000000000000000000000000000000000000000000\">\
                        demo-1.0-py3-none-any.whl</a></body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("{base}/simple/")
}

/// Waits (within the safety net) until `dir` holds a partial file.
fn wait_for_partial(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    while !dir.is_dir() || partials(dir).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the download ended ({status}) before a partial file appeared");
        }
        assert!(start.elapsed() < SAFETY_NET, "no partial file appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_interrupted_download_leaves_no_partial_file() {
    let index = dripping_index();
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("cpu.toml");
        std::fs::write(
            &profile,
            "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n",
        )
        .unwrap();
        let dest = dir.path().join("wheels");
        let mut running = Running(
            vari()
                .args(["download", "demo", "-d"])
                .arg(&dest)
                .args(["--index-url", &index, "--profile"])
                .arg(&profile)
                .args([
                    "--python-version",
                    "3.12",
                    "--python-platform",
                    "x86_64-manylinux_2_28",
                ])
                .env("VARI_CACHE_DIR", dir.path().join("cache"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let child = &mut running.0;
        wait_for_partial(&dest, child);
        send(child, signal);
        let status = wait_bounded(child, "the interrupted download");
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert_eq!(names(&dest), Vec::<String>::new(), "SIG{signal}");
    }
}

/// `vari install` with a stand-in installer (a script named `pip-…` that records its pid and the
/// signal it gets, and otherwise waits), and a find-links source of pip's own, so that vari
/// makes its `vari-install-*` directory.
#[test]
fn install_forwards_sigterm_waits_for_the_installer_and_removes_its_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path();
    let (tmp, marks, links) = (
        scratch.join("tmp"),
        scratch.join("marks"),
        scratch.join("links"),
    );
    for d in [&tmp, &marks, &links] {
        std::fs::create_dir_all(d).unwrap();
    }
    // Left-overs of killed installations: the old one goes, the fresh one may be running.
    let (stale, young) = (
        tmp.join("vari-install-killed"),
        tmp.join("vari-install-young"),
    );
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::create_dir_all(&young).unwrap();
    age_days(&stale, 2);
    let installer = scratch.join("pip-standin");
    std::fs::write(
        &installer,
        "#!/bin/sh\n\
         trap 'echo TERM > \"$MARKS/got\"; exit 143' TERM\n\
         trap 'echo INT > \"$MARKS/got\"; exit 130' INT\n\
         echo $$ > \"$MARKS/pid\"\n\
         while :; do sleep 0.05; done\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&installer, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut command = vari();
    for (key, _) in std::env::vars() {
        if key.starts_with("PIP_") || key.starts_with("UV_") {
            command.env_remove(key);
        }
    }
    let home = scratch.join("home");
    let mut running = Running(
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_FIND_LINKS", &links)
            .env("TMPDIR", &tmp)
            .env("MARKS", &marks)
            .env("PATH", "/usr/bin:/bin")
            .current_dir(scratch)
            .arg("install")
            .arg("--python")
            .arg(test_python())
            .arg("--installer")
            .arg(&installer)
            .arg("vari-demo")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut running.0;
    let start = Instant::now();
    while !marks.join("pid").exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            panic!("vari ended ({status}) before the installer started: {stderr}");
        }
        assert!(start.elapsed() < SAFETY_NET, "the installer never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let during: Vec<String> = names(&tmp)
        .into_iter()
        .filter(|n| n.starts_with("vari-install-") && n != "vari-install-young")
        .collect();
    assert_eq!(
        during.len(),
        1,
        "vari's own directory exists meanwhile: {during:?}"
    );
    send(child, "TERM");
    let status = wait_bounded(child, "the interrupted install");
    assert_eq!(status.code(), Some(143));
    assert_eq!(
        std::fs::read_to_string(marks.join("got")).unwrap().trim(),
        "TERM",
        "the installer got the signal"
    );
    assert_eq!(
        names(&tmp),
        ["vari-install-young"],
        "its own directory and the stale one are gone"
    );
}

// --- the cache ----------------------------------------------------------------------------------

#[test]
fn links_planted_in_the_cache_are_replaced_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let (cache, outside) = (dir.path().join("cache"), dir.path().join("outside"));
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let entry = cache.join("detect-v1.json");
    std::os::unix::fs::symlink(&victim, &entry).unwrap();
    // A linked directory where the Python facts go.
    std::os::unix::fs::symlink(&outside, cache.join("python")).unwrap();
    vari()
        .env("VARI_CACHE_DIR", &cache)
        .arg("detect")
        .arg("--python")
        .arg(test_python())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(
        names(&outside),
        ["victim"],
        "nothing written through `python`"
    );
    let meta = std::fs::symlink_metadata(&entry).unwrap();
    assert!(meta.is_file(), "the link was replaced by the cache file");
}

#[test]
fn the_input_ceiling_is_raised_by_vari_toml_or_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    // Configs: a real setting padded past their 16 MiB ceiling, raised by the variable (a
    // config file cannot raise the ceiling it is read under).
    let big_config = dir.path().join("big-vari.toml");
    let mut text = "offline = true\n".to_owned();
    text.push_str(&" ".repeat(17 << 20));
    text.push('\n');
    std::fs::write(&big_config, text).unwrap();
    let show = |env: Option<&str>| {
        let mut command = vari();
        command
            .args(["config", "show"])
            .env("VARI_CONFIG", &big_config);
        if let Some(bytes) = env {
            command.env("VARI_MAX_INPUT_BYTES", bytes);
        }
        run_bounded(&mut command, "config show (a large config)")
    };
    let (code, stderr) = show(None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("larger than the limit of 16777216 bytes")
            && stderr.contains("`max-input-bytes` in vari.toml or VARI_MAX_INPUT_BYTES"),
        "{stderr}"
    );
    let (code, stderr) = show(Some("33554432"));
    assert_eq!(code, 0, "{stderr}");

    // Metadata files (a profile here): a sparse file past their 256 MiB ceiling, raised by
    // vari.toml's `max-input-bytes`; raised, the file is read and fails as the zeros it holds.
    let sparse = dir.path().join("profile.toml");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(300 << 20)
        .unwrap();
    let config = dir.path().join("vari.toml");
    std::fs::write(&config, "max-input-bytes = 419430400\n").unwrap();
    let detect = |config: Option<&Path>| {
        let mut command = vari();
        command.args(["detect", "--profile"]).arg(&sparse);
        if let Some(config) = config {
            command.env("VARI_CONFIG", config);
        }
        run_bounded(&mut command, "detect --profile (a sparse giant)")
    };
    let (code, stderr) = detect(None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("larger than the limit of 268435456 bytes"),
        "{stderr}"
    );
    let (code, stderr) = detect(Some(&config));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        !stderr.contains("larger than the limit") && stderr.contains("profile.toml"),
        "{stderr}"
    );
}
