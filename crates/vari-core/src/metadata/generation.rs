//! Schema generations: names, `$schema` URLs, and recognising a version inside a URL.

use std::fmt;
use std::str::FromStr;

use super::model::SchemaGeneration;

/// The versions vari reads, for error messages.
pub(crate) const SUPPORTED_VERSIONS: &str = "0.0.2, 0.0.3, 0.1.x, 0.2.x";

impl SchemaGeneration {
    /// Every generation, oldest first.
    pub const ALL: [SchemaGeneration; 4] = [
        SchemaGeneration::V0_0_2,
        SchemaGeneration::V0_0_3,
        SchemaGeneration::V0_1,
        SchemaGeneration::V0_2,
    ];

    /// The `$schema` URL vari writes for this generation.
    ///
    /// 0.2 uses the URL variantlib 0.2.2 writes (`VARIANT_INFO_SCHEMA_URL`).
    pub fn url(self) -> &'static str {
        match self {
            Self::V0_0_2 => "https://variants-schema.wheelnext.dev/v0.0.2.json",
            Self::V0_0_3 => "https://variants-schema.wheelnext.dev/v0.0.3.json",
            Self::V0_1 => "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
            Self::V0_2 => "https://variants-schema.wheelnext.dev/v0.2.0.json",
        }
    }

    /// Whether the generation has a `providers` table (every one but PEP 825's 0.1).
    pub fn has_providers(self) -> bool {
        self != Self::V0_1
    }

    /// Whether `default-priorities` has `feature` and `property` (the 0.0.x drafts).
    pub fn has_feature_priorities(self) -> bool {
        matches!(self, Self::V0_0_2 | Self::V0_0_3)
    }

    /// Whether labels are capped at [`crate::VariantLabel::MAX_LEN_0_0_3`] characters.
    pub fn caps_label_length(self) -> bool {
        matches!(self, Self::V0_0_2 | Self::V0_0_3)
    }
}

impl fmt::Display for SchemaGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::V0_0_2 => "0.0.2",
            Self::V0_0_3 => "0.0.3",
            Self::V0_1 => "0.1",
            Self::V0_2 => "0.2",
        })
    }
}

/// A generation name that vari does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown schema generation {0:?} (expected one of 0.0.2, 0.0.3, 0.1, 0.2)")]
pub struct UnknownGeneration(pub String);

impl FromStr for SchemaGeneration {
    type Err = UnknownGeneration;

    /// Accepts `0.0.2`, `0.0.3`, `0.1`, `0.1.0`, `0.1.1`, `0.2`, `0.2.0`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "0.0.2" => Ok(Self::V0_0_2),
            "0.0.3" => Ok(Self::V0_0_3),
            "0.1" | "0.1.0" | "0.1.1" => Ok(Self::V0_1),
            "0.2" | "0.2.0" => Ok(Self::V0_2),
            _ => Err(UnknownGeneration(s.to_owned())),
        }
    }
}

/// What a `$schema` URL says about the generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UrlVersion {
    /// A version vari reads.
    Known(SchemaGeneration),
    /// A version vari does not read (text as found, e.g. `1.0.0`).
    Unsupported(String),
    /// No version in the URL (torch 2.8's `https://variants-schema.wheelnext.dev/`).
    Missing,
}

/// Finds the version in a `$schema` URL: the last `v<digits>(.<digits>)*` that starts a path
/// segment (`…/v0.0.3.json`, `…/peps/825/v0.1.1.json`).
///
/// Drafts (major 0) are incompatible with each other, so (PEP 825) no compatibility is
/// assumed across them: 0.0.2 and 0.0.3 are exact, 0.1.x and 0.2.x accept any patch
/// number (patch releases do not change the format), every other version is unsupported.
pub(crate) fn version_in_url(url: &str) -> UrlVersion {
    let Some(version) = url.rsplit('/').find_map(|segment| {
        let rest = segment.strip_prefix('v')?;
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let v = rest[..end].trim_end_matches('.');
        // `.json` leaves `0.0.3`; require at least one digit and no empty components.
        let ok = !v.is_empty() && v.split('.').all(|p| !p.is_empty());
        ok.then_some(v)
    }) else {
        return UrlVersion::Missing;
    };
    let parts: Vec<&str> = version.split('.').collect();
    let num = |i: usize| parts.get(i).and_then(|p| p.parse::<u64>().ok());
    let generation = match (num(0), num(1), num(2), parts.len()) {
        (Some(0), Some(0), Some(2), 3) => Some(SchemaGeneration::V0_0_2),
        (Some(0), Some(0), Some(3), 3) => Some(SchemaGeneration::V0_0_3),
        (Some(0), Some(1), _, 2 | 3) => Some(SchemaGeneration::V0_1),
        (Some(0), Some(2), _, 2 | 3) => Some(SchemaGeneration::V0_2),
        _ => None,
    };
    match generation {
        Some(g) => UrlVersion::Known(g),
        None => UrlVersion::Unsupported(version.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays_every_generation_name() {
        for (s, g) in [
            ("0.0.2", SchemaGeneration::V0_0_2),
            ("0.0.3", SchemaGeneration::V0_0_3),
            ("0.1", SchemaGeneration::V0_1),
            ("0.1.0", SchemaGeneration::V0_1),
            ("0.1.1", SchemaGeneration::V0_1),
            ("0.2", SchemaGeneration::V0_2),
            ("0.2.0", SchemaGeneration::V0_2),
        ] {
            assert_eq!(s.parse::<SchemaGeneration>().unwrap(), g, "{s}");
        }
        for g in SchemaGeneration::ALL {
            assert_eq!(g.to_string().parse::<SchemaGeneration>().unwrap(), g);
        }
        for bad in ["0.0.1", "1.0", "0.3", "", "v0.1"] {
            assert!(bad.parse::<SchemaGeneration>().is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_of_each_generation_are_recognised() {
        for g in SchemaGeneration::ALL {
            assert_eq!(version_in_url(g.url()), UrlVersion::Known(g));
        }
    }

    #[test]
    fn versions_in_urls() {
        use SchemaGeneration::*;
        let known = |u: &str| version_in_url(u);
        assert_eq!(known("https://x/v0.1.0.json"), UrlVersion::Known(V0_1));
        assert_eq!(
            known("https://x/peps/825/v0.1.7.json"),
            UrlVersion::Known(V0_1)
        );
        assert_eq!(known("https://x/v0.2.3.json"), UrlVersion::Known(V0_2));
        assert_eq!(known("https://x/v0.2"), UrlVersion::Known(V0_2));
        assert_eq!(
            known("https://variants-schema.wheelnext.dev/"),
            UrlVersion::Missing
        );
        assert_eq!(known("https://x/variants.json"), UrlVersion::Missing);
        for (url, v) in [
            ("https://x/v1.0.0.json", "1.0.0"),
            ("https://x/peps/825/v2.3.json", "2.3"),
            ("https://x/v0.3.0.json", "0.3.0"),
            ("https://x/v0.0.4.json", "0.0.4"),
            ("https://x/v0.0.1.json", "0.0.1"),
        ] {
            assert_eq!(known(url), UrlVersion::Unsupported(v.to_owned()), "{url}");
        }
    }
}
