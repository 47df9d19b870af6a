//! `vari families`: the build-family catalog (issue 35), the user's catalog files through
//! `--families`, `VARI_FAMILIES` and vari.toml, `--no-families`, and `vari families check` on
//! good and hostile files.

use std::path::{Path, PathBuf};

use crate::common::{run, vari};

/// A hardware-facts profile with a CUDA driver and a GPU, as `dir/NAME.toml`.
pub(crate) fn gpu(dir: &Path, name: &str, cuda: &str, capability: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[nvidia]\ncuda_version = \
             \"{cuda}\"\ncompute_capability = \"{capability}\"\n"
        ),
    )
    .unwrap();
    path
}

pub(crate) fn cpu(dir: &Path) -> PathBuf {
    let path = dir.join("cpu.toml");
    std::fs::write(
        &path,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 3\n",
    )
    .unwrap();
    path
}

const ACME: &str = r#"schema = "vari-families/1"

[[family]]
name = "acme-kernels"
summary = "ACME's kernels"

[[family.build]]
name = "cu12"
distribution = "acme-kernels-cu12"
index = "https://pypi.acme.example/simple/"
requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]

[[family.build]]
name = "cpu"
distribution = "acme-kernels-cpu"
index = "https://pypi.acme.example/simple/"
null = true
"#;

#[test]
fn the_builtin_families_are_listed_in_text_and_json() {
    let out = run(vari().arg("families")).expect_code(0);
    for name in [
        "torch ",
        "cupy ",
        "faiss ",
        "onnxruntime ",
        "jax ",
        "llama-cpp-python ",
    ] {
        assert!(out.stdout.contains(name), "{name}:\n{}", out.stdout);
    }
    let json = run(vari().args(["families", "--json"]))
        .expect_code(0)
        .json();
    let families = json["families"].as_array().unwrap();
    let cupy = families.iter().find(|f| f["name"] == "cupy").unwrap();
    assert_eq!(cupy["same_name"], "sdist-only");
    assert_eq!(cupy["origin"], "built-in");
    assert_eq!(cupy["layouts"], serde_json::json!(["name"]));
    assert_eq!(cupy["builds"][0]["distribution"], "cupy-cuda13x");
    let torch = families.iter().find(|f| f["name"] == "torch").unwrap();
    let cu128 = torch["builds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "cu128")
        .unwrap();
    assert_eq!(cu128["source"], "https://download.pytorch.org/whl/cu128");
    assert_eq!(cu128["local"], "cu128");
    assert!(json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["name"] == "pytorch"));
}

/// `vari families show cupy` on CUDA 13, CUDA 12 and CPU profiles: the CUDA 13 build, the CUDA
/// 12 build, and no build with each one's reason.
#[test]
fn show_says_which_build_fits_the_profile_and_why_the_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let show = |profile: &Path| {
        run(vari()
            .args(["families", "show", "cupy", "--json", "--profile"])
            .arg(profile))
        .expect_code(0)
        .json()
    };
    let h100 = show(&gpu(dir.path(), "h100", "13.0", "9.0"));
    assert_eq!(h100["best"], "cu13");
    let a100 = show(&gpu(dir.path(), "a100", "12.8", "8.0"));
    assert_eq!(a100["best"], "cu12");
    let cu13 = a100["builds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["build"] == "cu13")
        .unwrap();
    assert_eq!(cu13["fits"], false);
    assert!(cu13["reason"].as_str().unwrap().contains("13.0"), "{cu13}");
    let none = show(&cpu(dir.path()));
    assert_eq!(none["best"], serde_json::Value::Null);

    let text = run(vari()
        .args(["families", "show", "cupy", "--profile"])
        .arg(cpu(dir.path())))
    .expect_code(0);
    assert!(
        text.stdout
            .contains("no build of cupy fits: cu13 (cupy-cuda13x): "),
        "{}",
        text.stdout
    );
    // A build's distribution name finds its family; an unknown name says so.
    let by_build = run(vari()
        .args(["families", "show", "cupy-cuda12x", "--json", "--profile"])
        .arg(cpu(dir.path())))
    .expect_code(0)
    .json();
    assert_eq!(by_build["family"]["name"], "cupy");
    run(vari().args(["families", "show", "no-such-thing"]))
        .expect_one_error(&["no-such-thing: no such family"]);
}

#[test]
fn a_users_catalog_adds_families_by_flag_variable_and_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acme.toml");
    std::fs::write(&file, ACME).unwrap();
    let has_acme = |out: &crate::common::Run| out.stdout.contains("acme-kernels");

    let plain = run(vari().arg("families")).expect_code(0);
    assert!(!has_acme(&plain));
    let flag = run(vari().arg("families").arg("--families").arg(&file)).expect_code(0);
    assert!(has_acme(&flag), "{}", flag.stdout);
    let variable = run(vari().arg("families").env("VARI_FAMILIES", &file)).expect_code(0);
    assert!(has_acme(&variable), "{}", variable.stdout);
    let config = dir.path().join("vari.toml");
    std::fs::write(&config, "families = [\"acme.toml\"]\n").unwrap();
    let configured = run(vari().arg("families").env("VARI_CONFIG", &config)).expect_code(0);
    assert!(has_acme(&configured), "{}", configured.stdout);
    let shown = run(vari()
        .args(["config", "show", "--json"])
        .env("VARI_CONFIG", &config))
    .expect_code(0)
    .json();
    assert_eq!(
        shown["settings"]["families"]["value"][0],
        file.display().to_string()
    );

    // The user's family is chosen from like a built-in one.
    let json = run(vari()
        .args(["families", "show", "acme-kernels", "--json", "--profile"])
        .arg(gpu(dir.path(), "a100", "12.8", "8.0"))
        .arg("--families")
        .arg(&file))
    .expect_code(0)
    .json();
    assert_eq!(json["best"], "cu12");
    assert_eq!(json["family"]["origin"], file.display().to_string());

    // Off: by flag, by variable, by configuration.
    for off in [
        run(vari().args(["families", "--no-families", "--json"])),
        run(vari()
            .args(["families", "--json"])
            .env("VARI_NO_FAMILIES", "1")),
        {
            std::fs::write(&config, "no-families = true\n").unwrap();
            run(vari()
                .args(["families", "--json"])
                .env("VARI_CONFIG", &config))
        },
    ] {
        let json = off.expect_code(0).json();
        assert_eq!(json["enabled"], false);
        assert_eq!(json["families"], serde_json::json!([]));
    }
}

