//! `vari families`: the build-family catalog (issue 35), the user's catalog files through
//! `--families`, `VARI_FAMILIES` and vari.toml, `--no-families`, and `vari families check` on
//! good and hostile files.

use std::path::{Path, PathBuf};

use crate::common::{run, vari};

/// A hardware-facts profile with a CUDA driver and a GPU, as `dir/NAME.toml`.
fn gpu(dir: &Path, name: &str, cuda: &str, capability: &str) -> PathBuf {
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

fn cpu(dir: &Path) -> PathBuf {
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

    // Asked for by name: exactly that build, no family step.
    let json = select("cupy-cuda12x", &h100).expect_code(0).json();
    assert_eq!(chosen(&json), ("cupy-cuda12x".into(), "14.2.0".into()));
    assert_eq!(json["families"], serde_json::json!([]));
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
