//! The settings one layer gives, and the merge of all layers: each value remembers the file it
//! came from.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use vari_client::{FindLinks, IndexStrategy, IndexUrl};
use vari_core::ordering::Pattern;
use vari_core::Namespace;

use crate::key::Key;

/// The configuration layers, from the weakest to the strongest. Command-line options are
/// stronger than all of them; the front-end applies them (see [`crate::Config::selection`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Layer {
    /// The user's `vari.toml` (see [`crate::user_config_file`]).
    #[serde(rename = "user")]
    User,
    /// The nearest `pyproject.toml` with a `[tool.vari]` table.
    #[serde(rename = "project")]
    Project,
    /// The file `VARI_CONFIG` names.
    #[serde(rename = "VARI_CONFIG")]
    Environment,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Environment => "VARI_CONFIG",
        })
    }
}

/// Where a value came from: a layer and its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Source {
    /// The layer.
    pub layer: Layer,
    /// The file.
    pub path: PathBuf,
}

impl fmt::Display for Source {
    /// `user /home/u/.config/vari/vari.toml`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.layer, self.path.display())
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// The layer and file that set it.
    pub source: Source,
}

/// A value as `vari config show` prints it: a flag, a text, or a list of texts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Shown {
    /// `true` / `false`.
    Bool(bool),
    /// One value (a path, a URL, a strategy).
    Text(String),
    /// A list (patterns, namespaces, URLs).
    List(Vec<String>),
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shown::Bool(b) => write!(f, "{b}"),
            Shown::Text(t) => f.write_str(t),
            Shown::List(items) => f.write_str(&items.join(" ")),
        }
    }
}

/// Every setting, each `None` until a layer sets it.
///
/// One layer's file reads into one `Settings`; [`Settings::overlay`] puts a stronger layer over
/// a weaker one key by key (a list set by the stronger layer replaces the weaker one's list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `prefer`.
    pub prefer: Option<Sourced<Vec<Pattern>>>,
    /// `forbid`.
    pub forbid: Option<Sourced<Vec<Pattern>>>,
    /// `enable-optional`.
    pub enable_optional: Option<Sourced<Vec<Namespace>>>,
    /// `profile`, made absolute against the directory of the file that set it.
    pub profile: Option<Sourced<PathBuf>>,
    /// `no-variants`.
    pub no_variants: Option<Sourced<bool>>,
    /// `index-url`.
    pub index_url: Option<Sourced<IndexUrl>>,
    /// `extra-index-url`.
    pub extra_index_url: Option<Sourced<Vec<IndexUrl>>>,
    /// `find-links`; local paths made absolute against the directory of the file that set it.
    pub find_links: Option<Sourced<Vec<FindLinks>>>,
    /// `index-strategy`.
    pub index_strategy: Option<Sourced<IndexStrategy>>,
    /// `offline`.
    pub offline: Option<Sourced<bool>>,
    /// `max-page-bytes`.
    pub max_page_bytes: Option<Sourced<u64>>,
    /// `max-variants-json-bytes`.
    pub max_variants_json_bytes: Option<Sourced<u64>>,
    /// `max-metadata-bytes`.
    pub max_metadata_bytes: Option<Sourced<u64>>,
    /// `http-deadline`.
    pub http_deadline: Option<Sourced<std::time::Duration>>,
    /// `low-speed-bytes`.
    pub low_speed_bytes: Option<Sourced<u64>>,
    /// `low-speed-seconds`.
    pub low_speed_seconds: Option<Sourced<std::time::Duration>>,
    /// `max-unsized-file-bytes`.
    pub max_unsized_file_bytes: Option<Sourced<u64>>,
    /// `max-input-bytes`.
    pub max_input_bytes: Option<Sourced<u64>>,
    /// `max-inflate-ratio`.
    pub max_inflate_ratio: Option<Sourced<u64>>,
    /// `[proxy.targets]`: machine classes, name and profile path (made absolute against the
    /// directory of the file that set it), in the file's order. The names are the front-end's
    /// to check (`vari_proxy::ClassName`); a stronger layer's table replaces the whole table.
    pub proxy_targets: Option<Sourced<Vec<(String, PathBuf)>>>,
    /// `families`: build-family catalog files, made absolute against the directory of the file
    /// that set them.
    pub families: Option<Sourced<Vec<PathBuf>>>,
    /// `no-families`.
    pub no_families: Option<Sourced<bool>>,
}

