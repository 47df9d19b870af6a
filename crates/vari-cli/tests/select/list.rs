//! `vari list`: real virtual environments (made by the test venv's Python), with a variant wheel
//! installed by real pip, hand-made `.dist-info` directories, and a fixture wheel unpacked as an
//! installer lays it out; compared with what `pip list` and the wheels' own `variant.json` say.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{data, run, vari, vari_run};

use vari_test_support::venv::{python as test_venv_python, run_ok, site_packages};
use vari_test_support::wheels::{member_text, metadata_header, variant_of};

fn check(command: &mut Command) -> String {
    String::from_utf8(run_ok(command).stdout).unwrap()
}

/// A new virtual environment (without pip: nothing in it but what a test puts there) and its
/// site-packages directory.
fn new_venv(dir: &Path) -> (PathBuf, PathBuf) {
    let venv = dir.join("venv");
    vari_test_support::venv::bare_venv(&venv);
    let site = site_packages(&venv);
    (venv, site)
}

/// Installs a fixture variant wheel with the test venv's pip, under its name without the label
/// (released pip rejects variant filenames; `vari proxy` serves them renamed the same way).
fn pip_install_renamed(venv: &Path, fixture: &str, scratch: &Path) {
    let (stem, _label) = fixture
        .strip_suffix(".whl")
        .unwrap()
        .rsplit_once('-')
        .unwrap();
    let renamed = scratch.join(format!("{stem}.whl"));
    std::fs::copy(data(&format!("wheels/{fixture}")), &renamed).unwrap();
    check(
        Command::new(test_venv_python())
            .args(["-m", "pip", "--python"])
            .arg(venv.join("bin/python"))
            .args(["install", "--no-deps", "--no-index", "--quiet"])
            .args(["--disable-pip-version-check", "--no-cache-dir"])
            .arg(&renamed),
    );
}

/// Writes a `.dist-info` directory with METADATA and, for a variant, `variant.json`.
fn dist_info(site: &Path, name: &str, version: &str, variant_json: Option<&Value>) {
    let dir = site.join(format!(
        "{}-{version}.dist-info",
        name.replace(['-', '.'], "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("METADATA"),
        format!("Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n"),
    )
    .unwrap();
    if let Some(json) = variant_json {
        std::fs::write(dir.join("variant.json"), json.to_string()).unwrap();
    }
}

/// The `{"name", "version", "label", "properties"}` entry a fixture wheel should be listed as,
/// from its own METADATA and `variant.json`, read with zip and serde_json alone.
fn expected_entry(fixture: &str) -> Value {
    let path = data(&format!("wheels/{fixture}"));
    let metadata = member_text(&std::fs::read(&path).unwrap(), ".dist-info/METADATA");
    let (label, properties) = variant_of(&path);
    json!({
        "name": metadata_header(&metadata, "Name"),
        "version": metadata_header(&metadata, "Version"),
        "label": label,
        "properties": properties
    })
}

fn torch_cu128() -> Value {
    json!({
        "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {"cu128": {"nvidia": {
            "cuda_version_lower_bound": ["12.8"],
            "sm_arch": ["90_real", "80_real"]
        }}}
    })
}

#[test]
fn lists_pip_installed_and_hand_made_distributions_with_their_variants() {
    let dir = tempfile::tempdir().unwrap();
    let (venv, site) = new_venv(dir.path());
    let fixture = "test_package-0-py3-none-any-foo.whl";
    pip_install_renamed(&venv, fixture, dir.path());
    dist_info(&site, "torch", "2.10.0", Some(&torch_cu128()));
    dist_info(&site, "Plain.Pkg", "1.0", None);

    let listed = run(vari().args(["list", "--json", "--python"]).arg(&venv))
        .expect_code(0)
        .json();
    let expected = json!({"packages": [
        {"name": "Plain.Pkg", "version": "1.0", "label": null, "properties": []},
        expected_entry(fixture),
        {"name": "torch", "version": "2.10.0", "label": "cu128", "properties": [
            "nvidia :: cuda_version_lower_bound :: 12.8",
            "nvidia :: sm_arch :: 80_real",
            "nvidia :: sm_arch :: 90_real",
        ]},
    ]});
    assert_eq!(listed, expected);

    // The same distributions and versions as pip's own listing.
    let pip: Value = serde_json::from_str(&check(
        Command::new(test_venv_python())
            .args(["-m", "pip", "--python"])
            .arg(venv.join("bin/python"))
            .args(["list", "--format", "json", "--disable-pip-version-check"]),
    ))
    .unwrap();
    let pairs = |v: &Value| {
        let mut pairs: Vec<(String, String)> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let name = p["name"]
                    .as_str()
                    .unwrap()
                    .to_lowercase()
                    .replace(['_', '.'], "-");
                (name, p["version"].as_str().unwrap().to_owned())
            })
            .collect();
        pairs.sort();
        pairs
    };
    assert_eq!(pairs(&listed["packages"]), pairs(&pip));

    // The active virtual environment is the default target.
    let active = run(vari().args(["list", "--json"]).env("VIRTUAL_ENV", &venv))
        .expect_code(0)
        .json();
    assert_eq!(active, expected);

    // The human table: a summary line, then one row per distribution.
    let human = run(vari().args(["list", "--python"]).arg(&venv)).expect_code(0);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert!(
        lines[0].starts_with("3 distributions, 2 variants in "),
        "{}",
        human.stdout
    );
    let torch = lines.iter().find(|l| l.starts_with("torch ")).unwrap();
    assert!(
        torch.contains("cu128") && torch.contains("nvidia :: cuda_version_lower_bound :: 12.8"),
        "{torch}"
    );
    assert!(
        human
            .stdout
            .contains("nvidia :: sm_arch :: 80_real 90_real"),
        "{}",
        human.stdout
    );
}

#[test]
fn lists_a_fixture_wheel_unpacked_into_site_packages() {
    let dir = tempfile::tempdir().unwrap();
    let (venv, site) = new_venv(dir.path());
    let fixture = "test_package-0-py3-none-any-5d8be4b9.whl";
    zip::ZipArchive::new(std::fs::File::open(data(&format!("wheels/{fixture}"))).unwrap())
        .unwrap()
        .extract(&site)
        .unwrap();
    let listed = run(vari().args(["list", "--json", "--python"]).arg(&venv))
        .expect_code(0)
        .json();
    assert_eq!(listed, json!({"packages": [expected_entry(fixture)]}));
}

#[test]
fn a_broken_variant_json_warns_and_the_distribution_is_still_listed() {
    let dir = tempfile::tempdir().unwrap();
    let (venv, site) = new_venv(dir.path());
    let mut two = torch_cu128();
    two["variants"]["null"] = json!({});
    dist_info(&site, "torch", "2.10.0", Some(&two));
    let listed = run(vari().args(["list", "--json", "--python"]).arg(&venv)).expect_code(0);
    assert_eq!(
        listed.json(),
        json!({"packages": [{"name": "torch", "version": "2.10.0", "label": null, "properties": []}]})
    );
    let warning = listed.stderr.trim();
    assert!(warning.starts_with("warning: "), "{warning}");
    assert!(
        warning.contains("torch-2.10.0.dist-info/variant.json: variants: a wheel's variant.json must list exactly one variant, found 2"),
        "{warning}"
    );
}

#[test]
fn a_python_that_does_not_exist_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-venv");
    vari_run(["list".as_ref(), "--python".as_ref(), missing.as_os_str()]).expect_one_error(&[
        missing.to_str().unwrap(),
        "does not exist",
        "--python",
    ]);
}
