//! `vari config show`: the layers read from a scratch home, repository and `VARI_CONFIG`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::common::{run, vari};

/// A home, and a repository with a project; commands run in a directory inside the project.
struct Scratch {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    cwd: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let cwd = repo.join("src");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Self {
            _dir: dir,
            home,
            repo,
            cwd,
        }
    }

    /// `vari config show …` with this home (and an XDG_CONFIG_HOME inside it) and directory.
    fn vari(&self, args: &[&str]) -> Command {
        let mut cmd = vari();
        cmd.arg("config")
            .arg("show")
            .args(args)
            .current_dir(&self.cwd)
            // Other tests may turn the files off; these look for them.
            .env_remove("VARI_NO_CONFIG")
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.xdg());
        cmd
    }

    fn xdg(&self) -> PathBuf {
        self.home.join("xdg")
    }

    fn user_file(&self) -> PathBuf {
        self.xdg().join("vari").join("vari.toml")
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn show_says_where_each_value_came_from() {
    let s = Scratch::new();
    write(
        &s.user_file(),
        "prefer = [\"nvidia\"]\nforbid = [\"amd\"]\nindex-strategy = \"unsafe-best-match\"\n",
    );
    write(
        &s.repo.join("pyproject.toml"),
        "[project]\nname = \"app\"\n\n[tool.vari]\nprefer = [\"x86_64::level::v3\"]\nprofile = \"ci/gpu.toml\"\n",
    );
    write(
        &s.cwd.join("ci.toml"),
        "extra-index-url = [\"https://user:secret@download.example.com/whl\"]\n",
    );
    let project = s.repo.join("pyproject.toml");
    let shown = run(s.vari(&["--json"]).env("VARI_CONFIG", "ci.toml"))
        .expect_code(0)
        .json();
    let settings = &shown["settings"];
    assert_eq!(
        settings["prefer"],
        json!({"value": ["x86_64 :: level :: v3"], "layer": "project", "path": text(&project)})
    );
    assert_eq!(
        settings["forbid"],
        json!({"value": ["amd"], "layer": "user", "path": text(&s.user_file())})
    );
    assert_eq!(settings["index-strategy"]["value"], "unsafe-best-match");
    // A relative profile path is relative to the file that says it.
    assert_eq!(
        settings["profile"]["value"],
        text(&s.repo.join("ci/gpu.toml"))
    );
    // Credentials in URLs are never printed.
    assert_eq!(
        settings["extra-index-url"],
        json!({"value": ["https://download.example.com/whl/"], "layer": "VARI_CONFIG", "path": text(&s.cwd.join("ci.toml"))})
    );
    assert_eq!(
        settings["offline"],
        json!({"value": false, "layer": "default", "path": null})
    );
    assert_eq!(settings["profile"]["layer"], "project", "{settings}");
    assert_eq!(
        shown["files"],
        json!([
            {"layer": "user", "path": text(&s.user_file()), "found": true},
            {"layer": "project", "path": text(&project), "found": true},
            {"layer": "VARI_CONFIG", "path": text(&s.cwd.join("ci.toml")), "found": true},
        ])
    );
    // The human form: one row per key with its source, then the files.
    // Wide enough for the scratch paths beside the longest key (`max-variants-json-bytes`).
    let human = run(s
        .vari(&[])
        .env("VARI_CONFIG", "ci.toml")
        .env("COLUMNS", "240"))
    .expect_code(0);
    let row = |key: &str| {
        human
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("no {key} row in\n{}", human.stdout))
            .to_owned()
    };
    assert!(row("forbid").ends_with(&format!("user {}", s.user_file().display())));
    assert!(row("offline").ends_with("default"), "{}", row("offline"));
    assert!(!human.stdout.contains("secret"));
}

