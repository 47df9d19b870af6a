//! Detection of every namespace for one target, and the platform it runs.
//!
//! The [registry] says which providers run and in which order. They run
//! concurrently and independently: one that fails leaves its namespace absent with a reason,
//! never fails the whole detection. Reports come in namespace order.
//!
//! With [`DetectOptions::use_cache`] on the live machine, results come from [`crate::cache`] when
//! still valid. Providers of the target Python environment (`abi_dependency`) are never cached:
//! the environment changes whenever a package is installed, so they are recomputed (file reads
//! only) every time.
//!
//! A snapshot ([`Sysroot::open`](crate::Sysroot::open)) is read with the node's values of the
//! variables that change where providers look, and with the answers the node's driver libraries
//! gave, unless an override variable set here decides that namespace.

use vari_core::{Platform, Profile};

use crate::cache::{self, Fingerprint};
use crate::manifest::SnapshotManifest;
use crate::platform::detect_platform;
use crate::provider::{Detected, Provider, Scope, VarRole};
use crate::registry;
use crate::{DetectContext, ProviderReport};

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
    /// One report per provider, in namespace order, present or not.
    pub reports: Vec<ProviderReport>,
    /// Whether the hardware reports came from the cache.
    pub from_cache: bool,
    /// What a user should know about the detection as a whole (a directory read as a plain file
    /// tree, or holding nothing detection reads).
    pub notes: Vec<String>,
}

impl Detection {
    /// The `vari-profile/1` document: the present namespaces in namespace order.
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
    let notes: Vec<String> = ctx.sysroot.note().map(str::to_owned).into_iter().collect();
    let cache_path = (options.use_cache && ctx.sysroot.is_host())
        .then(|| cache::cache_path(ctx))
        .flatten();
    // Taken before detection, so a change during detection invalidates what is stored.
    let fingerprint = cache_path.as_ref().map(|_| Fingerprint::of(ctx));

    if let (Some(path), Some(fp)) = (&cache_path, &fingerprint) {
        if let Some(cached) = cache::load(path, fp) {
            let mut reports = cached.reports;
            reports.extend(
                registry::providers()
                    .iter()
                    .filter(|p| !cacheable(**p))
                    .map(|p| p.detect(ctx).report),
            );
            return Detection {
                platform: cached.platform,
                reports: in_order(reports),
                from_cache: true,
                notes,
            };
        }
    }

    let snapshot_ctx = ctx.sysroot.manifest().map(|m| snapshot_context(ctx, m));
    let ctx = snapshot_ctx.as_ref().unwrap_or(ctx);
    let (platform, mut outcomes) = run_providers(ctx);
    if let Some(manifest) = ctx.sysroot.manifest() {
        use_recorded_reports(ctx, manifest, &mut outcomes);
    }
    if let (Some(path), Some(fp)) = (&cache_path, &fingerprint) {
        // A timeout or crash may be gone next time: do not remember it for a day.
        if !outcomes.iter().any(|(_, d)| d.transient) {
            let stored: Vec<ProviderReport> = outcomes
                .iter()
                .filter(|(p, _)| cacheable(*p))
                .map(|(_, d)| d.report.clone())
                .collect();
            cache::store(path, fp, &platform, &stored);
        }
    }
    Detection {
        platform,
        reports: in_order(outcomes.into_iter().map(|(_, d)| d.report).collect()),
        from_cache: false,
        notes,
    }
}

fn cacheable(provider: &dyn Provider) -> bool {
    provider.scope() != Scope::PythonEnvironment
}

/// The context for reading a snapshot: the node's values of the variables a snapshot records
/// replace this machine's; an override variable set here still wins over the node's.
fn snapshot_context(ctx: &DetectContext, manifest: &SnapshotManifest) -> DetectContext {
    let mut node = ctx.clone();
    for var in registry::snapshot_variables() {
        let is_override = var.role == VarRole::Override;
        if is_override && ctx.var(var.name).is_some() {
            continue;
        }
        match manifest.env.get(var.name) {
            Some(value) => {
                node.env.insert(var.name.to_owned(), value.clone());
            }
            None if !is_override => {
                node.env.remove(var.name);
            }
            None => {}
        }
    }
    node
}