impl Settings {
    /// Puts `stronger` over these settings: every key it sets replaces this one's.
    pub fn overlay(&mut self, stronger: Settings) {
        fn put<T>(weaker: &mut Option<T>, stronger: Option<T>) {
            if stronger.is_some() {
                *weaker = stronger;
            }
        }
        let Settings {
            prefer,
            forbid,
            enable_optional,
            profile,
            no_variants,
            index_url,
            extra_index_url,
            find_links,
            index_strategy,
            offline,
            max_page_bytes,
            max_variants_json_bytes,
            max_metadata_bytes,
            http_deadline,
            low_speed_bytes,
            low_speed_seconds,
            max_unsized_file_bytes,
            max_input_bytes,
            max_inflate_ratio,
            proxy_targets,
            families,
            no_families,
        } = stronger;
        put(&mut self.prefer, prefer);
        put(&mut self.forbid, forbid);
        put(&mut self.enable_optional, enable_optional);
        put(&mut self.profile, profile);
        put(&mut self.no_variants, no_variants);
        put(&mut self.index_url, index_url);
        put(&mut self.extra_index_url, extra_index_url);
        put(&mut self.find_links, find_links);
        put(&mut self.index_strategy, index_strategy);
        put(&mut self.offline, offline);
        put(&mut self.max_page_bytes, max_page_bytes);
        put(&mut self.max_variants_json_bytes, max_variants_json_bytes);
        put(&mut self.max_metadata_bytes, max_metadata_bytes);
        put(&mut self.http_deadline, http_deadline);
        put(&mut self.low_speed_bytes, low_speed_bytes);
        put(&mut self.low_speed_seconds, low_speed_seconds);
        put(&mut self.max_unsized_file_bytes, max_unsized_file_bytes);
        put(&mut self.max_input_bytes, max_input_bytes);
        put(&mut self.max_inflate_ratio, max_inflate_ratio);
        put(&mut self.proxy_targets, proxy_targets);
        put(&mut self.families, families);
        put(&mut self.no_families, no_families);
    }