#[test]
fn check_validates_a_catalog_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acme.toml");
    std::fs::write(&file, ACME).unwrap();
    let ok = run(vari().args(["families", "check"]).arg(&file)).expect_code(0);
    assert!(
        ok.stdout.contains("valid: 1 families, 0 groups"),
        "{}",
        ok.stdout
    );
    let json = run(vari().args(["families", "check", "--json"]).arg(&file))
        .expect_code(0)
        .json();
    crate::common::assert_json_schema("families-check", &json);
    assert_eq!(json["valid"], true);

    // An unknown key: one line naming the file and the key path, exit 1, nothing on stdout.
    std::fs::write(&file, ACME.replace("requires", "require")).unwrap();
    let shown = file.display().to_string();
    run(vari().args(["families", "check"]).arg(&file)).expect_one_error(&[&format!(
        "{shown}: family[acme-kernels].build[cu12].require: unknown key"
    )]);
    let json = run(vari().args(["families", "check", "--json"]).arg(&file))
        .expect_code(1)
        .json();
    crate::common::assert_json_schema("families-check", &json);
    assert_eq!(json["valid"], false);
    assert_eq!(
        json["error"]["key"],
        "family[acme-kernels].build[cu12].require"
    );
}

/// Hostile catalogs: a family that sends another family's project to its own index, a huge
/// file, a deeply nested one, credentials in a URL. Each is refused with one line, by `check`
/// and by every selecting command given the file.
#[test]
fn hostile_catalogs_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evil.toml");
    let shown = file.display().to_string();
    let cases: Vec<(String, Vec<String>)> = vec![
        (
            ACME.replace("acme-kernels-cu12", "torch"),
            vec![
                format!("{shown}: family[acme-kernels].build[cu12].distribution"),
                "a build of family \"torch\" already".to_owned(),
            ],
        ),
        (
            format!("{ACME}#{}\n", "x".repeat(2 << 20)),
            vec![format!("{shown}: "), "larger than".to_owned()],
        ),
        (
            format!("{ACME}x = {}1{}\n", "[".repeat(500), "]".repeat(500)),
            vec![format!("{shown}: "), "nested".to_owned()],
        ),
        (
            ACME.replace("https://pypi.acme", "https://u:secret@pypi.acme"),
            vec![
                format!("{shown}: family[acme-kernels].build[cu12].index"),
                "no credentials".to_owned(),
            ],
        ),
    ];
    for (text, fragments) in cases {
        std::fs::write(&file, text).unwrap();
        let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
        run(vari().args(["families", "check"]).arg(&file)).expect_one_error(&fragments);
        // A selecting command given the file stops before it selects anything.
        run(vari()
            .args(["rank", "--families"])
            .arg(&file)
            .arg(crate::common::data("variants-json").join("torch-2.10.0-variants.json")))
        .expect_one_error(&fragments);
    }
    // A missing file says so.
    run(vari()
        .args(["families", "--families"])
        .arg(dir.path().join("missing.toml")))
    .expect_one_error(&["missing.toml"]);
}

/// Where the documentation keeps the table of built-in families: the guide to today's GPU
/// packages (it was the README's until the site, issue 31).
const FAMILIES_TABLE_PAGE: &str = "../../docs/guides/families.md";

/// The documentation's table of built-in families is the catalog's: one row per family, in
/// order, with its layouts, its builds best first and what its name is on PyPI.
#[test]
fn the_readme_table_lists_the_builtin_catalog() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FAMILIES_TABLE_PAGE))
            .unwrap();
    let table = page
        .split("<!-- families-table -->\n")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /families-table -->").next())
        .expect("docs/guides/families.md has a families table");
    let json = run(vari().args(["families", "--json"]))
        .expect_code(0)
        .json();
    let mut expected = vec![
        "| family | layout | builds, best first | on PyPI, the name is |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    for family in json["families"].as_array().unwrap() {
        let builds: Vec<String> = family["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let mut label = match (b["layout"].as_str(), b["extra"].is_null()) {
                    (Some("index"), true) => b["name"].as_str().unwrap().to_owned(),
                    _ => b["requirement"].as_str().unwrap().to_owned(),
                };
                if b["null"] == true {
                    label.push_str(" (CPU)");
                }
                format!("`{label}`")
            })
            .collect();
        let layouts: Vec<&str> = family["layouts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        let same = match family["same_name"].as_str().unwrap() {
            "build" => "one of the builds",
            "sdist-only" => "sdists only",
            "unrelated" => "unrelated",
            _ => "not taken",
        };
        expected.push(format!(
            "| `{}` | {} | {} | {same} |",
            family["name"].as_str().unwrap(),
            layouts.join(", "),
            builds.join(", ")
        ));
    }
    let found: Vec<&str> = table.lines().collect();
    assert_eq!(
        found, expected,
        "docs/guides/families.md's families table differs from the catalog"
    );
}

