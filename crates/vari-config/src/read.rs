//! Reading one configuration file into the [`Settings`] of its layer.
//!
//! The document is parsed with `toml_edit`, which keeps the position of every key and value, so
//! each error names the key path and the line. Every key is checked against the [`Key`] list
//! (unknown keys are errors: a misspelt `prefer` must not be ignored silently), and every value
//! is parsed into its type here, once: patterns and namespaces with `vari-core`'s parsers, URLs
//! and find-links sources with `vari-client`'s, paths made absolute against the file's
//! directory.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml_edit::{ImDocument, Item, TableLike, Value};
use vari_client::{FindLinks, IndexUrl};
use vari_core::ordering::Pattern;
use vari_core::Namespace;

use crate::error::{line_of, ConfigError};
use crate::key::Key;
use crate::settings::{strategy_from_name, Layer, Settings, Source, Sourced};

/// Where in a document the settings are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The whole document (`vari.toml`, the file `VARI_CONFIG` names).
    Root,
    /// The `[tool.vari]` table (`pyproject.toml`).
    ToolVari,
}

/// Reads the settings of one file's text (tests; [`crate::Config`] parses first so that it can
/// tell a document it cannot parse from one with wrong settings).
#[cfg(test)]
pub(crate) fn read_settings(
    text: &str,
    path: &Path,
    layer: Layer,
    placement: Placement,
) -> Result<Option<Settings>, ConfigError> {
    settings_in(&parse(text, path)?, path, layer, placement)
}

/// Parses a TOML document (a leading byte-order mark is ignored).
pub(crate) fn parse<'t>(text: &'t str, path: &Path) -> Result<ImDocument<&'t str>, ConfigError> {
    let text = vari_core::strip_bom(text);
    // The message names the line already.
    vari_core::check_toml_depth(text)
        .map_err(|e| ConfigError::at(path, "", format!("not valid TOML: {e}")))?;
    ImDocument::parse(text).map_err(|e| {
        let message = e.message().lines().collect::<Vec<_>>().join("; ");
        let line = e.span().map(|s| line_of(text, s.start));
        ConfigError::at(path, "", format!("not valid TOML: {message}")).with_line(line)
    })
}

/// Reads the settings in a parsed document: `None` when it has no settings table (a
/// `pyproject.toml` without `[tool.vari]`).
pub(crate) fn settings_in(
    doc: &ImDocument<&str>,
    path: &Path,
    layer: Layer,
    placement: Placement,
) -> Result<Option<Settings>, ConfigError> {
    let text: &str = doc.raw();
    let reader = Reader {
        text,
        path,
        base: path.parent().unwrap_or(Path::new(".")),
        source: Source {
            layer,
            path: path.to_path_buf(),
        },
    };
    let (table, prefix) = match placement {
        Placement::Root => (doc.as_table() as &dyn TableLike, ""),
        Placement::ToolVari => {
            let Some(tool) = doc.get("tool").and_then(Item::as_table_like) else {
                return Ok(None);
            };
            let Some(item) = tool.get("vari") else {
                return Ok(None);
            };
            let table = item
                .as_table_like()
                .ok_or_else(|| reader.error("tool.vari", item.span(), "expected a table"))?;
            (table, "tool.vari.")
        }
    };
    let mut settings = Settings::default();
    for (name, item) in table.iter() {
        let at = format!("{prefix}{name}");
        // `[proxy]` holds `targets`, read as the `proxy.targets` key.
        if name == "proxy" {
            let proxy = item
                .as_table_like()
                .ok_or_else(|| reader.error(&at, item.span(), "expected a table with `targets`"))?;
            for (sub, sub_item) in proxy.iter() {
                let sub_at = format!("{at}.{sub}");
                if sub != "targets" {
                    let span = proxy.get_key_value(sub).and_then(|(k, _)| k.span());
                    return Err(reader.error(&sub_at, span, "unknown key (expected targets)"));
                }
                reader.read(&mut settings, Key::ProxyTargets, sub_item, &sub_at)?;
            }
            continue;
        }
        let Some(key) = Key::from_name(name) else {
            let span = table.get_key_value(name).and_then(|(k, _)| k.span());
            return Err(reader.error(
                &at,
                span,
                format!("unknown key (expected one of: {})", Key::names()),
            ));
        };
        reader.read(&mut settings, key, item, &at)?;
    }
    Ok(Some(settings))
}

