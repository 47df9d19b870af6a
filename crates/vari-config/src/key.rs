//! The one list of configuration keys: the reader accepts exactly these, `vari config show`
//! lists them in this order, and unknown-key errors name them.

use std::fmt;

/// A key a configuration file may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// `prefer`: patterns put first, earlier wins.
    Prefer,
    /// `forbid`: patterns never selected.
    Forbid,
    /// `enable-optional`: optional provider namespaces turned on.
    EnableOptional,
    /// `profile`: the target profile used instead of this machine.
    Profile,
    /// `no-variants`: select plain wheels only.
    NoVariants,
    /// `index-url`: the main simple index.
    IndexUrl,
    /// `extra-index-url`: more simple indexes, after the main one.
    ExtraIndexUrl,
    /// `find-links`: directories and pages of files.
    FindLinks,
    /// `index-strategy`: how several indexes combine.
    IndexStrategy,
    /// `offline`: answer from the cache only.
    Offline,
    /// `max-page-bytes`: the size ceiling of a simple or find-links page.
    MaxPageBytes,
    /// `max-variants-json-bytes`: the size ceiling of a `*-variants.json`.
    MaxVariantsJsonBytes,
    /// `max-metadata-bytes`: the size ceiling of a PEP 658 `.metadata` file.
    MaxMetadataBytes,
    /// `http-deadline`: the most seconds one request may take, body included.
    HttpDeadline,
    /// `low-speed-bytes`: the fewest bytes a streamed download must bring per window.
    LowSpeedBytes,
    /// `low-speed-seconds`: the window of the low-speed rule.
    LowSpeedSeconds,
    /// `max-unsized-file-bytes`: the size ceiling of a download with no declared size.
    MaxUnsizedFileBytes,
    /// `max-input-bytes`: raises the size ceiling of input files (configs, profiles, metadata).
    MaxInputBytes,
    /// `max-inflate-ratio`: how many times its size a wheel's members may inflate to in all.
    MaxInflateRatio,
    /// `[proxy.targets]`: machine classes (`NAME = "PROFILE"`) `vari proxy` serves side by side
    /// and `vari detect --class` matches this machine against.
    ProxyTargets,
    /// `families`: build-family catalog files (issue 35) put over the built-in catalog.
    Families,
    /// `no-families`: turn the build-family catalog off (built-in and files).
    NoFamilies,
}

impl Key {
    /// Every key, in the order they are shown.
    pub const ALL: [Key; 22] = [
        Key::Prefer,
        Key::Forbid,
        Key::EnableOptional,
        Key::Profile,
        Key::NoVariants,
        Key::IndexUrl,
        Key::ExtraIndexUrl,
        Key::FindLinks,
        Key::IndexStrategy,
        Key::Offline,
        Key::MaxPageBytes,
        Key::MaxVariantsJsonBytes,
        Key::MaxMetadataBytes,
        Key::HttpDeadline,
        Key::LowSpeedBytes,
        Key::LowSpeedSeconds,
        Key::MaxUnsizedFileBytes,
        Key::MaxInputBytes,
        Key::MaxInflateRatio,
        Key::ProxyTargets,
        Key::Families,
        Key::NoFamilies,
    ];