/// `vari select cupy` against a stand-in index on 127.0.0.1 with small stand-in wheels of
/// CuPy's three builds: a CUDA 13 machine gets cupy-cuda13x, a CUDA 12 machine cupy-cuda12x, a
/// CPU machine an error naming each build's reason. A build asked for by name is selected as
/// asked, and `--no-families` selects `cupy` itself.
#[test]
fn select_chooses_a_by_name_build_for_the_machine() {
    use vari_test_support::site::{SiteOptions, StaticSite};
    use vari_test_support::wheels::TestWheel;

    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    for name in [
        "cupy_cuda13x-14.2.0-py3-none-any.whl",
        "cupy_cuda12x-13.6.0-py3-none-any.whl",
        "cupy_cuda12x-14.2.0-py3-none-any.whl",
        "cupy_cuda11x-13.6.0-py3-none-any.whl",
    ] {
        TestWheel::new(name).write(&wheels);
    }
    let site = dir.path().join("site");
    run(vari()
        .args(["index", "build"])
        .arg(&wheels)
        .arg("-o")
        .arg(&site))
    .expect_code(0);
    let host = StaticSite::serve(&site, SiteOptions::default());
    let index = format!("{}/simple/", host.base);
    let select = |requirement: &str, profile: &Path| {
        let mut cmd = vari();
        cmd.args([
            "select",
            "--no-deps",
            "--json",
            requirement,
            "--index-url",
            &index,
        ])
        .arg("--profile")
        .arg(profile);
        run(&mut cmd)
    };
    let chosen = |json: &serde_json::Value| {
        (
            json["selections"][0]["name"].as_str().unwrap().to_owned(),
            json["selections"][0]["version"]
                .as_str()
                .unwrap()
                .to_owned(),
        )
    };

    let h100 = gpu(dir.path(), "h100", "13.0", "9.0");
    let json = select("cupy", &h100).expect_code(0).json();
    crate::common::assert_json_schema("select", &json);
    assert_eq!(chosen(&json), ("cupy-cuda13x".into(), "14.2.0".into()));
    assert_eq!(json["families"][0]["requirement"], "cupy");
    assert_eq!(json["families"][0]["choice"]["chosen"]["build"], "cu13");

    let a100 = gpu(dir.path(), "a100", "12.8", "8.0");
    let json = select("cupy", &a100).expect_code(0).json();
    assert_eq!(chosen(&json), ("cupy-cuda12x".into(), "14.2.0".into()));
    // A pin moves the version within the build.
    let json = select("cupy==13.6.0", &a100).expect_code(0).json();
    assert_eq!(chosen(&json), ("cupy-cuda12x".into(), "13.6.0".into()));

    // Text: the family's line, then the selection; --explain says why the others lost.
    let mut cmd = vari();
    cmd.args([
        "select",
        "--no-deps",
        "--explain",
        "cupy",
        "--index-url",
        &index,
    ])
    .arg("--profile")
    .arg(&a100);
    let text = run(&mut cmd).expect_code(0).stdout;
    assert!(
        text.starts_with(
            "cupy: family cupy chooses build cu12 (cupy-cuda12x 14.2.0): the best of 2 builds that fit\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  - cu13 (cupy-cuda13x): no supported value for `nvidia :: cuda_version_lower_bound`"
        ),
        "{text}"
    );

    let cpu = cpu(dir.path());
    select("cupy", &cpu).expect_one_error(&[
        "cupy: no build of cupy fits: cu13 (cupy-cuda13x): namespace `nvidia` is not supported",
        "cu12 (cupy-cuda12x): ",
        "cu11 (cupy-cuda11x): ",
    ]);

    // Asked for by name: exactly that build, no family step, and a note naming the best build.
    let out = select("cupy-cuda12x", &h100).expect_code(0);
    let json = out.json();
    assert_eq!(chosen(&json), ("cupy-cuda12x".into(), "14.2.0".into()));
    assert_eq!(json["families"], serde_json::json!([]));
    assert!(
        out.stderr.contains(
            "cupy-cuda12x: a build of family cupy asked for by name, selected as asked (this \
             target's best build is cu13, cupy-cuda13x)"
        ),
        "{}",
        out.stderr
    );
    let out = select("cupy-cuda12x", &a100).expect_code(0);
    assert!(!out.stderr.contains("asked for by name"), "{}", out.stderr);
    // The catalog off: `cupy` is looked up as itself (the stand-in index has no such project).
    let mut cmd = vari();
    cmd.args([
        "select",
        "--no-deps",
        "--no-families",
        "cupy",
        "--index-url",
        &index,
    ])
    .arg("--profile")
    .arg(&h100);
    let off = run(&mut cmd);
    assert_ne!(off.code, 0, "{}", off.stdout);
    assert!(!off.stderr.contains("family"), "{}", off.stderr);
}

/// A build whose CUDA line is read from its requirements (onnxruntime-gpu) is read from a wheel
/// of the target's platform: the stand-in's 1.27.0 has an aarch64 wheel requiring CUDA 12
/// libraries (listed first) and an x86_64 wheel requiring CUDA 13 ones, so an x86_64 CUDA 12.8
/// machine gets 1.26.0, the newest CUDA 12 release for its platform.
#[test]
fn a_builds_line_is_read_from_a_wheel_for_the_targets_platform() {
    use vari_test_support::site::{SiteOptions, StaticSite};
    use vari_test_support::wheels::TestWheel;
    let dir = tempfile::tempdir().unwrap();
    let wheels = dir.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    for (name, runtime) in [
        (
            "1.27.0-cp312-cp312-linux_aarch64",
            "nvidia-cuda-runtime-cu12",
        ),
        (
            "1.27.0-cp312-cp312-manylinux_2_28_x86_64",
            "nvidia-cuda-runtime-cu13",
        ),
        (
            "1.26.0-cp312-cp312-manylinux_2_28_x86_64",
            "nvidia-cuda-runtime-cu12",
        ),
    ] {
        TestWheel::new(&format!("onnxruntime_gpu-{name}.whl"))
            .requires(&[runtime])
            .write(&wheels);
    }
    TestWheel::new("onnxruntime-1.27.0-cp312-cp312-manylinux_2_28_x86_64.whl").write(&wheels);
    let site = dir.path().join("site");
    run(vari()
        .args(["index", "build"])
        .arg(&wheels)
        .arg("-o")
        .arg(&site))
    .expect_code(0);
    let host = StaticSite::serve(&site, SiteOptions::default());
    let index = format!("{}/simple/", host.base);
    let json = run(vari()
        .args([
            "select",
            "--no-deps",
            "--json",
            "onnxruntime",
            "--index-url",
            &index,
        ])
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ])
        .arg("--profile")
        .arg(gpu(dir.path(), "a100", "12.8", "8.0")))
    .expect_code(0)
    .json();
    assert_eq!(
        selected(&json),
        [("onnxruntime-gpu".to_owned(), "1.26.0".to_owned())]
    );
}

/// A stand-in for PyTorch's per-line indexes on 127.0.0.1, with their real page structure:
/// `/whl/LINE/PROJECT/` pages whose links point at `/whl/LINE/NAME-VERSION%2BLINE-….whl` with
/// `data-requires-python`, small stand-in wheels, and (as PyTorch's do) other projects listed on
/// the same index (`numpy`). Plus a stand-in default index with PyPI's plain `torch` and `numpy`.
pub(crate) struct PyTorchSite {
    pub(crate) dir: tempfile::TempDir,
    _host: vari_test_support::site::StaticSite,
    pub(crate) base: String,
    pub(crate) pypi: String,
}

