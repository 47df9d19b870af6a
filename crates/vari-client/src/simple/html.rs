//! PEP 503 HTML pages (and find-links pages, which are the same without a project).
//!
//! Parsed with `tl`, the parser uv uses for the same job: it is fast on the 5,000-link pages
//! of large projects and tolerant of the HTML real indexes serve. Attribute values are
//! HTML-unescaped (`data-requires-python="&gt;=3.8"`), hrefs resolved against `<base href>`
//! when the page has one, else against the page's own (final, post-redirect) URL.

use url::Url;

use super::model::{CoreMetadata, Hashes, RawFile, Yanked};

/// Every `<a href>` on the page. Links whose href cannot be resolved are returned as
/// messages.
pub(crate) fn parse_html(
    text: &str,
    page_url: &Url,
) -> Result<(Vec<RawFile>, Vec<String>), String> {
    // The parser builds a node per tag before anything can be counted: count first (every
    // link is a tag, and real pages have a few tags per link).
    let tag_count = text.bytes().filter(|&b| b == b'<').count();
    if tag_count > 3 * super::MAX_PAGE_LINKS {
        return Err(format!(
            "the page has {tag_count} tags, more than a page of {} links would",
            super::MAX_PAGE_LINKS
        ));
    }
    let dom = tl::parse(text, tl::ParserOptions::default()).map_err(|e| e.to_string())?;
    let parser = dom.parser();
    let tags = || dom.nodes().iter().filter_map(|node| node.as_tag());

    let base = tags()
        .find(|tag| tag.name().as_bytes().eq_ignore_ascii_case(b"base"))
        .and_then(|tag| attribute(tag, "href"))
        .and_then(|href| page_url.join(&href).ok())
        .unwrap_or_else(|| page_url.clone());

    let mut files = Vec::new();
    let mut problems = Vec::new();
    for tag in tags().filter(|tag| tag.name().as_bytes().eq_ignore_ascii_case(b"a")) {
        if files.len() + problems.len() >= super::MAX_PAGE_LINKS {
            return Err(format!(
                "the page lists more than {} links",
                super::MAX_PAGE_LINKS
            ));
        }
        let Some(href) = attribute(tag, "href") else {
            continue;
        };
        let mut url = match base.join(href.trim()) {
            Ok(url) => url,
            Err(e) => {
                let text = tag.inner_text(parser);
                problems.push(format!(
                    "link `{}`: invalid href `{href}`: {e}",
                    text.trim()
                ));
                continue;
            }
        };
        let hashes = fragment_hashes(&url);
        url.set_fragment(None);
        let Some(filename) = filename_of(&url) else {
            continue;
        };
        let yanked = tag.attributes().get("data-yanked").map(|value| Yanked {
            reason: value
                .map(|v| unescape(&v.as_utf8_str()))
                .filter(|reason| !reason.trim().is_empty()),
        });
        // PEP 714 renamed the attribute; the new spelling wins when both are present.
        let core_metadata = core_metadata(tag, "data-core-metadata")
            .or_else(|| core_metadata(tag, "data-dist-info-metadata"))
            .unwrap_or_default();
        files.push(RawFile {
            filename,
            url,
            hashes,
            requires_python: attribute(tag, "data-requires-python"),
            yanked,
            core_metadata,
            size: None,
            upload_time: None,
        });
    }
    Ok((files, problems))
}

/// An attribute's unescaped value; `None` when absent or without a value.
fn attribute(tag: &tl::HTMLTag<'_>, name: &str) -> Option<String> {
    let value = tag.attributes().get(name)??;
    Some(unescape(&value.as_utf8_str()))
}

fn unescape(value: &str) -> String {
    if value.contains('&') {
        html_escape::decode_html_entities(value).into_owned()
    } else {
        value.to_owned()
    }
}

