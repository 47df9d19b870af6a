//! Snapshots: the files the providers read, copied from a machine so that another machine can
//! detect for it (`vari snapshot` on a GPU node, `vari detect --sysroot DIR` on a login node).
//!
//! A snapshot is a directory tree laid out like `/` ([`Sysroot::new`](crate::Sysroot::new) reads
//! it back) plus `vari-snapshot.json`, a manifest of what was copied, what was missing, the host
//! name and date, the environment variables that change where providers look, and what the
//! providers reported on the node itself. That last part matters: a compute capability or an
//! Intel device IP only comes from driver libraries, which cannot be loaded from a file tree, so
//! the manifest keeps the answers the node's libraries gave ([`SnapshotManifest::recorded`]).
//!
//! The tree is built in a temporary directory beside the destination and renamed into place, so
//! a reader never sees half a snapshot.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use vari_core::{FeatureSupport, Namespace};

use crate::context::DetectContext;
use crate::report::ProviderReport;
use crate::sysroot::Sysroot;

/// The manifest's file name, at the root of the snapshot.
pub const MANIFEST_FILE: &str = "vari-snapshot.json";

/// The value of the manifest's `schema` key.
pub const SNAPSHOT_SCHEMA: &str = "vari-snapshot/1";

/// Files copied when present (`*` matches one path component).
///
/// This list is the single place that says what the providers read from `/proc`, `/sys` and
/// `/opt`: keep it in step with `cpu/`, `gpu/` and `abi.rs`.
pub const SNAPSHOT_PATHS: &[&str] = &[
    // x86_64 / aarch64: archspec classification.
    "/proc/cpuinfo",
    // Identifies the boot, so a cached snapshot can be told stale.
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/hostname",
    "/etc/os-release",
    // nvidia: kernel driver version when no library answers.
    "/proc/driver/nvidia/version",
    "/sys/module/nvidia/version",
    // amd: GPU targets from the KFD topology, ROCm version.
    "/sys/class/kfd/kfd/topology/nodes/*/properties",
    "/opt/rocm/.info/version",
    // intel: DRM devices by PCI vendor/device id.
    "/sys/class/drm/*/device/vendor",
    "/sys/class/drm/*/device/device",
];

/// Paths whose existence alone is evidence (device nodes, driver directories); recorded as
/// empty marker files (or directories, for directories) at the same place.
pub const SNAPSHOT_MARKERS: &[&str] = &[
    "/dev/nvidiactl",
    "/dev/nvidia*",
    "/dev/dxg",
    "/dev/kfd",
    "/dev/dri",
    "/sys/module/nvidia",
    "/proc/driver/nvidia",
];

/// Environment variables that change where providers look or what they report; recorded in the
/// manifest so the reading side can apply them.
pub const SNAPSHOT_ENV: &[&str] = &[
    "ROCM_PATH",
    "HSA_OVERRIDE_GFX_VERSION",
    "CUDA_VISIBLE_DEVICES",
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH",
    "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION",
    "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP",
];

/// Why a snapshot could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The destination exists and replacing it was not asked for.
    #[error("{0} already exists (choose a new directory or replace it explicitly)")]
    Exists(PathBuf),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The manifest is not valid.
    #[error("{path}: invalid snapshot manifest: {message}")]
    Manifest {
        /// The manifest path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> SnapshotError + '_ {
    move |source| SnapshotError::Io {
        path: path.to_owned(),
        source,
    }
}

/// A provider's answer on the snapshotted node, as kept in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedReport {
    /// The namespace.
    pub namespace: Namespace,
    /// Supported features, most preferred first; `None` when absent.
    pub features: Option<Vec<FeatureSupport>>,
    /// Where the facts came from on the node.
    pub source: String,
    /// Why the namespace was absent or degraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RecordedReport {
    fn from_report(r: &ProviderReport) -> Self {
        Self {
            namespace: r.namespace.clone(),
            features: r.features.clone(),
            source: r.source.clone(),
            note: r.note.clone(),
        }
    }

    /// The report, with its source marked as coming from the snapshot.
    pub fn to_report(&self, host: &str) -> ProviderReport {
        ProviderReport {
            namespace: self.namespace.clone(),
            features: self.features.clone(),
            source: format!("snapshot of {host}: {}", self.source),
            note: self.note.clone(),
            elapsed: std::time::Duration::ZERO,
        }
    }
}

