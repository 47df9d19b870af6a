//! Snapshots: the files the providers read, copied from a machine so that another machine can
//! detect for it (`vari snapshot` on a GPU node, `vari detect --sysroot DIR` on a login node).
//!
//! A snapshot is a directory tree laid out like `/` ([`Sysroot::open`](crate::Sysroot::open)
//! reads it back) plus `vari-snapshot.json` ([`crate::manifest`]): what was copied and what was
//! missing, the host name, date and platform, the node's values of the variables that change
//! where providers look, and what the providers reported on the node itself. That last part
//! matters: a compute capability or an Intel device IP only comes from driver libraries, which
//! cannot be loaded from a file tree, so the manifest keeps the answers the node's libraries gave.
//!
//! What is copied comes from the [registry] (each provider's
//! [`snapshot_files`](crate::provider::Provider::snapshot_files)) plus [`GENERAL_FILES`]. The tree
//! is built in a temporary directory beside the destination and renamed into place, so a reader
//! never sees half a snapshot; errors name the destination, never the temporary directory.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::context::DetectContext;
pub use crate::manifest::{
    ManifestError, RecordedReport, SnapshotManifest, MANIFEST_FILE, SNAPSHOT_SCHEMA,
};
use crate::provider::{Scope, SnapshotFile};
use crate::registry;
use crate::sysroot::Sysroot;
pub use crate::sysroot_open::read_manifest;

/// Files copied for detection as a whole rather than for one provider: the boot (so a cached
/// snapshot can be told stale), the host name and the distribution.
pub const GENERAL_FILES: &[&str] = &[
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/hostname",
    "/etc/os-release",
];

/// Everything a snapshot of `ctx`'s machine takes, in order: [`GENERAL_FILES`], then each
/// provider's files.
pub fn snapshot_files(ctx: &DetectContext) -> Vec<SnapshotFile> {
    let mut files: Vec<SnapshotFile> = GENERAL_FILES
        .iter()
        .map(|f| SnapshotFile::Copy((*f).to_owned()))
        .collect();
    for provider in registry::providers() {
        for file in provider.snapshot_files(ctx) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
    }
    files
}

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The destination holds an earlier snapshot and replacing it was not asked for.
    #[error("{} already holds a snapshot (replace it, or choose a new directory)", .0.display())]
    ExistingSnapshot(PathBuf),
    /// The destination exists and is not a snapshot: it is never replaced.
    #[error("{} is {what}, not a snapshot; it will not be replaced (choose a new directory)", path.display())]
    NotASnapshot {
        /// The destination.
        path: PathBuf,
        /// What it is (`a file`, `a directory without vari-snapshot.json`).
        what: &'static str,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved, under the destination for files being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> SnapshotError + '_ {
    move |source| SnapshotError::Io {
        path: path.to_owned(),
        source,
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

/// Snapshots this machine into `dest` (which must not exist, or be an empty directory),
/// recording what the library-based providers report here.
pub fn write_snapshot(dest: &Path) -> Result<SnapshotSummary, SnapshotError> {
    let ctx = DetectContext::from_process_env(Sysroot::host());
    let options = SnapshotOptions {
        replace: false,
        record_providers: true,
    };
    write_snapshot_with(dest, &ctx, &options)
}

/// What the destination is now.
enum Existing {
    Nothing,
    EmptyDirectory,
    Snapshot,
}

fn existing(dest: &Path, replace: bool) -> Result<Existing, SnapshotError> {
    let meta = match std::fs::symlink_metadata(dest) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(e) => return Err(io_err(dest)(e)),
    };
    if !meta.is_dir() {
        let what = if meta.file_type().is_symlink() {
            "a symbolic link"
        } else {
            "a file"
        };
        return Err(SnapshotError::NotASnapshot {
            path: dest.to_owned(),
            what,
        });
    }
    if dest.join(MANIFEST_FILE).is_file() {
        return if replace {
            Ok(Existing::Snapshot)
        } else {
            Err(SnapshotError::ExistingSnapshot(dest.to_owned()))
        };
    }
    let mut entries = std::fs::read_dir(dest).map_err(io_err(dest))?;
    if entries.next().is_none() {
        // Nothing to lose.
        return Ok(Existing::EmptyDirectory);
    }
    Err(SnapshotError::NotASnapshot {
        path: dest.to_owned(),
        what: "a directory without vari-snapshot.json",
    })
}

/// Snapshots the machine (or tree) of `ctx` into `dest`.
pub fn write_snapshot_with(
    dest: &Path,
    ctx: &DetectContext,
    options: &SnapshotOptions,
) -> Result<SnapshotSummary, SnapshotError> {
    let existing = existing(dest, options.replace)?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "snapshot".to_owned());
    let staging = unique_sibling(&parent, &name, "partial").map_err(io_err(dest))?;
    let manifest = match fill(&staging, dest, ctx, options) {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let placed = match existing {
        // A rename replaces an empty directory.
        Existing::Nothing | Existing::EmptyDirectory => std::fs::rename(&staging, dest),
        Existing::Snapshot => replace_snapshot(&staging, dest, &parent, &name),
    };
    if let Err(e) = placed {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(io_err(dest)(e));
    }
    Ok(SnapshotSummary {
        dest: dest.to_owned(),
        manifest,
    })
}

/// Moves the old snapshot aside first so the new one appears in a single rename; puts it back if
/// that rename fails.
fn replace_snapshot(staging: &Path, dest: &Path, parent: &Path, name: &str) -> io::Result<()> {
    let old = unique_sibling(parent, name, "old")?;
    std::fs::remove_dir(&old)?;
    std::fs::rename(dest, &old)?;
    if let Err(e) = std::fs::rename(staging, dest) {
        let _ = std::fs::rename(&old, dest);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Creates a fresh empty directory `.NAME.TAG-PID-N` in `parent`.
fn unique_sibling(parent: &Path, name: &str, tag: &str) -> io::Result<PathBuf> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let candidate = parent.join(format!(".{name}.{tag}-{pid}-{n}"));
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a temporary directory beside it",
    ))
}

/// Expands a pattern whose components may end in `*` (as in `nvidia*`) against the tree of
/// `root`; returns absolute host paths that exist, sorted.
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

/// Writes one staged file; an error names the file under the destination.
struct Stage<'a> {
    staged: Sysroot,
    dest: &'a Path,
}

