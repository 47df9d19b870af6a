//! The nvidia provider against stub NVML and libcuda libraries, through the probe child process.

use std::time::{Duration, Instant};

use crate::support::{host_ctx, host_has_nvidia_driver, stub};
use serde_json::Value;
use vari_core::FeatureSupport;
use vari_detect::child::{self, ProbeRequest, ProbeResponse};
use vari_detect::gpu::nvidia;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/vectors/nvidia.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn expected(list: &Value) -> Vec<FeatureSupport> {
    serde_json::from_value(list.clone()).unwrap()
}

fn nvml() -> String {
    stub("nvml", &[]).display().to_string()
}

#[test]
fn all_configs_match_the_vectors() {
    assert_eq!(nvidia::all_configs(), expected(&vectors()["all_configs"]));
}

#[test]
fn vectors_through_the_override_variables() {
    let dir = tempfile::tempdir().unwrap();
    for case in vectors()["cases"].as_array().unwrap() {
        let mut ctx =
            vari_detect::DetectContext::from_process_env(vari_detect::Sysroot::new(dir.path()));
        ctx.env.clear();
        ctx.env.insert(
            nvidia::FORCE_CUDA_ENV.into(),
            case["cuda_driver"].as_str().unwrap().into(),
        );
        ctx.env.insert(
            nvidia::FORCE_SM_ENV.into(),
            case["compute_capability"].as_str().unwrap().into(),
        );
        let report = nvidia::detect(&ctx);
        assert_eq!(
            report.features.unwrap(),
            expected(&case["supported"]),
            "{case}"
        );
    }
}

#[test]
fn vectors_through_stub_nvml() {
    for case in vectors()["cases"].as_array().unwrap() {
        let (major, minor) =
            nvidia::parse_cuda_version_override(case["cuda_driver"].as_str().unwrap()).unwrap();
        let raw = (major * 1000 + minor * 10).to_string();
        let cc = case["compute_capability"].as_str().unwrap();
        // A lower GPU and a failing one around the vector's GPU: the highest is used.
        let ccs = format!("5.2,x,{cc}");
        let ctx = host_ctx(&[
            ("VARI_NVML_LIBRARY", &nvml()),
            ("STUB_NVML_CUDA", &raw),
            ("STUB_NVML_CCS", &ccs),
        ]);
        let report = nvidia::detect(&ctx);
        assert_eq!(
            report.features.clone().unwrap(),
            expected(&case["supported"]),
            "{case} {report:?}"
        );
        assert!(report.source.contains("NVML"), "{}", report.source);
        assert!(
            report
                .source
                .contains(&format!("compute capability {cc}, highest of 2")),
            "{}",
            report.source
        );
    }
}

#[test]
fn shutdown_is_always_called() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let ctx = host_ctx(&[
        ("VARI_NVML_LIBRARY", &nvml()),
        ("STUB_NVML_CCS", "x,x"),
        ("STUB_LOG", log.to_str().unwrap()),
    ]);
    let report = nvidia::detect(&ctx);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "init\nshutdown\n");
    // CUDA bounds only; the reference crashes when no GPU reports a capability.
    let features = report.features.unwrap();
    assert_eq!(features.len(), 2);
    let note = report.note.unwrap();
    assert!(
        note.contains("no GPU reported a compute capability"),
        "{note}"
    );
    assert!(note.contains("reference plugin crashes"), "{note}");
}

#[test]
fn zero_devices_give_cuda_bounds_only() {
    let ctx = host_ctx(&[("VARI_NVML_LIBRARY", &nvml()), ("STUB_NVML_CUDA", "13000")]);
    let report = nvidia::detect(&ctx);
    let features = report.features.unwrap();
    assert_eq!(features.len(), 2);
    assert_eq!(features[0].values[0].as_str(), "13.0");
    assert!(report.note.unwrap().contains("no NVIDIA GPU found"));
}

#[test]
fn the_v1_cuda_call_is_the_fallback() {
    let v1_only = stub("nvml", &["STUB_NO_V2"]).display().to_string();
    for (library, error) in [(v1_only.as_str(), ""), (nvml().leak() as &str, "12")] {
        let ctx = host_ctx(&[
            ("VARI_NVML_LIBRARY", library),
            ("STUB_NVML_V2_ERROR", error),
            ("STUB_NVML_CUDA", "12060"),
            ("STUB_NVML_CCS", "8.0"),
        ]);
        let report = nvidia::detect(&ctx);
        assert_eq!(report.features.unwrap()[0].values[0].as_str(), "12.6");
        assert!(
            report.source.contains("via the v1 call"),
            "{}",
            report.source
        );
    }
}

