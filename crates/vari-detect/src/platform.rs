//! The platform of a target: system, machine and C library, for `enable-if` markers and wheel
//! tags. On this machine from the running process; for a file tree from its files; for a
//! snapshot, what its manifest recorded on the node fills what the files cannot say.

use std::time::Instant;

use vari_core::Platform;

use crate::context::DetectContext;
use crate::cpu::cpuinfo::{CpuArch, CpuInfo};

/// The platform of the context's machine.
///
/// * system: the host's OS (`Linux`, `Darwin`, `Windows`); for a snapshot, `Linux` when it has
///   `/proc`.
/// * machine: the host's architecture; for a snapshot, the one `/proc/cpuinfo` describes.
/// * libc: on a glibc host, `gnu_get_libc_version()` of the running process; otherwise (musl
///   hosts, snapshots) from files: `ld-musl-*.so.1` means musl (its version is asked from the
///   loader on the live machine only), a `libc.so.6` means glibc, whose version is read from the
///   `libc-2.NN.so` link name or the `release version 2.NN` string inside the library.
///
/// For a snapshot, what its manifest recorded on the node fills what the files do not say (a
/// snapshot copies no C library).
pub fn detect_platform(ctx: &DetectContext) -> Platform {
    let start = Instant::now();
    let platform = if ctx.sysroot.is_host() {
        Platform {
            system: Some(host_system().to_owned()),
            machine: Some(std::env::consts::ARCH.to_owned()),
            libc: host_libc(ctx),
        }
    } else {
        let machine = ctx
            .sysroot
            .read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| match CpuInfo::parse(&text).arch() {
                CpuArch::X86_64 => Some("x86_64"),
                CpuArch::Aarch64 => Some("aarch64"),
                CpuArch::Arm32 => Some("armv7l"),
                CpuArch::Other => None,
            })
            .map(str::to_owned);
        let from_files = Platform {
            system: ctx
                .sysroot
                .path("/proc")
                .is_dir()
                .then(|| "Linux".to_owned()),
            libc: libc_from_files(ctx, machine.as_deref()),
            machine,
        };
        let recorded = ctx
            .sysroot
            .manifest()
            .and_then(|m| m.platform.clone())
            .unwrap_or_default();
        Platform {
            system: from_files.system.or(recorded.system),
            machine: from_files.machine.or(recorded.machine),
            libc: from_files.libc.or(recorded.libc),
        }
    };
    tracing::debug!(elapsed = ?start.elapsed(), "platform detected");
    platform
}

fn host_system() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn host_libc(_ctx: &DetectContext) -> Option<String> {
    let version = glibc::running_version()?;
    glibc_major_minor(&version).map(|v| format!("glibc {v}"))
}

/// The one glibc call: the version of the C library this process runs on.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // FFI: calling a C function of the running process.
mod glibc {
    use std::ffi::CStr;
    use std::os::raw::c_char;

    /// `gnu_get_libc_version()` of the running process.
    pub(super) fn running_version() -> Option<String> {
        // SAFETY: the running process is linked against glibc (target_env = "gnu"), which exports
        // `const char *gnu_get_libc_version(void)` returning a static NUL-terminated string.
        unsafe {
            let this = libloading::os::unix::Library::this();
            let f = this
                .get::<unsafe extern "C" fn() -> *const c_char>(b"gnu_get_libc_version\0")
                .ok()?;
            let version = f();
            if version.is_null() {
                return None;
            }
            Some(CStr::from_ptr(version).to_string_lossy().into_owned())
        }
    }
}

#[cfg(all(target_os = "linux", not(target_env = "gnu")))]
fn host_libc(ctx: &DetectContext) -> Option<String> {
    libc_from_files(ctx, Some(std::env::consts::ARCH))
}

#[cfg(not(target_os = "linux"))]
fn host_libc(_ctx: &DetectContext) -> Option<String> {
    None
}

/// `2.39` from `2.39`, `2.20-2014.11` or `2.39.9000` (packaging's `(\d+)\.(\d+)`).
fn glibc_major_minor(text: &str) -> Option<String> {
    let mut parts = text.trim().split(|c: char| !c.is_ascii_digit());
    let major = parts.next().filter(|p| !p.is_empty())?;
    let minor = parts.next().filter(|p| !p.is_empty())?;
    Some(format!("{major}.{minor}"))
}