#[test]
fn without_files_every_key_is_a_default() {
    let s = Scratch::new();
    let shown = run(&mut s.vari(&["--json"])).expect_code(0).json();
    let settings = shown["settings"].as_object().unwrap();
    // 20 keys, and the build-family catalog's two (issue 35).
    assert_eq!(settings.len(), 22);
    assert!(
        settings.values().all(|v| v["layer"] == "default"),
        "{shown}"
    );
    // The network limits show their built-in defaults.
    assert_eq!(settings["max-page-bytes"]["value"], "67108864");
    assert_eq!(settings["max-metadata-bytes"]["value"], "16777216");
    assert_eq!(settings["http-deadline"]["value"], "300");
    assert_eq!(settings["low-speed-bytes"]["value"], "1024");
    assert_eq!(settings["low-speed-seconds"]["value"], "60");
    assert_eq!(settings["max-unsized-file-bytes"]["value"], "4294967296");
    // So do the file ceilings.
    assert_eq!(settings["max-input-bytes"]["value"], "16777216");
    assert_eq!(settings["max-inflate-ratio"]["value"], "200");
    // No machine classes.
    assert_eq!(settings["proxy.targets"]["value"], json!([]));
    // The built-in family catalog alone.
    assert_eq!(settings["families"]["value"], json!([]));
    assert_eq!(settings["no-families"]["value"], false);
    assert_eq!(
        shown["files"],
        json!([{"layer": "user", "path": text(&s.user_file()), "found": false}])
    );
}

#[test]
fn a_bad_key_is_one_error_line_naming_file_key_and_line() {
    let s = Scratch::new();
    let project = s.repo.join("pyproject.toml");
    write(
        &project,
        "[project]\nname = \"app\"\n\n[tool.vari]\nforbidd = [\"amd\"]\n",
    );
    run(&mut s.vari(&[])).expect_one_error(&[&format!(
        "{}: tool.vari.forbidd: unknown key (expected one of: prefer, forbid,",
        project.display()
    )]);
    write(&s.user_file(), "enable-optional = [\"NVIDIA\"]\n");
    write(&project, "");
    run(&mut s.vari(&[])).expect_one_error(&[
        &format!("{}: enable-optional[0]: ", s.user_file().display()),
        "(line 1)",
    ]);
}

#[test]
fn a_pyproject_that_is_not_toml_is_skipped_with_a_warning() {
    let s = Scratch::new();
    write(&s.cwd.join("pyproject.toml"), "[project\n");
    write(
        &s.repo.join("pyproject.toml"),
        "[tool.vari]\nforbid = [\"amd\"]\n",
    );
    let shown = run(&mut s.vari(&["--json"])).expect_code(0);
    assert_eq!(shown.json()["settings"]["forbid"]["value"], json!(["amd"]));
    let warning = shown.stderr.trim();
    assert!(
        warning.starts_with(&format!(
            "warning: {}: not valid TOML",
            s.cwd.join("pyproject.toml").display()
        )),
        "{warning}"
    );
    assert!(warning.ends_with("(skipped)"), "{warning}");
}

#[test]
fn rank_applies_the_projects_preferences_and_the_command_line_wins() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".git")).unwrap();
    std::fs::create_dir(project.path().join("src")).unwrap();
    crate::common::test_plugin_profile(&project.path().join("src"));
    std::fs::write(
        project.path().join("pyproject.toml"),
        "[tool.vari]\nprofile = \"src/plugin.json\"\nforbid = [\"installable_plugin::feat1\"]\n",
    )
    .unwrap();
    let file = crate::common::data("wheels/test_package-0-variants.json");
    let rank = |extra: &[&str]| {
        let mut cmd = crate::common::vari();
        cmd.env_remove("VARI_NO_CONFIG")
            .env("HOME", project.path())
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(project.path())
            .arg("rank")
            .arg(&file)
            .arg("--json")
            .args(extra);
        crate::common::run(&mut cmd).expect_code(0).json()["order"].clone()
    };
    // The profile and the forbidden feature come from [tool.vari].
    assert_eq!(rank(&[]), serde_json::json!(["bar", "fbe82642", "null"]));
    // A list on the command line replaces the configured one.
    assert_eq!(
        rank(&["--forbid", "installable_plugin::feat2"]),
        serde_json::json!(["60567bd9", "foo", "null"])
    );
}
