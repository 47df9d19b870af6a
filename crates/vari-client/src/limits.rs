//! How much of a response the client keeps in memory, and for how long it waits for one.
//!
//! Everything an index sends is hostile until checked: a page may be endless, a
//! `variants.json` a gigabyte, a server may drip one byte a second. Each body read into memory
//! has a size ceiling by what it is, and each request an overall deadline, with defaults that
//! real indexes never come near (the largest simple pages and `variants.json` files seen are a
//! few megabytes) and settings to raise them: `vari.toml` keys (applied by `vari-config`) and
//! environment variables, which [`IndexClient::new`](crate::IndexClient::new) applies over
//! whatever the settings say, so every command, the proxy and the index validator honour them.
//!
//! Files streamed to disk (downloads, the proxy's pass-through, hashing a file) are not held
//! in memory and have no size ceiling and no overall deadline (a large wheel over a slow link
//! legitimately takes long): they are bounded by the read timeout between two reads and by a
//! low-speed rule, like curl's `--speed-limit`/`--speed-time`: fewer than
//! [`Limits::low_speed_bytes`] in [`Limits::low_speed_time`] ends the transfer, so a server
//! that drips a byte just inside the read timeout cannot hold one forever. Range reads keep
//! only the bytes asked for whatever the server sends.

use std::time::Duration;

/// Size ceilings and the request deadline. Sizes are in bytes of the body as received after
/// decoding any `Content-Encoding` (so a gzip bomb stops at the ceiling).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A simple page (PEP 503 HTML or PEP 691 JSON), project or root, and find-links pages.
    /// Default 64 MiB (the largest real project pages are a few MB); `max-page-bytes`,
    /// `VARI_MAX_PAGE_BYTES`. Whatever the size, a page lists at most 100,000 links (parsing
    /// costs memory per link; the largest real pages list tens of thousands).
    pub max_page_bytes: u64,
    /// An index-level `*-variants.json` (PEP 825). Default 64 MiB (real ones are kilobytes to a
    /// few MB); `max-variants-json-bytes`, `VARI_MAX_VARIANTS_JSON_BYTES`.
    pub max_variants_json_bytes: u64,
    /// A PEP 658 `.metadata` file. Default 16 MiB (real ones are kilobytes);
    /// `max-metadata-bytes`, `VARI_MAX_METADATA_BYTES`.
    pub max_metadata_bytes: u64,
    /// The most time one request may take from sending it to its body's last byte, for
    /// bodies read into memory (pages, metadata, range reads). Default 300 s (a 64 MiB page at
    /// 2 Mbit/s); `http-deadline` (seconds), `VARI_HTTP_DEADLINE`.
    pub deadline: Duration,
    /// The fewest bytes a streamed body (download, pass-through, hashing) must deliver in each
    /// [`low_speed_time`](Self::low_speed_time) window. Default 1024 (1 KiB): a live link, even
    /// a poor mobile one, moves that in well under a second, while a server dripping a byte
    /// just inside the read timeout sends two or three; `low-speed-bytes`,
    /// `VARI_LOW_SPEED_BYTES`.
    pub low_speed_bytes: u64,
    /// The window of the low-speed rule. Default 60 s: long enough that a connection which
    /// stalls briefly (a proxy buffering, a congested hop) recovers, short enough that a
    /// dripping server is dropped within a minute; `low-speed-seconds`,
    /// `VARI_LOW_SPEED_SECONDS`.
    pub low_speed_time: Duration,
    /// A downloaded file whose size nothing declares (a lock entry without `size`): the most
    /// bytes it may bring before the download stops, so one unsized entry cannot fill the
    /// cache volume. Default 4 GiB (the largest real wheels are a few GiB);
    /// `max-unsized-file-bytes`, `VARI_MAX_UNSIZED_FILE_BYTES`. A file with a declared size
    /// is bounded by that size instead.
    pub max_unsized_file_bytes: u64,
}

/// 64 MiB.
const PAGE_DEFAULT: u64 = 64 * 1024 * 1024;
/// 16 MiB.
const METADATA_DEFAULT: u64 = 16 * 1024 * 1024;
/// 1 KiB.
const LOW_SPEED_BYTES_DEFAULT: u64 = 1024;
/// 4 GiB.
pub const UNSIZED_FILE_DEFAULT: u64 = 4 << 30;

