//! Finding and merging the layers, and handing the result to the libraries that use it.

use std::io;
use std::path::{Path, PathBuf};

use vari_client::{CacheMode, ClientSettings, IndexStrategy, Limits};
use vari_core::ordering::SelectionOptions;

use crate::error::ConfigError;
use crate::key::Key;
use crate::locate::{project_candidates, user_config_file, ConfigEnv, CONFIG_ENV, NO_CONFIG_ENV};
use crate::read::{parse, settings_in, Placement};
use crate::settings::{strategy_name, Layer, Settings, Shown, Source};

/// A configuration file that was looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Its layer.
    pub layer: Layer,
    /// Where it is (or would be).
    pub path: PathBuf,
    /// Whether it exists and gave settings.
    pub found: bool,
}

/// The merged configuration: the settings, the files looked at, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Every setting, each with the layer and file it came from.
    pub settings: Settings,
    /// The files looked at, weakest layer first (the user file even when it does not exist).
    pub files: Vec<ConfigFile>,
    /// Files skipped because they could not be parsed: a `pyproject.toml` met during the
    /// project search that is not valid TOML (it may belong to a neighbour, and it cannot be
    /// known whether it holds `[tool.vari]`).
    pub warnings: Vec<ConfigError>,
}

impl Config {
    /// Finds and merges the layers, weakest first: the user's `vari.toml`
    /// ([`user_config_file`]); the nearest `pyproject.toml` with a `[tool.vari]` table, searched
    /// from the current directory up to the repository root (the directory holding `.git`) or
    /// the filesystem root; the file `VARI_CONFIG` names (relative to the current directory).
    /// A stronger layer replaces a weaker one's value key by key.
    ///
    /// A missing user file is not an error; a missing `VARI_CONFIG` file is. With
    /// `VARI_NO_CONFIG` set, the user and project files are not looked for.
    pub fn load(env: &ConfigEnv) -> Result<Self, ConfigError> {
        let mut config = Config::default();
        if env.var(NO_CONFIG_ENV).is_none() {
            if let Some(path) = user_config_file(|name| env.var(name).map(str::to_owned)) {
                config.read_user(path)?;
            }
            if let Some(start) = env.current_dir() {
                config.read_project(start)?;
            }
        }
        if let Some(named) = env.var(CONFIG_ENV) {
            let path = match env.current_dir() {
                Some(dir) => dir.join(named),
                None => PathBuf::from(named),
            };
            let text = read_text(&path)?.ok_or_else(|| {
                ConfigError::new(&path, format!("does not exist (named by {CONFIG_ENV})"))
            })?;
            let doc = parse(&text, &path)?;
            let settings = settings_in(&doc, &path, Layer::Environment, Placement::Root)?;
            config.add(Layer::Environment, path, settings);
        }
        Ok(config)
    }

    /// [`Config::load`] with the process's environment and current directory.
    pub fn from_process_env() -> Result<Self, ConfigError> {
        Self::load(&ConfigEnv::from_process())
    }

    fn read_user(&mut self, path: PathBuf) -> Result<(), ConfigError> {
        match read_text(&path)? {
            Some(text) => {
                let doc = parse(&text, &path)?;
                let settings = settings_in(&doc, &path, Layer::User, Placement::Root)?;
                self.add(Layer::User, path, settings);
            }
            None => self.files.push(ConfigFile {
                layer: Layer::User,
                path,
                found: false,
            }),
        }
        Ok(())
    }

    fn read_project(&mut self, start: &Path) -> Result<(), ConfigError> {
        for path in project_candidates(start) {
            let Some(text) = read_text(&path)? else {
                continue;
            };
            let doc = match parse(&text, &path) {
                Ok(doc) => doc,
                Err(e) => {
                    self.warnings.push(e);
                    continue;
                }
            };
            if let Some(settings) = settings_in(&doc, &path, Layer::Project, Placement::ToolVari)? {
                self.add(Layer::Project, path, Some(settings));
                return Ok(());
            }
        }
        Ok(())
    }

    fn add(&mut self, layer: Layer, path: PathBuf, settings: Option<Settings>) {
        let found = settings.is_some();
        if let Some(settings) = settings {
            self.settings.overlay(settings);
        }
        self.files.push(ConfigFile { layer, path, found });
    }

    /// The configuration's selection options, as if given on the command line: `prefer`,
    /// `forbid`, `enable-optional`, `no-variants` (no layer can force one `variant`: a label
    /// belongs to one package, preferences to every package).
    pub fn selection_defaults(&self) -> SelectionOptions {
        let s = &self.settings;
        SelectionOptions {
            prefer: s
                .prefer
                .as_ref()
                .map(|p| p.value.clone())
                .unwrap_or_default(),
            forbid: s
                .forbid
                .as_ref()
                .map(|p| p.value.clone())
                .unwrap_or_default(),
            variant: None,
            no_variants: s.no_variants.as_ref().is_some_and(|n| n.value),
            enable_optional: s
                .enable_optional
                .as_ref()
                .map(|e| e.value.iter().cloned().collect())
                .unwrap_or_default(),
        }
    }

