//! A command's peak memory: run to completion, its resident peak read from `wait4`'s rusage.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::Run;

/// Runs `cmd` to completion (killed after two minutes, a safety net) and returns what it
/// printed and its peak resident memory in KiB, from `wait4`.
pub(crate) fn measured(cmd: &mut Command) -> (Run, i64) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout");
    let err = dir.path().join("stderr");
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("the vari binary runs");
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            for _ in 0..1200 {
                if done.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            // Still running (not reaped, so the pid is still this child's).
            #[allow(unsafe_code)]
            // SAFETY: kill(2) with a pid this test spawned and has not reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        })
    };
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    #[allow(unsafe_code)]
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4(2) on our own child with valid pointers to locals.
    #[allow(unsafe_code)]
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    done.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    assert_eq!(reaped, pid, "wait4 failed");
    drop(child);
    assert!(libc::WIFEXITED(status), "vari was killed (status {status})");
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert!(!stderr.contains("panicked"), "vari panicked:\n{stderr}");
    let run = Run {
        code: libc::WEXITSTATUS(status),
        stdout: std::fs::read_to_string(&out).unwrap(),
        stderr,
    };
    (run, usage.ru_maxrss)
}
