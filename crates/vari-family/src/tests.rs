//! Tests of the catalog reader, the built-in catalog and the choice, on profiles made from
//! hardware facts the way `--profile facts.toml` makes them.

use std::collections::BTreeMap;
use std::path::Path;

use pep440_rs::VersionSpecifiers;
use vari_core::markers::TargetEnvironment;
use vari_core::ordering::SelectionOptions;
use vari_core::Profile;

use crate::*;

/// A profile from hardware facts (`[nvidia] cuda_version = …`), as `--profile` reads one.
fn facts(text: &str) -> Profile {
    vari_detect::facts::profile_from_facts(text, Path::new("."), None)
        .unwrap()
        .profile
}

fn cuda(version: &str, capability: &str) -> Profile {
    facts(&format!(
        "[nvidia]\ncuda_version = \"{version}\"\ncompute_capability = \"{capability}\"\n"
    ))
}

fn cpu() -> Profile {
    facts("[x86_64]\nlevel = 3\n")
}

fn env() -> TargetEnvironment {
    TargetEnvironment::from_platform(None, "3.12").unwrap()
}

fn offers(list: &[(&str, &[&str])]) -> BTreeMap<String, Vec<Offer>> {
    list.iter()
        .map(|(build, versions)| {
            let offers = versions
                .iter()
                .map(|v| Offer::new(v.parse().unwrap()))
                .collect();
            ((*build).to_owned(), offers)
        })
        .collect()
}

fn choose_in(
    family: &str,
    available: &BTreeMap<String, Vec<Offer>>,
    spec: &str,
    profile: &Profile,
    options: &FamilyOptions,
) -> FamilyChoice {
    let family = builtin().family(family).unwrap();
    let spec: VersionSpecifiers = spec.parse().unwrap();
    choose(family, available, &spec, profile, &env(), options)
}

fn chosen(choice: &FamilyChoice) -> Option<(String, String)> {
    choice
        .chosen
        .as_ref()
        .map(|c| (c.requirement.clone(), c.version.clone()))
}

const MINIMAL: &str = r#"schema = "vari-families/1"
[[family]]
name = "acme"
[[family.build]]
name = "cu12"
distribution = "acme-cu12"
requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
"#;

fn read_user(text: &str) -> Result<Catalog, vari_core::Diagnostic> {
    read_catalog(text, Origin::File("user.toml".into()))
}

// --- The built-in catalog ----------------------------------------------------------------------

#[test]
fn the_builtin_catalog_reads_and_its_groups_name_families() {
    let catalog = read_catalog(BUILTIN_TEXT, Origin::BuiltIn).unwrap();
    assert_eq!(&catalog, builtin());
    layered(catalog, Vec::new()).unwrap();
}

#[test]
fn the_builtin_catalog_covers_every_family_of_issue_35() {
    for name in [
        "torch",
        "torchvision",
        "torchaudio",
        "xformers",
        "vllm",
        "llama-cpp-python",
        "cupy",
        "cudf",
        "cuml",
        "rmm",
        "pylibraft",
        "raft-dask",
        "cugraph",
        "cuvs",
        "dask-cudf",
        "nvidia-cublas",
        "nvidia-cuda-runtime",
        "nvidia-cudnn",
        "nvidia-nccl",
        "faiss",
        "onnxruntime",
        "tensorflow",
        "paddlepaddle",
        "tensorrt",
        "cuquantum",
        "nvidia-dali",
        "spconv",
        "jax-cuda-plugin",
        "jax-cuda-pjrt",
        "jax",
    ] {
        assert!(builtin().family(name).is_some(), "{name}");
    }
    let torch = builtin().family("torch").unwrap();
    for line in [
        "cu130", "cu128", "cu126", "rocm6.4", "rocm7.2", "xpu", "cpu", "gfx950",
    ] {
        assert!(torch.build(line).is_some(), "torch {line}");
    }
    assert_eq!(torch.null_build().unwrap().name, "cpu");
    let gfx = torch.build("gfx950").unwrap();
    assert_eq!(
        (gfx.layout(), gfx.requirement().as_str()),
        (Layout::Index, "torch[device-gfx950]")
    );
    let jax = builtin().family("jax").unwrap();
    assert_eq!(jax.build("cu12").unwrap().requirement(), "jax[cuda12]");
    assert_eq!(jax.build("cu12").unwrap().layout(), Layout::Extra);
    assert_eq!(
        builtin().family("faiss").unwrap().same_name,
        SameName::Unrelated
    );
    assert_eq!(
        builtin().family("cupy").unwrap().same_name,
        SameName::SdistOnly
    );
    assert!(builtin()
        .groups_of("torchvision")
        .any(|g| g.name == "pytorch"));
    assert!(builtin().groups_of("torch").any(|g| g.name == "vllm"));
}