/// `torch` and `torchvision` on each line (`(project, line, version, requires-python)`),
/// `numpy 9.9.9` on the cu128 index, and the default index's `torch 2.9.0`, `numpy 1.26.0`,
/// CuPy's CUDA 12 and 13 builds, `cudf-cu12` (requiring `cupy-cuda12x`) and a CUDA 12
/// `vllm 0.11.0`; every wheel tagged `tags` (`cp312-cp312-manylinux_2_28_x86_64`).
pub(crate) fn pytorch_site(files: &[(&str, &str, &str, &str)], tags: &str) -> PyTorchSite {
    use std::collections::BTreeMap;
    use vari_test_support::site::{SiteOptions, StaticSite};
    use vari_test_support::wheels::TestWheel;

    let dir = tempfile::tempdir().unwrap();
    let whl = dir.path().join("site/whl");
    let mut pages: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut all: Vec<(&str, &str, String, &str)> = files
        .iter()
        .map(|(p, l, v, r)| (*p, *l, format!("{v}+{l}"), *r))
        .collect();
    all.push(("numpy", "cu128", "9.9.9".to_owned(), ">=3.9"));
    for (project, line, version, requires_python) in &all {
        let folder = whl.join(line);
        std::fs::create_dir_all(&folder).unwrap();
        let name = format!("{project}-{version}-{tags}.whl");
        let path = TestWheel::new(&name).write(&folder);
        let sha = vari_test_support::wheels::sha256_hex(&std::fs::read(path).unwrap());
        let href = format!("/whl/{line}/{}#sha256={sha}", name.replace('+', "%2B"));
        pages
            .entry((line.to_string(), project.to_string()))
            .or_default()
            .push_str(&format!(
                "    <a href=\"{href}\" data-requires-python=\"{}\">{name}</a><br/>\n",
                requires_python.replace('>', "&gt;").replace('<', "&lt;")
            ));
    }
    for ((line, project), links) in pages {
        let folder = whl.join(&line).join(&project);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("index.html"),
            format!(
                "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for {project}</h1>\n{links}  </body>\n</html>\n"
            ),
        )
        .unwrap();
    }
    // The default index: PyPI's plain builds.
    let wheels = dir.path().join("pypi-wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    for name in [
        "torch-2.9.0",
        "numpy-1.26.0",
        "cupy_cuda12x-14.2.0",
        "cupy_cuda13x-14.2.0",
    ] {
        TestWheel::new(&format!("{name}-{tags}.whl")).write(&wheels);
    }
    // RAPIDS' CUDA 12 cuDF, which requires CuPy's CUDA 12 build by its own name.
    TestWheel::new(&format!("cudf_cu12-25.10.0-{tags}.whl"))
        .requires(&["cupy-cuda12x>=13"])
        .write(&wheels);
    // vLLM's PyPI build: its CUDA line is only in its requirements.
    TestWheel::new(&format!("vllm-0.11.0-{tags}.whl"))
        .requires(&["torch==2.9.0", "nvidia-cuda-runtime-cu12==12.8.90"])
        .write(&wheels);
    run(vari()
        .args(["index", "build"])
        .arg(&wheels)
        .arg("-o")
        .arg(dir.path().join("site/pypi")))
    .expect_code(0);
    let host = StaticSite::serve(&dir.path().join("site"), SiteOptions::default());
    let base = host.base.clone();
    PyTorchSite {
        pypi: format!("{base}/pypi/simple/"),
        dir,
        _host: host,
        base,
    }
}

impl PyTorchSite {
    /// A user's catalog replacing the built-in PyTorch families (torch, torchvision, torchaudio,
    /// xformers: the `pytorch` group, all of whose members the proxy asks about) with the same
    /// builds on the stand-in's indexes.
    pub(crate) fn catalog(&self) -> PathBuf {
        let mut text = "schema = \"vari-families/1\"\n".to_owned();
        for project in ["torch", "torchvision", "torchaudio", "xformers"] {
            text.push_str(&format!(
                "\n[[family]]\nname = \"{project}\"\nsame-name = \"build\"\n"
            ));
            for (line, requires) in [
                (
                    "cu130",
                    "\"nvidia :: cuda_version_lower_bound :: 13.0\", \"nvidia :: sm_arch :: 80_real\", \"nvidia :: sm_arch :: 90_real\"",
                ),
                (
                    "cu128",
                    "\"nvidia :: cuda_version_lower_bound :: 12.0\", \"nvidia :: sm_arch :: 80_real\", \"nvidia :: sm_arch :: 90_real\"",
                ),
                ("cpu", ""),
            ] {
                text.push_str(&format!(
                    "\n[[family.build]]\nname = \"{line}\"\nindex = \"{}/whl/{line}\"\nlocal = \"{line}\"\n",
                    self.base
                ));
                match requires.is_empty() {
                    true => text.push_str("null = true\n"),
                    false => text.push_str(&format!("requires = [{requires}]\n")),
                }
            }
        }
        let path = self.dir.path().join("pytorch.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `vari select ARGS` for a profile, from the default index, with the stand-in's catalog.
    fn select(&self, args: &[&str], profile: &Path) -> crate::common::Run {
        let mut cmd = vari();
        cmd.arg("select")
            .args(args)
            .args(["--no-deps", "--python-version", "3.12"])
            .args(["--python-platform", "x86_64-manylinux_2_28"])
            .arg("--families")
            .arg(self.catalog())
            .arg("--profile")
            .arg(profile);
        if !args.contains(&"--index-url") {
            cmd.args(["--index-url", &self.pypi]);
        }
        run(&mut cmd)
    }
}

pub(crate) const CP312: &str = "cp312-cp312-manylinux_2_28_x86_64";

fn selected(json: &serde_json::Value) -> Vec<(String, String)> {
    json["selections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["version"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `vari select torch` against stand-ins of PyTorch's per-line indexes: an sm_80 CUDA 12.8
/// machine gets the cu128 build from the cu128 index, a CPU machine the CPU build, a version whose
/// `requires-python` excludes the target is passed over, `--explain` says why each other build
/// lost, and the cu128 index is never asked for another project (numpy comes from the default
/// index although the cu128 index lists a newer one).
#[test]
fn select_chooses_a_by_index_build_from_its_own_index() {
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.10.0", ">=3.13"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.10.0", ">=3.13"),
        ],
        CP312,
    );
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let json = site
        .select(&["--json", "torch", "numpy"], &a100)
        .expect_code(0)
        .json();
    assert_eq!(
        selected(&json),
        [
            ("torch".to_owned(), "2.9.0+cu128".to_owned()),
            ("numpy".to_owned(), "1.26.0".to_owned())
        ]
    );
    assert_eq!(
        json["selections"][0]["filename"],
        "torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"
    );
    assert_eq!(json["families"][0]["choice"]["chosen"]["build"], "cu128");
    assert_eq!(
        json["families"][0]["source"],
        format!("{}/whl/cu128", site.base)
    );
    assert_eq!(json["families"].as_array().unwrap().len(), 1, "{json}");

    let json = site
        .select(&["--json", "torch"], &cpu(site.dir.path()))
        .expect_code(0)
        .json();
    assert_eq!(
        selected(&json),
        [("torch".to_owned(), "2.9.0+cpu".to_owned())]
    );

    let text = site
        .select(&["--explain", "torch"], &a100)
        .expect_code(0)
        .stdout;
    assert!(
        text.starts_with(&format!(
            "torch: family torch chooses build cu128 (torch 2.9.0+cu128 from {}/whl/cu128): the \
             best of 2 builds that fit\n",
            site.base
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "  - cu130 (torch): no supported value for `nvidia :: cuda_version_lower_bound`"
        ),
        "{text}"
    );
    assert!(
        text.contains("  - cpu (torch): fits, but ranks 2 for this target"),
        "{text}"
    );

    // An explicit family index is selected from as given, with a note naming the better build.
    let cpu_index = format!("{}/whl/cpu", site.base);
    let out = site
        .select(&["--json", "torch", "--index-url", &cpu_index], &a100)
        .expect_code(0);
    assert_eq!(
        selected(&out.json()),
        [("torch".to_owned(), "2.9.0+cpu".to_owned())]
    );
    assert!(
        out.stderr.contains(&format!(
            "torch: {cpu_index} is the source of family torch's build cpu; selecting from it as \
             given (this target's best build is cu128)"
        )),
        "{}",
        out.stderr
    );
    // Without the catalog, torch is PyPI's plain build.
    let json = site
        .select(&["--json", "torch", "--no-families"], &a100)
        .expect_code(0)
        .json();
    assert_eq!(selected(&json), [("torch".to_owned(), "2.9.0".to_owned())]);
}

/// The group rule end to end: on a CUDA 13 machine torch alone takes cu130, but torchvision has
/// no cu130 build, so `vari select torch torchvision` takes cu128 for both and says why; a CUDA
/// 12 vLLM moves torch to cu128 likewise; when torchvision offers no line at all, one error names
/// both members and what each offers.
#[test]
fn torch_and_torchvision_take_one_line_together() {
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
            ("torchvision", "cu128", "0.24.0", ">=3.10"),
            ("torchvision", "cpu", "0.24.0", ">=3.10"),
        ],
        CP312,
    );
    let h100 = gpu(site.dir.path(), "h100", "13.0", "9.0");
    let alone = site
        .select(&["--json", "torch"], &h100)
        .expect_code(0)
        .json();
    assert_eq!(
        selected(&alone),
        [("torch".to_owned(), "2.9.0+cu130".to_owned())]
    );

