use std::collections::BTreeMap;

use vari_core::metadata::{read_json, SourceKind};
use vari_lock::{Artifact, DependencyRef, Lock, Package, PackageInfo, LOCK_VERSION};

use super::*;
use crate::{Target, TargetSettings};

const SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// Python 3.12 on Linux x86_64 with the hardware of the fleet class `class`.
fn target(class: &str) -> Target {
    let facts = vari_test_support::fleet::PROFILES
        .iter()
        .find(|(name, _)| *name == class)
        .map(|(_, facts)| *facts)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join(format!("{class}.toml"));
    std::fs::write(&profile, facts).unwrap();
    let mut settings = TargetSettings {
        profile: Some(profile),
        ..TargetSettings::default()
    };
    settings.python.version = Some("3.12".parse().unwrap());
    settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
    Target::resolve(&settings).unwrap()
}

fn wheel(name: &str) -> Artifact {
    Artifact {
        name: None,
        url: Some(format!("https://files.example/{name}")),
        path: None,
        size: Some(1),
        upload_time: None,
        hashes: [("sha256".to_owned(), SHA.to_owned())].into(),
    }
}

fn package(name: &str, version: &str, wheels: &[&str]) -> Package {
    Package {
        name: name.to_owned(),
        version: Some(version.parse().unwrap()),
        marker: None,
        requires_python: None,
        dependencies: Vec::new(),
        index: None,
        sdist: None,
        wheels: wheels.iter().map(|w| wheel(w)).collect(),
        variants_json: None,
        vari: None,
        other: BTreeMap::new(),
    }
}

/// The demo release's variants, narrowed to `labels`.
fn demo(labels: &[&str], plain: bool) -> Package {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/demo/vari_demo-1.0.0-variants.json"
    ))
    .unwrap();
    let mut metadata = read_json(&text, SourceKind::IndexFile).unwrap();
    metadata
        .variants
        .retain(|l, _| labels.contains(&l.as_str()));
    let mut wheels: Vec<String> = labels
        .iter()
        .map(|l| format!("vari_demo-1.0.0-py3-none-any-{l}.whl"))
        .collect();
    if plain {
        wheels.push("vari_demo-1.0.0-py3-none-any.whl".to_owned());
    }
    let names: Vec<&str> = wheels.iter().map(String::as_str).collect();
    let mut demo = package("vari-demo", "1.0.0", &names);
    demo.variants_json = Some(metadata);
    demo.vari = Some(PackageInfo {
        variant_dependencies: vec![
            "vari-demo-cuda-runtime>=1 ; \"nvidia\" in variant_namespaces".to_owned(),
        ],
        ..PackageInfo::default()
    });
    demo
}

fn through_variants(mut package: Package) -> Package {
    package.vari = Some(PackageInfo {
        through_variants: true,
        ..PackageInfo::default()
    });
    package
}

fn lock(packages: Vec<Package>) -> Lock {
    Lock {
        lock_version: LOCK_VERSION.to_owned(),
        environments: Vec::new(),
        requires_python: Some(">=3.9".to_owned()),
        extras: vec!["socks".to_owned()],
        dependency_groups: vec!["dev".to_owned()],
        default_groups: vec!["dev".to_owned()],
        created_by: "test".to_owned(),
        packages,
        vari: None,
        other_tools: BTreeMap::new(),
    }
}

/// The fleet's shape: the demo release with its CUDA runtime behind a variant marker, a CUDA
/// library the runtime depends on, an extra and a default group.
fn fleet_lock() -> Lock {
    let mut runtime = through_variants(package(
        "vari-demo-cuda-runtime",
        "1.0.0",
        &["vari_demo_cuda_runtime-1.0.0-py3-none-any.whl"],
    ));
    runtime.dependencies = vec![DependencyRef {
        name: "cublas-like".to_owned(),
        version: None,
    }];
    let cublas = through_variants(package(
        "cublas-like",
        "12.8",
        &["cublas_like-12.8-py3-none-any.whl"],
    ));
    let mut socks = package("sockslike", "1.0", &["sockslike-1.0-py3-none-any.whl"]);
    socks.marker = Some("'socks' in extras".to_owned());
    let mut dev = package("devtool", "2.0", &["devtool-2.0-py3-none-any.whl"]);
    dev.marker = Some("'dev' in dependency_groups".to_owned());
    lock(vec![
        cublas,
        dev,
        socks,
        demo(&["cu126", "cu128", "cu130", "null", "rocm6.4"], true),
        runtime,
    ])
}

fn lock_dir() -> Url {
    Url::parse("file:///project/").unwrap()
}

