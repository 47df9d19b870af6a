//! The builds a family lock's target takes, and only their entries planned.

use url::Url;
use vari_core::ordering::SelectionOptions;
use vari_lock::{read_lock, Lock};

use super::super::{plan, Plan, PlanError, PlanRequest, SkipReason};
use crate::{Target, TargetSettings};

const SHA: &str = "3333333333333333333333333333333333333333333333333333333333333333";

const CUDA11: &str = "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\nlibc = \"glibc 2.36\"\n[nvidia]\ncuda_version = \"11.8\"\ncompute_capability = \"8.0\"\n[x86_64]\nlevel = 3\n";

/// Python 3.12 on Linux x86_64 with the hardware `facts` describe.
fn target_of(facts: &str) -> Target {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("machine.toml");
    std::fs::write(&profile, facts).unwrap();
    let mut settings = TargetSettings {
        profile: Some(profile),
        ..TargetSettings::default()
    };
    settings.python.version = Some("3.12".parse().unwrap());
    settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
    Target::resolve(&settings).unwrap()
}

fn class(name: &str) -> Target {
    let facts = vari_test_support::fleet::PROFILES
        .iter()
        .find(|(class, _)| *class == name)
        .map(|(_, facts)| *facts)
        .unwrap();
    target_of(facts)
}

fn entry(name: &str, version: &str, builds: &[(&str, &str)]) -> String {
    let file = format!(
        "{}-{}-py3-none-any.whl",
        name.replace('-', "_"),
        version.replace('+', "%2B")
    );
    let mut text = format!(
        "[[packages]]\nname = \"{name}\"\nversion = \"{version}\"\nwheels = [{{ url = \"https://files.example/{file}\", hashes = {{ sha256 = \"{SHA}\" }} }}]\n"
    );
    if !builds.is_empty() {
        let refs: Vec<String> = builds
            .iter()
            .map(|(f, b)| format!("{{ family = \"{f}\", build = \"{b}\" }}"))
            .collect();
        text.push_str(&format!(
            "[packages.tool.vari]\nbuilds = [{}]\n",
            refs.join(", ")
        ));
    }
    text
}

fn build(name: &str, distribution: &str, cuda: Option<&str>) -> String {
    match cuda {
        Some(line) => format!(
            "[[tool.vari.families.builds]]\nname = \"{name}\"\ndistribution = \"{distribution}\"\nrequires = [\"nvidia :: cuda_version_lower_bound :: {line}\"]\n"
        ),
        None => format!(
            "[[tool.vari.families.builds]]\nname = \"{name}\"\ndistribution = \"{distribution}\"\nnull = true\n"
        ),
    }
}

/// torch from three builds (CUDA 13.0, CUDA 12.8, CPU), each CUDA build with its own CUDA
/// library, and a dependency every build shares; `cpu`: whether the CPU build is locked.
fn torch_lock(cpu: bool) -> Lock {
    let mut text = String::from("lock-version = \"1.0\"\ncreated-by = \"test\"\n");
    text.push_str(&entry("filelock", "3.0", &[]));
    text.push_str(&entry("nvidia-cublas", "13.0.1", &[("torch", "cu130")]));
    text.push_str(&entry(
        "nvidia-cublas-cu12",
        "12.8.4",
        &[("torch", "cu128")],
    ));
    if cpu {
        text.push_str(&entry("torch", "2.9.0+cpu", &[("torch", "cpu")]));
    }
    text.push_str(&entry("torch", "2.9.0+cu128", &[("torch", "cu128")]));
    text.push_str(&entry("torch", "2.9.0+cu130", &[("torch", "cu130")]));
    text.push_str("[tool.vari]\n[[tool.vari.families]]\nname = \"torch\"\n");
    text.push_str(&build("cu130", "torch", Some("13.0")));
    text.push_str(&build("cu128", "torch", Some("12.8")));
    if cpu {
        text.push_str(&build("cpu", "torch", None));
    }
    read_lock(&text).unwrap()
}

fn plan_on(lock: &Lock, target: &Target) -> Result<Plan, PlanError> {
    let options = SelectionOptions::default();
    let dir = Url::parse("file:///project/").unwrap();
    plan(
        lock,
        &PlanRequest {
            target,
            options: &options,
            extras: &[],
            groups: None,
            only_groups: false,
            lock_dir: &dir,
        },
    )
}

fn installed(plan: &Plan) -> Vec<String> {
    plan.install
        .iter()
        .map(|p| match &p.version {
            Some(v) => format!("{} {v}", p.name),
            None => p.name.clone(),
        })
        .collect()
}