    let json = site
        .select(&["--json", "torch", "torchvision"], &h100)
        .expect_code(0)
        .json();
    assert_eq!(
        selected(&json),
        [
            ("torch".to_owned(), "2.9.0+cu128".to_owned()),
            ("torchvision".to_owned(), "0.24.0+cu128".to_owned())
        ]
    );
    assert_eq!(json["families"][0]["group"]["name"], "pytorch");
    let text = site
        .select(&["--explain", "torch", "torchvision"], &h100)
        .expect_code(0)
        .stdout;
    assert!(
        text.contains(&format!(
            "torch: family torch chooses build cu128 (torch 2.9.0+cu128 from {}/whl/cu128): the \
             best line that torch, torchvision all offer (group pytorch)\n",
            site.base
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "  - cu130 (torch): fits, but group pytorch takes cu128: torchvision does not offer \
             cu130"
        ),
        "{text}"
    );

    // vLLM's PyPI build needs CUDA 12 (read from its requirements): torch takes its best CUDA
    // 12 line with it.
    let json = site
        .select(&["--json", "vllm", "torch"], &h100)
        .expect_code(0)
        .json();
    assert_eq!(
        selected(&json),
        [
            ("vllm".to_owned(), "0.11.0".to_owned()),
            ("torch".to_owned(), "2.9.0+cu128".to_owned())
        ]
    );
    assert_eq!(json["families"][1]["group"]["name"], "vllm");

    site.select(&["torch", "torchvision==9"], &h100)
        .expect_one_error(&[
            "torch, torchvision must take one line (group pytorch), but no line fits all of them: \
         torch offers cu130, cu128, cpu; torchvision offers none",
        ]);
}

/// `vari download torch` downloads the build the family chooses, from its own index.
#[test]
fn download_fetches_the_chosen_build() {
    let site = pytorch_site(
        &[
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
        ],
        CP312,
    );
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let dest = site.dir.path().join("dest");
    let out = run(vari()
        .args(["download", "torch", "-d"])
        .arg(&dest)
        .args(["--python-version", "3.12", "--python-platform"])
        .arg("x86_64-manylinux_2_28")
        .arg("--families")
        .arg(site.catalog())
        .arg("--profile")
        .arg(&a100)
        .args(["--index-url", &site.pypi]))
    .expect_code(0);
    let name = "torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";
    assert!(dest.join(name).is_file(), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(std::fs::read_dir(&dest).unwrap().count(), 1);
    assert!(
        out.stderr
            .contains("torch: family torch chooses build cu128 (torch 2.9.0+cu128)"),
        "{}",
        out.stderr
    );
}

/// `vari install cupy torch` with the real uv and the real pip into fresh environments: the
/// catalog chooses each family's build for the profile, uv and pip install it by its real name
/// (cupy → cupy-cuda12x from the default index, torch's cu128 or cu130 wheel from its own
/// index), each choice is noted, and `--no-families` installs PyPI's plain torch.
#[test]
fn install_installs_the_build_each_family_chooses_with_uv_and_pip() {
    use vari_test_support::venv::{bare_venv, test_venv, uv};
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.9"),
            ("torch", "cu128", "2.9.0", ">=3.9"),
            ("torch", "cpu", "2.9.0", ">=3.9"),
        ],
        "py3-none-any",
    );
    let installed = |venv: &Path| -> Vec<String> {
        let lib = venv.join("lib");
        let site_packages = std::fs::read_dir(lib)
            .unwrap()
            .flatten()
            .map(|e| e.path().join("site-packages"))
            .find(|p| p.is_dir())
            .unwrap();
        let mut names: Vec<String> = std::fs::read_dir(site_packages)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".dist-info") && !n.starts_with("pip"))
            .collect();
        names.sort();
        names
    };
    let install = |case: &str, installer: &Path, profile: &Path, extra: &[&str]| {
        let scratch = site.dir.path().join(case);
        let venv = scratch.join("venv");
        bare_venv(&venv);
        let mut cmd = vari();
        for (key, _) in std::env::vars() {
            if key.starts_with("PIP_") || key.starts_with("UV_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", &scratch)
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
            .env("UV_CACHE_DIR", scratch.join("uv-cache"))
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&scratch)
            .arg("install")
            .arg("--python")
            .arg(&venv)
            .arg("--installer")
            .arg(installer)
            .arg("--families")
            .arg(site.catalog())
            .arg("--profile")
            .arg(profile)
            .args(extra);
        if !extra.contains(&"--index-url") {
            cmd.args(["--index-url", &site.pypi]);
        }
        let out = run(&mut cmd).expect_code(0);
        (installed(&venv), out)
    };
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let (names, out) = install("uv", &uv(), &a100, &["cupy", "torch"]);
    assert_eq!(
        names,
        [
            "cupy_cuda12x-14.2.0.dist-info",
            "torch-2.9.0+cu128.dist-info"
        ],
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "cupy: the family catalog chose build cu12 (cupy-cuda12x 14.2.0) for this target: \
             installing cupy-cuda12x==14.2.0"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "torch: the family catalog chose build cu128 (torch 2.9.0+cu128) for this target: \
             installing torch @ {}/whl/cu128/torch-2.9.0%2Bcu128-py3-none-any.whl#sha256=",
            site.base
        )),
        "{}",
        out.stderr
    );

    let h100 = gpu(site.dir.path(), "h100", "13.0", "9.0");
    let (names, out) = install(
        "pip",
        &test_venv().join("bin/pip"),
        &h100,
        &["cupy", "torch"],
    );
    assert_eq!(
        names,
        [
            "cupy_cuda13x-14.2.0.dist-info",
            "torch-2.9.0+cu130.dist-info"
        ],
        "{}\n{}",
        out.stdout,
        out.stderr
    );

    // A build asked for by name is installed as asked; the catalog off, torch is PyPI's.
    let (names, out) = install(
        "explicit",
        &uv(),
        &h100,
        &["cupy-cuda12x", "torch", "--no-families"],
    );
    assert_eq!(
        names,
        ["cupy_cuda12x-14.2.0.dist-info", "torch-2.9.0.dist-info"],
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(!out.stderr.contains("family catalog"), "{}", out.stderr);

    // The family's own index named as the source: installed from it as given, with a note.
    let cpu_index = format!("{}/whl/cpu", site.base);
    let (names, out) = install(
        "explicit-index",
        &uv(),
        &h100,
        &["torch", "--index-url", &cpu_index],
    );
    assert_eq!(
        names,
        ["torch-2.9.0+cpu.dist-info"],
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "torch: {cpu_index} is the source of family torch's build cpu; selecting from it as \
             given (this target's best build is cu130)"
        )),
        "{}",
        out.stderr
    );
}