    /// The options a selection uses: the command line's over the configuration's.
    ///
    /// A list the command line gives (`prefer`, `forbid`, `enable_optional` not empty)
    /// replaces the configuration's list rather than adding to it, so that one command can say
    /// exactly what it wants whatever the files say. `no_variants` is on when the command line
    /// says so, or when the configuration does and the command line names no `variant` (asking
    /// for one variant overrides a configured "no variants").
    ///
    /// ```
    /// use vari_core::ordering::SelectionOptions;
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("vari.toml"), "prefer = [\"nvidia\"]\nforbid = [\"amd\"]\n").unwrap();
    /// let env = vari_config::ConfigEnv::new([("VARI_CONFIG", "vari.toml")], Some(dir.path().into()));
    /// let config = vari_config::Config::load(&env).unwrap();
    /// let command_line = SelectionOptions { prefer: vec!["x86_64".parse().unwrap()], ..SelectionOptions::default() };
    /// let options = config.selection(command_line);
    /// assert_eq!(options.prefer[0].to_string(), "x86_64");   // the command line's list
    /// assert_eq!(options.forbid[0].to_string(), "amd");      // the file's
    /// ```
    pub fn selection(&self, command_line: SelectionOptions) -> SelectionOptions {
        let defaults = self.selection_defaults();
        let or_default = |given: Vec<_>, default: Vec<_>| match given.is_empty() {
            true => default,
            false => given,
        };
        let no_variants =
            command_line.no_variants || (defaults.no_variants && command_line.variant.is_none());
        SelectionOptions {
            prefer: or_default(command_line.prefer, defaults.prefer),
            forbid: or_default(command_line.forbid, defaults.forbid),
            enable_optional: match command_line.enable_optional.is_empty() {
                true => defaults.enable_optional,
                false => command_line.enable_optional,
            },
            variant: command_line.variant,
            no_variants,
        }
    }

    /// The file ceilings the configuration raises (`max-input-bytes`, `max-inflate-ratio`), for
    /// a front-end to apply once at start-up; the environment's `VARI_MAX_INPUT_BYTES` and
    /// `VARI_MAX_INFLATE_RATIO` win over them.
    pub fn file_limits(&self) -> FileLimits {
        FileLimits {
            max_input_bytes: self.settings.max_input_bytes.as_ref().map(|s| s.value),
            max_inflate_ratio: self
                .settings
                .max_inflate_ratio
                .as_ref()
                .and_then(|s| std::num::NonZeroU64::new(s.value)),
        }
    }

    /// The configured target profile (absolute, or relative to the current directory when the
    /// file that set it was named by a relative `VARI_CONFIG` without a current directory). A
    /// front-end uses it only when the command line names no profile and no other hardware
    /// source (a snapshot).
    pub fn profile(&self) -> Option<&Path> {
        self.settings.profile()
    }

    /// The build-family catalog files (`families`), absolute, weakest first as listed.
    pub fn families(&self) -> &[PathBuf] {
        self.settings
            .families
            .as_ref()
            .map(|s| s.value.as_slice())
            .unwrap_or(&[])
    }

    /// Whether `no-families = true` turns the build-family catalog off.
    pub fn no_families(&self) -> bool {
        self.settings.no_families.as_ref().is_some_and(|s| s.value)
    }

    /// The index client's settings with the configuration's index settings put over `base`:
    /// `index-url` replaces the first index, `extra-index-url` follows it, `find-links`,
    /// `index-strategy`, `offline` and the limits (`max-page-bytes`,
    /// `max-variants-json-bytes`, `max-metadata-bytes`, `http-deadline`, `low-speed-bytes`,
    /// `low-speed-seconds`) replace `base`'s. A front-end applies its command-line options
    /// after this; the client applies the `VARI_MAX_*_BYTES`, `VARI_HTTP_DEADLINE` and
    /// `VARI_LOW_SPEED_*` variables over everything.
    pub fn client_settings(&self, mut base: ClientSettings) -> ClientSettings {
        let s = &self.settings;
        if let Some(index) = &s.index_url {
            base.indexes = vec![index.value.clone()];
        }
        if let Some(extra) = &s.extra_index_url {
            base.indexes.truncate(1);
            base.indexes.extend(extra.value.iter().cloned());
        }
        if let Some(links) = &s.find_links {
            base.find_links = links.value.clone();
        }
        if let Some(strategy) = &s.index_strategy {
            base.strategy = strategy.value;
        }
        let limits = &mut base.limits;
        for (setting, slot) in [
            (&s.max_page_bytes, &mut limits.max_page_bytes),
            (
                &s.max_variants_json_bytes,
                &mut limits.max_variants_json_bytes,
            ),
            (&s.max_metadata_bytes, &mut limits.max_metadata_bytes),
            (&s.low_speed_bytes, &mut limits.low_speed_bytes),
            (
                &s.max_unsized_file_bytes,
                &mut limits.max_unsized_file_bytes,
            ),
        ] {
            if let Some(setting) = setting {
                *slot = setting.value;
            }
        }
        if let Some(deadline) = &s.http_deadline {
            limits.deadline = deadline.value;
        }
        if let Some(window) = &s.low_speed_seconds {
            limits.low_speed_time = window.value;
        }
        if let Some(offline) = &s.offline {
            base.cache_mode = match offline.value {
                true => CacheMode::Offline,
                false => CacheMode::Normal,
            };
        }
        base
    }

    /// Every key with its effective value and source, in [`Key::ALL`] order: the configured
    /// value and its file, else `None` with the built-in default (`None` for `profile`: no
    /// profile means this machine).
    pub fn entries(&self) -> Vec<Entry<'_>> {
        Key::ALL
            .into_iter()
            .map(|key| match self.settings.shown(key) {
                Some((value, source)) => Entry {
                    key,
                    value: Some(value),
                    source: Some(source),
                },
                None => Entry {
                    key,
                    value: default_value(key, |name| std::env::var(name).ok()),
                    source: None,
                },
            })
            .collect()
    }
}

