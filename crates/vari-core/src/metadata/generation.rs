//! Schema generations: names, `$schema` URLs, and recognising a version inside a URL.

use std::fmt;
use std::str::FromStr;

use super::model::SchemaGeneration;

/// The providers schema of PEP 850 (`docs/reference/providers-schema.md`): schema 0.2.0 under the
/// PEPs' path, the URL uv 0.13 knows. Its providers have no `enable-if`.
pub const PEP_850_URL: &str = "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json";

/// The URL variantlib 0.2.2 writes for schema 0.2.0 (`VARIANT_INFO_SCHEMA_URL`); its providers
/// may also have `enable-if`.
pub const VARIANTLIB_0_2_URL: &str = "https://variants-schema.wheelnext.dev/v0.2.0.json";

/// Which `$schema` URL to write for a generation that has more than one (0.2.x).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SchemaUrl {
    /// The standard's URL: PEP 850's for 0.2.x.
    #[default]
    Standard,
    /// variantlib 0.2.2's URL for 0.2.x (which also allows `enable-if`).
    Variantlib,
}

/// Whether a `$schema` URL names PEP 850's providers schema (a `peps/850/` path), whose
/// providers may not have `enable-if`.
pub(crate) fn is_pep_850_url(url: &str) -> bool {
    url.contains("/peps/850/")
}

/// The versions vari reads, for error messages (the generations' names, see
/// [`SchemaGeneration`]'s `Display`).
pub(crate) const SUPPORTED_VERSIONS: &str = "0.0.2, 0.0.3, 0.1.x, 0.2.x";

impl SchemaGeneration {
    /// Every generation, oldest first.
    pub const ALL: [SchemaGeneration; 4] = [
        SchemaGeneration::V0_0_2,
        SchemaGeneration::V0_0_3,
        SchemaGeneration::V0_1,
        SchemaGeneration::V0_2,
    ];

    /// The `$schema` URL vari writes for this generation by default.
    ///
    /// 0.2 uses PEP 850's URL ([`PEP_850_URL`]), the one uv knows; variantlib 0.2.2's
    /// ([`VARIANTLIB_0_2_URL`]) is written on request (see [`SchemaUrl`]).
    pub fn url(self) -> &'static str {
        self.url_as(SchemaUrl::Standard)
    }

    /// The `$schema` URL of this generation in the given spelling; only 0.2 has two.
    ///
    /// ```
    /// use vari_core::metadata::{SchemaGeneration, SchemaUrl};
    /// assert!(SchemaGeneration::V0_2.url().contains("/peps/850/"));
    /// assert!(!SchemaGeneration::V0_2.url_as(SchemaUrl::Variantlib).contains("/peps/"));
    /// assert_eq!(SchemaGeneration::V0_1.url_as(SchemaUrl::Variantlib), SchemaGeneration::V0_1.url());
    /// ```
    pub fn url_as(self, spelling: SchemaUrl) -> &'static str {
        match (self, spelling) {
            (Self::V0_0_2, _) => "https://variants-schema.wheelnext.dev/v0.0.2.json",
            (Self::V0_0_3, _) => "https://variants-schema.wheelnext.dev/v0.0.3.json",
            (Self::V0_1, _) => "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
            (Self::V0_2, SchemaUrl::Standard) => PEP_850_URL,
            (Self::V0_2, SchemaUrl::Variantlib) => VARIANTLIB_0_2_URL,
        }
    }

    /// The schema version vari writes in `$schema` for this generation: the exact version of
    /// the 0.0.x drafts, and for 0.1.x and 0.2.x the one patch release vari writes (`0.1.1`,
    /// PEP 825's; `0.2.0`, variantlib 0.2.2's). Reading accepts any patch release of 0.1.x
    /// and 0.2.x.
    ///
    /// ```
    /// use vari_core::metadata::SchemaGeneration;
    /// assert_eq!(SchemaGeneration::V0_1.written_version(), "0.1.1");
    /// assert!(SchemaGeneration::V0_1.url().ends_with("/v0.1.1.json"));
    /// ```
    pub fn written_version(self) -> &'static str {
        match self {
            Self::V0_0_2 => "0.0.2",
            Self::V0_0_3 => "0.0.3",
            Self::V0_1 => "0.1.1",
            Self::V0_2 => "0.2.0",
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

/// The generation's one name, used in every message: `0.0.2`, `0.0.3`, `0.1.x`, `0.2.x` (the
/// 0.0.x drafts are one version each; 0.1.x and 0.2.x are families of patch releases).
impl fmt::Display for SchemaGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::V0_0_2 => "0.0.2",
            Self::V0_0_3 => "0.0.3",
            Self::V0_1 => "0.1.x",
            Self::V0_2 => "0.2.x",
        })
    }
}

