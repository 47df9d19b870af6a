//! PEP 691 content negotiation: which page format an `Accept` header asks for, with q-values.
//!
//! Three representations are offered: `application/vnd.pypi.simple.v1+json`,
//! `application/vnd.pypi.simple.v1+html` and `text/html` (the `latest` aliases name the v1
//! types). The highest q wins; on a tie a type named exactly beats a wildcard, and among exact
//! names JSON is preferred. Without an `Accept` header, or when only wildcards match, the
//! answer is HTML as `text/html` (PEP 503), what a browser and the oldest clients expect.

/// The JSON media type (PEP 691).
pub(crate) const JSON: &str = "application/vnd.pypi.simple.v1+json";
/// The HTML media type (PEP 691).
pub(crate) const HTML_V1: &str = "application/vnd.pypi.simple.v1+html";
/// Plain HTML (PEP 503).
pub(crate) const TEXT_HTML: &str = "text/html";

/// The format of a page answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// PEP 691 JSON.
    Json,
    /// HTML, announced with this media type.
    Html(&'static str),
}

impl Format {
    /// The `Content-Type` of the answer.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Self::Json => JSON,
            Self::Html(TEXT_HTML) => "text/html; charset=utf-8",
            Self::Html(media) => media,
        }
    }
}

/// The offers, with the names that select each exactly.
const OFFERS: [(Format, &[&str]); 3] = [
    (
        Format::Json,
        &[JSON, "application/vnd.pypi.simple.latest+json"],
    ),
    (
        Format::Html(HTML_V1),
        &[HTML_V1, "application/vnd.pypi.simple.latest+html"],
    ),
    (Format::Html(TEXT_HTML), &[TEXT_HTML]),
];

/// The format `accept` asks for; `None` when it accepts none of them (406).
pub(crate) fn negotiate(accept: Option<&str>) -> Option<Format> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Some(Format::Html(TEXT_HTML));
    };
    let ranges: Vec<(String, f32)> = accept.split(',').filter_map(media_range).collect();
    // (q, specificity, preference): the largest wins.
    let mut best: Option<((u32, u8, u8), Format)> = None;
    for (position, (format, names)) in OFFERS.iter().enumerate() {
        let mut matched: Option<(u8, f32)> = None;
        for (range, q) in &ranges {
            let Some(specificity) = matches(range, names) else {
                continue;
            };
            // The most specific range that matches sets the q-value (RFC 9110 §12.5.1).
            if matched.is_none_or(|(s, _)| specificity > s) {
                matched = Some((specificity, *q));
            }
        }
        let Some((specificity, q)) = matched else {
            continue;
        };
        if q <= 0.0 {
            continue;
        }
        // Exact names: JSON first. Wildcards: HTML first (`text/html` before the v1 type).
        let preference = match specificity {
            2 => (OFFERS.len() - position) as u8,
            _ => position as u8,
        };
        let score = ((q * 1000.0).round() as u32, specificity, preference);
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, *format));
        }
    }
    best.map(|(_, format)| format)
}

/// `type/subtype;q=0.5;…` → (lowercase `type/subtype`, q).
fn media_range(part: &str) -> Option<(String, f32)> {
    let mut pieces = part.split(';');
    let range = pieces.next()?.trim().to_ascii_lowercase();
    if range.is_empty() {
        return None;
    }
    let mut q = 1.0;
    for parameter in pieces {
        if let Some((name, value)) = parameter.split_once('=') {
            if name.trim().eq_ignore_ascii_case("q") {
                q = value.trim().parse::<f32>().ok()?.clamp(0.0, 1.0);
            }
        }
    }
    Some((range, q))
}

/// How specifically `range` names one of `names`: 2 exactly, 1 as `type/*`, 0 as `*/*`.
fn matches(range: &str, names: &[&str]) -> Option<u8> {
    if range == "*/*" {
        return Some(0);
    }
    if names.contains(&range) {
        return Some(2);
    }
    let kind = range.strip_suffix("/*")?;
    names
        .iter()
        .any(|name| name.split('/').next() == Some(kind))
        .then_some(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installers_get_json() {
        // pip's and uv's headers.
        for accept in [
            "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01",
            "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01",
            "application/vnd.pypi.simple.latest+json",
        ] {
            assert_eq!(negotiate(Some(accept)), Some(Format::Json), "{accept}");
        }
    }

    #[test]
    fn html_by_default_and_when_asked() {
        assert_eq!(negotiate(None), Some(Format::Html(TEXT_HTML)));
        assert_eq!(negotiate(Some("*/*")), Some(Format::Html(TEXT_HTML)));
        assert_eq!(negotiate(Some("text/*")), Some(Format::Html(TEXT_HTML)));
        assert_eq!(
            negotiate(Some("text/html, application/vnd.pypi.simple.v1+json;q=0.5")),
            Some(Format::Html(TEXT_HTML))
        );
        assert_eq!(
            negotiate(Some("application/vnd.pypi.simple.v1+html")),
            Some(Format::Html(HTML_V1))
        );
        // Exact names beat wildcards of the same q.
        assert_eq!(
            negotiate(Some("*/*, application/vnd.pypi.simple.v1+json")),
            Some(Format::Json)
        );
    }

    #[test]
    fn q_zero_excludes_and_nothing_acceptable_is_none() {
        assert_eq!(
            negotiate(Some("*/*, text/html;q=0")),
            Some(Format::Html(HTML_V1))
        );
        assert_eq!(negotiate(Some("application/xml")), None);
        assert_eq!(negotiate(Some("text/html;q=0")), None);
        // A malformed q drops that range only.
        assert_eq!(
            negotiate(Some("application/vnd.pypi.simple.v1+json;q=x, text/html")),
            Some(Format::Html(TEXT_HTML))
        );
    }
}