fn plan_for(lock: &Lock, class: &str, extras: &[String], groups: Option<&[String]>) -> Plan {
    let target = target(class);
    let options = SelectionOptions::default();
    let dir = lock_dir();
    plan(
        lock,
        &PlanRequest {
            target: &target,
            options: &options,
            extras,
            groups,
            only_groups: false,
            lock_dir: &dir,
        },
    )
    .unwrap()
}

fn installed(plan: &Plan) -> Vec<(String, Option<String>)> {
    plan.install
        .iter()
        .map(|p| (p.name.clone(), p.label.as_ref().map(ToString::to_string)))
        .collect()
}

fn entry(name: &str, label: Option<&str>) -> (String, Option<String>) {
    (name.to_owned(), label.map(str::to_owned))
}

#[test]
fn each_class_gets_its_variant_and_only_cuda_machines_the_runtime() {
    let lock = fleet_lock();
    let a100 = plan_for(&lock, "a100", &[], None);
    assert_eq!(
        installed(&a100),
        [
            entry("cublas-like", None),
            entry("devtool", None),
            entry("vari-demo", Some("cu128")),
            entry("vari-demo-cuda-runtime", None),
        ]
    );
    let runtime = &a100.install[3];
    assert!(
        matches!(&runtime.needed_by, NeededBy::Variant { of, .. } if of == "vari-demo"),
        "{:?}",
        runtime.needed_by
    );
    assert_eq!(
        a100.install[0].needed_by,
        NeededBy::Dependency {
            of: "vari-demo-cuda-runtime".to_owned()
        }
    );
    let demo = &a100.install[2];
    assert!(matches!(
        demo.file,
        PlannedFile::Wheel {
            index: 1,
            because: ChosenBecause::BestVariant { .. }
        }
    ));
    assert_eq!(
        demo.artifact.file_name().unwrap(),
        "vari_demo-1.0.0-py3-none-any-cu128.whl"
    );

    let cuda13 = plan_for(&lock, "cuda13", &[], None);
    assert_eq!(installed(&cuda13)[2], entry("vari-demo", Some("cu130")));
    assert_eq!(cuda13.install.len(), 4);

    for (class, label) in [("cpu", "null"), ("mi300", "rocm6.4")] {
        let plan = plan_for(&lock, class, &[], None);
        assert_eq!(
            installed(&plan),
            [entry("devtool", None), entry("vari-demo", Some(label))],
            "{class}"
        );
        let skipped: Vec<(&str, &SkipReason)> = plan
            .skipped
            .iter()
            .map(|s| (s.name.as_str(), &s.why))
            .collect();
        assert_eq!(
            skipped,
            [
                ("cublas-like", &SkipReason::NoVariantAsks),
                ("sockslike", &SkipReason::Marker("'socks' in extras".into())),
                ("vari-demo-cuda-runtime", &SkipReason::NoVariantAsks),
            ],
            "{class}"
        );
    }
    let cpu = plan_for(&lock, "cpu", &[], None);
    assert!(matches!(
        cpu.install[1].file,
        PlannedFile::Wheel {
            because: ChosenBecause::NullVariant,
            ..
        }
    ));
    assert!(
        !cpu.install[1].report.as_ref().unwrap().needs.is_empty(),
        "what cu* would need"
    );
}

#[test]
fn extras_and_groups_follow_pep_751_markers() {
    let lock = fleet_lock();
    let names =
        |plan: &Plan| -> Vec<String> { plan.install.iter().map(|p| p.name.clone()).collect() };
    let socks = plan_for(&lock, "cpu", &["Socks".to_owned()], None);
    assert_eq!(names(&socks), ["devtool", "sockslike", "vari-demo"]);
    let no_groups = plan_for(&lock, "cpu", &[], Some(&[]));
    assert_eq!(names(&no_groups), ["vari-demo"]);

    let target = target("cpu");
    let options = SelectionOptions::default();
    let dir = lock_dir();
    let request = |extras: &'static [String], groups: Option<&'static [String]>| PlanRequest {
        target: &target,
        options: &options,
        extras,
        groups,
        only_groups: false,
        lock_dir: &dir,
    };
    let unknown = vec!["gpu".to_owned()];
    let error = plan(
        &lock,
        &PlanRequest {
            extras: &unknown,
            ..request(&[], None)
        },
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the lock has no extra `gpu` (it offers: socks)"
    );
    let error = plan(
        &lock,
        &PlanRequest {
            groups: Some(&unknown),
            ..request(&[], None)
        },
    )
    .unwrap_err();
    assert!(matches!(
        error,
        PlanError::NotOffered {
            kind: "dependency group",
            ..
        }
    ));
}