/// The C library of a file tree (see [`detect_platform`]).
fn libc_from_files(ctx: &DetectContext, machine: Option<&str>) -> Option<String> {
    let root = &ctx.sysroot;
    if let Ok(entries) = std::fs::read_dir(root.path("/lib")) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("ld-musl-") && name.ends_with(".so.1") {
                let version = ctx
                    .sysroot
                    .is_host()
                    .then(|| musl_version(&entry.path(), ctx))
                    .flatten();
                return Some(match version {
                    Some(v) => format!("musl {v}"),
                    None => "musl".to_owned(),
                });
            }
        }
    }
    let triplet = machine
        .map(|m| format!("{m}-linux-gnu"))
        .unwrap_or_default();
    let dirs = [
        format!("/lib/{triplet}"),
        format!("/usr/lib/{triplet}"),
        "/lib64".to_owned(),
        "/usr/lib64".to_owned(),
        "/lib".to_owned(),
        "/usr/lib".to_owned(),
    ];
    for dir in dirs.iter().filter(|d| !d.ends_with('/')) {
        let path = root.path(format!("{dir}/libc.so.6"));
        if !path.exists() {
            continue;
        }
        // glibc < 2.34: libc.so.6 -> libc-2.NN.so
        if let Ok(target) = std::fs::read_link(&path) {
            let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
            if let Some(v) = name
                .as_deref()
                .and_then(|n| n.strip_prefix("libc-"))
                .and_then(|n| n.strip_suffix(".so"))
                .and_then(glibc_major_minor)
            {
                return Some(format!("glibc {v}"));
            }
        }
        // A C library is a few MiB; a FIFO or device planted in a sysroot is skipped.
        let version =
            crate::system_file::read_system_bytes(&path, vari_fs::InputKind::Metadata.limit())
                .ok()
                .and_then(|b| glibc_version_in(&b));
        return Some(match version {
            Some(v) => format!("glibc {v}"),
            None => "glibc".to_owned(),
        });
    }
    None
}

/// The version in glibc's banner `… stable release version 2.39.` inside the library.
fn glibc_version_in(bytes: &[u8]) -> Option<String> {
    const NEEDLE: &[u8] = b"release version ";
    let mut from = 0;
    while let Some(offset) = bytes[from..].iter().position(|&b| b == b'r') {
        let at = from + offset;
        if bytes[at..].starts_with(NEEDLE) {
            let rest = &bytes[at + NEEDLE.len()..];
            let end = rest
                .iter()
                .position(|b| !(b.is_ascii_digit() || *b == b'.'))
                .unwrap_or(rest.len());
            if let Some(v) = glibc_major_minor(&String::from_utf8_lossy(&rest[..end])) {
                return Some(v);
            }
        }
        from = at + 1;
    }
    None
}

/// Runs the musl loader without arguments: it prints `Version 1.2.4` on stderr.
fn musl_version(loader: &std::path::Path, ctx: &DetectContext) -> Option<String> {
    let output = vari_fs::run_with_timeout(
        std::process::Command::new(loader),
        None,
        ctx.timeout.min(std::time::Duration::from_secs(2)),
    )
    .ok()?;
    let text = String::from_utf8_lossy(&output.stderr);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Version "))
        .and_then(glibc_major_minor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;

    fn ctx_at(root: &std::path::Path) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::new(root));
        ctx.env.clear();
        ctx
    }

    #[test]
    fn glibc_versions_parse() {
        assert_eq!(glibc_major_minor("2.39").as_deref(), Some("2.39"));
        assert_eq!(glibc_major_minor("2.20-2014.11").as_deref(), Some("2.20"));
        assert_eq!(glibc_major_minor("x"), None);
        let blob =
            b"\0\0GNU C Library (Ubuntu GLIBC 2.39-0ubuntu8.3) stable release version 2.39.\n\0";
        assert_eq!(glibc_version_in(blob).as_deref(), Some("2.39"));
        assert_eq!(glibc_version_in(b"nothing relevant here"), None);
    }

    #[test]
    fn snapshot_platform_comes_from_its_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/cpuinfo"),
            "processor\t: 0\nCPU implementer\t: 0x41\nFeatures\t: fp asimd\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("lib/aarch64-linux-gnu")).unwrap();
        std::fs::write(
            dir.path().join("lib/aarch64-linux-gnu/libc.so.6"),
            b"ELF...stable release version 2.36.\0",
        )
        .unwrap();
        let p = detect_platform(&ctx_at(dir.path()));
        assert_eq!(p.system.as_deref(), Some("Linux"));
        assert_eq!(p.machine.as_deref(), Some("aarch64"));
        assert_eq!(p.libc.as_deref(), Some("glibc 2.36"));
    }

    #[cfg(unix)]
    #[test]
    fn musl_and_old_glibc_layouts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/ld-musl-x86_64.so.1"), "").unwrap();
        assert_eq!(
            libc_from_files(&ctx_at(dir.path()), Some("x86_64")).as_deref(),
            Some("musl")
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lib64")).unwrap();
        std::fs::write(dir.path().join("lib64/libc-2.17.so"), "").unwrap();
        std::os::unix::fs::symlink("libc-2.17.so", dir.path().join("lib64/libc.so.6")).unwrap();
        assert_eq!(
            libc_from_files(&ctx_at(dir.path()), Some("x86_64")).as_deref(),
            Some("glibc 2.17")
        );
        assert_eq!(
            libc_from_files(&ctx_at(tempfile::tempdir().unwrap().path()), None),
            None
        );
    }

    #[test]
    fn host_platform_is_named() {
        let p = detect_platform(&DetectContext::from_process_env(Sysroot::host()));
        assert_eq!(p.machine.as_deref(), Some(std::env::consts::ARCH));
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(p.libc.unwrap().starts_with("glibc 2."));
            assert_eq!(p.system.as_deref(), Some("Linux"));
        }
    }
}
