//! The x86-64 level rules against what a real compiler emits: small shared objects compiled here
//! with the machine's `cc` for each `-march=x86-64-vN`, for `-mavx` alone (as jax's plugins
//! are built), and in every shape of runtime dispatch that GCC and real libraries use —
//! `target_clones`, a `__builtin_cpu_supports` dispatcher with libgcc linked in statically, the
//! same reading `__cpu_model` from `libgcc_s.so.1` (libgfortran's shape, stripped as wheels ship
//! it), a hand-written IFUNC resolver, and an OpenBLAS-style `cpuid` probe that sets a function
//! pointer. They need a C compiler for x86-64 (`$CC`, else `cc`), as vari-detect's stub tests do.

use std::path::Path;
use std::process::Command;

use vari_scan::{scan_wheel, WheelScan, X86Level};

use crate::support::wheel;

/// Loops a compiler vectorises for the level it targets, a variable shift (BMI2's `shlx` at
/// `v3`) and a population count (POPCNT at `v2`).
const KERNELS: &str = r#"
void add_shifted(int *a, const int *b, int n, int s) { for (int i = 0; i < n; i++) a[i] += b[i] << s; }
void mul_ints(int *a, const int *b, int n) { for (int i = 0; i < n; i++) a[i] *= b[i]; }
void axpy(double *y, const double *x, double k, int n) { for (int i = 0; i < n; i++) y[i] += k * x[i]; }
int bits(unsigned long x, int s) { return __builtin_popcountl(x) + (int)(x >> s); }
"#;

