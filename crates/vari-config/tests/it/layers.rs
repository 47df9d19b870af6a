//! The layers, alone and together, read from real files in a scratch home, project and
//! repository.

use std::path::{Path, PathBuf};

use vari_config::{Config, ConfigEnv, Key, Layer, Shown};
use vari_core::ordering::SelectionOptions;

/// A scratch machine: a home with a config directory, and a repository with a project inside.
struct Scratch {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    /// A directory inside the project, where commands run.
    cwd: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let cwd = repo.join("src").join("pkg");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        Self {
            _dir: dir,
            home,
            repo,
            cwd,
        }
    }

    fn user_file(&self) -> PathBuf {
        self.home.join(".config").join("vari").join("vari.toml")
    }

    fn write_user(&self, text: &str) {
        write(&self.user_file(), text);
    }

    fn write_project(&self, text: &str) {
        write(&self.repo.join("pyproject.toml"), text);
    }

    fn env(&self, extra: &[(&str, &str)]) -> ConfigEnv {
        let mut vars = vec![("HOME".to_owned(), self.home.display().to_string())];
        vars.extend(
            extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        ConfigEnv::new(vars, Some(self.cwd.clone()))
    }

    fn load(&self, extra: &[(&str, &str)]) -> Config {
        Config::load(&self.env(extra)).unwrap()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn strings<T: ToString>(items: &[T]) -> Vec<String> {
    items.iter().map(ToString::to_string).collect()
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn the_user_layer_alone() {
    let s = Scratch::new();
    s.write_user("prefer = [\"nvidia\"]\nprofile = \"node.json\"\n");
    let config = s.load(&[]);
    let prefer = config.settings.prefer.as_ref().unwrap();
    assert_eq!(strings(&prefer.value), ["nvidia"]);
    assert_eq!(prefer.source.layer, Layer::User);
    assert_eq!(prefer.source.path, s.user_file());
    // A relative profile is relative to the file that names it.
    assert_eq!(
        config.profile(),
        Some(s.home.join(".config/vari/node.json").as_path())
    );
    assert!(config.files.iter().all(|f| f.found));
}

#[cfg(unix)]
#[test]
fn xdg_config_home_moves_the_user_file() {
    let s = Scratch::new();
    let xdg = s.home.join("xdg");
    write(&xdg.join("vari/vari.toml"), "forbid = [\"amd\"]\n");
    s.write_user("forbid = [\"intel\"]\n");
    let config = s.load(&[("XDG_CONFIG_HOME", xdg.to_str().unwrap())]);
    assert_eq!(strings(&config.settings.forbid.unwrap().value), ["amd"]);
}

#[test]
fn a_missing_user_file_is_looked_for_and_not_an_error() {
    let s = Scratch::new();
    let config = s.load(&[]);
    assert_eq!(config.settings, vari_config::Settings::default());
    assert_eq!(config.files.len(), 1);
    assert_eq!(config.files[0].layer, Layer::User);
    assert!(!config.files[0].found);
}

#[test]
fn the_project_layer_alone() {
    let s = Scratch::new();
    s.write_project(
        "[project]\nname = \"app\"\n\n[tool.vari]\nenable-optional = [\"nvidia\"]\nprofile = \"ci/gpu.toml\"\n",
    );
    let config = s.load(&[]);
    let enabled = config.settings.enable_optional.as_ref().unwrap();
    assert_eq!(strings(&enabled.value), ["nvidia"]);
    assert_eq!(enabled.source.layer, Layer::Project);
    assert_eq!(enabled.source.path, s.repo.join("pyproject.toml"));
    assert_eq!(config.profile(), Some(s.repo.join("ci/gpu.toml").as_path()));
}

#[test]
fn the_nearest_pyproject_with_tool_vari_counts() {
    let s = Scratch::new();
    s.write_project("[tool.vari]\nprefer = [\"amd\"]\n");
    // Nearer, but without [tool.vari]: skipped. Nearer still, not TOML: skipped with a warning.
    write(
        &s.repo.join("src/pyproject.toml"),
        "[project]\nname = \"x\"\n",
    );
    write(&s.cwd.join("pyproject.toml"), "[project\n");
    let config = s.load(&[]);
    assert_eq!(strings(&config.settings.prefer.unwrap().value), ["amd"]);
    assert_eq!(config.warnings.len(), 1);
    assert_eq!(config.warnings[0].path, s.cwd.join("pyproject.toml"));
    assert!(config.warnings[0].message.starts_with("not valid TOML"));
}

#[test]
fn the_project_search_stops_at_the_repository_root() {
    let s = Scratch::new();
    // Above the repository: not this project's.
    write(
        &s.repo.parent().unwrap().join("pyproject.toml"),
        "[tool.vari]\nprefer = [\"amd\"]\n",
    );
    let config = s.load(&[]);
    assert!(config.settings.prefer.is_none());
}

#[test]
fn the_vari_config_layer_alone() {
    let s = Scratch::new();
    write(
        &s.cwd.join("conf/ci.toml"),
        "no-variants = true\nfind-links = [\"../wheels\"]\n",
    );
    std::fs::create_dir_all(s.cwd.join("wheels")).unwrap();
    let config = s.load(&[("VARI_CONFIG", "conf/ci.toml")]);
    let no_variants = config.settings.no_variants.as_ref().unwrap();
    assert!(no_variants.value);
    assert_eq!(no_variants.source.layer, Layer::Environment);
    let links = &config.settings.find_links.as_ref().unwrap().value;
    assert_eq!(
        links[0],
        vari_client::FindLinks::Directory(s.cwd.join("conf").join("../wheels"))
    );
    assert!(config.selection_defaults().no_variants);
}

#[test]
fn a_missing_vari_config_file_is_an_error() {
    let s = Scratch::new();
    let e = Config::load(&s.env(&[("VARI_CONFIG", "nope.toml")])).unwrap_err();
    assert_eq!(e.path, s.cwd.join("nope.toml"));
    assert_eq!(
        e.to_string(),
        format!(
            "{}: does not exist (named by VARI_CONFIG)",
            e.path.display()
        )
    );
}

#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn stronger_layers_replace_weaker_ones_key_by_key() {
    let s = Scratch::new();
    s.write_user(
        "prefer = [\"nvidia\"]\nforbid = [\"amd\"]\noffline = true\nindex-strategy = \"unsafe-best-match\"\n",
    );
    s.write_project("[tool.vari]\nprefer = [\"intel\"]\nenable-optional = [\"nvidia\"]\n");
    write(
        &s.cwd.join("ci.toml"),
        "prefer = [\"x86_64::level::v3\"]\noffline = false\n",
    );
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    let layer_of = |key: Key| {
        config
            .entries()
            .into_iter()
            .find(|e| e.key == key)
            .unwrap()
            .source
            .map(|s| s.layer)
    };
    assert_eq!(
        strings(&config.settings.prefer.as_ref().unwrap().value),
        ["x86_64 :: level :: v3"]
    );
    assert_eq!(layer_of(Key::Prefer), Some(Layer::Environment));
    assert_eq!(layer_of(Key::Forbid), Some(Layer::User));
    assert_eq!(layer_of(Key::EnableOptional), Some(Layer::Project));
    assert_eq!(layer_of(Key::Offline), Some(Layer::Environment));
    assert_eq!(layer_of(Key::IndexStrategy), Some(Layer::User));
    assert_eq!(layer_of(Key::IndexUrl), None);
    assert_eq!(
        config.files.iter().map(|f| f.layer).collect::<Vec<_>>(),
        [Layer::User, Layer::Project, Layer::Environment]
    );
    // An empty list in a stronger layer clears a weaker layer's list.
    write(&s.cwd.join("ci.toml"), "forbid = []\n");
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    assert!(config.selection_defaults().forbid.is_empty());
}

#[test]
fn vari_no_config_skips_the_user_and_project_files() {
    let s = Scratch::new();
    s.write_user("prefer = [\"nvidia\"]\n");
    s.write_project("[tool.vari]\nforbid = [\"amd\"]\n");
    write(&s.cwd.join("ci.toml"), "offline = true\n");
    let config = s.load(&[("VARI_NO_CONFIG", "1"), ("VARI_CONFIG", "ci.toml")]);
    assert!(config.settings.prefer.is_none());
    assert!(config.settings.forbid.is_none());
    assert!(config.settings.offline.is_some());
}

#[test]
fn the_command_line_wins() {
    let s = Scratch::new();
    write(
        &s.cwd.join("ci.toml"),
        "prefer = [\"nvidia\"]\nforbid = [\"amd\"]\nenable-optional = [\"nvidia\"]\nno-variants = true\n",
    );
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    // Nothing on the command line: the configuration's options.
    let options = config.selection(SelectionOptions::default());
    assert_eq!(options, config.selection_defaults());
    assert_eq!(strings(&options.prefer), ["nvidia"]);
    assert!(options.no_variants);
    // A list on the command line replaces the configured list; the others stay.
    let options = config.selection(SelectionOptions {
        prefer: vec!["intel".parse().unwrap(), "x86_64".parse().unwrap()],
        ..SelectionOptions::default()
    });
    assert_eq!(strings(&options.prefer), ["intel", "x86_64"]);
    assert_eq!(strings(&options.forbid), ["amd"]);
    // Asking for one variant overrides a configured no-variants.
    let options = config.selection(SelectionOptions {
        variant: Some("cu128".parse().unwrap()),
        ..SelectionOptions::default()
    });
    assert!(!options.no_variants);
    assert_eq!(options.variant.unwrap().as_str(), "cu128");
}

#[test]
fn bad_keys_name_the_file_key_and_line() {
    let s = Scratch::new();
    s.write_project(
        "[project]\nname = \"x\"\n\n[tool.vari]\nprefer = [\"nvidia\"]\nforbidd = [\"amd\"]\n",
    );
    let e = Config::load(&s.env(&[])).unwrap_err();
    let file = s.repo.join("pyproject.toml");
    assert_eq!(e.path, file);
    assert_eq!(e.key.as_deref(), Some("tool.vari.forbidd"));
    assert_eq!(e.line, Some(6));
    assert!(
        e.to_string().starts_with(&format!(
            "{}: tool.vari.forbidd: unknown key (expected one of: prefer, forbid,",
            file.display()
        )),
        "{e}"
    );
    // A typo in a pattern names the entry.
    s.write_project("[tool.vari]\nprefer = [\"nvidia\", \"nvidia::sm arch\"]\n");
    let e = Config::load(&s.env(&[])).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("tool.vari.prefer[1]"));
    assert_eq!(e.line, Some(2));
    // A bad URL says what is wrong and hides credentials.
    s.write_project("[tool.vari]\nindex-url = \"ftp://u:secret@example.com/simple\"\n");
    let e = Config::load(&s.env(&[])).unwrap_err();
    assert!(e.message.contains("unsupported scheme `ftp`"), "{e}");
    assert!(!e.to_string().contains("secret"), "{e}");
    // A user file that is not valid TOML is an error (it is vari's own file).
    s.write_project("");
    write(&s.home.join("xdg/vari/vari.toml"), "prefer = [\n");
    let xdg = s.home.join("xdg");
    let e = Config::load(&s.env(&[("XDG_CONFIG_HOME", xdg.to_str().unwrap())])).unwrap_err();
    assert!(e.message.starts_with("not valid TOML"), "{e}");
}

#[test]
fn entries_show_defaults_for_unset_keys() {
    let s = Scratch::new();
    let config = s.load(&[]);
    let entries = config.entries();
    assert_eq!(entries.iter().map(|e| e.key).collect::<Vec<_>>(), Key::ALL);
    let value = |key: Key| entries.iter().find(|e| e.key == key).unwrap().value.clone();
    assert_eq!(
        value(Key::IndexUrl),
        Some(Shown::Text("https://pypi.org/simple/".into()))
    );
    assert_eq!(
        value(Key::IndexStrategy),
        Some(Shown::Text("first-index".into()))
    );
    assert_eq!(value(Key::Profile), None);
    assert!(entries.iter().all(|e| e.source.is_none()));
}

#[test]
fn index_settings_reach_the_client_settings() {
    let s = Scratch::new();
    write(
        &s.cwd.join("ci.toml"),
        "index-url = \"http://127.0.0.1:9/simple\"\nextra-index-url = [\"http://127.0.0.1:9/extra\"]\nindex-strategy = \"unsafe-best-match\"\noffline = true\n",
    );
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    let client = config.client_settings(vari_client::ClientSettings::default());
    assert_eq!(
        strings(&client.indexes),
        ["http://127.0.0.1:9/simple/", "http://127.0.0.1:9/extra/"]
    );
    assert_eq!(client.strategy, vari_client::IndexStrategy::UnsafeBestMatch);
    assert_eq!(client.cache_mode, vari_client::CacheMode::Offline);
    assert_eq!(client.limits, vari_client::Limits::default());
    // The limits reach the client too.
    write(
        &s.cwd.join("ci.toml"),
        "max-page-bytes = 1000\nmax-variants-json-bytes = 2000\nmax-metadata-bytes = 3000\nhttp-deadline = 4\n\
         low-speed-bytes = 50\nlow-speed-seconds = 7\n",
    );
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    let limits = config
        .client_settings(vari_client::ClientSettings::default())
        .limits;
    assert_eq!(
        (
            limits.max_page_bytes,
            limits.max_variants_json_bytes,
            limits.max_metadata_bytes
        ),
        (1000, 2000, 3000)
    );
    assert_eq!(limits.deadline, std::time::Duration::from_secs(4));
    assert_eq!(
        (limits.low_speed_bytes, limits.low_speed_time),
        (50, std::time::Duration::from_secs(7))
    );
    // extra-index-url alone keeps the default index first.
    write(
        &s.cwd.join("ci.toml"),
        "extra-index-url = [\"http://127.0.0.1:9/extra\"]\n",
    );
    let config = s.load(&[("VARI_CONFIG", "ci.toml")]);
    let client = config.client_settings(vari_client::ClientSettings::default());
    assert_eq!(
        strings(&client.indexes),
        ["https://pypi.org/simple/", "http://127.0.0.1:9/extra/"]
    );
}
