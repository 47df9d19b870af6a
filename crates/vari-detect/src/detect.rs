//! Detection of every namespace for one target, and the platform it runs.
//!
//! Providers run concurrently and independently: one that fails leaves its namespace absent with
//! a reason, never fails the whole detection. Reports come in [`NAMESPACE_ORDER`]: GPUs first
//! (most specific hardware), then the CPU, the ahead-of-time lists, and `abi_dependency` last
//! (as `spec/providers.md` requires).
//!
//! With [`DetectOptions::use_cache`] on the live machine, results come from [`crate::cache`] when
//! still valid. `abi_dependency` describes the target Python environment, which changes whenever
//! a package is installed, so it is never cached: it is recomputed (file reads only) every time.

use std::time::Instant;

use vari_core::{Platform, Profile};

use crate::cache::{self, Fingerprint};
use crate::cpu::cpuinfo::{CpuArch, CpuInfo};
use crate::gpu::{amd, intel, nvidia};
use crate::snapshot::{self, SnapshotManifest};
use crate::{abi, aot, cpu, DetectContext, ProviderReport};

/// Namespaces in report and profile order.
pub const NAMESPACE_ORDER: &[&str] = &[
    "nvidia",
    "amd",
    "intel",
    "x86_64",
    "aarch64",
    "blas_lapack",
    "openmp",
    "abi_dependency",
];

/// What to detect and how.
#[derive(Debug, Clone)]
pub struct DetectOptions {
    /// The machine or snapshot, variables, timeout and target Python.
    pub context: DetectContext,
    /// Whether results may come from, and are written to, the on-disk cache (live machine only).
    pub use_cache: bool,
}

/// Everything detected for one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    /// The platform (system, machine, C library).
    pub platform: Platform,
    /// One report per provider, in [`NAMESPACE_ORDER`], present or not.
    pub reports: Vec<ProviderReport>,
    /// Whether the hardware reports came from the cache.
    pub from_cache: bool,
}

impl Detection {
    /// The `vari-profile/1` document: the present namespaces in [`NAMESPACE_ORDER`].
    pub fn profile(&self) -> Profile {
        Profile {
            platform: Some(self.platform.clone()),
            namespaces: self
                .reports
                .iter()
                .filter_map(ProviderReport::support)
                .collect(),
            ..Profile::empty()
        }
    }

    /// The report of `namespace`.
    pub fn report(&self, namespace: &str) -> Option<&ProviderReport> {
        self.reports
            .iter()
            .find(|r| r.namespace.as_str() == namespace)
    }
}

/// Detects every namespace.
pub fn detect(options: &DetectOptions) -> Detection {
    let ctx = &options.context;
    let cache_path = (options.use_cache && ctx.sysroot.is_host())
        .then(|| cache::cache_path(ctx))
        .flatten();
    // Taken before detection, so a change during detection invalidates what is stored.
    let fingerprint = cache_path.as_ref().map(|_| Fingerprint::of(ctx));

    if let (Some(path), Some(fp)) = (&cache_path, &fingerprint) {
        if let Some(cached) = cache::load(path, fp) {
            let mut reports = cached.reports;
            reports.push(abi::detect(ctx));
            return Detection {
                platform: cached.platform,
                reports: in_order(reports),
                from_cache: true,
            };
        }
    }

    // A snapshot taken on another node: apply that node's environment and, for the
    // library-based providers a file tree cannot reproduce, what it recorded there.
    let manifest = (!ctx.sysroot.is_host())
        .then(|| snapshot_manifest(ctx))
        .flatten();
    let snapshot_ctx = manifest.as_ref().map(|m| snapshot_context(ctx, m));
    let ctx = snapshot_ctx.as_ref().unwrap_or(ctx);

    let (platform, mut hardware, transient) = detect_uncached(ctx);
    if let Some(manifest) = &manifest {
        use_recorded_reports(ctx, manifest, &mut hardware);
    }
    if let (Some(path), Some(fp)) = (&cache_path, &fingerprint) {
        // A timeout or crash may be gone next time: do not remember it for a day.
        if !transient {
            cache::store(path, fp, &platform, &hardware);
        }
    }
    let mut reports = hardware;
    reports.push(abi::detect(ctx));
    Detection {
        platform,
        reports: in_order(reports),
        from_cache: false,
    }
}