/// A baseline kernel and an AVX-512 one, chosen by `__builtin_cpu_supports` (which reads libgcc's
/// `__cpu_model`).
const CPU_SUPPORTS: &str = r#"
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void scale_avx512(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
static void scale_base(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
void scale(float *a, int n) { if (__builtin_cpu_supports("avx512f")) scale_avx512(a, n); else scale_base(a, n); }
"#;

/// GCC's function multiversioning: one clone per target and an IFUNC resolver.
const TARGET_CLONES: &str = r#"
__attribute__((target_clones("avx512f", "default"))) void scale(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
"#;

/// A hand-written IFUNC resolver.
const IFUNC: &str = r#"
typedef void (*scale_fn)(float *, int);
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void scale_avx512(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
static void scale_base(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
static scale_fn resolve_scale(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f") ? scale_avx512 : scale_base; }
void scale(float *a, int n) __attribute__((ifunc("resolve_scale")));
"#;

/// OpenBLAS's shape: its own `cpuid` probe picks a kernel through a function pointer.
const CPUID_PROBE: &str = r#"
#include <cpuid.h>
typedef void (*scale_fn)(float *, int);
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void scale_avx512(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
static void scale_base(float *a, int n) { for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f + 1.0f; }
static scale_fn kernel;
__attribute__((constructor)) static void pick(void) {
    unsigned a, b, c, d;
    kernel = (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX512F)) ? scale_avx512 : scale_base;
}
void scale(float *x, int n) { kernel(x, n); }
"#;

/// Compiles `source` into a shared object with the C compiler and these flags.
fn compile(dir: &Path, name: &str, source: &str, flags: &[&str]) -> Vec<u8> {
    let c = dir.join(format!("{name}.c"));
    let so = dir.join(format!("{name}.so"));
    std::fs::write(&c, source).unwrap();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&compiler)
        .args(["-O3", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .args(flags)
        .status()
        .unwrap_or_else(|e| panic!("these tests need a C compiler ({compiler}): {e}"));
    assert!(status.success(), "{compiler} {flags:?} failed on {name}.c");
    std::fs::read(&so).unwrap()
}

/// Compiles `source` with `flags` and scans a wheel holding it alone.
fn scan_compiled(name: &str, source: &str, flags: &[&str]) -> WheelScan {
    let dir = tempfile::tempdir().unwrap();
    let library = compile(dir.path(), name, source, flags);
    let path = wheel(
        dir.path(),
        &format!("{name}-1.0-cp312-cp312-linux_x86_64.whl"),
        &[(&format!("pkg/{name}.so"), library)],
    );
    scan_wheel(path).unwrap()
}

fn level_property(scan: &WheelScan) -> Vec<String> {
    scan.properties()
        .iter()
        .map(ToString::to_string)
        .filter(|p| p.starts_with("x86_64"))
        .collect()
}

#[test]
fn march_builds_require_their_level() {
    for (march, level) in [
        ("x86-64", X86Level::V1),
        ("x86-64-v2", X86Level::V2),
        ("x86-64-v3", X86Level::V3),
        ("x86-64-v4", X86Level::V4),
    ] {
        let flag = format!("-march={march}");
        let scan = scan_compiled("kernels", KERNELS, &[&flag]);
        let usage = scan.files[0].x86_64.as_ref().unwrap();
        assert_eq!(usage.level, level, "{march}: {:?}", scan.files[0].needs());
        assert_eq!(usage.runtime_dispatch, None, "{march}");
        assert_eq!(
            usage.partial_level,
            None,
            "{march}: {:?}",
            scan.files[0].needs()
        );
        assert_eq!(usage.required_level(), Some(level), "{march}");
        let expected: Vec<String> = (level > X86Level::V1)
            .then(|| format!("x86_64 :: level :: {level}"))
            .into_iter()
            .collect();
        assert_eq!(level_property(&scan), expected, "{march}");
    }
}

#[test]
fn an_avx_build_without_the_rest_of_v3_is_unknown() {
    let scan = scan_compiled("jaxlike", KERNELS, &["-mavx"]);
    let usage = scan.files[0].x86_64.as_ref().unwrap();
    assert_eq!(usage.level, X86Level::V3, "it uses AVX");
    let cpu = usage.partial_level.expect("a CPU below v3 runs it");
    assert_eq!(cpu.level, X86Level::V2);
    assert_eq!(usage.required_level(), None);
    assert_eq!(level_property(&scan), Vec::<String>::new());
}

/// A baseline build with a dispatched AVX-512 path: it uses v4, requires no known level, and
/// the wheel gets no `x86_64 :: level`.
fn assert_dispatched(scan: &WheelScan) -> vari_scan::RuntimeDispatch {
    let usage = scan.files[0].x86_64.as_ref().unwrap();
    assert_eq!(usage.level, X86Level::V4, "{:?}", scan.files[0].needs());
    assert_eq!(usage.required_level(), None);
    assert_eq!(scan.used_x86_64_level(), Some(X86Level::V4));
    assert_eq!(level_property(scan), Vec::<String>::new());
    usage.runtime_dispatch.clone().expect("dispatch evidence")
}

#[test]
fn target_clones_dispatch_through_an_ifunc() {
    let scan = scan_compiled("clones", TARGET_CLONES, &[]);
    let dispatch = assert_dispatched(&scan);
    assert_eq!(dispatch.ifunc_symbols, 1, "{dispatch}");
}

#[test]
fn a_cpu_supports_dispatcher_with_libgcc_linked_in() {
    let scan = scan_compiled("supports", CPU_SUPPORTS, &[]);
    let dispatch = assert_dispatched(&scan);
    assert!(
        dispatch.cpuid_at.is_some(),
        "libgcc's __cpu_indicator_init: {dispatch}"
    );
}

#[test]
fn a_stripped_library_reading_libgcc_s_cpu_model_like_libgfortran() {
    // Without the static libgcc, `__cpu_model` stays undefined (libgcc_s.so.1 defines it at run
    // time): no `cpuid` in the file, as in numpy's bundled libgfortran.
    let scan = scan_compiled(
        "gfortranlike",
        CPU_SUPPORTS,
        &["-nodefaultlibs", "-lc", "-s"],
    );
    let dispatch = assert_dispatched(&scan);
    assert_eq!(dispatch.cpuid_at, None, "{dispatch}");
    assert_eq!(dispatch.feature_record.as_deref(), Some("__cpu_model"));
    assert_eq!(dispatch.to_string(), "reads __cpu_model");
}

#[test]
fn a_hand_written_ifunc_resolver() {
    let scan = scan_compiled("resolver", IFUNC, &[]);
    let dispatch = assert_dispatched(&scan);
    assert_eq!(dispatch.ifunc_symbols, 1, "{dispatch}");
}

#[test]
fn an_openblas_style_cpuid_probe() {
    let scan = scan_compiled("probe", CPUID_PROBE, &[]);
    let dispatch = assert_dispatched(&scan);
    assert!(dispatch.cpuid_at.is_some(), "{dispatch}");
    assert_eq!(dispatch.ifunc_symbols, 0);
}

#[test]
fn a_v3_build_with_a_dispatched_avx512_path_is_not_v4() {
    let scan = scan_compiled("v3clones", TARGET_CLONES, &["-march=x86-64-v3"]);
    assert_dispatched(&scan);
}