/// Every property names a feature and value a built-in provider reports: a typo (`12.80`,
/// `cuda_version_lowerbound`) would make a build fit nowhere.
#[test]
fn every_builtin_property_is_in_the_providers_vocabulary() {
    for family in &builtin().families {
        for build in &family.builds {
            for p in &build.requires {
                let kind =
                    vari_detect::builtin_feature_kind(p.namespace.as_str(), p.feature.as_str())
                        .unwrap_or_else(|| {
                            panic!("{}/{}: {p}: unknown feature", family.name, build.name)
                        });
                if let Some(values) = kind.values {
                    assert!(
                        values.contains(&p.value),
                        "{}/{}: {p}: not a value the provider reports",
                        family.name,
                        build.name
                    );
                }
            }
        }
    }
}

// --- Hostile catalogs --------------------------------------------------------------------------

#[test]
fn unknown_keys_are_refused_with_their_path() {
    let e = read_user(&MINIMAL.replace("requires", "require")).unwrap_err();
    assert_eq!(e.path, "family[acme].build[cu12].require");
    assert!(e.message.contains("unknown key"), "{e}");
    let e = read_user(&format!("{MINIMAL}\nextra-key = 1\n")).unwrap_err();
    assert!(e.path.starts_with("family[acme].build[cu12]"), "{e}");
    let e = read_user(&MINIMAL.replace("schema", "scheme")).unwrap_err();
    assert_eq!(e.path, "scheme");
}