#[test]
fn a_machine_no_listed_file_serves_gets_the_select_report() {
    // Only CUDA builds locked: a CPU machine has nothing to install.
    let lock = lock(vec![demo(&["cu128"], false)]);
    let target = target("cpu");
    let options = SelectionOptions::default();
    let dir = lock_dir();
    let error = plan(
        &lock,
        &PlanRequest {
            target: &target,
            options: &options,
            extras: &[],
            groups: None,
            only_groups: false,
            lock_dir: &dir,
        },
    )
    .unwrap_err();
    let PlanError::NothingFits {
        name,
        version,
        report,
        ..
    } = error
    else {
        panic!("{error:?}")
    };
    assert_eq!((name.as_str(), version.as_str()), ("vari-demo", "1.0.0"));
    assert_eq!(report.needs.len(), 1);
    assert_eq!(report.needs[0].namespace.as_str(), "nvidia");
    assert_eq!(report.files.len(), 1);
}

#[test]
fn the_sdist_only_when_no_wheel_fits_and_paths_resolve_under_the_lock() {
    let mut windows = package("winonly", "1.0", &["winonly-1.0-cp312-cp312-win_amd64.whl"]);
    windows.sdist = Some(Artifact {
        path: Some("dist/winonly-1.0.tar.gz".to_owned()),
        url: None,
        ..wheel("winonly-1.0.tar.gz")
    });
    let mut local = package("local", "1.0", &[]);
    local.wheels = vec![Artifact {
        url: None,
        path: Some("wheels/local-1.0-py3-none-any.whl".to_owned()),
        ..wheel("x")
    }];
    let lock = lock(vec![local, windows]);
    let plan = plan_for(&lock, "cpu", &[], None);
    assert_eq!(
        plan.install[0].file,
        PlannedFile::Wheel {
            index: 0,
            because: ChosenBecause::NoVariants
        }
    );
    assert_eq!(plan.install[1].file, PlannedFile::Sdist);
    assert_eq!(
        plan.install[1].report.as_ref().unwrap().files[0].fate,
        crate::CandidateFate::WrongTags
    );
}

#[test]
fn the_lock_must_be_for_the_target() {
    let mut old = lock(vec![package("a", "1", &["a-1-py3-none-any.whl"])]);
    old.requires_python = Some("<3.10".to_owned());
    let target = target("cpu");
    let options = SelectionOptions::default();
    let dir = lock_dir();
    let request = PlanRequest {
        target: &target,
        options: &options,
        extras: &[],
        groups: None,
        only_groups: false,
        lock_dir: &dir,
    };
    assert_eq!(
        plan(&old, &request).unwrap_err().to_string(),
        "requires-python: the lock is for Python <3.10, the target has 3.12.0"
    );
    old.requires_python = None;
    old.environments = vec!["sys_platform == 'win32'".to_owned()];
    assert!(matches!(
        plan(&old, &request).unwrap_err(),
        PlanError::NotForEnvironment { .. }
    ));
    old.environments = vec!["sys_platform == 'linux'".to_owned()];
    assert_eq!(plan(&old, &request).unwrap().install.len(), 1);
    old.packages[0].marker = Some("'x' in extras and".to_owned());
    let error = plan(&old, &request).unwrap_err();
    assert!(
        error.to_string().starts_with("packages[0].marker: "),
        "{error}"
    );
}

#[test]
fn a_variant_dependency_must_name_an_entry() {
    // The runtime is missing from the lock: the CUDA machine's plan names the item at fault.
    let lock = lock(vec![demo(&["cu128", "null"], false)]);
    let target = target("a100");
    let options = SelectionOptions::default();
    let dir = lock_dir();
    let error = plan(
        &lock,
        &PlanRequest {
            target: &target,
            options: &options,
            extras: &[],
            groups: None,
            only_groups: false,
            lock_dir: &dir,
        },
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "packages[0].tool.vari.variant-dependencies[0]: `vari-demo-cuda-runtime>=1 ; \"nvidia\" \
         in variant_namespaces` names no entry of the lock that fits (no \
         `vari-demo-cuda-runtime` it accepts)"
    );
    // The CPU machine never asks for it.
    let cpu = plan_for(&lock, "cpu", &[], None);
    assert_eq!(installed(&cpu), [entry("vari-demo", Some("null"))]);
}

