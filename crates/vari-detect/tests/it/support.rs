//! Test support: stub driver libraries compiled from `tests/it/stubs/*.c` with the system C compiler
//! (`$CC`, else `cc`) at test time, and the probe-child plumbing.
//!
//! The probe child is this test binary itself: [`use_this_binary_as_probe_runner`] registers
//! `<test binary> probe_child_entry --exact --nocapture`, and each test file defines
//! `#[test] fn probe_child_entry()` calling [`serve_probe`], which answers the request and exits
//! when `VARI_PROBE` is set and does nothing otherwise. No GPU is needed; a C compiler is.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use vari_detect::child::{self, ProbeRunner, PROBE_ENV};
use vari_detect::{DetectContext, Sysroot};

/// Compiles `tests/it/stubs/<name>.c` with `defines` into a shared library (once per process).
pub(crate) fn stub(name: &str, defines: &[&str]) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = format!("{name}{}", defines.concat());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(&key) {
        return path.clone();
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vari-stubs");
    std::fs::create_dir_all(&dir).unwrap();
    let suffix: String = defines
        .iter()
        .map(|d| format!("-{}", d.to_lowercase()))
        .collect();
    let output = dir.join(format!("lib{name}{suffix}.so"));
    // Built under a per-process name then renamed: other test binaries may build it concurrently.
    let temp = dir.join(format!(".lib{name}{suffix}.{}.so", std::process::id()));
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/stubs")
        .join(format!("{name}.c"));
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut command = Command::new(&compiler);
    command
        .args(["-shared", "-fPIC", "-O0", "-Wall", "-o"])
        .arg(&temp)
        .arg(&source);
    for d in defines {
        command.arg(format!("-D{d}"));
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("these tests need a C compiler ({compiler}): {e}"));
    assert!(status.success(), "compiling {} failed", source.display());
    std::fs::rename(&temp, &output).unwrap();
    built.insert(key, output.clone());
    output
}

/// Registers this test binary as the probe runner (idempotent).
pub(crate) fn use_this_binary_as_probe_runner() {
    child::set_probe_runner(ProbeRunner {
        program: std::env::current_exe().unwrap(),
        args: [
            "probe_child_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ]
        .iter()
        .map(Into::into)
        .collect(),
    });
}

/// The body of each test file's `probe_child_entry` test.
pub(crate) fn serve_probe() {
    if std::env::var_os(PROBE_ENV).is_some() {
        child::run_probe_child_if_requested();
    }
}

/// A live-machine context with only the given variables (nothing inherited), a short timeout and
/// the probe runner registered. The CUDA fallback points at a missing file unless set.
pub(crate) fn host_ctx(vars: &[(&str, &str)]) -> DetectContext {
    use_this_binary_as_probe_runner();
    let mut ctx = DetectContext::from_process_env(Sysroot::host());
    ctx.env.clear();
    ctx.env.insert(
        "VARI_CUDA_LIBRARY".into(),
        "/nonexistent/libcuda.so.1".into(),
    );
    for (k, v) in vars {
        ctx.env.insert((*k).into(), (*v).into());
    }
    ctx.timeout = Duration::from_secs(20);
    ctx
}

/// Whether this machine has an NVIDIA kernel driver (its files then add an estimate to
/// failure cases, so those tests only check the note).
pub(crate) fn host_has_nvidia_driver() -> bool {
    Path::new("/sys/module/nvidia/version").exists()
        || Path::new("/proc/driver/nvidia/version").exists()
}