/// Plain pip and plain uv through `vari proxy` on a CUDA 12 machine: `pip install cupy` gets
/// cupy-cuda12x, by way of the proxy's selector wheel `cupy` that requires it, and the
/// environment holds exactly one copy of CuPy's files (the build's; the selector has none), also
/// with `cudf`, whose build requires `cupy-cuda12x` by name.
#[test]
fn plain_pip_and_uv_through_the_proxy_get_the_build_the_family_chooses() {
    use std::process::{Command, Stdio};
    use vari_test_support::venv::run_ok;
    let site = pytorch_site(&[], "py3-none-any");
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let mut child = vari()
        .args(["proxy", "--bind", "127.0.0.1:0", "--index-url", &site.pypi])
        .arg("--profile")
        .arg(&a100)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (alias, url) = crate::common::proxy_urls(&crate::common::first_stdout_line(&mut child));
    let contents =
        |venv: &Path| installed_names(venv, |n| n.starts_with("cupy") || n.starts_with("cudf"));
    // cuDF through its own selector, and its requirement on cupy-cuda12x met by the same build.
    let with_cudf = [
        "cudf-25.10.0.dist-info",
        "cudf_cu12",
        "cudf_cu12-25.10.0.dist-info",
        "cupy-14.2.0.dist-info",
        "cupy_cuda12x",
        "cupy_cuda12x-14.2.0.dist-info",
    ];

    let venv = pip_install(&site.dir.path().join("pip"), &alias, &["cupy", "cudf"]);
    assert_eq!(contents(&venv), with_cudf);

    let venv = uv_install(&site.dir.path().join("uv"), &url, &["cupy", "cudf"]);
    assert_eq!(contents(&venv), with_cudf);

    run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains(
            "cupy: serving the selector cupy-14.2.0-py3-none-any.whl requiring \
             cupy-cuda12x==14.2.0 (family cupy chooses build cu12 (cupy-cuda12x 14.2.0))"
        ),
        "{log}"
    );
}

/// Plain uv and pip through `vari proxy` asking for `torch` get the build the family chooses for
/// the target, from its own index: the cu128 build on an sm_80 CUDA 12.8 machine, served under
/// `torch` with its local tag, while `numpy` (also listed on the cu128 index) still comes from
/// the default index.
#[test]
fn plain_uv_and_pip_through_the_proxy_get_torch_from_its_lines_index() {
    use std::process::{Command, Stdio};
    use vari_test_support::venv::run_ok;
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.9"),
            ("torch", "cu128", "2.9.0", ">=3.9"),
            ("torch", "cpu", "2.9.0", ">=3.9"),
        ],
        "py3-none-any",
    );
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let mut child = vari()
        .args(["proxy", "--bind", "127.0.0.1:0", "--index-url", &site.pypi])
        .arg("--families")
        .arg(site.catalog())
        .arg("--profile")
        .arg(&a100)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (alias, url) = crate::common::proxy_urls(&crate::common::first_stdout_line(&mut child));
    let dist_infos =
        |venv: &Path| installed_names(venv, |n| n.ends_with(".dist-info") && !n.starts_with("pip"));
    let expected = ["numpy-1.26.0.dist-info", "torch-2.9.0+cu128.dist-info"];

    let venv = uv_install(&site.dir.path().join("uv"), &url, &["torch", "numpy"]);
    assert_eq!(dist_infos(&venv), expected);

    let venv = pip_install(&site.dir.path().join("pip"), &alias, &["torch", "numpy"]);
    assert_eq!(dist_infos(&venv), expected);

    run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains(&format!(
            "torch: serving build cu128 from {}/whl/cu128 (family torch chooses it for this \
             target)",
            site.base
        )),
        "{log}"
    );
}

