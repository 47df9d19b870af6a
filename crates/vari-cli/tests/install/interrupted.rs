//! A command interrupted while its installer or resolver runs (issue 32 item 10, issue 33 item
//! 15): SIGTERM (a CI time-out, `kill`) or SIGINT (Ctrl-C) sent to vari alone reaches the real
//! uv it runs, vari exits 143 or 130 only once uv has exited, and its temporary directories
//! (`$TMPDIR/vari-install-*`) are gone. The index never answers, so uv is certainly still
//! waiting when the signal comes: nothing here depends on timing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::vari;
use vari_test_support::fleet;
use vari_test_support::raw::raw_server_with;
use vari_test_support::venv;

/// A safety net for waits that end at once when vari behaves (never a timing assertion).
const SAFETY_NET: Duration = Duration::from_secs(120);

/// An index on 127.0.0.1 that reads each request and never answers it.
fn index_that_never_answers() -> String {
    let addr = raw_server_with(|_, _| loop {
        std::thread::park();
    });
    format!("http://{addr}/simple/")
}

/// The processes whose parent is `pid`: (pid, command name).
fn children_of(pid: u32) -> Vec<(u32, String)> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `PID (COMM) STATE PPID …`; COMM may hold spaces and parentheses.
        let (Some(open), Some(close)) = (text.find('('), text.rfind(')')) else {
            continue;
        };
        let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
        if rest.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            if let Ok(child) = text[..open].trim().parse() {
                children.push((child, text[open + 1..close].to_owned()));
            }
        }
    }
    children
}

/// Whether `pid` is a process that still runs (not gone, not a zombie waiting to be reaped).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => {
            let state = text
                .rfind(')')
                .and_then(|close| text[close + 1..].split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        }
        Err(_) => false,
    }
}

/// Waits until `vari` has a child called `name`; its pid.
fn wait_for_child(vari: &mut Child, name: &str) -> u32 {
    let deadline = Instant::now() + SAFETY_NET;
    loop {
        if let Some((pid, _)) = children_of(vari.id()).into_iter().find(|(_, n)| n == name) {
            return pid;
        }
        if let Some(status) = vari.try_wait().unwrap() {
            panic!("vari exited ({status}) before starting {name}");
        }
        assert!(Instant::now() < deadline, "vari never started {name}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` to `vari` alone and waits for it; its exit code.
fn interrupt(vari: &mut Child, signal: &str) -> i32 {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &vari.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + SAFETY_NET;
    loop {
        if let Some(status) = vari.try_wait().unwrap() {
            return status
                .code()
                .unwrap_or_else(|| panic!("vari was killed by the signal: {status}"));
        }
        assert!(
            Instant::now() < deadline,
            "vari did not exit after SIG{signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What vari left in the temporary directory `tmp`.
fn left_in(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vari-install-"))
        })
        .collect()
}

#[test]
fn an_interrupted_lock_stops_uv_waits_for_it_and_leaves_no_temporary_files() {
    let index = index_that_never_answers();
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let profiles = fleet::write_profiles(&dir.path().join("profiles"));
        let cpu = &profiles.iter().find(|(n, _)| n == "cpu").unwrap().1;
        let mut command = vari();
        command
            .current_dir(dir.path())
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", venv::test_venv().join("bin").display()),
            )
            .env("TMPDIR", &tmp)
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .args(["lock", "--index-url", &index, "--target"])
            .arg(cpu)
            .arg("app-like")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut vari = command.spawn().unwrap();
        let uv = wait_for_child(&mut vari, "uv");
        assert_eq!(interrupt(&mut vari, signal), code, "SIG{signal}");
        assert!(
            !running(uv),
            "SIG{signal}: uv ({uv}) still runs after vari exited"
        );
        assert_eq!(left_in(&tmp), Vec::<PathBuf>::new(), "SIG{signal}");
        assert!(
            !dir.path().join("pylock.toml").exists(),
            "SIG{signal}: a lock was written"
        );
    }
}

#[test]
fn an_interrupted_sync_stops_its_installer_and_waits_for_it() {
    let index = index_that_never_answers();
    let files = index.replace("/simple/", "/files/");
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        std::fs::create_dir(&tmp).unwrap();
        let upstream = fleet::upstream(&dir.path().join("upstream"));
        let profiles = fleet::write_profiles(&dir.path().join("profiles"));
        let a100 = &profiles.iter().find(|(n, _)| n == "a100").unwrap().1;
        // Every file of the lock is fetched from the index that never answers: uv, started
        // early, waits for them.
        let lock = dir.path().join("pylock.toml");
        let written = crate::sync::fleet_lock(&upstream, &files);
        std::fs::write(&lock, vari_lock::write_lock(&written).unwrap()).unwrap();
        let venv = dir.path().join("venv");
        venv::bare_venv(&venv);
        let mut command = crate::sync::sync(dir.path(), &lock, &venv, a100);
        command
            .env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut vari = command.spawn().unwrap();
        let uv = wait_for_child(&mut vari, "uv");
        assert_eq!(interrupt(&mut vari, signal), code, "SIG{signal}");
        assert!(
            !running(uv),
            "SIG{signal}: uv ({uv}) still runs after vari exited"
        );
        assert_eq!(left_in(&tmp), Vec::<PathBuf>::new(), "SIG{signal}");
        assert_eq!(crate::sync::listed(&venv), [], "SIG{signal}");
    }
}