#[test]
fn each_machine_takes_its_build_and_only_that_builds_entries() {
    let lock = torch_lock(true);
    let cpu = plan_on(&lock, &class("cpu")).unwrap();
    assert_eq!(installed(&cpu), ["filelock 3.0", "torch 2.9.0+cpu"]);
    assert_eq!(cpu.builds.len(), 1);
    assert_eq!(
        (cpu.builds[0].build.as_str(), cpu.builds[0].null),
        ("cpu", true)
    );
    assert_eq!(
        cpu.builds[0].reason(),
        "the null (CPU) build: no other locked build fits this machine"
    );
    let skipped: Vec<_> = cpu
        .skipped
        .iter()
        .map(|s| (s.name.as_str(), &s.why))
        .collect();
    assert!(skipped.contains(&(
        "torch",
        &SkipReason::OtherBuild {
            family: "torch".into(),
            build: "cu128".into()
        }
    )));

    let a100 = plan_on(&lock, &class("a100")).unwrap();
    assert_eq!(
        installed(&a100),
        [
            "filelock 3.0",
            "nvidia-cublas-cu12 12.8.4",
            "torch 2.9.0+cu128"
        ]
    );
    assert_eq!(a100.builds[0].build, "cu128");
    assert_eq!(
        a100.builds[0].reason(),
        "the best locked build that fits this machine"
    );
    // Why the others lost, in the family choice's words.
    let others = a100.builds[0].explanation();
    assert_eq!(others.len(), 2, "{others:?}");
    assert!(others[0].starts_with("cpu (torch): ") || others[1].starts_with("cpu (torch): "));

    let cuda13 = plan_on(&lock, &class("cuda13")).unwrap();
    assert_eq!(
        installed(&cuda13),
        ["filelock 3.0", "nvidia-cublas 13.0.1", "torch 2.9.0+cu130"]
    );
}

#[test]
fn no_fitting_build_and_no_null_build_is_one_error_with_each_builds_reason() {
    let lock = torch_lock(false);
    let error = plan_on(&lock, &target_of(CUDA11)).unwrap_err();
    assert!(matches!(error, PlanError::NoBuildFits { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.starts_with("family torch: no build of torch fits: cu130 (torch): "),
        "{text}"
    );
    assert!(text.contains("; cu128 (torch): "), "{text}");
    assert!(!text.contains('\n'), "{text}");
    // With the CPU build locked, the CUDA 11 machine takes it.
    let plan = plan_on(&torch_lock(true), &target_of(CUDA11)).unwrap();
    assert_eq!(installed(&plan), ["filelock 3.0", "torch 2.9.0+cpu"]);
}

#[test]
fn the_members_of_a_group_take_one_build_name() {
    // torchvision lacks the CUDA 13 build: on a CUDA 13 machine torch takes cu128 with it.
    let mut text = String::from("lock-version = \"1.0\"\ncreated-by = \"test\"\n");
    text.push_str(&entry("torch", "2.9.0+cu128", &[("torch", "cu128")]));
    text.push_str(&entry("torch", "2.9.0+cu130", &[("torch", "cu130")]));
    text.push_str(&entry(
        "torchvision",
        "0.24.0+cu128",
        &[("torchvision", "cu128")],
    ));
    text.push_str("[tool.vari]\n[[tool.vari.families]]\nname = \"torch\"\ngroup = \"pytorch\"\n");
    text.push_str(&build("cu130", "torch", Some("13.0")));
    text.push_str(&build("cu128", "torch", Some("12.8")));
    text.push_str("[[tool.vari.families]]\nname = \"torchvision\"\ngroup = \"pytorch\"\n");
    text.push_str(&build("cu128", "torchvision", Some("12.8")));
    let lock = read_lock(&text).unwrap();
    let plan = plan_on(&lock, &class("cuda13")).unwrap();
    assert_eq!(
        installed(&plan),
        ["torch 2.9.0+cu128", "torchvision 0.24.0+cu128"]
    );
    assert_eq!(plan.builds[0].group.as_deref(), Some("pytorch"));
    assert_eq!(
        plan.builds[0].reason(),
        "the line group pytorch takes together (this family's own best locked build is cu130)"
    );
    assert_eq!(
        plan.builds[1].reason(),
        "the best locked build that fits this machine"
    );
    // No build name all members locked fits: one error naming them and what each offers
    // (torch and torchvision share the name cu130, which this CUDA 12.8 machine cannot take).
    let mut text = String::from("lock-version = \"1.0\"\ncreated-by = \"test\"\n");
    text.push_str(&entry("torch", "2.9.0+cu128", &[("torch", "cu128")]));
    text.push_str(&entry("torch", "2.9.0+cu130", &[("torch", "cu130")]));
    text.push_str(&entry(
        "torchvision",
        "0.24.0+cu126",
        &[("torchvision", "cu126")],
    ));
    text.push_str(&entry(
        "torchvision",
        "0.24.0+cu130",
        &[("torchvision", "cu130")],
    ));
    text.push_str("[tool.vari]\n[[tool.vari.families]]\nname = \"torch\"\ngroup = \"pytorch\"\n");
    text.push_str(&build("cu130", "torch", Some("13.0")));
    text.push_str(&build("cu128", "torch", Some("12.8")));
    text.push_str("[[tool.vari.families]]\nname = \"torchvision\"\ngroup = \"pytorch\"\n");
    text.push_str(&build("cu130", "torchvision", Some("13.0")));
    text.push_str(&build("cu126", "torchvision", Some("12.6")));
    let error = plan_on(&read_lock(&text).unwrap(), &class("a100")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "torch, torchvision must take one line (group pytorch), but no line fits all of them: \
         torch offers cu128; torchvision offers cu126"
    );
}

#[test]
fn a_lock_without_families_takes_no_build() {
    let text = format!(
        "lock-version = \"1.0\"\ncreated-by = \"test\"\n{}",
        entry("filelock", "3.0", &[])
    );
    let plan = plan_on(&read_lock(&text).unwrap(), &class("cpu")).unwrap();
    assert!(plan.builds.is_empty());
    assert_eq!(installed(&plan), ["filelock 3.0"]);
}