#[test]
fn a_huge_or_deep_catalog_is_refused_before_parsing() {
    let huge = format!("{MINIMAL}#{}\n", "x".repeat(MAX_CATALOG_BYTES));
    let e = read_user(&huge).unwrap_err();
    assert!(e.message.contains("more than the limit"), "{e}");
    let deep = format!(
        "schema = \"vari-families/1\"\nx = {}1{}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    let e = read_user(&deep).unwrap_err();
    assert!(e.message.contains("nested"), "{e}");
    let builds: String = (0..=MAX_BUILDS)
        .map(|i| {
            format!(
                "[[family.build]]\nname = \"b{i}\"\ndistribution = \"acme-{i}\"\nrequires = \
                 [\"nvidia :: cuda_version_lower_bound :: 12.0\"]\n"
            )
        })
        .collect();
    let many = format!("schema = \"vari-families/1\"\n[[family]]\nname = \"acme\"\n{builds}");
    let e = read_user(&many).unwrap_err();
    assert_eq!(e.path, "family[acme].build");
    assert!(e.message.contains("limit of 64"), "{e}");
}

#[test]
fn names_urls_and_properties_are_validated() {
    for (from, to, path) in [
        ("name = \"acme\"", "name = \"ac me\"", "family[0].name"),
        (
            "\"acme-cu12\"",
            "\"acme/cu12\"",
            "family[acme].build[cu12].distribution",
        ),
        (
            "cuda_version_lower_bound :: 12.0",
            "cuda_version_lower_bound",
            "family[acme].build[cu12].requires[0]",
        ),
        (
            "name = \"cu12\"",
            "name = \"CU 12\"",
            "family[acme].build[0].name",
        ),
    ] {
        let e = read_user(&MINIMAL.replace(from, to)).unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
    let with_index = |url: &str| {
        MINIMAL.replace(
            "distribution = \"acme-cu12\"",
            &format!("distribution = \"acme-cu12\"\nindex = \"{url}\""),
        )
    };
    for bad in [
        "ftp://example.com/simple/",
        "https://user:secret@example.com/simple/",
        "https://example.com/simple/#x",
        "not a url",
        "javascript:alert(1)",
    ] {
        let e = read_user(&with_index(bad)).unwrap_err();
        assert_eq!(e.path, "family[acme].build[cu12].index", "{bad}: {e}");
    }
    // file: only in a user's catalog.
    assert!(read_user(&with_index("file:///srv/wheels/")).is_ok());
    let e = read_catalog(&with_index("file:///srv/wheels/"), Origin::BuiltIn).unwrap_err();
    assert!(e.message.contains("user's catalog"), "{e}");
    // Names are stored normalised.
    let c = read_user(&MINIMAL.replace("acme-cu12", "Acme_CU12")).unwrap();
    assert_eq!(c.families[0].builds[0].distribution, "acme-cu12");
}

#[test]
fn family_rules_are_checked() {
    // Nothing required and not the null build: it would fit everywhere.
    let e = read_user(&MINIMAL.replace(
        "requires = [\"nvidia :: cuda_version_lower_bound :: 12.0\"]",
        "",
    ))
    .unwrap_err();
    assert_eq!(e.path, "family[acme].build[cu12].requires");
    // Two null builds.
    let two_null = format!(
        "{MINIMAL}[[family.build]]\nname = \"cpu\"\ndistribution = \"acme-cpu\"\nnull = \
         true\n[[family.build]]\nname = \"cpu2\"\ndistribution = \"acme-cpu2\"\nnull = true\n"
    );
    let e = read_user(&two_null).unwrap_err();
    assert_eq!(e.path, "family[acme].build[cpu2].null");
    // same-name = "build" without a build of that name.
    let e =
        read_user(&MINIMAL.replace("name = \"acme\"", "name = \"acme\"\nsame-name = \"build\""))
            .unwrap_err();
    assert_eq!(e.path, "family[acme].same-name");
    // A local tag needs an index.
    let e = read_user(&MINIMAL.replace("distribution = \"acme-cu12\"", "local = \"cu12\""))
        .unwrap_err();
    assert_eq!(e.path, "family[acme].build[cu12].local");
}

/// A family may only send its own projects to its indexes: a user's family cannot claim a
/// distribution another family owns, and the source map never offers an index for a name its
/// family does not publish there.
#[test]
fn a_family_cannot_send_another_project_to_its_index() {
    let evil = r#"schema = "vari-families/1"
[[family]]
name = "evil"
[[family.build]]
name = "cu12"
distribution = "torch"
index = "https://evil.example.com/simple/"
requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
"#;
    let user = read_user(evil).unwrap();
    let e = layered(builtin().clone(), vec![user]).unwrap_err();
    assert_eq!(e.path, "family[evil].build[cu12].distribution");
    assert!(e.message.contains("family \"torch\""), "{e}");
    // Within one file too.
    let twice = format!(
        "{evil}{}",
        evil.replace("schema = \"vari-families/1\"\n", "")
            .replace("evil", "evil2")
    );
    assert!(read_user(&twice).is_err());

    let map = SourceMap::new(builtin());
    let cu128 = url::Url::parse("https://download.pytorch.org/whl/cu128/").unwrap();
    assert!(map.may_serve(&cu128, "torch"));
    for other in ["numpy", "requests", "jinja2", "triton", "vllm"] {
        assert!(!map.may_serve(&cu128, other), "{other}");
        assert!(map.sources_for(other).is_empty(), "{other}");
    }
    let evil_url = url::Url::parse("https://evil.example.com/simple/").unwrap();
    assert!(!map.may_serve(&evil_url, "torch"));
    assert!(map
        .sources_for("torch")
        .iter()
        .all(|s| !s.url().as_str().contains("evil")));
}

#[test]
fn a_user_family_replaces_the_builtin_one_of_its_name() {
    let mine = r#"schema = "vari-families/1"
[[family]]
name = "cupy"
same-name = "sdist-only"
[[family.build]]
name = "cu12"
distribution = "cupy-cuda12x"
index = "https://pypi.internal.example/simple/"
requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
[[group]]
name = "acme"
families = ["cupy", "torch"]
"#;
    let catalog = layered(builtin().clone(), vec![read_user(mine).unwrap()]).unwrap();
    let cupy = catalog.family("cupy").unwrap();
    assert_eq!(cupy.builds.len(), 1);
    assert_eq!(cupy.origin, Origin::File("user.toml".into()));
    assert_eq!(catalog.families.len(), builtin().families.len());
    // A group naming a family no layer has is refused.
    let e = layered(
        builtin().clone(),
        vec![read_user(&mine.replace("\"torch\"]", "\"nope\"]")).unwrap()],
    )
    .unwrap_err();
    assert_eq!(e.path, "group[acme].families");
}

// --- Choosing within a family ------------------------------------------------------------------

fn cupy_offers() -> BTreeMap<String, Vec<Offer>> {
    offers(&[
        ("cu13", &["14.1.0", "14.2.0"]),
        ("cu12", &["13.6.0", "14.2.0"]),
        ("cu11", &["13.5.0", "13.6.0"]),
    ])
}

#[test]
fn cupy_takes_the_line_of_the_driver() {
    let none = FamilyOptions::default();
    let on = |p: &Profile| chosen(&choose_in("cupy", &cupy_offers(), "", p, &none));
    assert_eq!(
        on(&cuda("13.0", "8.0")),
        Some(("cupy-cuda13x".into(), "14.2.0".into()))
    );
    assert_eq!(
        on(&cuda("12.8", "8.0")),
        Some(("cupy-cuda12x".into(), "14.2.0".into()))
    );
    assert_eq!(
        on(&cuda("11.8", "8.0")),
        Some(("cupy-cuda11x".into(), "13.6.0".into()))
    );
    // CUDA 13 has no code for a V100: a CUDA 13 driver on one gets the CUDA 12 build.
    assert_eq!(
        on(&cuda("13.0", "7.0")),
        Some(("cupy-cuda12x".into(), "14.2.0".into()))
    );
    let choice = choose_in("cupy", &cupy_offers(), "", &cpu(), &none);
    assert_eq!(chosen(&choice), None);
    let why = choice.why_nothing();
    assert!(
        why.starts_with("no build of cupy fits: cu13 (cupy-cuda13x): "),
        "{why}"
    );
    assert!(why.contains("nvidia"), "{why}");
}

#[test]
fn the_best_build_comes_before_the_newest_version() {
    // faiss-cpu is ahead of faiss-gpu-cu12: a CUDA 12.8 machine still gets the GPU build, and the
    // explanation says what the CPU build would have given.
    let available = offers(&[
        ("cpu", &["1.14.1", "1.15.1"]),
        ("cu12", &["1.13.2", "1.14.1.post1"]),
        ("cu11", &["1.9.0.post1"]),
    ]);
    let none = FamilyOptions::default();
    let choice = choose_in("faiss", &available, "", &cuda("12.8", "8.6"), &none);
    assert_eq!(
        chosen(&choice),
        Some(("faiss-gpu-cu12".into(), "1.14.1.post1".into()))
    );
    let lines = choice.explanation();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cpu (faiss-cpu): fits, but ranks")
                && l.contains("would have given 1.15.1")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cu11 (faiss-gpu-cu11): fits")),
        "{lines:?}"
    );
    // A pin the GPU build cannot meet moves to the CPU build, and says why.
    let choice = choose_in("faiss", &available, "==1.15.1", &cuda("12.8", "8.6"), &none);
    assert_eq!(chosen(&choice), Some(("faiss-cpu".into(), "1.15.1".into())));
    assert!(choice.builds.iter().any(|b| b.build == "cu12"
        && b.verdict
            == Verdict::NoVersion {
                offered: 2,
                pre_releases: 0
            }));
    assert_eq!(
        crate::verdict_text(&Verdict::NoVersion {
            offered: 2,
            pre_releases: 0
        }),
        "fits, but none of its 2 versions is allowed by the requirement"
    );
    // A build with no wheel for this target (tensorrt-cu12 on PyPI has source distributions
    // only) says so, rather than that it has no version.
    assert_eq!(
        crate::verdict_text(&Verdict::NoVersion {
            offered: 0,
            pre_releases: 0
        }),
        "fits, but offers no wheel this target can install"
    );
    // On a CPU machine, the CPU build.
    let choice = choose_in("faiss", &available, "", &cpu(), &none);
    assert_eq!(chosen(&choice), Some(("faiss-cpu".into(), "1.15.1".into())));
}

#[test]
fn prefer_forbid_and_one_build_move_the_choice() {
    let available = offers(&[("cpu", &["1.15.1"]), ("cu12", &["1.14.1.post1"])]);
    let p = cuda("12.8", "8.6");
    let forbid_nvidia = FamilyOptions {
        selection: SelectionOptions {
            forbid: vec!["nvidia".parse().unwrap()],
            ..SelectionOptions::default()
        },
        ..FamilyOptions::default()
    };
    let choice = choose_in("faiss", &available, "", &p, &forbid_nvidia);
    assert_eq!(chosen(&choice).unwrap().0, "faiss-cpu");
    assert!(
        choice.explanation()[0].contains("forbidden by the user's `nvidia`"),
        "{:?}",
        choice.explanation()
    );
    let prefer_cpu = FamilyOptions {
        prefer_builds: vec!["cpu".into()],
        ..FamilyOptions::default()
    };
    assert_eq!(
        chosen(&choose_in("faiss", &available, "", &p, &prefer_cpu))
            .unwrap()
            .0,
        "faiss-cpu"
    );
    let forbid_gpu = FamilyOptions {
        forbid_builds: vec!["cu12".into()],
        ..FamilyOptions::default()
    };
    assert_eq!(
        chosen(&choose_in("faiss", &available, "", &p, &forbid_gpu))
            .unwrap()
            .0,
        "faiss-cpu"
    );
    // Asking for a build the target cannot use gives nothing, never an unsupported build.
    let only = FamilyOptions {
        only_build: Some("cu11".into()),
        ..FamilyOptions::default()
    };
    let choice = choose_in("faiss", &available, "", &cpu(), &only);
    assert_eq!(chosen(&choice), None);
    // Preferring a build the target does not support does not select it.
    let prefer_gpu = FamilyOptions {
        prefer_builds: vec!["cu12".into()],
        ..FamilyOptions::default()
    };
    assert_eq!(
        chosen(&choose_in("faiss", &available, "", &cpu(), &prefer_gpu))
            .unwrap()
            .0,
        "faiss-cpu"
    );
}

#[test]
fn a_line_read_from_requirements_splits_a_build() {
    // onnxruntime-gpu: CUDA 12 up to 1.30, CUDA 13 from 1.31.
    let family = builtin().family("onnxruntime").unwrap();
    let mut available = BTreeMap::new();
    let gpu = |v: &str, line: Option<&str>| Offer {
        version: v.parse().unwrap(),
        line: Some(line_of_req(line)),
    };
    available.insert(
        "gpu".to_owned(),
        vec![
            gpu(
                "1.31.1",
                Some("nvidia-cuda-runtime~=13.0; extra == \"cuda\""),
            ),
            gpu(
                "1.30.0",
                Some("nvidia-cuda-runtime-cu12~=12.0; extra == \"cuda\""),
            ),
            // Names no library: the build's own `requires` (CUDA 12), one line with 1.30.0.
            gpu("1.30.5", Some("numpy")),
            gpu("1.18.0", None),
        ],
    );
    available.insert(
        "cpu".to_owned(),
        vec![Offer::new("1.31.1".parse().unwrap())],
    );
    let spec = VersionSpecifiers::default();
    let none = FamilyOptions::default();
    let choice = choose(
        family,
        &available,
        &spec,
        &cuda("12.8", "8.6"),
        &env(),
        &none,
    );
    assert_eq!(
        chosen(&choice),
        Some(("onnxruntime-gpu".into(), "1.30.5".into()))
    );
    assert_eq!(choice.builds.len(), 3, "{:?}", choice.builds);
    let lines = choice.explanation();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("gpu (onnxruntime-gpu): ")
                && l.contains("13.0")
                && l.contains("would have given 1.31.1")),
        "{lines:?}"
    );
    let choice = choose(
        family,
        &available,
        &spec,
        &cuda("13.0", "8.6"),
        &env(),
        &none,
    );
    assert_eq!(
        chosen(&choice),
        Some(("onnxruntime-gpu".into(), "1.31.1".into()))
    );
    let choice = choose(family, &available, &spec, &cpu(), &env(), &none);
    assert_eq!(
        chosen(&choice),
        Some(("onnxruntime".into(), "1.31.1".into()))
    );
}