/// The group rule across the proxy's pages: on a CUDA 13 machine where torchvision has no cu130
/// build, plain uv and pip asking for `torch torchvision` get both from the cu128 line, whichever
/// page they read first; so does `torch` alone (the proxy cannot know which members the
/// installer will ask for, so every member's page takes the line the group offers).
#[test]
fn plain_uv_and_pip_through_the_proxy_get_one_line_for_torch_and_torchvision() {
    use std::process::{Command, Stdio};
    use vari_test_support::venv::run_ok;
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.9"),
            ("torch", "cu128", "2.9.0", ">=3.9"),
            ("torch", "cpu", "2.9.0", ">=3.9"),
            ("torchvision", "cu128", "0.24.0", ">=3.9"),
            ("torchvision", "cpu", "0.24.0", ">=3.9"),
        ],
        "py3-none-any",
    );
    let h100 = gpu(site.dir.path(), "h100", "13.0", "9.0");
    let mut child = vari()
        .args(["proxy", "--bind", "127.0.0.1:0", "--index-url", &site.pypi])
        .arg("--families")
        .arg(site.catalog())
        .arg("--profile")
        .arg(&h100)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (alias, url) = crate::common::proxy_urls(&crate::common::first_stdout_line(&mut child));
    let dist_infos =
        |venv: &Path| installed_names(venv, |n| n.ends_with(".dist-info") && !n.starts_with("pip"));
    let both = [
        "torch-2.9.0+cu128.dist-info",
        "torchvision-0.24.0+cu128.dist-info",
    ];
    let venv = uv_install(&site.dir.path().join("uv"), &url, &["torchvision", "torch"]);
    assert_eq!(dist_infos(&venv), both);
    let venv = pip_install(
        &site.dir.path().join("pip"),
        &alias,
        &["torch", "torchvision"],
    );
    assert_eq!(dist_infos(&venv), both);
    let venv = uv_install(&site.dir.path().join("uv-torch"), &url, &["torch"]);
    assert_eq!(dist_infos(&venv), ["torch-2.9.0+cu128.dist-info"]);

    run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains(
            "torch: group pytorch takes build cu128 (torch, torchvision offer it for this target)"
        ),
        "{log}"
    );
}

/// One `vari proxy --target gpu=… --target cpu=…` serving family pages per class: through the
/// GPU class's URL plain uv and pip get torch's cu128 build and CuPy's CUDA 12 build, through
/// the CPU class's URL torch's CPU build, from the same proxy at the same time.
#[test]
fn a_proxy_for_machine_classes_serves_each_class_its_families_builds() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    use vari_test_support::venv::run_ok;
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.9"),
            ("torch", "cu128", "2.9.0", ">=3.9"),
            ("torch", "cpu", "2.9.0", ">=3.9"),
        ],
        "py3-none-any",
    );
    let a100 = gpu(site.dir.path(), "a100", "12.8", "8.0");
    let cpu = cpu(site.dir.path());
    let mut child = vari()
        .args(["proxy", "--bind", "127.0.0.1:0", "--index-url", &site.pypi])
        .arg("--families")
        .arg(site.catalog())
        .arg("--target")
        .arg(format!("gpu={}", a100.display()))
        .arg("--target")
        .arg(format!("cpu={}", cpu.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One line per class, in the order given; the reader is kept while the proxy runs.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut announced = |name: &str| {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.starts_with(&format!("{name} ")), "{line}");
        crate::common::proxy_urls(&line)
    };
    let (gpu_alias, gpu_url) = announced("gpu");
    let (cpu_alias, cpu_url) = announced("cpu");
    let dist_infos =
        |venv: &Path| installed_names(venv, |n| n.ends_with(".dist-info") && !n.starts_with("pip"));

    // CuPy by way of its selector (`cupy`, no files of its own) and the build it requires.
    let gpu_wanted = [
        "cupy-14.2.0.dist-info",
        "cupy_cuda12x-14.2.0.dist-info",
        "torch-2.9.0+cu128.dist-info",
    ];
    let venv = uv_install(
        &site.dir.path().join("uv-gpu"),
        &gpu_url,
        &["torch", "cupy"],
    );
    assert_eq!(dist_infos(&venv), gpu_wanted);
    let venv = pip_install(
        &site.dir.path().join("pip-gpu"),
        &gpu_alias,
        &["torch", "cupy"],
    );
    assert_eq!(dist_infos(&venv), gpu_wanted);
    let venv = uv_install(&site.dir.path().join("uv-cpu"), &cpu_url, &["torch"]);
    assert_eq!(dist_infos(&venv), ["torch-2.9.0+cpu.dist-info"]);
    let venv = pip_install(&site.dir.path().join("pip-cpu"), &cpu_alias, &["torch"]);
    assert_eq!(dist_infos(&venv), ["torch-2.9.0+cpu.dist-info"]);

    run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
    let output = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    for (class, line) in [("gpu", "cu128"), ("cpu", "cpu")] {
        assert!(
            log.lines()
                .any(|l| l.contains(&format!("class{{name={class}}}"))
                    && l.contains(&format!(
                        "torch: serving build {line} from {}/whl/{line}",
                        site.base
                    ))),
            "{class}: {log}"
        );
    }
}

/// The names in `venv`'s site-packages that `keep` selects, sorted.
pub(crate) fn installed_names(venv: &Path, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(vari_test_support::venv::site_packages(venv))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| keep(n))
        .collect();
    names.sort();
    names
}

/// A fresh environment under `scratch` into which real pip installed `packages` from `index`
/// (no configuration, a cache of its own): its path.
fn pip_install(scratch: &Path, index: &str, packages: &[&str]) -> std::path::PathBuf {
    use vari_test_support::venv::{bare_venv, run_ok, test_venv};
    let venv = scratch.join("venv");
    let python = bare_venv(&venv);
    run_ok(
        std::process::Command::new(test_venv().join("bin/pip"))
            .arg("--python")
            .arg(&python)
            .args(["install", "--index-url", index])
            .args(packages)
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    );
    venv
}