/// The `vari-snapshot.json` manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotManifest {
    /// Always [`SNAPSHOT_SCHEMA`].
    pub schema: String,
    /// The node's host name.
    pub host: String,
    /// When the snapshot was taken (UTC, RFC 3339).
    pub created: String,
    /// The vari version that wrote it.
    pub vari_version: String,
    /// The operating system and CPU architecture vari ran on (`linux`, `x86_64`).
    pub os: String,
    /// See `os`.
    pub arch: String,
    /// Files copied, as absolute host paths.
    pub copied: Vec<String>,
    /// Listed paths (or patterns) that did not exist on the node.
    pub missing: Vec<String>,
    /// Paths recorded as existence markers.
    pub markers: Vec<String>,
    /// Values of [`SNAPSHOT_ENV`] variables set on the node.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// What the library-based providers reported on the node (nvidia, intel), which a file tree
    /// cannot reproduce.
    #[serde(default)]
    pub recorded: Vec<RecordedReport>,
}

impl SnapshotManifest {
    /// The report recorded on the node for `namespace`, if any.
    pub fn recorded(&self, namespace: &str) -> Option<ProviderReport> {
        self.recorded
            .iter()
            .find(|r| r.namespace.as_str() == namespace)
            .map(|r| r.to_report(&self.host))
    }
}

/// What [`write_snapshot`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// The snapshot directory.
    pub dest: PathBuf,
    /// The manifest written into it.
    pub manifest: SnapshotManifest,
}

/// How to write a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Replace an existing snapshot at the destination (only one with a manifest).
    pub replace: bool,
    /// Run the library-based providers (nvidia, intel) and record their answers.
    pub record_providers: bool,
}

/// Snapshots this machine into `dest` (which must not exist), recording what the nvidia and
/// intel providers report here.
pub fn write_snapshot(dest: &Path) -> Result<SnapshotSummary, SnapshotError> {
    let ctx = DetectContext::from_process_env(Sysroot::host());
    let options = SnapshotOptions {
        replace: false,
        record_providers: true,
    };
    write_snapshot_with(dest, &ctx, &options)
}

/// Snapshots the machine (or tree) of `ctx` into `dest`.
pub fn write_snapshot_with(
    dest: &Path,
    ctx: &DetectContext,
    options: &SnapshotOptions,
) -> Result<SnapshotSummary, SnapshotError> {
    let existing = dest.exists();
    if existing && !(options.replace && dest.join(MANIFEST_FILE).is_file()) {
        return Err(SnapshotError::Exists(dest.to_owned()));
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "snapshot".to_owned());
    let staging = unique_sibling(&parent, &name, "partial")?;
    let result = fill(&staging, ctx, options);
    let manifest = match result {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if existing {
        // Move the old snapshot aside first so the new one appears in a single rename.
        let old = unique_sibling(&parent, &name, "old")?;
        std::fs::remove_dir(&old).map_err(io_err(&old))?;
        std::fs::rename(dest, &old).map_err(io_err(dest))?;
        if let Err(e) = std::fs::rename(&staging, dest) {
            let _ = std::fs::rename(&old, dest);
            let _ = std::fs::remove_dir_all(&staging);
            return Err(io_err(dest)(e));
        }
        let _ = std::fs::remove_dir_all(&old);
    } else if let Err(e) = std::fs::rename(&staging, dest) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(io_err(dest)(e));
    }
    Ok(SnapshotSummary {
        dest: dest.to_owned(),
        manifest,
    })
}

/// Creates a fresh empty directory `.NAME.TAG-PID-N` in `parent`.
fn unique_sibling(parent: &Path, name: &str, tag: &str) -> Result<PathBuf, SnapshotError> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let candidate = parent.join(format!(".{name}.{tag}-{pid}-{n}"));
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(&candidate)(e)),
        }
    }
    Err(SnapshotError::Exists(
        parent.join(format!(".{name}.{tag}-{pid}-*")),
    ))
}

/// Expands a pattern whose components may be `*` (or end in `*`, as in `nvidia*`) against the
/// tree of `root`; returns absolute host paths that exist, sorted.
fn expand(root: &Sysroot, pattern: &str) -> Vec<String> {
    let mut current = vec![String::new()];
    for component in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for base in &current {
            if let Some(prefix) = component.strip_suffix('*') {
                let Ok(entries) = std::fs::read_dir(root.path(format!("{base}/"))) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                    .filter(|n| n.starts_with(prefix))
                    .collect();
                names.sort();
                next.extend(names.into_iter().map(|n| format!("{base}/{n}")));
            } else {
                next.push(format!("{base}/{component}"));
            }
        }
        current = next;
    }
    current
        .into_iter()
        .filter(|p| !p.is_empty() && root.path(p).exists())
        .collect()
}