#[test]
fn out_of_range_versions_count_as_no_driver() {
    let ctx = host_ctx(&[
        ("VARI_NVML_LIBRARY", &nvml()),
        ("STUB_NVML_CUDA", "10020"),
        ("STUB_NVML_CCS", "7.0"),
    ]);
    let report = nvidia::detect(&ctx);
    assert!(report.features.is_none());
    assert!(report.note.unwrap().contains("outside 11.0–15.20"));
    // An override of the version bypasses the range check; the GPU still comes from NVML.
    let mut ctx = ctx;
    ctx.env.insert(nvidia::FORCE_CUDA_ENV.into(), "10.2".into());
    let features = nvidia::detect(&ctx).features.unwrap();
    assert_eq!(features.last().unwrap().values[0].as_str(), "70_real");
}

#[test]
fn device_policy_chooses_another_gpu() {
    for (policy, first) in [
        ("lowest", "75_real"),
        ("2", "80_real"),
        ("highest", "90_real"),
    ] {
        let ctx = host_ctx(&[
            ("VARI_NVML_LIBRARY", &nvml()),
            ("STUB_NVML_CCS", "9.0,7.5,8.0"),
            (nvidia::DEVICE_POLICY_ENV, policy),
        ]);
        let features = nvidia::detect(&ctx).features.unwrap();
        assert_eq!(features[2].values[0].as_str(), first, "{policy}");
    }
    let ctx = host_ctx(&[
        ("VARI_NVML_LIBRARY", &nvml()),
        ("STUB_NVML_CCS", "9.0"),
        (nvidia::DEVICE_POLICY_ENV, "5"),
    ]);
    let report = nvidia::detect(&ctx);
    assert_eq!(report.features.unwrap().len(), 2);
    assert!(report.note.unwrap().contains("no GPU with index 5"));
    let ctx = host_ctx(&[
        ("VARI_NVML_LIBRARY", &nvml()),
        ("STUB_NVML_CCS", "9.0,x"),
        (nvidia::DEVICE_POLICY_ENV, "1"),
    ]);
    let note = nvidia::detect(&ctx).note.unwrap();
    assert!(
        note.contains("GPU 1 (VARI_NVIDIA_DEVICE) reported no compute capability"),
        "{note}"
    );
    assert!(note.contains("NVML_ERROR_NOT_SUPPORTED"), "{note}");
}

/// A failing NVML gives no features (unless this machine has a real driver) and a note.
fn assert_fails(vars: &[(&str, &str)], expect_in_note: &[&str]) -> Duration {
    let mut all = vec![("VARI_NVML_LIBRARY", nvml())];
    all.extend(vars.iter().map(|(k, v)| (*k, (*v).to_owned())));
    let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut ctx = host_ctx(&all);
    ctx.timeout = Duration::from_millis(1500);
    let start = Instant::now();
    let report = nvidia::detect(&ctx);
    let elapsed = start.elapsed();
    if !host_has_nvidia_driver() {
        assert!(report.features.is_none(), "{report:?}");
    }
    let note = report.note.unwrap();
    for needle in expect_in_note {
        assert!(note.contains(needle), "{needle:?} not in {note:?}");
    }
    elapsed
}

#[test]
fn init_errors_are_named() {
    assert_fails(
        &[("STUB_NVML_INIT_ERROR", "9")],
        &[
            "nvmlInit_v2 failed with NVML_ERROR_DRIVER_NOT_LOADED (9)",
            "libcuda",
        ],
    );
}

#[test]
fn a_hanging_driver_costs_the_timeout_only() {
    let elapsed = assert_fails(
        &[("STUB_MISBEHAVE", "nvmlInit_v2:hang")],
        &["no answer within 1.5 s", "libcuda skipped"],
    );
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}");
    assert!(elapsed >= Duration::from_millis(1500), "{elapsed:?}");
}

#[test]
fn a_crashing_driver_is_reported() {
    assert_fails(
        &[
            ("STUB_MISBEHAVE", "nvmlDeviceGetCudaComputeCapability:segv"),
            ("STUB_NVML_CCS", "8.6"),
        ],
        &[
            "crashed",
            "SIGSEGV",
            "stub: nvmlDeviceGetCudaComputeCapability misbehaving",
        ],
    );
    assert_fails(
        &[("STUB_MISBEHAVE", "nvmlInit_v2:abort")],
        &["crashed", "SIGABRT"],
    );
}