    /// The value of `key` as shown to the user, with its source; `None` when no layer sets it.
    /// URLs are shown without credentials.
    pub fn shown(&self, key: Key) -> Option<(Shown, &Source)> {
        fn list<T: fmt::Display>(s: &Option<Sourced<Vec<T>>>) -> Option<(Shown, &Source)> {
            s.as_ref().map(|s| {
                let items = s.value.iter().map(ToString::to_string).collect();
                (Shown::List(items), &s.source)
            })
        }
        fn text<T: fmt::Display>(s: &Option<Sourced<T>>) -> Option<(Shown, &Source)> {
            s.as_ref()
                .map(|s| (Shown::Text(s.value.to_string()), &s.source))
        }
        fn seconds(s: &Option<Sourced<std::time::Duration>>) -> Option<(Shown, &Source)> {
            s.as_ref()
                .map(|s| (Shown::Text(s.value.as_secs_f64().to_string()), &s.source))
        }
        fn flag(s: &Option<Sourced<bool>>) -> Option<(Shown, &Source)> {
            s.as_ref().map(|s| (Shown::Bool(s.value), &s.source))
        }
        match key {
            Key::Prefer => list(&self.prefer),
            Key::Forbid => list(&self.forbid),
            Key::EnableOptional => list(&self.enable_optional),
            Key::Profile => self
                .profile
                .as_ref()
                .map(|s| (Shown::Text(s.value.display().to_string()), &s.source)),
            Key::NoVariants => flag(&self.no_variants),
            Key::IndexUrl => text(&self.index_url),
            Key::ExtraIndexUrl => list(&self.extra_index_url),
            Key::FindLinks => list(&self.find_links),
            Key::IndexStrategy => self
                .index_strategy
                .as_ref()
                .map(|s| (Shown::Text(strategy_name(s.value).to_owned()), &s.source)),
            Key::Offline => flag(&self.offline),
            Key::MaxPageBytes => text(&self.max_page_bytes),
            Key::MaxVariantsJsonBytes => text(&self.max_variants_json_bytes),
            Key::MaxMetadataBytes => text(&self.max_metadata_bytes),
            Key::HttpDeadline => seconds(&self.http_deadline),
            Key::LowSpeedBytes => text(&self.low_speed_bytes),
            Key::LowSpeedSeconds => seconds(&self.low_speed_seconds),
            Key::MaxUnsizedFileBytes => text(&self.max_unsized_file_bytes),
            Key::MaxInputBytes => text(&self.max_input_bytes),
            Key::MaxInflateRatio => text(&self.max_inflate_ratio),
            Key::ProxyTargets => self.proxy_targets.as_ref().map(|s| {
                let items = s
                    .value
                    .iter()
                    .map(|(name, path)| format!("{name}={}", path.display()))
                    .collect();
                (Shown::List(items), &s.source)
            }),
            Key::Families => self.families.as_ref().map(|s| {
                let items = s.value.iter().map(|p| p.display().to_string()).collect();
                (Shown::List(items), &s.source)
            }),
            Key::NoFamilies => flag(&self.no_families),
        }
    }

    /// The profile path, when a layer sets one.
    pub fn profile(&self) -> Option<&Path> {
        self.profile.as_ref().map(|s| s.value.as_path())
    }
}

/// The name of an index strategy as a file writes it.
pub fn strategy_name(strategy: IndexStrategy) -> &'static str {
    match strategy {
        IndexStrategy::FirstIndex => "first-index",
        IndexStrategy::UnsafeBestMatch => "unsafe-best-match",
    }
}

/// The strategy a file names, if any.
pub(crate) fn strategy_from_name(name: &str) -> Option<IndexStrategy> {
    [IndexStrategy::FirstIndex, IndexStrategy::UnsafeBestMatch]
        .into_iter()
        .find(|s| strategy_name(*s) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(layer: Layer) -> Source {
        Source {
            layer,
            path: PathBuf::from(format!("/{layer}.toml")),
        }
    }

    fn prefer(layer: Layer, patterns: &[&str]) -> Option<Sourced<Vec<Pattern>>> {
        Some(Sourced {
            value: patterns.iter().map(|p| p.parse().unwrap()).collect(),
            source: source(layer),
        })
    }

    #[test]
    fn a_stronger_layer_replaces_only_the_keys_it_sets() {
        let mut merged = Settings {
            prefer: prefer(Layer::User, &["nvidia", "x86_64"]),
            offline: Some(Sourced {
                value: true,
                source: source(Layer::User),
            }),
            ..Settings::default()
        };
        merged.overlay(Settings {
            prefer: prefer(Layer::Project, &["amd"]),
            ..Settings::default()
        });
        let (shown, from) = merged.shown(Key::Prefer).unwrap();
        assert_eq!(shown, Shown::List(vec!["amd".into()]));
        assert_eq!(from.layer, Layer::Project);
        let (shown, from) = merged.shown(Key::Offline).unwrap();
        assert_eq!((shown, from.layer), (Shown::Bool(true), Layer::User));
        assert!(merged.shown(Key::Forbid).is_none());
    }

    #[test]
    fn strategies_by_name() {
        for name in ["first-index", "unsafe-best-match"] {
            assert_eq!(strategy_name(strategy_from_name(name).unwrap()), name);
        }
        assert_eq!(strategy_from_name("best-match"), None);
    }
}