fn fill(
    staging: &Path,
    ctx: &DetectContext,
    options: &SnapshotOptions,
) -> Result<SnapshotManifest, SnapshotError> {
    let staged = Sysroot::new(staging);
    let mut copied = Vec::new();
    let mut missing = Vec::new();
    let mut markers = Vec::new();
    let mut patterns: Vec<String> = SNAPSHOT_PATHS.iter().map(|s| s.to_string()).collect();
    let rocm_path = ctx
        .var("ROCM_PATH")
        .map(|p| p.trim_end_matches('/').to_owned());
    if let Some(rocm) = &rocm_path {
        patterns.insert(0, format!("{rocm}/.info/version"));
    }
    for pattern in &patterns {
        let found = expand(&ctx.sysroot, pattern);
        if found.is_empty() {
            missing.push(pattern.clone());
        }
        for path in found {
            // procfs and sysfs report sizes that are not their content's, so read then write
            // instead of `fs::copy`.
            let source = ctx.sysroot.path(&path);
            let Ok(bytes) = std::fs::read(&source) else {
                missing.push(path);
                continue;
            };
            let target = staged.path(&path);
            if let Some(dir) = target.parent() {
                std::fs::create_dir_all(dir).map_err(io_err(dir))?;
            }
            std::fs::write(&target, bytes).map_err(io_err(&target))?;
            copied.push(path);
        }
    }
    for pattern in SNAPSHOT_MARKERS {
        for path in expand(&ctx.sysroot, pattern) {
            let target = staged.path(&path);
            if target.exists() {
                markers.push(path);
                continue; // already there through a copied file below it
            }
            if ctx.sysroot.path(&path).is_dir() {
                std::fs::create_dir_all(&target).map_err(io_err(&target))?;
            } else {
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
                }
                std::fs::write(&target, b"").map_err(io_err(&target))?;
            }
            markers.push(path);
        }
    }
    let env: BTreeMap<String, String> = SNAPSHOT_ENV
        .iter()
        .filter_map(|k| ctx.var(k).map(|v| (k.to_string(), v.to_owned())))
        .collect();
    let recorded = if options.record_providers {
        [
            crate::gpu::nvidia::detect(ctx),
            crate::gpu::intel::detect(ctx),
        ]
        .iter()
        .map(RecordedReport::from_report)
        .collect()
    } else {
        Vec::new()
    };
    let host = ctx
        .sysroot
        .read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| ctx.var("HOSTNAME").map(str::to_owned))
        .or_else(|| ctx.var("COMPUTERNAME").map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    let manifest = SnapshotManifest {
        schema: SNAPSHOT_SCHEMA.to_owned(),
        host,
        created: rfc3339_utc(SystemTime::now()),
        vari_version: env!("CARGO_PKG_VERSION").to_owned(),
        os: std::env::consts::OS.to_owned(),
        arch: std::env::consts::ARCH.to_owned(),
        copied,
        missing,
        markers,
        env,
        recorded,
    };
    let path = staging.join(MANIFEST_FILE);
    let mut text =
        serde_json::to_string_pretty(&manifest).map_err(|e| SnapshotError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
    text.push('\n');
    std::fs::write(&path, text).map_err(io_err(&path))?;
    Ok(manifest)
}

/// Reads the manifest of the snapshot at `root`; `Ok(None)` when the tree has none (a plain
/// sysroot or a hand-made fixture).
pub fn read_manifest(root: &Path) -> Result<Option<SnapshotManifest>, SnapshotError> {
    let path = root.join(MANIFEST_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(&path)(e)),
    };
    let manifest: SnapshotManifest =
        serde_json::from_str(&text).map_err(|e| SnapshotError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
    if manifest.schema != SNAPSHOT_SCHEMA {
        return Err(SnapshotError::Manifest {
            path,
            message: format!(
                "unsupported schema {:?} (expected {SNAPSHOT_SCHEMA:?})",
                manifest.schema
            ),
        });
    }
    Ok(Some(manifest))
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a system time (days-to-civil conversion, proleptic Gregorian).
fn rfc3339_utc(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A fake node: cpuinfo, an AMD GPU, ROCm, NVIDIA kernel driver files and device nodes.
    fn node() -> (tempfile::TempDir, DetectContext) {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        let write = |p: &str, text: &str| {
            let path = r.join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "/proc/cpuinfo",
            "processor : 0\nvendor_id : GenuineIntel\nflags : sse sse2\n",
        );
        write("/proc/sys/kernel/hostname", "gpu042\n");
        write(
            "/sys/class/kfd/kfd/topology/nodes/0/properties",
            "gfx_target_version 0\n",
        );
        write(
            "/sys/class/kfd/kfd/topology/nodes/1/properties",
            "gfx_target_version 90010\n",
        );
        write("/custom/rocm/.info/version", "6.4.1-120\n");
        write(
            "/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15  Release Build\n",
        );
        write("/dev/nvidiactl", "");
        write("/dev/nvidia0", "");
        std::fs::create_dir_all(r.join("dev/dri")).unwrap();
        write("/unrelated/secret", "not copied");
        let mut ctx = DetectContext::from_process_env(Sysroot::new(r));
        ctx.env.clear();
        ctx.env.insert("ROCM_PATH".into(), "/custom/rocm/".into());
        ctx.timeout = Duration::from_secs(5);
        (tmp, ctx)
    }

    #[test]
    fn copies_the_provider_files_and_reads_back() {
        let (_node, ctx) = node();
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("snap");
        let summary = write_snapshot_with(&dest, &ctx, &SnapshotOptions::default()).unwrap();
        let m = &summary.manifest;
        assert_eq!(m.host, "gpu042");
        assert!(m.copied.contains(&"/proc/cpuinfo".to_owned()));
        assert!(m
            .copied
            .contains(&"/sys/class/kfd/kfd/topology/nodes/1/properties".to_owned()));
        assert!(m.copied.contains(&"/custom/rocm/.info/version".to_owned()));
        assert!(m.missing.contains(&"/opt/rocm/.info/version".to_owned()));
        assert!(m.missing.contains(&"/sys/module/nvidia/version".to_owned()));
        assert!(m.markers.contains(&"/dev/nvidia0".to_owned()));
        assert!(m.markers.contains(&"/dev/nvidiactl".to_owned()));
        assert!(m.markers.contains(&"/dev/dri".to_owned()));
        assert_eq!(
            m.env.get("ROCM_PATH").map(String::as_str),
            Some("/custom/rocm/")
        );
        assert!(m.recorded.is_empty());
        let root = Sysroot::new(&dest);
        assert!(root.path("/dev/dri").is_dir());
        assert!(root.path("/dev/nvidiactl").is_file());
        assert!(!root.path("/unrelated/secret").exists());
        assert_eq!(
            root.read_to_string("/sys/class/kfd/kfd/topology/nodes/1/properties")
                .unwrap(),
            "gfx_target_version 90010\n"
        );
        // Providers read the snapshot like the node.
        let mut snap_ctx = ctx.clone();
        snap_ctx.sysroot = root;
        let x86 = crate::cpu::x86_64::detect(&snap_ctx);
        assert!(x86.source.contains("snap"));
        assert_eq!(read_manifest(&dest).unwrap().unwrap(), summary.manifest);
        // No staging directories are left behind.
        let leftovers: Vec<_> = std::fs::read_dir(out.path()).unwrap().flatten().collect();
        assert_eq!(leftovers.len(), 1);
    }

    #[test]
    fn refuses_to_overwrite_unless_replacing_a_snapshot() {
        let (_node, ctx) = node();
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("snap");
        let opts = SnapshotOptions::default();
        write_snapshot_with(&dest, &ctx, &opts).unwrap();
        assert!(matches!(
            write_snapshot_with(&dest, &ctx, &opts),
            Err(SnapshotError::Exists(_))
        ));
        let replace = SnapshotOptions {
            replace: true,
            ..opts.clone()
        };
        write_snapshot_with(&dest, &ctx, &replace).unwrap();
        assert!(dest.join(MANIFEST_FILE).is_file());
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 1);
        // A directory that is not a snapshot is never replaced.
        let other = out.path().join("home");
        std::fs::create_dir(&other).unwrap();
        assert!(matches!(
            write_snapshot_with(&other, &ctx, &replace),
            Err(SnapshotError::Exists(_))
        ));
    }

    #[test]
    fn records_library_providers_when_asked() {
        let (_node, ctx) = node();
        let out = tempfile::tempdir().unwrap();
        let dest = out.path().join("snap");
        let opts = SnapshotOptions {
            replace: false,
            record_providers: true,
        };
        let summary = write_snapshot_with(&dest, &ctx, &opts).unwrap();
        let names: Vec<&str> = summary
            .manifest
            .recorded
            .iter()
            .map(|r| r.namespace.as_str())
            .collect();
        assert_eq!(names, ["nvidia", "intel"]);
        let m = read_manifest(&dest).unwrap().unwrap();
        let nv = m.recorded("nvidia").unwrap();
        assert!(nv.source.starts_with("snapshot of gpu042"));
        assert!(m.recorded("amd").is_none());
    }

    #[test]
    fn manifests_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_manifest(dir.path()).unwrap().is_none());
        std::fs::write(dir.path().join(MANIFEST_FILE), "{\"schema\": 1}").unwrap();
        assert!(matches!(
            read_manifest(dir.path()),
            Err(SnapshotError::Manifest { .. })
        ));
    }

    #[test]
    fn dates() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_709_210_096); // 2024-02-29T12:34:56Z
        assert_eq!(rfc3339_utc(t), "2024-02-29T12:34:56Z");
    }

    #[test]
    fn patterns_expand_against_the_tree() {
        let (node, _ctx) = node();
        let root = Sysroot::new(node.path());
        assert_eq!(
            expand(&root, "/dev/nvidia*"),
            ["/dev/nvidia0", "/dev/nvidiactl"]
        );
        assert!(expand(&root, "/nope/*/x").is_empty());
    }
}