fn line_of_req(requirement: Option<&str>) -> CudaLine {
    cuda_line(requirement)
}

#[test]
fn torch_takes_its_line_from_the_gpu_and_the_driver() {
    let t = |tag: &str| format!("2.9.1+{tag}");
    let lines = [
        "cu132", "cu130", "cu129", "cu128", "cu126", "rocm7.2", "rocm7.1", "rocm6.4", "xpu", "cpu",
    ];
    let versions: Vec<String> = lines.iter().map(|l| t(l)).collect();
    let mut available: BTreeMap<String, Vec<Offer>> = BTreeMap::new();
    for (line, version) in lines.iter().zip(&versions) {
        // Each index lists its own tag, and (as PyTorch's do) nothing else of torch.
        available.insert(
            (*line).to_owned(),
            vec![Offer::new(version.parse().unwrap())],
        );
    }
    let none = FamilyOptions::default();
    let on = |p: &Profile| {
        let choice = choose_in("torch", &available, "", p, &none);
        choice.chosen.map(|c| c.build)
    };
    assert_eq!(on(&cuda("12.8", "8.0")).as_deref(), Some("cu128"));
    assert_eq!(on(&cuda("12.9", "9.0")).as_deref(), Some("cu129"));
    assert_eq!(on(&cuda("13.0", "8.6")).as_deref(), Some("cu130"));
    // A Maxwell GPU: only cu126 has sm_50 code.
    assert_eq!(on(&cuda("12.8", "5.0")).as_deref(), Some("cu126"));
    assert_eq!(on(&cpu()).as_deref(), Some("cpu"));
    let mi300 = facts("[amd]\ngfx_arch = [\"gfx942\"]\n");
    assert_eq!(on(&mi300).as_deref(), Some("rocm7.2"));
    let choice = choose_in("torch", &available, "", &cuda("12.8", "8.0"), &none);
    let lines = choice.explanation();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cu130 (torch): ") && l.contains("13.0")),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("cpu (torch): fits, but ranks")),
        "{lines:?}"
    );
    // Versions without the index's tag are not that build's (a stray `2.9.1` on the cu128 page).
    available.insert(
        "cu128".to_owned(),
        vec![Offer::new("2.9.1".parse().unwrap())],
    );
    let choice = choose_in("torch", &available, "", &cuda("12.8", "8.0"), &none);
    assert_eq!(choice.chosen.unwrap().build, "cu126");
}