#[test]
fn garbage_and_exit_codes_are_reported() {
    assert_fails(
        &[("STUB_MISBEHAVE", "nvmlInit_v2:garbage")],
        &["no readable answer"],
    );
    assert_fails(
        &[("STUB_MISBEHAVE", "nvmlInit_v2:exit")],
        &["exited with status 7"],
    );
}

#[test]
fn a_missing_nvml_falls_back_to_libcuda() {
    let cuda = stub("cuda", &[]).display().to_string();
    let mut ctx = host_ctx(&[
        ("VARI_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"),
        ("STUB_CUDA_VERSION", "12040"),
        ("STUB_CUDA_CCS", "7.5,8.9"),
    ]);
    ctx.env.insert("VARI_CUDA_LIBRARY".into(), cuda.clone());
    let report = nvidia::detect(&ctx);
    let features = report.features.clone().unwrap();
    assert_eq!(features[0].values[0].as_str(), "12.4");
    assert_eq!(features[2].values[0].as_str(), "89_real");
    assert!(report.source.contains("libcuda"), "{}", report.source);
    assert!(report.note.unwrap().contains("not found"));

    // cuInit failing keeps the version but loses the devices.
    ctx.env.insert("STUB_CUDA_INIT_ERROR".into(), "100".into());
    let report = nvidia::detect(&ctx);
    assert_eq!(report.features.unwrap().len(), 2);
    assert!(report.note.unwrap().contains("CUDA_ERROR_NO_DEVICE"));
}

#[test]
fn probes_also_run_in_process() {
    // No STUB_* variables: the stub reports CUDA 12.8 and no device.
    let response = child::execute(&ProbeRequest::Nvml {
        libraries: vec![nvml()],
    });
    let ProbeResponse::Nvml(facts) = response else {
        panic!("{response:?}")
    };
    assert_eq!(facts.cuda_driver_version, Some(12080));
    assert_eq!(facts.driver_version.as_deref(), Some("570.86.15"));
    assert!(facts.devices.is_empty());
}

/// A fixture tree with the stub `name` library copied to `directory/soname`, and a context whose
/// driver libraries are searched under it (the loader's own search finds nothing by soname on a
/// machine without a driver).
fn driver_tree(
    libraries: &[(&str, &str, &str)],
) -> (tempfile::TempDir, vari_detect::DetectContext) {
    let root = tempfile::tempdir().unwrap();
    for (stub_name, directory, soname) in libraries {
        let dir = root.path().join(directory.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(stub(stub_name, &[]), dir.join(soname)).unwrap();
    }
    let mut ctx = host_ctx(&[("STUB_NVML_CUDA", "12080"), ("STUB_NVML_CCS", "8.6")]);
    ctx.env.remove("VARI_CUDA_LIBRARY");
    ctx.driver_root = root.path().to_owned();
    (root, ctx)
}

#[test]
fn nvml_is_found_where_real_systems_keep_it() {
    if host_has_nvidia_driver() {
        eprintln!("skipped: this machine's own NVML answers first by soname");
        return;
    }
    let arch_dir = format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH);
    for (place, directory) in [
        ("NixOS", "/run/opengl-driver/lib"),
        ("WSL2", "/usr/lib/wsl/lib"),
        ("container toolkit (legacy)", "/usr/local/nvidia/lib64"),
        ("container toolkit mount", arch_dir.as_str()),
        ("conda", "/opt/conda/envs/gpu/lib"),
    ] {
        let (root, mut ctx) = driver_tree(&[("nvml", directory, "libnvidia-ml.so.1")]);
        ctx.env
            .insert("CONDA_PREFIX".into(), "/opt/conda/envs/gpu".into());
        let report = nvidia::detect(&ctx);
        let path = root
            .path()
            .join(directory.trim_start_matches('/'))
            .join("libnvidia-ml.so.1");
        assert!(
            report.source.starts_with(&format!(
                "NVML ({}): driver 570.86.15, CUDA 12.8",
                path.display()
            )),
            "{place}: {}",
            report.source
        );
        let features = report
            .features
            .unwrap_or_else(|| panic!("{place}: {:?}", report.note));
        assert_eq!(features[2].values[0].as_str(), "86_real", "{place}");
    }
    // Nothing in any place: no driver evidence on this machine, no probe.
    let (_root, ctx) = driver_tree(&[]);
    let report = nvidia::detect(&ctx);
    assert!(report.features.is_none(), "{report:?}");
}

