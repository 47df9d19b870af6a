//! Tag generation and wheel lookup: the two costs a resolver pays per target and per file.

// criterion's `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use vari_core::filename::WheelFilename;
use vari_python::{Abi, PlatformName, Tags};

fn bench(c: &mut Criterion) {
    let platform = "x86_64-manylinux_2_40"
        .parse::<PlatformName>()
        .unwrap()
        .platform(None);
    let abi = Abi::cpython(&"3.13".parse().unwrap());
    c.bench_function("generate cp313 manylinux_2_40 x86_64", |b| {
        b.iter(|| Tags::new(&abi, &platform))
    });
    // A release page's worth of wheels: many Pythons and platforms, most of them foreign.
    let tags = Tags::new(&abi, &platform);
    let mut wheels = Vec::new();
    for python in ["cp39", "cp310", "cp311", "cp312", "cp313"] {
        for platform in [
            "manylinux_2_17_x86_64.manylinux2014_x86_64",
            "manylinux_2_28_aarch64",
            "musllinux_1_2_x86_64",
            "macosx_11_0_arm64",
            "macosx_10_9_x86_64",
            "win_amd64",
            "win32",
        ] {
            let name = format!("numpy-2.1.0-{python}-{python}-{platform}.whl");
            wheels.push(WheelFilename::parse(&name).unwrap());
        }
    }
    wheels.push(WheelFilename::parse("six-1.16.0-py2.py3-none-any.whl").unwrap());
    c.bench_function("best priority of 36 wheels", |b| {
        b.iter(|| wheels.iter().filter_map(|w| tags.wheel_priority(w)).min())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