#[test]
fn pre_releases_are_chosen_only_when_allowed() {
    let available = offers(&[("cu12", &["14.2.0", "15.0.0rc1"])]);
    let p = cuda("12.8", "8.0");
    let none = FamilyOptions::default();
    assert_eq!(
        chosen(&choose_in("cupy", &available, "", &p, &none))
            .unwrap()
            .1,
        "14.2.0"
    );
    let pre = FamilyOptions {
        pre: true,
        ..FamilyOptions::default()
    };
    assert_eq!(
        chosen(&choose_in("cupy", &available, "", &p, &pre))
            .unwrap()
            .1,
        "15.0.0rc1"
    );
}

/// Offers of one version per line, tagged as PyTorch's indexes tag them.
fn tagged(version: &str, lines: &[&str]) -> BTreeMap<String, Vec<Offer>> {
    lines
        .iter()
        .map(|l| {
            (
                (*l).to_owned(),
                vec![Offer::new(format!("{version}+{l}").parse().unwrap())],
            )
        })
        .collect()
}

#[test]
fn a_group_takes_the_best_line_every_member_offers() {
    let catalog = builtin();
    let torch = catalog.family("torch").unwrap();
    let vision = catalog.family("torchvision").unwrap();
    let audio = catalog.family("torchaudio").unwrap();
    let none = FamilyOptions::default();
    let a100 = cuda("13.0", "8.0");
    let t = choose_in(
        "torch",
        &tagged("2.9.0", &["cu130", "cu128", "cpu"]),
        "",
        &a100,
        &none,
    );
    let v = choose_in(
        "torchvision",
        &tagged("0.24.0", &["cu128", "cpu"]),
        "",
        &a100,
        &none,
    );
    assert_eq!(t.chosen.as_ref().unwrap().build, "cu130");
    assert_eq!(v.chosen.as_ref().unwrap().build, "cu128");
    assert_eq!(offered_lines(&t), ["cu130", "cu128", "cpu"]);
    // torchvision lacks cu130: both take cu128, whichever is named first.
    let line = group_line("pytorch", &[(torch, &t), (vision, &v)]).unwrap();
    assert_eq!(line.as_deref(), Some("cu128"));
    let line = group_line("pytorch", &[(vision, &v), (torch, &t)]).unwrap();
    assert_eq!(line.as_deref(), Some("cu128"));
    // Members that already agree keep their line; one member alone has nothing to agree on.
    let same = group_line("pytorch", &[(torch, &t), (torch, &t)]);
    assert_eq!(same, Ok(None), "one family twice is one member");
    assert_eq!(group_line("pytorch", &[(torch, &t)]), Ok(None));

    // No line in common: one error naming each member and the lines it offers.
    let a = choose_in("torchaudio", &tagged("2.9.0", &["cu126"]), "", &a100, &none);
    let conflict = group_line("pytorch", &[(torch, &t), (audio, &a)]).unwrap_err();
    assert_eq!(
        conflict.to_string(),
        "torch, torchaudio must take one line (group pytorch), but no line fits all of them: \
         torch offers cu130, cu128, cpu; torchaudio offers cu126"
    );
    // A version pin that leaves a member nothing: it offers none.
    let pinned = choose_in(
        "torchvision",
        &tagged("0.24.0", &["cu128"]),
        "==9",
        &a100,
        &none,
    );
    let conflict = group_line("pytorch", &[(torch, &t), (vision, &pinned)]).unwrap_err();
    assert!(
        conflict.to_string().ends_with("torchvision offers none"),
        "{conflict}"
    );
}