/// A fresh environment under `scratch` into which real uv installed `packages` from `index`
/// (no configuration, a cache of its own): its path.
fn uv_install(scratch: &Path, index: &str, packages: &[&str]) -> std::path::PathBuf {
    use vari_test_support::venv::{bare_venv, run_ok, uv};
    let venv = scratch.join("venv");
    bare_venv(&venv);
    run_ok(
        std::process::Command::new(uv())
            .args(["pip", "install", "--python"])
            .arg(&venv)
            .args(["--index-url", index])
            .args(packages)
            .env("UV_CACHE_DIR", scratch.join("uv-cache"))
            .env("UV_NO_CONFIG", "1"),
    );
    venv
}

/// A stand-in default index with JAX's layout: `jax 0.7.2` whose `cuda12` and `cuda13` extras
/// require the plugin of their line, `jax 0.4.0` from before the extras, `jaxlib` and both
/// plugins (all `py3-none-any`). Served on 127.0.0.1: the site and its `/simple/` URL.
pub(crate) fn jax_site(dir: &Path) -> (vari_test_support::site::StaticSite, String) {
    use vari_test_support::site::{SiteOptions, StaticSite};
    use vari_test_support::wheels::TestWheel;
    let wheels = dir.join("jax-wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    TestWheel::new("jax-0.7.2-py3-none-any.whl")
        .requires(&[
            "jaxlib==0.7.2",
            "jax-cuda12-plugin==0.7.2; extra == \"cuda12\"",
            "jax-cuda13-plugin==0.7.2; extra == \"cuda13\"",
        ])
        .write(&wheels);
    TestWheel::new("jax-0.4.0-py3-none-any.whl")
        .requires(&["jaxlib==0.4.0"])
        .write(&wheels);
    for name in [
        "jaxlib-0.7.2",
        "jaxlib-0.4.0",
        "jax_cuda12_plugin-0.7.2",
        "jax_cuda13_plugin-0.7.2",
    ] {
        TestWheel::new(&format!("{name}-py3-none-any.whl")).write(&wheels);
    }
    let site = dir.join("jax-site");
    run(vari()
        .args(["index", "build"])
        .arg(&wheels)
        .arg("-o")
        .arg(&site))
    .expect_code(0);
    let host = StaticSite::serve(&site, SiteOptions::default());
    let index = format!("{}/simple/", host.base);
    (host, index)
}

/// Plain pip and plain uv through `vari proxy` asking for `jax`: on a CUDA 12 machine they get
/// what `jax[cuda12]` gets (jax's own wheel, served with its `cuda12` extra's requirements made
/// plain ones, so the CUDA 12 plugin comes in as a dependency); on a CPU machine plain jax. The
/// installed jax is the rewritten copy (its METADATA requires the plugin without the extra), and
/// a pin on a release from before the extra gets that release as listed.
#[test]
fn plain_pip_and_uv_through_the_proxy_get_the_extra_the_family_chooses() {
    use std::process::{Command, Stdio};
    use vari_test_support::venv::run_ok;
    let dir = tempfile::tempdir().unwrap();
    let (_host, index) = jax_site(dir.path());
    let proxy = |profile: &Path| {
        let mut child = vari()
            .args(["proxy", "--bind", "127.0.0.1:0", "--index-url", &index])
            .arg("--profile")
            .arg(profile)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let urls = crate::common::proxy_urls(&crate::common::first_stdout_line(&mut child));
        (child, urls)
    };
    let stop = |child: std::process::Child| {
        run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
        let output = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let dist_infos =
        |venv: &Path| installed_names(venv, |n| n.ends_with(".dist-info") && !n.starts_with("pip"));
    let jax_metadata = |venv: &Path| {
        std::fs::read_to_string(
            vari_test_support::venv::site_packages(venv).join("jax-0.7.2.dist-info/METADATA"),
        )
        .unwrap()
    };

    let a100 = gpu(dir.path(), "a100", "12.8", "8.0");
    let (child, (alias, url)) = proxy(&a100);
    let with_cuda12 = [
        "jax-0.7.2.dist-info",
        "jax_cuda12_plugin-0.7.2.dist-info",
        "jaxlib-0.7.2.dist-info",
    ];
    let venv = pip_install(&dir.path().join("pip"), &alias, &["jax"]);
    assert_eq!(dist_infos(&venv), with_cuda12);
    assert!(
        jax_metadata(&venv).contains("Requires-Dist: jax-cuda12-plugin==0.7.2\n"),
        "{}",
        jax_metadata(&venv)
    );
    let venv = uv_install(&dir.path().join("uv"), &url, &["jax"]);
    assert_eq!(dist_infos(&venv), with_cuda12);
    assert!(
        jax_metadata(&venv).contains("Requires-Dist: jax-cuda12-plugin==0.7.2\n"),
        "{}",
        jax_metadata(&venv)
    );
    // A release from before the extra existed is served as listed.
    let venv = uv_install(&dir.path().join("uv-old"), &url, &["jax==0.4.0"]);
    assert_eq!(
        dist_infos(&venv),
        ["jax-0.4.0.dist-info", "jaxlib-0.4.0.dist-info"]
    );
    let log = stop(child);
    assert!(
        log.contains(
            "jax: serving 1 wheels with the requirements of extra cuda12 (family jax chooses \
             build cu12 for this target)"
        ),
        "{log}"
    );
    assert!(
        log.contains(
            "jax: 0.4.0 served as listed: nothing in their METADATA is behind extra cuda12"
        ),
        "{log}"
    );

    let (child, (alias, url)) = proxy(&cpu(dir.path()));
    let plain = ["jax-0.7.2.dist-info", "jaxlib-0.7.2.dist-info"];
    let venv = pip_install(&dir.path().join("pip-cpu"), &alias, &["jax"]);
    assert_eq!(dist_infos(&venv), plain);
    let venv = uv_install(&dir.path().join("uv-cpu"), &url, &["jax"]);
    assert_eq!(dist_infos(&venv), plain);
    assert!(
        !jax_metadata(&venv).contains("Requires-Dist: jax-cuda12-plugin==0.7.2\n"),
        "{}",
        jax_metadata(&venv)
    );
    let log = stop(child);
    assert!(!log.contains("requirements of extra"), "{log}");
}
