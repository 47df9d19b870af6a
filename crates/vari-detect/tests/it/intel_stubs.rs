//! The intel provider against a stub Level Zero loader, through the probe child process.

use std::time::Duration;

use crate::support::{host_ctx, stub};
use vari_detect::gpu::intel;

fn values(report: &vari_detect::ProviderReport) -> Vec<String> {
    report.features.as_ref().unwrap()[0]
        .values
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect()
}

fn level_zero(defines: &[&str]) -> String {
    stub("level_zero", defines).display().to_string()
}

#[test]
fn intel_devices_and_their_base_ips() {
    for (defines, init) in [
        (&[][..], "zeInitDrivers"),
        (&["STUB_NO_INIT_DRIVERS"][..], "zeInit+zeDriverGet"),
    ] {
        let ctx = host_ctx(&[
            (intel::LEVEL_ZERO_LIBRARY_ENV, &level_zero(defines)),
            (
                "STUB_ZE_DEVICES",
                "0x10de:12.60.7,0x8086:12.56.5,0x8086:20.2.0",
            ),
        ]);
        let report = intel::detect(&ctx);
        // The NVIDIA device is ignored even though its IP would be known.
        assert_eq!(
            values(&report),
            ["12.56.5", "12.55.8", "20.2.0", "20.1.0"],
            "{report:?}"
        );
        assert!(report.source.contains(init), "{}", report.source);
        assert!(report.features.unwrap()[0].multi_value);
    }
}

#[test]
fn unknown_or_foreign_devices_give_nothing() {
    let ctx = host_ctx(&[
        (intel::LEVEL_ZERO_LIBRARY_ENV, &level_zero(&[])),
        ("STUB_ZE_DEVICES", "0x8086:99.1.0,0x1002:12.0.0"),
    ]);
    let report = intel::detect(&ctx);
    assert!(report.features.is_none());
    let note = report.note.unwrap();
    assert!(note.contains("99.1.0 not known"), "{note}");
}

#[test]
fn loader_failures_are_reported() {
    let ctx = host_ctx(&[
        (
            intel::LEVEL_ZERO_LIBRARY_ENV,
            &level_zero(&["STUB_NO_INIT_DRIVERS"]),
        ),
        ("STUB_ZE_INIT_ERROR", "0x78000001"),
    ]);
    let report = intel::detect(&ctx);
    assert!(report.features.is_none());
    assert!(report
        .note
        .unwrap()
        .contains("zeInit failed with ZE_RESULT_ERROR_UNINITIALIZED"));

    let mut ctx = host_ctx(&[
        (intel::LEVEL_ZERO_LIBRARY_ENV, &level_zero(&[])),
        ("STUB_MISBEHAVE", "zeDeviceGetProperties:hang"),
        ("STUB_ZE_DEVICES", "0x8086:20.1.0"),
    ]);
    ctx.timeout = Duration::from_millis(800);
    let report = intel::detect(&ctx);
    assert!(report.features.is_none());
    assert!(report.note.unwrap().contains("no answer within"));

    let ctx = host_ctx(&[(
        intel::LEVEL_ZERO_LIBRARY_ENV,
        "/nonexistent/libze_loader.so.1",
    )]);
    let report = intel::detect(&ctx);
    assert!(report.note.unwrap().contains("not found"));
}

#[test]
fn the_override_skips_the_library() {
    let ctx = host_ctx(&[
        (
            intel::LEVEL_ZERO_LIBRARY_ENV,
            "/nonexistent/libze_loader.so.1",
        ),
        (intel::FORCE_DEVICE_IP_ENV, "12.71.4"),
    ]);
    let report = intel::detect(&ctx);
    assert_eq!(values(&report), ["12.71.4"]);
    assert!(report.note.is_none());
}