#[test]
fn a_member_whose_line_is_read_from_its_requirements_pins_the_others() {
    // vLLM's one PyPI build reads its line from its requirements: its build name says nothing
    // about torch's lines, but the CUDA major it needs makes torch take its best line of that
    // major (never its CPU build).
    let catalog = builtin();
    let torch = catalog.family("torch").unwrap();
    let vllm = catalog.family("vllm").unwrap();
    let none = FamilyOptions::default();
    let h100 = cuda("13.0", "9.0");
    let t = choose_in(
        "torch",
        &tagged("2.9.0", &["cu130", "cu128", "cpu"]),
        "",
        &h100,
        &none,
    );
    assert_eq!(t.chosen.as_ref().unwrap().build, "cu130");
    let vllm_on = |major: u32| {
        let mut available = BTreeMap::new();
        available.insert(
            "pypi".to_owned(),
            vec![Offer {
                version: "0.11.0".parse().unwrap(),
                line: Some(CudaLine::Major {
                    major,
                    evidence: format!("nvidia-cuda-runtime-cu{major}"),
                }),
            }],
        );
        choose_in("vllm", &available, "", &h100, &none)
    };
    let v12 = vllm_on(12);
    assert_eq!(
        group_line("vllm", &[(vllm, &v12), (torch, &t)]),
        Ok(Some("cu128".to_owned()))
    );
    let v13 = vllm_on(13);
    assert_eq!(
        group_line("vllm", &[(torch, &t), (vllm, &v13)]),
        Ok(Some("cu130".to_owned()))
    );
    // torch alone: nothing to agree on.
    assert_eq!(group_line("vllm", &[(torch, &t)]), Ok(None));
    // A torch that offers no CUDA 12 build: one error naming both.
    let cpu_only = choose_in(
        "torch",
        &tagged("2.9.0", &["cu130", "cpu"]),
        "",
        &h100,
        &none,
    );
    let conflict = group_line("vllm", &[(vllm, &v12), (torch, &cpu_only)]).unwrap_err();
    assert_eq!(
        conflict.to_string(),
        "vllm, torch must take one line (group vllm), but no line fits all of them: vllm offers \
         the CUDA 12 line only; torch offers cu130, cpu"
    );
}