#[test]
fn libcuda_from_cuda_compat_when_nvml_is_nowhere() {
    if host_has_nvidia_driver() {
        eprintln!("skipped: this machine's own driver libraries answer first by soname");
        return;
    }
    for (directory, conda) in [
        ("/usr/local/cuda/compat", None),
        (
            "/opt/conda/envs/gpu/cuda-compat",
            Some("/opt/conda/envs/gpu"),
        ),
        ("/usr/lib/wsl/lib", None),
    ] {
        let (root, mut ctx) = driver_tree(&[("cuda", directory, "libcuda.so.1")]);
        if let Some(prefix) = conda {
            ctx.env.insert("CONDA_PREFIX".into(), prefix.into());
        }
        ctx.env.insert("STUB_CUDA_VERSION".into(), "13000".into());
        ctx.env.insert("STUB_CUDA_CCS".into(), "7.0".into());
        let report = nvidia::detect(&ctx);
        let path = root
            .path()
            .join(directory.trim_start_matches('/'))
            .join("libcuda.so.1");
        assert!(
            report
                .source
                .starts_with(&format!("libcuda ({}): CUDA 13.0", path.display())),
            "{directory}: {}",
            report.source
        );
        assert_eq!(
            report.features.unwrap()[2].values[0].as_str(),
            "70_real",
            "{directory}"
        );
    }
}

#[test]
fn visible_device_variables_choose_the_gpu_as_cuda_would() {
    let uuids = "GPU-aaaa1111-0000,GPU-bbbb2222-0000,GPU-aaaa3333-0000";
    // (variables, the sm_arch chosen (None: no GPU), what the source or note must say)
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>, &'a str);
    let cases: &[Case] = &[
        (&[], Some("90_real"), "highest of 3"),
        (
            &[("CUDA_VISIBLE_DEVICES", "1,0")],
            Some("80_real"),
            "(CUDA_VISIBLE_DEVICES=1,0)",
        ),
        // CUDA stops at the first entry that names no GPU: 2 is never reached.
        (
            &[("CUDA_VISIBLE_DEVICES", "0,7,2")],
            Some("75_real"),
            "`7` names no GPU",
        ),
        (
            &[("CUDA_VISIBLE_DEVICES", "GPU-bbbb")],
            Some("80_real"),
            "GPU 1",
        ),
        // A prefix two GPUs share names neither.
        (
            &[("CUDA_VISIBLE_DEVICES", "GPU-aaaa")],
            None,
            "`GPU-aaaa` names no GPU",
        ),
        (
            &[("CUDA_VISIBLE_DEVICES", "MIG-cccc-0001")],
            Some("90_real"),
            "GPU 2",
        ),
        (&[("CUDA_VISIBLE_DEVICES", "")], None, "shows no GPU"),
        (
            &[("NVIDIA_VISIBLE_DEVICES", "1")],
            Some("80_real"),
            "NVIDIA_VISIBLE_DEVICES=1",
        ),
        (
            &[
                (
                    "NVIDIA_VISIBLE_DEVICES",
                    "GPU-aaaa1111-0000,GPU-bbbb2222-0000",
                ),
                ("CUDA_VISIBLE_DEVICES", "0"),
            ],
            Some("75_real"),
            "GPU 0",
        ),
        (
            &[("NVIDIA_VISIBLE_DEVICES", "all")],
            Some("90_real"),
            "highest of 3",
        ),
        (
            &[("NVIDIA_VISIBLE_DEVICES", "none")],
            None,
            "NVIDIA_VISIBLE_DEVICES=none",
        ),
    ];
    for (vars, sm, says) in cases {
        let mut all = vec![
            ("VARI_NVML_LIBRARY", nvml()),
            ("STUB_NVML_CCS", "7.5,8.0,9.0".to_owned()),
            ("STUB_NVML_UUIDS", uuids.to_owned()),
            ("STUB_NVML_MIG", "2:MIG-cccc-0001".to_owned()),
        ];
        all.extend(vars.iter().map(|(k, v)| (*k, (*v).to_owned())));
        let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let report = nvidia::detect(&host_ctx(&all));
        let features = report.features.clone().unwrap();
        let sm_arch = features.get(2).map(|f| f.values[0].as_str());
        assert_eq!(sm_arch, *sm, "{vars:?}: {report:?}");
        let text = format!(
            "{} {}",
            report.source,
            report.note.clone().unwrap_or_default()
        );
        assert!(text.contains(says), "{vars:?}: {says:?} not in {text:?}");
    }
    // void: no driver at all, nothing probed.
    let report = nvidia::detect(&host_ctx(&[
        ("VARI_NVML_LIBRARY", &nvml()),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
    ]));
    assert!(report.features.is_none(), "{report:?}");
    assert!(report.note.unwrap().contains("NVIDIA_VISIBLE_DEVICES=void"));
}