/// The manifest of the snapshot the sysroot points at, if it has one. A damaged manifest is
/// reported and otherwise ignored: the files alone still answer for most namespaces.
fn snapshot_manifest(ctx: &DetectContext) -> Option<SnapshotManifest> {
    match snapshot::read_manifest(ctx.sysroot.root()) {
        Ok(manifest) => manifest,
        Err(e) => {
            tracing::warn!("{e}; reading the snapshot's files only");
            None
        }
    }
}

/// The context for reading a snapshot: the node's values of the variables that say where
/// providers look (`ROCM_PATH`, …) replace this machine's; an override variable
/// (`*_VARIANT_PROVIDER_FORCE_*`) set here still wins over the node's.
fn snapshot_context(ctx: &DetectContext, manifest: &SnapshotManifest) -> DetectContext {
    let is_override = |name: &str| name.contains("_VARIANT_PROVIDER_FORCE_");
    let mut node = ctx.clone();
    for name in snapshot::SNAPSHOT_ENV {
        let kept_here = is_override(name) && ctx.var(name).is_some();
        match manifest.env.get(*name) {
            _ if kept_here => {}
            Some(value) => {
                node.env.insert((*name).to_owned(), value.clone());
            }
            None if !is_override(name) => {
                node.env.remove(*name);
            }
            None => {}
        }
    }
    node
}

/// Replaces the file-only answers of nvidia and intel with what the node's driver libraries
/// reported when the snapshot was taken, unless an override variable decides them here.
fn use_recorded_reports(
    ctx: &DetectContext,
    manifest: &SnapshotManifest,
    reports: &mut [ProviderReport],
) {
    let overridden = |namespace: &str| match namespace {
        nvidia::NAMESPACE => {
            ctx.var(nvidia::FORCE_CUDA_ENV).is_some() || ctx.var(nvidia::FORCE_SM_ENV).is_some()
        }
        intel::NAMESPACE => ctx.var(intel::FORCE_DEVICE_IP_ENV).is_some(),
        _ => true,
    };
    for report in reports.iter_mut() {
        let namespace = report.namespace.as_str();
        if overridden(namespace) {
            continue;
        }
        if let Some(recorded) = manifest.recorded(namespace) {
            *report = recorded;
        }
    }
}

/// Runs the hardware providers concurrently; the flag says whether any failure may be transient.
fn detect_uncached(ctx: &DetectContext) -> (Platform, Vec<ProviderReport>, bool) {
    std::thread::scope(|s| {
        let nvidia = s.spawn(|| nvidia::detect_outcome(ctx));
        let intel = s.spawn(|| intel::detect_outcome(ctx));
        let amd = s.spawn(|| amd::detect(ctx));
        let x86 = s.spawn(|| cpu::x86_64::detect(ctx));
        let arm = s.spawn(|| cpu::aarch64::detect(ctx));
        let platform = detect_platform(ctx);
        let mut transient = false;
        let mut reports = Vec::new();
        for (namespace, handle) in [("nvidia", nvidia), ("intel", intel)] {
            match handle.join() {
                Ok((report, t)) => {
                    transient |= t;
                    reports.push(report);
                }
                Err(_) => {
                    transient = true;
                    reports.push(panicked(namespace));
                }
            }
        }
        for (namespace, handle) in [("amd", amd), ("x86_64", x86), ("aarch64", arm)] {
            reports.push(handle.join().unwrap_or_else(|_| panicked(namespace)));
        }
        reports.push(aot::blas_lapack());
        reports.push(aot::openmp());
        (platform, reports, transient)
    })
}