/// Replaces the file-only answers of the providers whose answers come from driver libraries with
/// what the node's libraries reported, unless an override variable decides them here.
fn use_recorded_reports(
    ctx: &DetectContext,
    manifest: &SnapshotManifest,
    outcomes: &mut [(&'static dyn Provider, Detected)],
) {
    for (provider, outcome) in outcomes.iter_mut() {
        let overridden = provider
            .variables()
            .iter()
            .any(|v| v.role == VarRole::Override && ctx.var(v.name).is_some());
        if !provider.records_answer() || overridden {
            continue;
        }
        if let Some(recorded) = manifest.recorded(provider.namespace()) {
            outcome.report = recorded;
        }
    }
}

/// Runs every provider (those reading the machine concurrently) and the platform detection.
fn run_providers(ctx: &DetectContext) -> (Platform, Vec<(&'static dyn Provider, Detected)>) {
    std::thread::scope(|s| {
        let handles: Vec<_> = registry::providers()
            .iter()
            .map(|p| {
                let provider: &'static dyn Provider = *p;
                // Fixed lists and file reads are quicker than starting a thread.
                let handle = (provider.scope() == Scope::Machine)
                    .then(|| s.spawn(move || provider.detect(ctx)));
                (provider, handle)
            })
            .collect();
        let platform = detect_platform(ctx);
        let outcomes = handles
            .into_iter()
            .map(|(provider, handle)| {
                let outcome = match handle {
                    Some(h) => h.join().unwrap_or_else(|_| panicked(provider)),
                    None => provider.detect(ctx),
                };
                (provider, outcome)
            })
            .collect();
        (platform, outcomes)
    })
}

/// The outcome of a provider that panicked (a bug): absent, with the reason.
fn panicked(provider: &dyn Provider) -> Detected {
    Detected {
        report: ProviderReport {
            // Registry namespaces are valid (a unit test checks every one).
            namespace: vari_core::Namespace::new(provider.namespace()).expect("valid namespace"),
            features: None,
            source: "none".into(),
            note: Some("the provider failed unexpectedly (a bug in vari; please report it)".into()),
            elapsed: Default::default(),
        },
        transient: true,
    }
}

fn in_order(mut reports: Vec<ProviderReport>) -> Vec<ProviderReport> {
    reports.sort_by_key(|r| registry::position(r.namespace.as_str()));
    reports
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::{amd, intel, nvidia};
    use crate::manifest::{MANIFEST_FILE, SNAPSHOT_SCHEMA};
    use crate::Sysroot;

    fn namespace_order() -> Vec<&'static str> {
        registry::providers()
            .iter()
            .map(|p| p.namespace())
            .collect()
    }

    fn ctx_at(root: &std::path::Path) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::new(root));
        ctx.env.clear();
        ctx
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
        assert_eq!(names, namespace_order());
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
            vari_fs::CACHE_DIR_ENV.into(),
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
            "schema": SNAPSHOT_SCHEMA,
            "host": "gpu-node-7",
            "created": "2026-11-21T12:00:00Z",
            "vari_version": "0.1.0",
            "os": "linux",
            "arch": "x86_64",
            "copied": ["/proc/cpuinfo"],
            "missing": [],
            "markers": [],
            "platform": {"system": "Linux", "machine": "x86_64", "libc": "glibc 2.39"},
            "env": {"ROCM_PATH": "/opt/rocm-6.4.0"},
            "recorded": [{
                "namespace": "nvidia",
                "features": [{"name": "sm_arch", "values": ["90_real", "90_virtual"], "multi_value": true}],
                "source": "NVML 580.65.06"
            }]
        });
        std::fs::write(root.join(MANIFEST_FILE), manifest.to_string()).unwrap();
    }

    #[test]
    fn a_snapshot_uses_what_the_node_recorded_unless_overridden_here() {
        let dir = tempfile::tempdir().unwrap();
        snapshot_with_recorded_nvidia(dir.path());
        let mut ctx = DetectContext::from_process_env(Sysroot::open(dir.path()).unwrap());
        ctx.env.clear();
        ctx.env
            .insert("ROCM_PATH".into(), "/login/node/rocm".into());
        let options = DetectOptions {
            context: ctx.clone(),
            use_cache: false,
        };
        let detection = detect(&options);
        assert!(detection.notes.is_empty(), "{:?}", detection.notes);
        let nvidia = detection.report("nvidia").unwrap();
        assert_eq!(nvidia.source, "snapshot of gpu-node-7: NVML 580.65.06");
        let features = nvidia.features.as_ref().unwrap();
        assert_eq!(features[0].values[0].as_str(), "90_real");
        // The node's ROCM_PATH replaces this machine's.
        let node_ctx = snapshot_context(&ctx, ctx.sysroot.manifest().unwrap());
        assert_eq!(node_ctx.var("ROCM_PATH"), Some("/opt/rocm-6.4.0"));
        // The node's platform fills what its files do not say.
        assert_eq!(detection.platform.libc.as_deref(), Some("glibc 2.39"));
        assert_eq!(detection.platform.machine.as_deref(), Some("x86_64"));

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
    fn a_damaged_manifest_is_an_error_naming_the_key() {
        let dir = tempfile::tempdir().unwrap();
        snapshot_with_recorded_nvidia(dir.path());
        let path = dir.path().join(MANIFEST_FILE);
        let mut manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        manifest["recorded"] = "oops".into();
        std::fs::write(&path, manifest.to_string()).unwrap();
        let err = Sysroot::open(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("recorded") && err.contains(MANIFEST_FILE),
            "{err}"
        );
        std::fs::write(&path, "{not json").unwrap();
        assert!(Sysroot::open(dir.path()).is_err());
    }

    #[test]
    fn a_directory_without_manifest_is_read_as_plain_files_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let detection = detect(&DetectOptions {
            context: DetectContext::from_process_env(Sysroot::open(dir.path()).unwrap()),
            use_cache: false,
        });
        assert_eq!(detection.notes.len(), 1);
        assert!(
            detection.notes[0].contains("none of the files"),
            "{:?}",
            detection.notes
        );
    }
}