/// One key of [`Config::entries`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The key.
    pub key: Key,
    /// Its value; `None` only for an unset key without a default value (`profile`).
    pub value: Option<Shown>,
    /// The layer and file that set it; `None` for a built-in default.
    pub source: Option<&'a Source>,
}

/// The value a key has when no layer sets it, with the environment `lookup` reads (the default
/// index comes from the pip and uv variables); `None` for `profile` (this machine).
pub fn default_value(key: Key, lookup: impl Fn(&str) -> Option<String>) -> Option<Shown> {
    Some(match key {
        Key::Prefer
        | Key::Forbid
        | Key::EnableOptional
        | Key::ExtraIndexUrl
        | Key::FindLinks
        | Key::ProxyTargets
        | Key::Families => Shown::List(Vec::new()),
        Key::Profile => return None,
        Key::NoVariants | Key::Offline | Key::NoFamilies => Shown::Bool(false),
        // The same answer the commands use; a variable that is not a URL is shown as given
        // (the commands refuse it, naming it).
        Key::IndexUrl => Shown::Text(match crate::default_index(lookup) {
            Ok(index) => index.url.to_string(),
            Err(e) => e.to_string(),
        }),
        Key::IndexStrategy => Shown::Text(strategy_name(IndexStrategy::default()).to_owned()),
        Key::MaxPageBytes => Shown::Text(Limits::default().max_page_bytes.to_string()),
        Key::MaxVariantsJsonBytes => {
            Shown::Text(Limits::default().max_variants_json_bytes.to_string())
        }
        Key::MaxMetadataBytes => Shown::Text(Limits::default().max_metadata_bytes.to_string()),
        Key::MaxUnsizedFileBytes => {
            Shown::Text(Limits::default().max_unsized_file_bytes.to_string())
        }
        Key::HttpDeadline => Shown::Text(Limits::default().deadline.as_secs_f64().to_string()),
        Key::LowSpeedBytes => Shown::Text(Limits::default().low_speed_bytes.to_string()),
        Key::LowSpeedSeconds => {
            Shown::Text(Limits::default().low_speed_time.as_secs_f64().to_string())
        }
        // The ceiling the key raises: that of configs and profiles (metadata files have a
        // larger one, raised by the same key).
        Key::MaxInputBytes => Shown::Text(vari_fs::InputKind::Config.default_limit().to_string()),
        Key::MaxInflateRatio => Shown::Text(vari_wheel::MAX_INFLATE_RATIO.to_string()),
    })
}

/// The text of a file; `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    // A regular file, opened without blocking, up to a ceiling: a FIFO or device is an error.
    match vari_fs::read_input(path, vari_fs::InputKind::Config) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ConfigError::new(path, "not valid UTF-8")),
        Err(vari_fs::InputError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(vari_fs::InputError::NotRegular {
            what: "a directory",
            ..
        }) => Err(ConfigError::new(
            path,
            "is a directory, not a configuration file",
        )),
        Err(e) => Err(ConfigError::new(path, e.problem())),
    }
}

/// The file ceilings a configuration sets ([`Config::file_limits`]); `None` where it sets none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileLimits {
    /// `max-input-bytes`: raises the ceilings of configs, profiles and metadata files.
    pub max_input_bytes: Option<u64>,
    /// `max-inflate-ratio`: how many times its size a wheel's members may inflate to in all.
    pub max_inflate_ratio: Option<std::num::NonZeroU64>,
}