    /// The key as written in a file.
    pub fn name(self) -> &'static str {
        match self {
            Key::Prefer => "prefer",
            Key::Forbid => "forbid",
            Key::EnableOptional => "enable-optional",
            Key::Profile => "profile",
            Key::NoVariants => "no-variants",
            Key::IndexUrl => "index-url",
            Key::ExtraIndexUrl => "extra-index-url",
            Key::FindLinks => "find-links",
            Key::IndexStrategy => "index-strategy",
            Key::Offline => "offline",
            Key::MaxPageBytes => "max-page-bytes",
            Key::MaxVariantsJsonBytes => "max-variants-json-bytes",
            Key::MaxMetadataBytes => "max-metadata-bytes",
            Key::HttpDeadline => "http-deadline",
            Key::LowSpeedBytes => "low-speed-bytes",
            Key::LowSpeedSeconds => "low-speed-seconds",
            Key::MaxUnsizedFileBytes => "max-unsized-file-bytes",
            Key::MaxInputBytes => "max-input-bytes",
            Key::MaxInflateRatio => "max-inflate-ratio",
            Key::ProxyTargets => "proxy.targets",
            Key::Families => "families",
            Key::NoFamilies => "no-families",
        }
    }

    /// The key written as `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What a file must give for the key, for error messages.
    pub(crate) fn expected(self) -> &'static str {
        match self {
            Key::Prefer | Key::Forbid => {
                "a list of patterns (\"NS\", \"NS::FEATURE\" or \"NS::FEATURE::VALUE\")"
            }
            Key::EnableOptional => "a list of namespaces",
            Key::Profile => "a path (relative to this file)",
            Key::NoVariants | Key::Offline | Key::NoFamilies => "true or false",
            Key::Families => "a list of catalog files (relative to this file)",
            Key::IndexUrl => "a URL",
            Key::ExtraIndexUrl => "a list of URLs",
            Key::FindLinks => "a list of URLs or paths (relative to this file)",
            Key::IndexStrategy => "\"first-index\" or \"unsafe-best-match\"",
            Key::MaxPageBytes
            | Key::MaxVariantsJsonBytes
            | Key::MaxMetadataBytes
            | Key::LowSpeedBytes
            | Key::MaxUnsizedFileBytes
            | Key::MaxInputBytes => "a positive number of bytes",
            Key::MaxInflateRatio => "a positive whole number",
            Key::HttpDeadline | Key::LowSpeedSeconds => {
                "a positive number of seconds (at most 86400)"
            }
            Key::ProxyTargets => {
                "a table of machine classes, NAME = \"PROFILE\" (paths relative to this file)"
            }
        }
    }

    /// What the key does, in a sentence or two (the settings reference shows it).
    pub fn description(self) -> &'static str {
        match self {
            Key::Prefer => {
                "Namespaces, features or properties put first when variants are ordered \
                 (`NS`, `NS::FEATURE`, `NS::FEATURE::VALUE`); earlier wins. The command line's \
                 `--prefer` replaces the list."
            }
            Key::Forbid => {
                "Namespaces, features or properties never selected. The command line's \
                 `--forbid` replaces the list."
            }
            Key::EnableOptional => "Optional provider namespaces turned on (`--enable-optional`).",
            Key::Profile => {
                "A target profile (`vari-profile/1` JSON or a `.toml` of hardware facts) used \
                 instead of this machine, relative to the file that sets it; `--profile` and \
                 `--sysroot` win."
            }
            Key::NoVariants => "Select plain (non-variant) wheels only (`--no-variants`).",
            Key::IndexUrl => {
                "The main simple index (PEP 503/691); the command line's `--index-url` replaces it."
            }
            Key::ExtraIndexUrl => "More simple indexes, after the main one (`--extra-index-url`).",
            Key::FindLinks => {
                "Directories of wheels or HTML pages of links (`--find-links`); paths relative \
                 to the file that sets them."
            }
            Key::IndexStrategy => {
                "How several indexes combine: `first-index` (the first that has the project) or \
                 `unsafe-best-match` (all merged)."
            }
            Key::Offline => "Answer from the cache only; send nothing (`--offline`).",
            Key::MaxPageBytes => "The size ceiling of a simple or find-links page, in bytes.",
            Key::MaxVariantsJsonBytes => "The size ceiling of a `*-variants.json`, in bytes.",
            Key::MaxMetadataBytes => "The size ceiling of a PEP 658 `.metadata` file, in bytes.",
            Key::HttpDeadline => {
                "The most seconds one request may take, body included, for what is read into \
                 memory (pages, metadata)."
            }
            Key::LowSpeedBytes => {
                "The fewest bytes a streamed download must bring in each `low-speed-seconds` \
                 window before it is abandoned."
            }
            Key::LowSpeedSeconds => "The window of the low-speed rule, in seconds.",
            Key::MaxUnsizedFileBytes => {
                "The size ceiling of a download whose size nothing declares (a lock entry \
                 without `size`), in bytes."
            }
            Key::MaxInputBytes => {
                "Raises the size ceiling of input files (configs, profiles, metadata files), in \
                 bytes; it never lowers one."
            }
            Key::MaxInflateRatio => {
                "How many times its own size a wheel's members may declare in all, uncompressed \
                 (a zip bomb is refused before anything is inflated)."
            }
            Key::ProxyTargets => {
                "Machine classes, `NAME = \"PROFILE\"` (paths relative to the file): what \
                 `vari proxy` serves side by side under `/t/NAME/` and what `vari detect \
                 --class` matches this machine against."
            }
            Key::Families => {
                "Build-family catalog files put over the built-in catalog (`--families`), \
                 relative to the file that sets them."
            }
            Key::NoFamilies => {
                "Turn the build-family catalog off, the built-in one and every file \
                 (`--no-families`)."
            }
        }
    }

    /// The environment variable that sets the same, when there is one (for the ceilings it
    /// wins over the files; for `max-input-bytes` the larger counts).
    pub fn variable(self) -> Option<&'static str> {
        Some(match self {
            Key::Profile => "VARI_PROFILE",
            Key::Families => "VARI_FAMILIES",
            Key::NoFamilies => "VARI_NO_FAMILIES",
            Key::MaxPageBytes => vari_client::MAX_PAGE_BYTES_ENV,
            Key::MaxVariantsJsonBytes => vari_client::MAX_VARIANTS_JSON_BYTES_ENV,
            Key::MaxMetadataBytes => vari_client::MAX_METADATA_BYTES_ENV,
            Key::HttpDeadline => vari_client::HTTP_DEADLINE_ENV,
            Key::LowSpeedBytes => vari_client::LOW_SPEED_BYTES_ENV,
            Key::LowSpeedSeconds => vari_client::LOW_SPEED_SECONDS_ENV,
            Key::MaxUnsizedFileBytes => vari_client::MAX_UNSIZED_FILE_BYTES_ENV,
            Key::MaxInputBytes => vari_fs::input::MAX_INPUT_BYTES_ENV,
            Key::MaxInflateRatio => vari_wheel::MAX_INFLATE_RATIO_ENV,
            _ => return None,
        })
    }

    /// What a file must give for the key, as the settings reference shows it.
    pub fn value_kind(self) -> &'static str {
        self.expected()
    }

    /// The names of every key, for an unknown-key message.
    pub(crate) fn names() -> String {
        Key::ALL.map(Key::name).join(", ")
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for key in Key::ALL {
            assert_eq!(Key::from_name(key.name()), Some(key));
        }
        assert_eq!(Key::from_name("prefers"), None);
    }

    #[test]
    fn every_key_is_described() {
        for key in Key::ALL {
            assert!(key.description().ends_with('.'), "{key}");
            assert!(!key.description().contains('|'), "{key}");
        }
    }
}