/// A build whose only versions the requirement allows are pre-releases says so (and how to allow
/// them), rather than that the requirement allows none; with pre-releases allowed it is chosen.
#[test]
fn a_build_with_only_pre_releases_says_pre_releases_are_not_allowed() {
    let available = offers(&[
        ("cpu", &["1.15.1"]),
        ("cu12", &["1.14.1.post1", "1.16.0rc1", "1.16.0rc2"]),
    ]);
    let p = cuda("12.8", "8.6");
    let choice = choose_in(
        "faiss",
        &available,
        ">=1.15.5",
        &p,
        &FamilyOptions::default(),
    );
    assert_eq!(chosen(&choice), None);
    let cu12 = choice.builds.iter().find(|b| b.build == "cu12").unwrap();
    assert_eq!(
        cu12.verdict,
        Verdict::NoVersion {
            offered: 3,
            pre_releases: 2
        }
    );
    assert_eq!(
        crate::verdict_text(&cu12.verdict),
        "fits, but of its 3 versions the requirement allows only 2 pre-releases, which are not \
         allowed (`--pre` allows pre-releases)"
    );
    // One version: said in the singular (tensorrt-cu13's lone 0.0.0a0 placeholder).
    assert_eq!(
        crate::verdict_text(&Verdict::NoVersion {
            offered: 1,
            pre_releases: 1
        }),
        "fits, but of its one version the requirement allows only a pre-release, which is not \
         allowed (`--pre` allows pre-releases)"
    );
    assert_eq!(
        crate::verdict_text(&Verdict::NoVersion {
            offered: 1,
            pre_releases: 0
        }),
        "fits, but its one version is not allowed by the requirement"
    );
    let pre = FamilyOptions {
        pre: true,
        ..FamilyOptions::default()
    };
    let choice = choose_in("faiss", &available, ">=1.15.5", &p, &pre);
    assert_eq!(
        chosen(&choice),
        Some(("faiss-gpu-cu12".into(), "1.16.0rc2".into()))
    );
    // A specifier that names a pre-release allows pre-releases (PEP 440).
    let none = FamilyOptions::default();
    let choice = choose_in("faiss", &available, ">=1.16.0rc1", &p, &none);
    assert_eq!(
        chosen(&choice),
        Some(("faiss-gpu-cu12".into(), "1.16.0rc2".into()))
    );
}

/// Every family and build distribution of the built-in catalog is found by the check that lets
/// a command skip reading it; other names are not.
#[test]
fn the_builtin_catalog_names_are_found_without_reading_it() {
    for family in &crate::builtin().families {
        assert!(crate::builtin_may_name(&family.name), "{}", family.name);
        for build in &family.builds {
            assert!(
                crate::builtin_may_name(&build.distribution),
                "{}",
                build.distribution
            );
        }
    }
    assert!(crate::builtin_may_name("CuPy_CUDA12x"));
    for name in ["numpy", "requests", "bench"] {
        assert!(!crate::builtin_may_name(name), "{name}");
    }
}