/// The report of a provider that panicked (a bug): absent, with the reason.
fn panicked(namespace: &str) -> ProviderReport {
    ProviderReport {
        // Only called with names from NAMESPACE_ORDER.
        namespace: vari_core::Namespace::new(namespace).expect("valid namespace"),
        features: None,
        source: "none".into(),
        note: Some("the provider failed unexpectedly (a bug in vari; please report it)".into()),
        elapsed: Default::default(),
    }
}

fn in_order(mut reports: Vec<ProviderReport>) -> Vec<ProviderReport> {
    reports.sort_by_key(|r| {
        NAMESPACE_ORDER
            .iter()
            .position(|n| *n == r.namespace.as_str())
            .unwrap_or(NAMESPACE_ORDER.len())
    });
    reports
}

/// The platform of the context's machine.
///
/// * system: the host's OS (`Linux`, `Darwin`, `Windows`); for a snapshot, `Linux` when it has
///   `/proc`.
/// * machine: the host's architecture; for a snapshot, the one `/proc/cpuinfo` describes.
/// * libc: on a glibc host, `gnu_get_libc_version()` of the running process; otherwise (musl
///   hosts, snapshots) from files: `ld-musl-*.so.1` means musl (its version is asked from the
///   loader on the live machine only), a `libc.so.6` means glibc, whose version is read from the
///   `libc-2.NN.so` link name or the `release version 2.NN` string inside the library.
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
        Platform {
            system: ctx
                .sysroot
                .path("/proc")
                .is_dir()
                .then(|| "Linux".to_owned()),
            libc: libc_from_files(ctx, machine.as_deref()),
            machine,
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
    use std::ffi::CStr;
    use std::os::raw::c_char;
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
        let version = CStr::from_ptr(version).to_string_lossy();
        glibc_major_minor(&version).map(|v| format!("glibc {v}"))
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
        let version = std::fs::read(&path).ok().and_then(|b| glibc_version_in(&b));
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
    use std::process::{Command, Stdio};
    let mut command = Command::new(loader);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = crate::child::run_with_timeout(
        &mut command,
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

    #[test]
    fn a_snapshot_detection_has_every_namespace_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(nvidia::FORCE_CUDA_ENV.into(), "12.8".into());
        ctx.env.insert(nvidia::FORCE_SM_ENV.into(), "8.6".into());
        ctx.env
            .insert(amd::FORCE_GFX_ARCH_ENV.into(), "gfx90a".into());
        let detection = detect(&DetectOptions {
            context: ctx,
            use_cache: true,
        });
        assert!(!detection.from_cache, "snapshots are never cached");
        let names: Vec<&str> = detection
            .reports
            .iter()
            .map(|r| r.namespace.as_str())
            .collect();
        assert_eq!(names, NAMESPACE_ORDER);
        let profile = detection.profile();
        let present: Vec<&str> = profile
            .namespaces
            .iter()
            .map(|n| n.namespace.as_str())
            .collect();
        assert_eq!(present, ["nvidia", "amd", "blas_lapack", "openmp"]);
        assert!(detection.report("intel").unwrap().note.is_some());
    }

    #[test]
    fn the_host_cache_is_used_the_second_time() {
        let cache_dir = tempfile::tempdir().unwrap();
        let mut ctx = DetectContext::from_process_env(Sysroot::host());
        ctx.env.retain(|k, _| k == "HOME" || k == "PATH");
        ctx.env.insert(
            cache::CACHE_DIR_ENV.into(),
            cache_dir.path().display().to_string(),
        );
        // Overrides keep the test independent of this machine's GPUs.
        ctx.env.insert(nvidia::FORCE_CUDA_ENV.into(), "13.0".into());
        ctx.env.insert(nvidia::FORCE_SM_ENV.into(), "9.0".into());
        ctx.env
            .insert(intel::FORCE_DEVICE_IP_ENV.into(), "20.1.0".into());
        let options = DetectOptions {
            context: ctx,
            use_cache: true,
        };
        let first = detect(&options);
        assert!(!first.from_cache);
        let second = detect(&options);
        assert!(second.from_cache);
        assert_eq!(first.profile(), second.profile());
        assert_eq!(first.platform, second.platform);
        let mut changed = options.clone();
        changed
            .context
            .env
            .insert(nvidia::FORCE_SM_ENV.into(), "8.0".into());
        let third = detect(&changed);
        assert!(!third.from_cache);
        assert_eq!(
            third
                .profile()
                .namespace("nvidia")
                .unwrap()
                .feature("sm_arch")
                .unwrap()
                .values[0]
                .as_str(),
            "80_real"
        );
        let uncached = DetectOptions {
            use_cache: false,
            ..changed
        };
        assert!(!detect(&uncached).from_cache);
    }

    /// A snapshot tree whose manifest recorded an nvidia answer from the node's NVML.
    fn snapshot_with_recorded_nvidia(root: &std::path::Path) {
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(
            root.join("proc/cpuinfo"),
            "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t: fpu sse sse2\n",
        )
        .unwrap();
        let manifest = serde_json::json!({
            "schema": snapshot::SNAPSHOT_SCHEMA,
            "host": "gpu-node-7",
            "created": "2026-11-21T12:00:00Z",
            "vari_version": "0.1.0",
            "os": "linux",
            "arch": "x86_64",
            "copied": ["/proc/cpuinfo"],
            "missing": [],
            "markers": [],
            "env": {"ROCM_PATH": "/opt/rocm-6.4.0"},
            "recorded": [{
                "namespace": "nvidia",
                "features": [{"name": "sm_arch", "values": ["90_real", "90_virtual"], "multi_value": true}],
                "source": "NVML 580.65.06"
            }]
        });
        std::fs::write(root.join(snapshot::MANIFEST_FILE), manifest.to_string()).unwrap();
    }

    #[test]
    fn a_snapshot_uses_what_the_node_recorded_unless_overridden_here() {
        let dir = tempfile::tempdir().unwrap();
        snapshot_with_recorded_nvidia(dir.path());
        let mut ctx = ctx_at(dir.path());
        ctx.env
            .insert("ROCM_PATH".into(), "/login/node/rocm".into());
        let options = DetectOptions {
            context: ctx.clone(),
            use_cache: false,
        };
        let detection = detect(&options);
        let nvidia = detection.report("nvidia").unwrap();
        assert_eq!(nvidia.source, "snapshot of gpu-node-7: NVML 580.65.06");
        let features = nvidia.features.as_ref().unwrap();
        assert_eq!(features[0].values[0].as_str(), "90_real");
        // The node's ROCM_PATH replaces this machine's.
        let node_ctx = snapshot_context(&ctx, &snapshot_manifest(&ctx).unwrap());
        assert_eq!(node_ctx.var("ROCM_PATH"), Some("/opt/rocm-6.4.0"));

        ctx.env.insert(nvidia::FORCE_CUDA_ENV.into(), "12.8".into());
        ctx.env.insert(nvidia::FORCE_SM_ENV.into(), "8.6".into());
        let detection = detect(&DetectOptions {
            context: ctx,
            use_cache: false,
        });
        let nvidia = detection.report("nvidia").unwrap();
        let sm = nvidia
            .features
            .as_ref()
            .unwrap()
            .iter()
            .find(|f| f.name.as_str() == "sm_arch")
            .unwrap();
        assert_eq!(sm.values[0].as_str(), "86_real");
    }

    #[test]
    fn a_damaged_manifest_leaves_the_files() {
        let dir = tempfile::tempdir().unwrap();
        snapshot_with_recorded_nvidia(dir.path());
        std::fs::write(dir.path().join(snapshot::MANIFEST_FILE), "{not json").unwrap();
        let detection = detect(&DetectOptions {
            context: ctx_at(dir.path()),
            use_cache: false,
        });
        assert!(detection.report("nvidia").unwrap().features.is_none());
    }
}