/// One string of a list: its key path (`prefer[1]`), text and position.
struct ListItem<'i> {
    at: String,
    text: &'i str,
    span: Option<Range<usize>>,
}

/// The file being read: for errors (text, path) and relative paths (base).
struct Reader<'a> {
    text: &'a str,
    path: &'a Path,
    base: &'a Path,
    source: Source,
}

impl Reader<'_> {
    fn error(
        &self,
        at: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> ConfigError {
        let line = span.map(|s| line_of(self.text, s.start));
        ConfigError::at(self.path, at, message).with_line(line)
    }

    fn sourced<T>(&self, value: T) -> Option<Sourced<T>> {
        Some(Sourced {
            value,
            source: self.source.clone(),
        })
    }

    /// Parses the value of `key` into `settings`.
    fn read(
        &self,
        settings: &mut Settings,
        key: Key,
        item: &Item,
        at: &str,
    ) -> Result<(), ConfigError> {
        match key {
            Key::Prefer => {
                settings.prefer = self.sourced(self.parsed_list::<Pattern>(key, item, at)?)
            }
            Key::Forbid => {
                settings.forbid = self.sourced(self.parsed_list::<Pattern>(key, item, at)?)
            }
            Key::EnableOptional => {
                settings.enable_optional =
                    self.sourced(self.parsed_list::<Namespace>(key, item, at)?);
            }
            Key::Profile => {
                let text = self.string(key, item, at)?;
                if text.is_empty() {
                    return Err(self.error(at, item.span(), "the path is empty"));
                }
                settings.profile = self.sourced(self.base.join(text));
            }
            Key::NoVariants => settings.no_variants = self.sourced(self.flag(key, item, at)?),
            Key::NoFamilies => settings.no_families = self.sourced(self.flag(key, item, at)?),
            Key::Families => {
                let mut paths = Vec::new();
                for entry in self.strings(key, item, at)? {
                    if entry.text.is_empty() {
                        return Err(self.error(&entry.at, entry.span, "the path is empty"));
                    }
                    paths.push(self.base.join(entry.text));
                }
                settings.families = self.sourced(paths);
            }
            Key::Offline => settings.offline = self.sourced(self.flag(key, item, at)?),
            Key::MaxPageBytes => settings.max_page_bytes = self.sourced(self.bytes(key, item, at)?),
            Key::MaxVariantsJsonBytes => {
                settings.max_variants_json_bytes = self.sourced(self.bytes(key, item, at)?)
            }
            Key::MaxMetadataBytes => {
                settings.max_metadata_bytes = self.sourced(self.bytes(key, item, at)?)
            }
            Key::MaxUnsizedFileBytes => {
                settings.max_unsized_file_bytes = self.sourced(self.bytes(key, item, at)?)
            }
            Key::HttpDeadline => {
                settings.http_deadline = self.sourced(self.seconds(key, item, at)?)
            }
            Key::LowSpeedBytes => {
                settings.low_speed_bytes = self.sourced(self.bytes(key, item, at)?)
            }
            Key::LowSpeedSeconds => {
                settings.low_speed_seconds = self.sourced(self.seconds(key, item, at)?)
            }
            Key::MaxInputBytes => {
                settings.max_input_bytes = self.sourced(self.bytes(key, item, at)?)
            }
            // A positive integer, as `bytes` reads one.
            Key::MaxInflateRatio => {
                settings.max_inflate_ratio = self.sourced(self.bytes(key, item, at)?)
            }
            Key::IndexUrl => {
                let text = self.string(key, item, at)?;
                let url = IndexUrl::parse(text)
                    .map_err(|e| self.error(at, item.span(), e.to_string()))?;
                settings.index_url = self.sourced(url);
            }
            Key::ExtraIndexUrl => {
                let mut urls = Vec::new();
                for entry in self.strings(key, item, at)? {
                    let url = IndexUrl::parse(entry.text)
                        .map_err(|e| self.error(&entry.at, entry.span, e.to_string()))?;
                    urls.push(url);
                }
                settings.extra_index_url = self.sourced(urls);
            }
            Key::FindLinks => {
                let mut sources = Vec::new();
                for entry in self.strings(key, item, at)? {
                    let source = self
                        .find_links(entry.text)
                        .map_err(|m| self.error(&entry.at, entry.span, m))?;
                    sources.push(source);
                }
                settings.find_links = self.sourced(sources);
            }
            Key::ProxyTargets => {
                let table = item
                    .as_table_like()
                    .ok_or_else(|| self.wrong_type(key, item, at))?;
                let mut classes = Vec::new();
                for (name, value) in table.iter() {
                    let at = format!("{at}.{name}");
                    let text = value.as_str().ok_or_else(|| {
                        self.error(
                            &at,
                            value.span(),
                            format!("expected a profile path, found {}", value.type_name()),
                        )
                    })?;
                    if text.is_empty() {
                        return Err(self.error(&at, value.span(), "the path is empty"));
                    }
                    classes.push((name.to_owned(), self.base.join(text)));
                }
                settings.proxy_targets = self.sourced(classes);
            }
            Key::IndexStrategy => {
                let text = self.string(key, item, at)?;
                let strategy = strategy_from_name(text).ok_or_else(|| {
                    self.error(
                        at,
                        item.span(),
                        format!("unknown strategy {text:?} (expected {})", key.expected()),
                    )
                })?;
                settings.index_strategy = self.sourced(strategy);
            }
        }
        Ok(())
    }

    /// A find-links entry: a URL as it is, a local path relative to this file's directory.
    fn find_links(&self, text: &str) -> Result<FindLinks, String> {
        let lower = text.to_ascii_lowercase();
        if lower.contains("://") || lower.starts_with("file:") {
            return FindLinks::parse(text).map_err(|e| e.to_string());
        }
        if text.is_empty() {
            return Err("the path is empty".to_owned());
        }
        let path: PathBuf = self.base.join(text);
        let path = path
            .to_str()
            .ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?;
        FindLinks::parse(path).map_err(|e| e.to_string())
    }

    fn wrong_type(&self, key: Key, item: &Item, at: &str) -> ConfigError {
        self.error(
            at,
            item.span(),
            format!("expected {}, found {}", key.expected(), item.type_name()),
        )
    }

    fn string<'i>(&self, key: Key, item: &'i Item, at: &str) -> Result<&'i str, ConfigError> {
        item.as_str().ok_or_else(|| self.wrong_type(key, item, at))
    }

    /// A positive whole number (a byte ceiling).
    /// A positive number of seconds, at most a day.
    fn seconds(&self, key: Key, item: &Item, at: &str) -> Result<std::time::Duration, ConfigError> {
        let seconds = item
            .as_float()
            .or_else(|| item.as_integer().map(|n| n as f64))
            .filter(|s| *s > 0.0 && *s <= 86_400.0)
            .ok_or_else(|| self.wrong_type(key, item, at))?;
        Ok(std::time::Duration::from_secs_f64(seconds))
    }

    fn bytes(&self, key: Key, item: &Item, at: &str) -> Result<u64, ConfigError> {
        item.as_integer()
            .filter(|n| *n > 0)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| self.wrong_type(key, item, at))
    }

    fn flag(&self, key: Key, item: &Item, at: &str) -> Result<bool, ConfigError> {
        item.as_bool().ok_or_else(|| self.wrong_type(key, item, at))
    }

    /// The strings of a list, each with its key path and span.
    fn strings<'i>(
        &self,
        key: Key,
        item: &'i Item,
        at: &str,
    ) -> Result<Vec<ListItem<'i>>, ConfigError> {
        let array = item
            .as_array()
            .ok_or_else(|| self.wrong_type(key, item, at))?;
        array
            .iter()
            .enumerate()
            .map(|(i, value): (usize, &Value)| {
                let at = format!("{at}[{i}]");
                match value.as_str() {
                    Some(text) => Ok(ListItem {
                        at,
                        text,
                        span: value.span(),
                    }),
                    None => Err(self.error(
                        &at,
                        value.span(),
                        format!("expected a string, found {}", value.type_name()),
                    )),
                }
            })
            .collect()
    }

    /// A list whose entries parse with `T`'s `FromStr` (patterns, namespaces).
    fn parsed_list<T>(&self, key: Key, item: &Item, at: &str) -> Result<Vec<T>, ConfigError>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
    {
        self.strings(key, item, at)?
            .into_iter()
            .map(|entry| {
                entry
                    .text
                    .parse::<T>()
                    .map_err(|e| self.error(&entry.at, entry.span, e.to_string()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Settings, ConfigError> {
        read_settings(
            text,
            Path::new("/c/vari.toml"),
            Layer::User,
            Placement::Root,
        )
        .map(|s| s.unwrap())
    }

    #[test]
    fn every_key_reads_into_its_type() {
        let settings = read(
            r#"
prefer = ["nvidia", "x86_64 :: level :: v3"]
forbid = ["amd"]
enable-optional = ["nvidia"]
profile = "profiles/gpu.toml"
no-variants = false
index-url = "https://example.com/simple"
extra-index-url = ["http://127.0.0.1:8080/simple/"]
find-links = ["wheels", "https://example.com/links.html"]
index-strategy = "unsafe-best-match"
offline = true
"#,
        )
        .unwrap();
        assert_eq!(
            settings.prefer.unwrap().value[1].to_string(),
            "x86_64 :: level :: v3"
        );
        assert_eq!(settings.forbid.unwrap().value.len(), 1);
        assert_eq!(
            settings.enable_optional.unwrap().value[0].as_str(),
            "nvidia"
        );
        assert_eq!(
            settings.profile.unwrap().value,
            PathBuf::from("/c/profiles/gpu.toml")
        );
        assert!(!settings.no_variants.unwrap().value);
        assert_eq!(
            settings.index_url.unwrap().value.to_string(),
            "https://example.com/simple/"
        );
        assert_eq!(settings.extra_index_url.unwrap().value.len(), 1);
        let links = settings.find_links.unwrap().value;
        assert_eq!(links[0].location(), "file:///c/wheels");
        assert_eq!(links[1].location(), "https://example.com/links.html");
        assert_eq!(
            settings.index_strategy.unwrap().value,
            vari_client::IndexStrategy::UnsafeBestMatch
        );
        assert!(settings.offline.unwrap().value);
    }

    #[test]
    fn families_are_paths_relative_to_the_file() {
        let settings =
            read("families = [\"acme.toml\", \"../b.toml\"]\nno-families = true\n").unwrap();
        let files = settings.families.unwrap().value;
        assert_eq!(
            files,
            [Path::new("/c/acme.toml"), Path::new("/c/../b.toml")]
        );
        assert!(settings.no_families.unwrap().value);
        let e = read("families = \"acme.toml\"").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("families"));
        let e = read("families = [\"\"]").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("families[0]"));
    }

    #[test]
    fn errors_name_the_key_path_and_line() {
        let e = read("prefer = [\"nvidia\",\n  \"nv idia\"]\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("prefer[1]"));
        assert_eq!(e.line, Some(2));
        let e = read("\n\nprefers = []\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/c/vari.toml: prefers: unknown key (expected one of: prefer, forbid, \
             enable-optional, profile, no-variants, index-url, extra-index-url, find-links, \
             index-strategy, offline, max-page-bytes, max-variants-json-bytes, \
             max-metadata-bytes, http-deadline, low-speed-bytes, low-speed-seconds, \
             max-unsized-file-bytes, max-input-bytes, max-inflate-ratio, proxy.targets, \
             families, no-families) (line 3)"
        );
        let e = read("offline = \"yes\"").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/c/vari.toml: offline: expected true or false, found string (line 1)"
        );
        let e = read("index-strategy = \"best\"").unwrap_err();
        assert!(e.message.contains("unknown strategy \"best\""), "{e}");
        let e = read("enable-optional = [1]").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("enable-optional[0]"));
        let e = read("[prefer]\nx = 1\n").unwrap_err();
        assert!(e.message.starts_with("expected a list of patterns"), "{e}");
    }

    #[test]
    fn limits_read_as_positive_numbers() {
        let settings = read(
            "max-page-bytes = 1000\nmax-variants-json-bytes = 2000\n\
             max-metadata-bytes = 3000\nhttp-deadline = 2.5\n\
             low-speed-bytes = 10\nlow-speed-seconds = 0.5\n",
        )
        .unwrap();
        assert_eq!(settings.low_speed_bytes.as_ref().unwrap().value, 10);
        assert_eq!(
            settings.low_speed_seconds.as_ref().unwrap().value,
            std::time::Duration::from_millis(500)
        );
        assert_eq!(settings.max_page_bytes.unwrap().value, 1000);
        assert_eq!(settings.max_variants_json_bytes.unwrap().value, 2000);
        assert_eq!(settings.max_metadata_bytes.unwrap().value, 3000);
        assert_eq!(
            settings.http_deadline.unwrap().value,
            std::time::Duration::from_millis(2500)
        );
        assert_eq!(
            read("http-deadline = 60")
                .unwrap()
                .http_deadline
                .unwrap()
                .value,
            std::time::Duration::from_secs(60)
        );
        for bad in [
            "max-page-bytes = 0",
            "max-page-bytes = -5",
            "max-metadata-bytes = \"16MiB\"",
            "http-deadline = 0",
            "http-deadline = nan",
            "low-speed-bytes = 0",
            "low-speed-seconds = -1",
        ] {
            let e = read(bad).unwrap_err();
            assert!(
                e.message.starts_with("expected a positive number"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn proxy_targets_read_as_named_paths_in_order() {
        let settings =
            read("[proxy.targets]\ngpu-a100 = \"profiles/a100.toml\"\ncpu = \"/abs/cpu.toml\"\n")
                .unwrap();
        assert_eq!(
            settings.proxy_targets.unwrap().value,
            [
                (
                    "gpu-a100".to_owned(),
                    PathBuf::from("/c/profiles/a100.toml")
                ),
                ("cpu".to_owned(), PathBuf::from("/abs/cpu.toml")),
            ]
        );
        let e = read("[proxy.targets]\ngpu = 3\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("proxy.targets.gpu"));
        assert_eq!(e.line, Some(2));
        let e = read("[proxy]\ntarget = {}\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("proxy.target"));
        let e = read("proxy = 1\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("proxy"));
        let e = read("[proxy.targets]\ngpu = \"\"\n").unwrap_err();
        assert!(e.message.contains("empty"), "{e}");
    }

    #[test]
    fn syntax_errors_give_a_line() {
        let e = read("prefer = [\"a\"]\nforbid = [\n").unwrap_err();
        assert!(e.message.starts_with("not valid TOML: "), "{e}");
        assert!(!e.message.contains('\n'));
        assert!(e.line.is_some(), "{e:?}");
    }

    #[test]
    fn pyproject_settings_live_under_tool_vari() {
        let read = |text: &str| {
            read_settings(
                text,
                Path::new("/p/pyproject.toml"),
                Layer::Project,
                Placement::ToolVari,
            )
        };
        assert_eq!(read("[project]\nname = \"x\"\n").unwrap(), None);
        assert_eq!(read("[tool.ruff]\nx = 1\n").unwrap(), None);
        let settings = read("[tool.vari]\nprefer = [\"nvidia\"]\n")
            .unwrap()
            .unwrap();
        assert_eq!(settings.prefer.unwrap().source.layer, Layer::Project);
        let e = read("[tool.vari]\nprefr = [\"nvidia\"]\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tool.vari.prefr"));
        let e = read("[tool]\nvari = 3\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("tool.vari"));
    }
}