impl Default for Limits {
    /// 64 MiB pages, 64 MiB `variants.json`, 16 MiB metadata, 300 s per request, streams
    /// at least 1 KiB per 60 s.
    fn default() -> Self {
        Self {
            max_page_bytes: PAGE_DEFAULT,
            max_variants_json_bytes: PAGE_DEFAULT,
            max_metadata_bytes: METADATA_DEFAULT,
            deadline: Duration::from_secs(300),
            low_speed_bytes: LOW_SPEED_BYTES_DEFAULT,
            low_speed_time: Duration::from_secs(60),
            max_unsized_file_bytes: UNSIZED_FILE_DEFAULT,
        }
    }
}

/// The environment variable that sets the page ceiling.
pub const MAX_PAGE_BYTES_ENV: &str = "VARI_MAX_PAGE_BYTES";
/// The environment variable that sets the `variants.json` ceiling.
pub const MAX_VARIANTS_JSON_BYTES_ENV: &str = "VARI_MAX_VARIANTS_JSON_BYTES";
/// The environment variable that sets the metadata ceiling.
pub const MAX_METADATA_BYTES_ENV: &str = "VARI_MAX_METADATA_BYTES";
/// The environment variable that sets the request deadline, in seconds.
pub const HTTP_DEADLINE_ENV: &str = "VARI_HTTP_DEADLINE";
/// The environment variable that sets the bytes of the low-speed rule.
pub const LOW_SPEED_BYTES_ENV: &str = "VARI_LOW_SPEED_BYTES";
/// The environment variable that sets the window of the low-speed rule, in seconds.
pub const LOW_SPEED_SECONDS_ENV: &str = "VARI_LOW_SPEED_SECONDS";
/// The environment variable that sets the ceiling of a download with no declared size.
pub const MAX_UNSIZED_FILE_BYTES_ENV: &str = "VARI_MAX_UNSIZED_FILE_BYTES";

/// An environment variable with a value that is not a limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: `{value}` is not {expected}")]
pub struct InvalidLimit {
    /// The variable.
    pub variable: String,
    /// Its value.
    pub value: String,
    /// What it must be.
    pub expected: &'static str,
}

impl Limits {
    /// These limits with the `VARI_MAX_*_BYTES`, `VARI_HTTP_DEADLINE` and `VARI_LOW_SPEED_*`
    /// variables `lookup` finds put over them. Empty variables count as unset.
    pub fn with_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, InvalidLimit> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        for (name, slot) in [
            (MAX_PAGE_BYTES_ENV, &mut self.max_page_bytes),
            (
                MAX_VARIANTS_JSON_BYTES_ENV,
                &mut self.max_variants_json_bytes,
            ),
            (MAX_METADATA_BYTES_ENV, &mut self.max_metadata_bytes),
            (LOW_SPEED_BYTES_ENV, &mut self.low_speed_bytes),
            (MAX_UNSIZED_FILE_BYTES_ENV, &mut self.max_unsized_file_bytes),
        ] {
            if let Some(value) = var(name) {
                *slot = parse_bytes(&value).ok_or_else(|| InvalidLimit {
                    variable: name.to_owned(),
                    value,
                    expected: "a positive number of bytes",
                })?;
            }
        }
        for (name, slot) in [
            (HTTP_DEADLINE_ENV, &mut self.deadline),
            (LOW_SPEED_SECONDS_ENV, &mut self.low_speed_time),
        ] {
            if let Some(value) = var(name) {
                *slot = parse_seconds(&value).ok_or_else(|| InvalidLimit {
                    variable: name.to_owned(),
                    value,
                    expected: "a positive number of seconds (at most 86400)",
                })?;
            }
        }
        Ok(self)
    }

    /// The ceiling for a kind of body.
    pub(crate) fn ceiling(&self, kind: BodyKind) -> Ceiling {
        let (bytes, names) = match kind {
            BodyKind::Page => (self.max_page_bytes, &PAGE),
            BodyKind::VariantsJson => (self.max_variants_json_bytes, &VARIANTS_JSON),
            BodyKind::Metadata => (self.max_metadata_bytes, &METADATA),
        };
        Ceiling { bytes, names }
    }
}

