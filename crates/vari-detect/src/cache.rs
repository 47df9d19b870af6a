//! The on-disk detection cache: hardware does not change between two `vari` runs, so the
//! expensive part of detection (driver libraries in child processes, archspec classification) is
//! remembered and re-validated with a cheap fingerprint.
//!
//! * Location: [`CACHE_FILE`] in vari's cache directory ([`vari_fs::cache_dir_with`], read through
//!   the context's variables).
//! * Valid while the [`Fingerprint`] is unchanged (the boot, the vari version and executable, each
//!   provider's [evidence](crate::provider::Provider::evidence) such as driver versions and device
//!   nodes, and the [variables](crate::registry::fingerprint_variables) that change results) and
//!   for at most [`TTL`].
//! * Only the live machine is cached; a `--sysroot` snapshot is plain files and is read afresh.
//! * Written with [`vari_fs::write_atomic`]; an unreadable or corrupt file is ignored and
//!   replaced, never an error.
//! * The fast path reads a few small files and three directories: no library is loaded, no child
//!   is started, no archspec data is parsed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use vari_core::{FeatureSupport, Namespace, Platform};

use crate::provider::{Evidence, Scope};
use crate::registry;
use crate::{DetectContext, ProviderReport};

pub use vari_fs::CACHE_DIR_ENV;
/// The cache file name (the number changes with the file format): `detect-vN.json`, the shape
/// [`crate::DetectCacheLayout`] counts in every version.
pub const CACHE_FILE: &str = "detect-v1.json";
/// How the cache file's name starts, in every format version.
pub(crate) const CACHE_FILE_PREFIX: &str = "detect-v";
/// How the cache file's name ends, in every format version.
pub(crate) const CACHE_FILE_SUFFIX: &str = ".json";
/// The longest a cached detection is trusted.
pub const TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The value of the file's `schema` key.
const SCHEMA: &str = "vari-detect-cache/1";

/// What the cache is keyed on: cheap facts that change when the hardware, the drivers, the
/// configuration or vari itself change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint(BTreeMap<String, String>);

impl Fingerprint {
    /// The fingerprint of the context's machine.
    pub fn of(ctx: &DetectContext) -> Self {
        let mut map = Evidence::new();
        map.insert(
            "boot_id".into(),
            ctx.sysroot
                .read_to_string("/proc/sys/kernel/random/boot_id")
                .map(|s| s.trim().to_owned())
                .unwrap_or_default(),
        );
        map.insert("vari_version".into(), env!("CARGO_PKG_VERSION").into());
        map.insert("executable".into(), executable_identity());
        for provider in registry::providers() {
            if provider.scope() != Scope::PythonEnvironment {
                provider.evidence(ctx, &mut map);
            }
        }
        for var in registry::fingerprint_variables() {
            if let Some(value) = ctx.env.get(var.name) {
                map.insert(format!("env:{}", var.name), value.clone());
            }
        }
        Self(map)
    }
}

/// The running executable's path, size and modification time: a rebuilt vari (same version
/// number, different code) must not trust results of the old one.
fn executable_identity() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return String::new();
    };
    let Ok(meta) = std::fs::metadata(&exe) else {
        return exe.display().to_string();
    };
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}:{}:{modified}", exe.display(), meta.len())
}

/// The cache file for this context, when a cache directory can be found.
pub fn cache_path(ctx: &DetectContext) -> Option<PathBuf> {
    vari_fs::cache_dir_with(|name| ctx.var(name).map(str::to_owned)).map(|d| d.join(CACHE_FILE))
}

/// A provider report as stored.
#[derive(Debug, Serialize, Deserialize)]
struct StoredReport {
    namespace: Namespace,
    features: Option<Vec<FeatureSupport>>,
    source: String,
    note: Option<String>,
    elapsed_us: u64,
}

/// The file's content.
#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    schema: String,
    created: u64,
    fingerprint: Fingerprint,
    platform: Platform,
    reports: Vec<StoredReport>,
}