/// `data-core-metadata="true"` or `="sha256=…"`; `None` when absent or `false`.
fn core_metadata(tag: &tl::HTMLTag<'_>, name: &str) -> Option<CoreMetadata> {
    let value = tag.attributes().get(name)?;
    let value = value
        .map(|v| unescape(&v.as_utf8_str()))
        .unwrap_or_default();
    let value = value.trim();
    if value.eq_ignore_ascii_case("false") {
        return None;
    }
    let mut hashes = Hashes::default();
    if let Some((algorithm, digest)) = value.split_once('=') {
        hashes.insert(algorithm.trim(), digest.trim());
    }
    Some(CoreMetadata::Available(hashes))
}

/// `#sha256=…` (any `name=value` fragment) as a hash.
pub(crate) fn fragment_hashes(url: &Url) -> Hashes {
    let mut hashes = Hashes::default();
    if let Some((algorithm, digest)) = url.fragment().and_then(|f| f.split_once('=')) {
        hashes.insert(algorithm, digest);
    }
    hashes
}

/// The last path segment, percent-decoded; `None` for a link to a directory.
pub(crate) fn filename_of(url: &Url) -> Option<String> {
    let last = url.path_segments()?.next_back()?;
    if last.is_empty() {
        return None;
    }
    Some(percent_decode(last).unwrap_or_else(|| last.to_owned()))
}

fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(s.get(i + 1..i + 3)?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Url {
        Url::parse("https://example.com/simple/foo/").unwrap()
    }

    #[test]
    fn pep_503_attributes() {
        let html = r#"<!DOCTYPE html><html><body>
          <a href="../../files/foo-1.0-py3-none-any.whl#sha256=ABCD" data-requires-python="&gt;=3.8"
             data-dist-info-metadata="sha256=1111">foo-1.0-py3-none-any.whl</a>
          <a href="/files/foo-1.1-py3-none-any.whl" data-yanked="">foo-1.1-py3-none-any.whl</a>
          <a href="https://cdn.example.org/foo-1.2.tar.gz" data-yanked="broken &amp; bad"
             data-core-metadata="true" data-dist-info-metadata="sha256=old">foo-1.2.tar.gz</a>
          <a href="foo%2Bbar-1.0-variants.json" data-core-metadata="false">x</a>
          <a name="anchor-without-href">nothing</a>
        </body></html>"#;
        let (files, problems) = parse_html(html, &page()).unwrap();
        assert!(problems.is_empty());
        assert_eq!(files.len(), 4);
        let first = &files[0];
        assert_eq!(first.filename, "foo-1.0-py3-none-any.whl");
        assert_eq!(
            first.url.as_str(),
            "https://example.com/files/foo-1.0-py3-none-any.whl"
        );
        assert_eq!(first.hashes.sha256(), Some("abcd"));
        assert_eq!(first.requires_python.as_deref(), Some(">=3.8"));
        assert_eq!(first.yanked, None);
        let CoreMetadata::Available(h) = &first.core_metadata else {
            panic!("{:?}", first.core_metadata)
        };
        assert_eq!(h.sha256(), Some("1111"));
        assert_eq!(files[1].yanked, Some(Yanked { reason: None }));
        assert_eq!(
            files[2].yanked.as_ref().unwrap().reason.as_deref(),
            Some("broken & bad")
        );
        // The PEP 714 spelling wins.
        assert_eq!(
            files[2].core_metadata,
            CoreMetadata::Available(Hashes::default())
        );
        assert_eq!(files[3].filename, "foo+bar-1.0-variants.json");
        assert_eq!(files[3].core_metadata, CoreMetadata::Absent);
    }

    #[test]
    fn base_href_is_honoured() {
        let html = r#"<html><head><base href="https://mirror.example.net/pkgs/"></head>
            <body><a href="foo-1.0.zip">foo-1.0.zip</a></body></html>"#;
        let (files, _) = parse_html(html, &page()).unwrap();
        assert_eq!(
            files[0].url.as_str(),
            "https://mirror.example.net/pkgs/foo-1.0.zip"
        );
    }

    #[test]
    fn bad_hrefs_are_reported_and_directories_skipped() {
        let html = r#"<a href="http://[::1">bad</a><a href="sub/">dir</a>"#;
        let (files, problems) = parse_html(html, &page()).unwrap();
        assert!(files.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("bad"), "{problems:?}");
    }
}