/// A positive whole number of bytes.
fn parse_bytes(value: &str) -> Option<u64> {
    value.trim().parse::<u64>().ok().filter(|n| *n > 0)
}

/// A positive number of seconds (fractions allowed), at most a day.
fn parse_seconds(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds > 0.0 && seconds <= 86_400.0).then(|| Duration::from_secs_f64(seconds))
}

/// What a body read into memory is, which decides its ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    /// A simple page or find-links page.
    Page,
    /// A `*-variants.json`.
    VariantsJson,
    /// A PEP 658 `.metadata` file.
    Metadata,
}

impl BodyKind {
    /// The kind of a body fetched by URL alone (for callers that check an index): a name
    /// ending in `-variants.json` or `.metadata` says what it is; anything else is a page.
    pub(crate) fn of_url(url: &url::Url) -> Self {
        let path = url.path();
        if path.ends_with(vari_core::filename::VARIANTS_JSON_SUFFIX) {
            Self::VariantsJson
        } else if path.ends_with(".metadata") {
            Self::Metadata
        } else {
            Self::Page
        }
    }
}

/// One body's ceiling, with the names of the settings that raise it (for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ceiling {
    pub(crate) bytes: u64,
    pub(crate) names: &'static CeilingNames,
}

/// What a ceiling is called: the kind of body, and the settings that raise it.
#[derive(Debug, PartialEq, Eq)]
pub struct CeilingNames {
    /// The kind of body (`page`, `variants.json`, `metadata file`).
    pub what: &'static str,
    /// The vari.toml key.
    pub key: &'static str,
    /// The environment variable.
    pub env: &'static str,
}

static PAGE: CeilingNames = CeilingNames {
    what: "page",
    key: "max-page-bytes",
    env: MAX_PAGE_BYTES_ENV,
};
static VARIANTS_JSON: CeilingNames = CeilingNames {
    what: "variants.json",
    key: "max-variants-json-bytes",
    env: MAX_VARIANTS_JSON_BYTES_ENV,
};
static METADATA: CeilingNames = CeilingNames {
    what: "metadata file",
    key: "max-metadata-bytes",
    env: MAX_METADATA_BYTES_ENV,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_and_rejects_nonsense() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let limits = Limits::default()
            .with_env(env(&[
                ("VARI_MAX_PAGE_BYTES", "1000"),
                ("VARI_HTTP_DEADLINE", "0.5"),
                ("VARI_MAX_METADATA_BYTES", ""),
                ("VARI_LOW_SPEED_BYTES", "10"),
                ("VARI_LOW_SPEED_SECONDS", "2"),
                ("VARI_MAX_UNSIZED_FILE_BYTES", "5000"),
            ]))
            .unwrap();
        assert_eq!(limits.max_page_bytes, 1000);
        assert_eq!(limits.deadline, Duration::from_millis(500));
        assert_eq!(limits.max_metadata_bytes, METADATA_DEFAULT);
        assert_eq!(limits.low_speed_bytes, 10);
        assert_eq!(limits.low_speed_time, Duration::from_secs(2));
        assert_eq!(limits.max_unsized_file_bytes, 5000);
        for bad in [
            ("VARI_MAX_PAGE_BYTES", "64MB"),
            ("VARI_MAX_VARIANTS_JSON_BYTES", "0"),
            ("VARI_HTTP_DEADLINE", "-1"),
            ("VARI_HTTP_DEADLINE", "inf"),
            ("VARI_LOW_SPEED_BYTES", "0"),
            ("VARI_LOW_SPEED_SECONDS", "0"),
        ] {
            let pairs: &'static [(&str, &str)] = Box::leak(Box::new([bad]));
            let err = Limits::default().with_env(env(pairs)).unwrap_err();
            assert!(err.to_string().contains(bad.0), "{err}");
        }
    }

    #[test]
    fn kinds_by_url() {
        let kind = |u: &str| BodyKind::of_url(&url::Url::parse(u).unwrap());
        assert_eq!(
            kind("https://x/f/a-1.0-variants.json"),
            BodyKind::VariantsJson
        );
        assert_eq!(
            kind("https://x/f/a-1.0-py3-none-any.whl.metadata"),
            BodyKind::Metadata
        );
        assert_eq!(kind("https://x/simple/a/"), BodyKind::Page);
    }
}