/// Cached results: the platform and the reports of the cached providers.
#[derive(Debug, Clone, PartialEq)]
pub struct Cached {
    /// The platform.
    pub platform: Platform,
    /// Reports, in the order stored.
    pub reports: Vec<ProviderReport>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The cached results, if the file exists, parses, matches `fingerprint` and is younger than
/// [`TTL`]. Anything else is a miss, never an error.
pub fn load(path: &Path, fingerprint: &Fingerprint) -> Option<Cached> {
    // Never through a link planted in the cache, never a FIFO, never more than a real file holds.
    let text = vari_fs::read_cache_file(path, vari_fs::InputKind::Config.default_limit())?;
    let file: CacheFile = serde_json::from_slice(&text).ok()?;
    let now = now_secs();
    // A timestamp in the future (clock changed) is as untrustworthy as an old one.
    let fresh = file.created <= now && now - file.created < TTL.as_secs();
    if file.schema != SCHEMA || !fresh || &file.fingerprint != fingerprint {
        return None;
    }
    let reports = file
        .reports
        .into_iter()
        .map(|r| ProviderReport {
            namespace: r.namespace,
            features: r.features,
            source: r.source,
            note: r.note,
            elapsed: Duration::from_micros(r.elapsed_us),
        })
        .collect();
    Some(Cached {
        platform: file.platform,
        reports,
    })
}

/// Writes results atomically; failures (read-only home, full disk) are ignored because the cache
/// is only an optimisation.
pub fn store(
    path: &Path,
    fingerprint: &Fingerprint,
    platform: &Platform,
    reports: &[ProviderReport],
) {
    let file = CacheFile {
        schema: SCHEMA.into(),
        created: now_secs(),
        fingerprint: fingerprint.clone(),
        platform: platform.clone(),
        reports: reports
            .iter()
            .map(|r| StoredReport {
                namespace: r.namespace.clone(),
                features: r.features.clone(),
                source: r.source.clone(),
                note: r.note.clone(),
                elapsed_us: u64::try_from(r.elapsed.as_micros()).unwrap_or(u64::MAX),
            })
            .collect(),
    };
    let Ok(json) = serde_json::to_vec(&file) else {
        return;
    };
    let Some(dir) = path.parent() else { return };
    // Concurrent runs each write their own temporary file; the last rename wins. The rename
    // replaces a link planted as `detect-v1.json`, never writes through it.
    let _ = vari_fs::write_cache_file(dir, path, &json);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;

    fn ctx_at(root: &Path) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::new(root));
        ctx.env.clear();
        ctx
    }

    fn report(ns: &str) -> ProviderReport {
        ProviderReport {
            namespace: Namespace::new(ns).unwrap(),
            features: Some(crate::gpu::nvidia::supported_from_facts(
                Some((12, 8)),
                Some((8, 6)),
            )),
            source: "test".into(),
            note: Some("n".into()),
            elapsed: Duration::from_micros(1234),
        }
    }

    #[test]
    fn round_trip_and_fingerprint_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c").join(CACHE_FILE);
        let ctx = ctx_at(dir.path());
        let fp = Fingerprint::of(&ctx);
        let platform = Platform {
            system: Some("Linux".into()),
            machine: Some("x86_64".into()),
            libc: Some("glibc 2.39".into()),
        };
        assert!(load(&path, &fp).is_none());
        store(&path, &fp, &platform, &[report("nvidia")]);
        let cached = load(&path, &fp).unwrap();
        assert_eq!(cached.platform, platform);
        assert_eq!(cached.reports, vec![report("nvidia")]);

        let mut other = ctx.clone();
        other
            .env
            .insert("NV_VARIANT_PROVIDER_FORCE_SM_ARCH".into(), "9.0".into());
        assert!(load(&path, &Fingerprint::of(&other)).is_none());
        // Every variable of a cached provider counts, named in the registry.
        for name in ["ROCM_PATH", "VARI_NVIDIA_DEVICE", "VARI_PROBE_TIMEOUT"] {
            let mut other = ctx.clone();
            other.env.insert(name.into(), "1".into());
            assert!(load(&path, &Fingerprint::of(&other)).is_none(), "{name}");
        }
        let mut irrelevant = ctx.clone();
        irrelevant.env.insert("EDITOR".into(), "vi".into());
        irrelevant
            .env
            .insert(CACHE_DIR_ENV.into(), "/elsewhere".into());
        // abi_dependency is never cached, so its override does not invalidate the hardware.
        irrelevant
            .env
            .insert("VARIANT_ABI_DEPENDENCY".into(), "torch==2.8".into());
        assert!(load(&path, &Fingerprint::of(&irrelevant)).is_some());
    }

    #[test]
    fn hardware_changes_invalidate() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_at(dir.path());
        let before = Fingerprint::of(&ctx);
        std::fs::create_dir_all(dir.path().join("dev/dri")).unwrap();
        std::fs::write(dir.path().join("dev/dri/renderD128"), "").unwrap();
        let after_dri = Fingerprint::of(&ctx);
        assert_ne!(before, after_dri);
        std::fs::write(dir.path().join("dev/nvidia0"), "").unwrap();
        std::fs::write(dir.path().join("dev/null"), "").unwrap();
        let after_nv = Fingerprint::of(&ctx);
        assert_ne!(after_dri, after_nv);
        assert_eq!(after_nv.0["dev_nvidia"], "nvidia0");
        std::fs::create_dir_all(dir.path().join("proc/sys/kernel/random")).unwrap();
        std::fs::write(dir.path().join("proc/sys/kernel/random/boot_id"), "abc\n").unwrap();
        assert_eq!(Fingerprint::of(&ctx).0["boot_id"], "abc");
        // A ROCm upgrade changes rocm_version without a reboot.
        let before_rocm = Fingerprint::of(&ctx);
        std::fs::create_dir_all(dir.path().join("opt/rocm/.info")).unwrap();
        std::fs::write(dir.path().join("opt/rocm/.info/version"), "6.4.1-120\n").unwrap();
        assert_ne!(before_rocm, Fingerprint::of(&ctx));
    }

    #[test]
    fn corrupt_old_or_future_files_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CACHE_FILE);
        let fp = Fingerprint::of(&ctx_at(dir.path()));
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path, &fp).is_none());
        store(&path, &fp, &Platform::default(), &[]);
        assert!(load(&path, &fp).is_some(), "a corrupt file is replaced");
        for created in [0, now_secs() + 3600, now_secs() - TTL.as_secs() - 1] {
            let mut value: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            value["created"] = created.into();
            std::fs::write(&path, value.to_string()).unwrap();
            assert!(load(&path, &fp).is_none(), "created {created}");
        }
    }

    #[test]
    fn cache_location() {
        let mut ctx = ctx_at(Path::new("/"));
        assert_eq!(cache_path(&ctx), None);
        ctx.env.insert("HOME".into(), "/home/u".into());
        if !cfg!(windows) {
            assert_eq!(
                cache_path(&ctx).unwrap(),
                Path::new("/home/u/.cache/vari/detect-v1.json")
            );
            ctx.env.insert("XDG_CACHE_HOME".into(), "/xdg".into());
            assert_eq!(
                cache_path(&ctx).unwrap(),
                Path::new("/xdg/vari/detect-v1.json")
            );
            ctx.env.insert("XDG_CACHE_HOME".into(), "relative".into());
            assert_eq!(
                cache_path(&ctx).unwrap(),
                Path::new("/home/u/.cache/vari/detect-v1.json")
            );
        }
        ctx.env.insert(CACHE_DIR_ENV.into(), "/c".into());
        assert_eq!(cache_path(&ctx).unwrap(), Path::new("/c/detect-v1.json"));
    }
}
