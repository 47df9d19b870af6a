//! Whole detection with the on-disk cache: hits, misses, what is never cached, and the cost of
//! the cached path.

use std::time::{Duration, Instant};

use crate::support::{host_ctx, stub};
use vari_detect::cache::CACHE_DIR_ENV;
use vari_detect::gpu::nvidia;
use vari_detect::{detect, DetectOptions};

#[test]
fn a_timed_out_probe_is_not_cached() {
    let cache = tempfile::tempdir().unwrap();
    let nvml = stub("nvml", &[]).display().to_string();
    let mut ctx = host_ctx(&[
        (CACHE_DIR_ENV, cache.path().to_str().unwrap()),
        ("VARI_NVML_LIBRARY", &nvml),
        ("STUB_MISBEHAVE", "nvmlInit_v2:hang"),
    ]);
    ctx.timeout = Duration::from_millis(500);
    let options = DetectOptions {
        context: ctx,
        use_cache: true,
    };
    let first = detect(&options);
    assert!(!first.from_cache);
    assert!(first
        .report("nvidia")
        .unwrap()
        .note
        .as_deref()
        .unwrap()
        .contains("no answer"));
    assert!(!cache.path().join("detect-v1.json").exists());

    // Once the driver answers, the result is cached.
    let mut options = options;
    options.context.env.remove("STUB_MISBEHAVE");
    options
        .context
        .env
        .insert("STUB_NVML_CCS".into(), "8.6".into());
    let second = detect(&options);
    assert!(!second.from_cache);
    let third = detect(&options);
    assert!(third.from_cache);
    let profile = third.profile();
    let sm = profile
        .namespace("nvidia")
        .unwrap()
        .feature("sm_arch")
        .unwrap();
    assert_eq!(sm.values[0].as_str(), "86_real");
    assert_eq!(
        third.report("nvidia").unwrap().source,
        second.report("nvidia").unwrap().source
    );
}

#[test]
fn the_cached_path_is_fast_and_abi_dependency_stays_live() {
    let cache = tempfile::tempdir().unwrap();
    let ctx = host_ctx(&[
        (CACHE_DIR_ENV, cache.path().to_str().unwrap()),
        (nvidia::FORCE_CUDA_ENV, "12.8"),
        (nvidia::FORCE_SM_ENV, "8.6"),
    ]);
    let mut options = DetectOptions {
        context: ctx,
        use_cache: true,
    };
    let first = detect(&options);
    assert!(!first.from_cache);
    let mut times = Vec::new();
    for _ in 0..15 {
        let start = Instant::now();
        let cached = detect(&options);
        times.push(start.elapsed());
        assert!(cached.from_cache);
        assert_eq!(cached.profile(), first.profile());
    }
    times.sort();
    let median = times[times.len() / 2];
    eprintln!("cached detection median {median:?} (debug build)");
    // Generous for a debug build on a loaded machine; release is well under a millisecond.
    assert!(median < Duration::from_millis(50), "{median:?}");

    // abi_dependency is recomputed: an override shows up without invalidating the cache.
    options
        .context
        .env
        .insert("VARIANT_ABI_DEPENDENCY".into(), "torch==2.7.1".into());
    let with_abi = detect(&options);
    let abi = with_abi.profile();
    assert!(
        abi.namespace("abi_dependency").is_some(),
        "{:?}",
        with_abi.report("abi_dependency")
    );
    assert_eq!(
        abi.namespaces.last().unwrap().namespace.as_str(),
        "abi_dependency"
    );
}
