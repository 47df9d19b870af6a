//! Classification speed: parsing a `/proc/cpuinfo` block and classifying it against archspec's
//! data must stay in the microseconds (the data itself is parsed once per process).

use criterion::{criterion_main, Criterion};
use std::hint::black_box;
use vari_detect::cpu::{aarch64, cpuinfo::CpuInfo, x86_64};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cpuinfo")
        .join(name);
    std::fs::read_to_string(path).expect("fixture exists")
}

fn classification(c: &mut Criterion) {
    let skylake = fixture("linux-rhel7-skylake_avx512");
    let neoverse = fixture("linux-rhel9-neoverse_v2");
    // Load the embedded data outside the measurement.
    let _ = x86_64::classify(&CpuInfo::parse(&skylake));
    let _ = aarch64::classify(&CpuInfo::parse(&neoverse));

    c.bench_function("x86_64 parse+classify skylake_avx512", |b| {
        b.iter(|| x86_64::classify(&CpuInfo::parse(black_box(&skylake))))
    });
    c.bench_function("aarch64 parse+classify neoverse_v2", |b| {
        b.iter(|| aarch64::classify(&CpuInfo::parse(black_box(&neoverse))))
    });
    c.bench_function("x86_64 from microarchitecture name", |b| {
        b.iter(|| x86_64::supported_from_microarch(black_box("sapphirerapids")))
    });
}

// The macro generates an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::classification);
}
use group::benches;
criterion_main!(benches);