impl Stage<'_> {
    /// The path a user sees for a host path: under the destination.
    fn shown(&self, host_path: &str) -> PathBuf {
        Sysroot::new(self.dest).path(host_path)
    }

    fn dir(&self, host_path: &str) -> Result<(), SnapshotError> {
        std::fs::create_dir_all(self.staged.path(host_path))
            .map_err(|e| io_err(&self.shown(host_path))(e))
    }

    fn file(&self, host_path: &str, bytes: &[u8]) -> Result<(), SnapshotError> {
        if let Some(parent) = Path::new(host_path).parent() {
            self.dir(&parent.to_string_lossy())?;
        }
        // The error's own path is the temporary directory's: name the destination instead.
        vari_fs::write_atomic(&self.staged.path(host_path), bytes).map_err(|e| SnapshotError::Io {
            path: self.shown(host_path),
            source: io::Error::other(e.kind.to_string()),
        })
    }
}

fn fill(
    staging: &Path,
    dest: &Path,
    ctx: &DetectContext,
    options: &SnapshotOptions,
) -> Result<SnapshotManifest, SnapshotError> {
    let stage = Stage {
        staged: Sysroot::new(staging),
        dest,
    };
    let mut copied = Vec::new();
    let mut missing = Vec::new();
    let mut markers = Vec::new();
    let files = snapshot_files(ctx);
    for file in files.iter().filter(|f| matches!(f, SnapshotFile::Copy(_))) {
        let pattern = file.pattern();
        let found = expand(&ctx.sysroot, pattern);
        if found.is_empty() {
            missing.push(pattern.to_owned());
        }
        for path in found {
            // procfs and sysfs report sizes that are not their content's, so read then write
            // instead of `fs::copy`.
            let Ok(bytes) = crate::system_file::read_system_bytes(
                &ctx.sysroot.path(&path),
                vari_fs::InputKind::System.limit(),
            ) else {
                missing.push(path);
                continue;
            };
            stage.file(&path, &bytes)?;
            copied.push(path);
        }
    }
    for file in files
        .iter()
        .filter(|f| matches!(f, SnapshotFile::Marker(_)))
    {
        for path in expand(&ctx.sysroot, file.pattern()) {
            if !stage.staged.path(&path).exists() {
                if ctx.sysroot.path(&path).is_dir() {
                    stage.dir(&path)?;
                } else {
                    stage.file(&path, b"")?;
                }
            }
            markers.push(path);
        }
    }
    let env: BTreeMap<String, String> = registry::snapshot_variables()
        .filter_map(|var| {
            ctx.var(var.name)
                .map(|v| (var.name.to_owned(), v.to_owned()))
        })
        .collect();
    let recorded = if options.record_providers {
        registry::providers()
            .iter()
            .filter(|p| p.records_answer() && p.scope() == Scope::Machine)
            .map(|p| RecordedReport::from_report(&p.detect(ctx).report))
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
        platform: Some(crate::platform::detect_platform(ctx)),
        copied,
        missing,
        markers,
        env,
        recorded,
    };
    // Serialising plain strings and lists cannot fail.
    let mut text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    text.push('\n');
    stage.file(&format!("/{MANIFEST_FILE}"), text.as_bytes())?;
    Ok(manifest)
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
            Err(SnapshotError::ExistingSnapshot(_))
        ));
        let replace = SnapshotOptions {
            replace: true,
            ..opts.clone()
        };
        write_snapshot_with(&dest, &ctx, &replace).unwrap();
        assert!(dest.join(MANIFEST_FILE).is_file());
        assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 1);
        // A directory that is not a snapshot, or a file, is never replaced, even when asked.
        let other = out.path().join("home");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "keep me").unwrap();
        let file = out.path().join("file");
        std::fs::write(&file, "keep me too").unwrap();
        for (path, what) in [(&other, "directory without"), (&file, "a file")] {
            for opts in [&opts, &replace] {
                let err = write_snapshot_with(path, &ctx, opts).unwrap_err();
                assert!(matches!(err, SnapshotError::NotASnapshot { .. }), "{err}");
                let text = err.to_string();
                assert!(
                    text.contains(what) && text.contains("will not be replaced"),
                    "{text}"
                );
                assert!(!text.contains("explicitly"), "{text}");
            }
        }
        assert_eq!(
            std::fs::read_to_string(other.join("notes.txt")).unwrap(),
            "keep me"
        );
        // An empty directory has nothing to lose.
        let empty = out.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        write_snapshot_with(&empty, &ctx, &opts).unwrap();
        assert!(empty.join(MANIFEST_FILE).is_file());
        // Only the outputs are left: no temporary directories.
        let mut names: Vec<String> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["empty", "file", "home", "snap"]);
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
            Err(ManifestError { key, .. }) if key == "schema"
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