#[test]
fn an_export_narrows_the_lock_to_what_the_plan_installs() {
    let lock = fleet_lock();
    let a100 = plan_for(&lock, "a100", &[], None);
    let narrowed = vari_lock::export::narrow(&lock, &a100.kept());
    let names: Vec<&str> = narrowed.packages.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "cublas-like",
            "devtool",
            "vari-demo",
            "vari-demo-cuda-runtime"
        ]
    );
    assert!(narrowed
        .packages
        .iter()
        .all(|p| p.wheels.len() == 1 && p.marker.is_none()));
    assert!(narrowed.extras.is_empty() && narrowed.default_groups.is_empty());
    let demo = &narrowed.packages[2];
    assert_eq!(
        demo.wheels[0].file_name().unwrap(),
        "vari_demo-1.0.0-py3-none-any-cu128.whl"
    );
    let labels: Vec<String> = demo
        .variants_json
        .as_ref()
        .unwrap()
        .variants
        .keys()
        .map(ToString::to_string)
        .collect();
    assert_eq!(labels, ["cu128"]);
    assert!(!narrowed.packages[3].vari.as_ref().unwrap().through_variants);
    // What it says is what the same machine installs from the original.
    let again = plan_for(&narrowed, "a100", &[], None);
    assert_eq!(installed(&again), installed(&a100));
    // The narrowed lock writes and reads back.
    let text = vari_lock::write_lock(&narrowed).unwrap();
    assert_eq!(vari_lock::read_lock(&text).unwrap(), narrowed);
}

/// `--only-group dev`: what `dev` needs on its own (its `group-marker`), the project's own
/// entries left out though their marker holds; a variant `dev` needs still brings in what
/// its chosen wheel asks for.
#[test]
fn only_groups_install_what_the_groups_need_on_their_own() {
    let mut lock = fleet_lock();
    let group = |package: &mut Package, marker: &str| {
        let info = package.vari.get_or_insert_with(PackageInfo::default);
        info.group_marker = Some(marker.to_owned());
    };
    let mut app = package("app", "1.0", &["app-1.0-py3-none-any.whl"]);
    app.vari = Some(PackageInfo::default());
    // Needed by the project everywhere and by `dev`: no marker, a group marker.
    let mut shared = package("shared", "1.0", &["shared-1.0-py3-none-any.whl"]);
    group(&mut shared, "'dev' in dependency_groups");
    lock.packages.push(app);
    lock.packages.push(shared);
    for package in &mut lock.packages {
        match package.name.as_str() {
            "devtool" => group(package, "'dev' in dependency_groups"),
            // The demo is `dev`'s too, on this Python only.
            "vari-demo" => group(
                package,
                "'dev' in dependency_groups and python_full_version >= '3.12'",
            ),
            _ => {}
        }
    }
    let names =
        |plan: &Plan| -> Vec<String> { plan.install.iter().map(|p| p.name.clone()).collect() };
    let target = target("a100");
    let options = SelectionOptions::default();
    let dir = lock_dir();
    let dev = vec!["dev".to_owned()];
    let request = PlanRequest {
        target: &target,
        options: &options,
        extras: &[],
        groups: Some(&dev),
        only_groups: true,
        lock_dir: &dir,
    };
    // A lock that does not record the group markers: refused, saying to lock again.
    let error = plan(&lock, &request).unwrap_err();
    assert!(matches!(error, PlanError::NoGroupMarkers { .. }), "{error}");
    assert!(error.to_string().contains("vari lock"), "{error}");
    lock.vari = Some(vari_lock::LockInfo {
        group_markers: true,
        ..vari_lock::LockInfo::default()
    });
    let only = plan(&lock, &request).unwrap();
    assert_eq!(
        names(&only),
        [
            "cublas-like",
            "devtool",
            "vari-demo",
            "vari-demo-cuda-runtime",
            "shared"
        ]
    );
    let app = only.skipped.iter().find(|s| s.name == "app").unwrap();
    assert_eq!(app.why, SkipReason::OnlyGroups);
    // Not with extras.
    let socks = vec!["socks".to_owned()];
    let error = plan(
        &lock,
        &PlanRequest {
            extras: &socks,
            ..request
        },
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "`--only-group` cannot be used with `--extra`"
    );
    // The same lock without `--only-group`: the project's entries as before.
    let all = plan(
        &lock,
        &PlanRequest {
            only_groups: false,
            ..request
        },
    )
    .unwrap();
    assert!(names(&all).contains(&"app".to_owned()));
    // No group at all: nothing.
    let none = plan(
        &lock,
        &PlanRequest {
            groups: Some(&[]),
            ..request
        },
    )
    .unwrap();
    assert!(none.install.is_empty());
}