/// A generation name that vari does not know, or a patch release of a known generation that
/// vari does not write (`0.1.0`: vari writes 0.1.x as 0.1.1, and silently writing another
/// version than the one asked for would mislead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownGeneration {
    /// Not a generation vari knows.
    #[error(
        "unknown schema generation {0:?} (expected one of 0.0.2, 0.0.3, 0.1.x, 0.2.x; 0.1 and \
         0.1.1 also mean 0.1.x, 0.2 and 0.2.0 also mean 0.2.x)"
    )]
    Unknown(String),
    /// A patch release of a known generation other than the one vari writes.
    #[error(
        "schema {given} is not written by vari: it writes {generation} as {written} (give \
         {generation}, or {written})",
        written = .generation.written_version()
    )]
    OtherPatch {
        /// The version as given.
        given: String,
        /// The generation it belongs to.
        generation: SchemaGeneration,
    },
}

impl FromStr for SchemaGeneration {
    type Err = UnknownGeneration;

    /// Accepts each generation's name (`0.0.2`, `0.0.3`, `0.1.x`, `0.2.x`), for 0.1.x and
    /// 0.2.x also the bare `0.1`/`0.2` and the version vari writes (`0.1.1`, `0.2.0`). Another
    /// patch release of a known generation (`0.1.0`) is refused with
    /// [`UnknownGeneration::OtherPatch`].
    ///
    /// ```
    /// use vari_core::metadata::SchemaGeneration;
    /// for s in ["0.1", "0.1.x", "0.1.1"] {
    ///     assert_eq!(s.parse::<SchemaGeneration>().unwrap(), SchemaGeneration::V0_1);
    /// }
    /// assert!("0.1.0".parse::<SchemaGeneration>().unwrap_err().to_string().contains("0.1.1"));
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let given = s.trim();
        if let Some(g) = Self::ALL.into_iter().find(|g| {
            given == g.to_string()
                || given == g.written_version()
                || given
                    .strip_suffix(".x")
                    .is_some_and(|minor| g.to_string().strip_suffix(".x") == Some(minor))
                || Some(given) == g.to_string().strip_suffix(".x")
        }) {
            return Ok(g);
        }
        // `0.1.7`: a patch release of a family vari writes as another patch.
        let family = given.rsplit_once('.').map(|(minor, _)| minor);
        if let Some(g) = Self::ALL
            .into_iter()
            .find(|g| family.is_some() && g.to_string().strip_suffix(".x") == family)
        {
            let patch = given.rsplit_once('.').map_or("", |(_, p)| p);
            if !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()) {
                return Err(UnknownGeneration::OtherPatch {
                    given: given.to_owned(),
                    generation: g,
                });
            }
        }
        Err(UnknownGeneration::Unknown(s.to_owned()))
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
            ("0.1.x", SchemaGeneration::V0_1),
            ("0.1.1", SchemaGeneration::V0_1),
            ("0.2", SchemaGeneration::V0_2),
            ("0.2.x", SchemaGeneration::V0_2),
            ("0.2.0", SchemaGeneration::V0_2),
        ] {
            assert_eq!(s.parse::<SchemaGeneration>().unwrap(), g, "{s}");
        }
        for g in SchemaGeneration::ALL {
            assert_eq!(g.to_string().parse::<SchemaGeneration>().unwrap(), g);
            assert_eq!(g.written_version().parse::<SchemaGeneration>().unwrap(), g);
            // What is written is what the name promises.
            assert!(g.url().contains(&format!("v{}.json", g.written_version())));
        }
        for bad in [
            "0.0.1", "1.0", "0.3", "", "v0.1", "0.0.x", "0.0", "0.1.y", "0.1.1.1",
        ] {
            assert!(
                matches!(
                    bad.parse::<SchemaGeneration>(),
                    Err(UnknownGeneration::Unknown(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn another_patch_release_is_refused_not_rewritten() {
        let e = "0.1.0".parse::<SchemaGeneration>().unwrap_err();
        assert_eq!(
            e,
            UnknownGeneration::OtherPatch {
                given: "0.1.0".into(),
                generation: SchemaGeneration::V0_1
            }
        );
        assert_eq!(
            e.to_string(),
            "schema 0.1.0 is not written by vari: it writes 0.1.x as 0.1.1 (give 0.1.x, or 0.1.1)"
        );
        assert!(matches!(
            "0.2.3".parse::<SchemaGeneration>(),
            Err(UnknownGeneration::OtherPatch { .. })
        ));
        let e = "0.3".parse::<SchemaGeneration>().unwrap_err().to_string();
        assert!(e.contains("0.0.2, 0.0.3, 0.1.x, 0.2.x"), "{e}");
    }

    #[test]
    fn urls_of_each_generation_are_recognised() {
        for g in SchemaGeneration::ALL {
            assert_eq!(version_in_url(g.url()), UrlVersion::Known(g));
            assert_eq!(
                version_in_url(g.url_as(SchemaUrl::Variantlib)),
                UrlVersion::Known(g)
            );
        }
        assert!(is_pep_850_url(SchemaGeneration::V0_2.url()));
        assert!(!is_pep_850_url(VARIANTLIB_0_2_URL));
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
