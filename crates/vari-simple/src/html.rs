//! PEP 503 HTML pages, read and written, with PEP 592's `data-yanked`, `data-requires-python`,
//! and PEP 658/714 metadata under both attribute names (older pip reads
//! `data-dist-info-metadata`, newer installers `data-core-metadata`).
//!
//! Read with `tl`, the parser uv uses for the same job: it is fast on the 5,000-link pages of
//! large projects and tolerant of the HTML real indexes serve. Attribute values are
//! HTML-unescaped (`data-requires-python="&gt;=3.8"`), hrefs resolved against `<base href>`
//! when the page has one, else against the page's own (final, post-redirect) URL. Find-links
//! pages are read the same way (they are project pages without a project).

use std::fmt::Write as _;

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use url::Url;

use crate::encode::decode_segment;
use crate::hashes::{HashAlgorithm, Hashes};
use crate::model::{api_version, CoreMetadata, PageFile, ProjectPage, Yanked};
use crate::parsed::{ParsedPage, SkippedLink, MAX_PAGE_LINKS};
use crate::style::PageStyle;

/// Every `<a href>` on the page. Links whose href cannot be resolved are returned as problems.
pub(crate) fn parse_project(text: &str, page_url: &Url) -> Result<ParsedPage, String> {
    // The parser builds a node per tag before anything can be counted: count first (every
    // link is a tag, and real pages have a few tags per link).
    let tag_count = text.bytes().filter(|&b| b == b'<').count();
    if tag_count > 3 * MAX_PAGE_LINKS {
        return Err(format!(
            "the page has {tag_count} tags, more than a page of {MAX_PAGE_LINKS} links would"
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
        if files.len() + problems.len() >= MAX_PAGE_LINKS {
            return Err(format!("the page lists more than {MAX_PAGE_LINKS} links"));
        }
        let Some(href) = attribute(tag, "href") else {
            continue;
        };
        let mut url = match base.join(href.trim()) {
            Ok(url) => url,
            Err(e) => {
                let text = tag.inner_text(parser);
                problems.push(SkippedLink::InvalidHref {
                    text: text.trim().to_owned(),
                    href,
                    reason: e.to_string(),
                });
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
        files.push(PageFile {
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
    Ok(ParsedPage { files, problems })
}

/// The project names of a PEP 503 project list: each anchor's text, else the last segment of
/// its `href`.
pub(crate) fn parse_root(body: &str, page_url: &Url) -> Result<Vec<String>, String> {
    let dom = tl::parse(body, tl::ParserOptions::default()).map_err(|e| e.to_string())?;
    let parser = dom.parser();
    let mut names = Vec::new();
    for tag in dom.nodes().iter().filter_map(|node| node.as_tag()) {
        if !tag.name().as_bytes().eq_ignore_ascii_case(b"a") {
            continue;
        }
        let text = html_escape::decode_html_entities(&tag.inner_text(parser))
            .trim()
            .to_owned();
        if !text.is_empty() {
            names.push(text);
            continue;
        }
        let href = tag
            .attributes()
            .get("href")
            .flatten()
            .map(|v| v.as_utf8_str().into_owned());
        if let Some(segment) = href
            .and_then(|h| page_url.join(h.trim()).ok())
            .and_then(|u| {
                u.path_segments()?
                    .rfind(|s| !s.is_empty())
                    .map(str::to_owned)
            })
        {
            names.push(segment);
        }
    }
    Ok(names)
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
        hashes.insert_named(algorithm.trim(), digest.trim());
    }
    Some(CoreMetadata::Available(hashes))
}

/// `#sha256=…` (any `name=value` fragment) as a hash.
pub(crate) fn fragment_hashes(url: &Url) -> Hashes {
    let mut hashes = Hashes::default();
    if let Some((algorithm, digest)) = url.fragment().and_then(|f| f.split_once('=')) {
        hashes.insert_named(algorithm, digest);
    }
    hashes
}

/// The last path segment, percent-decoded (as it is when that is not UTF-8); `None` for a
/// link to a directory.
pub(crate) fn filename_of(url: &Url) -> Option<String> {
    let last = url.path_segments()?.next_back()?;
    if last.is_empty() {
        return None;
    }
    Some(decode_segment(last).map_or_else(|| last.to_owned(), |name| name.into_owned()))
}

/// The head of a page, up to and including `<body>`.
fn head(page: &mut String, api_version: &str, title: &str) {
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" \
         content=\"{api_version}\">\n    <title>{title}</title>\n  </head>\n  <body>\n"
    );
}

const TAIL: &str = "  </body>\n</html>\n";

/// The PEP 503 project page: one link per file, its strongest hash in the URL fragment.
pub fn render_project_html(page: ProjectPage<'_>, style: &PageStyle) -> Vec<u8> {
    let mut out = String::with_capacity(256 + page.files.len() * 200);
    let title = format!("Links for {}", text(page.name));
    head(&mut out, api_version(page.files), &title);
    let _ = writeln!(out, "    <h1>{title}</h1>");
    for file in page.files {
        let mut href = file.url.clone();
        if let Some((algorithm, digest)) = file.hashes.strongest() {
            let _ = write!(href, "#{algorithm}={digest}");
        }
        let _ = write!(out, "    <a href=\"{}\"", attr(&href));
        if let Some(requires) = &file.requires_python {
            let _ = write!(out, " data-requires-python=\"{}\"", attr(requires));
        }
        if let CoreMetadata::Available(hashes) = &file.core_metadata {
            // One hash fits the attribute: SHA-256, else the first by name.
            let hash = match hashes.sha256() {
                Some(digest) => Some((&HashAlgorithm::Sha256, digest)),
                None => hashes.iter().next(),
            };
            let value = match hash {
                Some((algorithm, digest)) => format!("{algorithm}={digest}"),
                None => "true".to_owned(),
            };
            let value = attr(&value);
            let _ = write!(
                out,
                " data-dist-info-metadata=\"{value}\" data-core-metadata=\"{value}\""
            );
        }
        if let Some(yanked) = &file.yanked {
            let reason = yanked.reason.as_deref().unwrap_or("");
            let _ = write!(out, " data-yanked=\"{}\"", attr(reason));
        }
        let _ = writeln!(out, ">{}</a>{}", text(&file.filename), style.line_break);
    }
    out.push_str(TAIL);
    out.into_bytes()
}

/// The PEP 503 project list: one link per project (`href name`, `shown as`) to `{href name}/`,
/// relative to the page, so the links stay under the prefix the list was asked for under.
pub fn render_root_html<'a>(
    projects: impl Iterator<Item = (&'a str, &'a str)>,
    style: &PageStyle,
) -> Vec<u8> {
    let mut out = String::new();
    head(&mut out, style.root_api_version, "Simple index");
    for (normalised, name) in projects {
        let _ = writeln!(
            out,
            "    <a href=\"{}/\">{}</a>{}",
            attr(normalised),
            text(name),
            style.line_break
        );
    }
    out.push_str(TAIL);
    out.into_bytes()
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
        let ParsedPage { files, problems } = parse_project(html, &page()).unwrap();
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
        let ParsedPage { files, .. } = parse_project(html, &page()).unwrap();
        assert_eq!(
            files[0].url.as_str(),
            "https://mirror.example.net/pkgs/foo-1.0.zip"
        );
    }

    #[test]
    fn bad_hrefs_are_reported_and_directories_skipped() {
        let html = r#"<a href="http://[::1">bad</a><a href="sub/">dir</a>"#;
        let ParsedPage { files, problems } = parse_project(html, &page()).unwrap();
        assert!(files.is_empty());
        assert_eq!(problems.len(), 1);
        assert!(problems[0].to_string().contains("bad"), "{problems:?}");
    }

    #[test]
    fn pages_list_a_bounded_number_of_links() {
        let links = |n: usize, close: &str| format!("<a href=\"/a\">x{close}").repeat(n);
        let err = parse_project(&links(MAX_PAGE_LINKS + 1, ""), &page()).unwrap_err();
        assert!(err.contains("more than 100000 links"), "{err}");
        // Tags are counted before the parser builds a node for each.
        let err = parse_project(&links(3 * MAX_PAGE_LINKS / 2 + 1, "</a>"), &page()).unwrap_err();
        assert!(err.contains("tags"), "{err}");
        let parsed = parse_project(&links(1000, "</a>"), &page()).unwrap();
        assert_eq!(parsed.files.len(), 1000);
    }

    fn file(filename: &str, url: &str) -> PageFile {
        PageFile::new(filename, url.to_owned())
    }

    /// The page of project `a` listing `files`, in `style`.
    fn rendered(files: &[PageFile], style: &PageStyle) -> String {
        let project = ProjectPage {
            name: "a",
            files,
            versions: &[],
        };
        String::from_utf8(render_project_html(project, style)).unwrap()
    }

    #[test]
    fn anchors_carry_every_attribute_escaped() {
        let mut a = file("a<b>-1.0-py3-none-any.whl", "/files/a/k1/a\".whl");
        a.hashes = Hashes::sha256_of("ab");
        a.requires_python = Some(">=3.9,<4".into());
        a.yanked = Some(Yanked {
            reason: Some("bad \"build\"".into()),
        });
        a.size = Some(1);
        a.core_metadata = CoreMetadata::Available(Hashes::sha256_of("cd"));
        let files = [a];
        let html = rendered(&files, &PageStyle::SERVED);
        assert_eq!(
            html,
            "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" \
             content=\"1.1\">\n    <title>Links for a</title>\n  </head>\n  <body>\n    \
             <h1>Links for a</h1>\n    <a href=\"/files/a/k1/a&quot;.whl#sha256=ab\" \
             data-requires-python=\"&gt;=3.9,&lt;4\" data-dist-info-metadata=\"sha256=cd\" \
             data-core-metadata=\"sha256=cd\" data-yanked=\"bad &quot;build&quot;\">\
             a&lt;b&gt;-1.0-py3-none-any.whl</a><br />\n  </body>\n</html>\n"
        );
        assert!(rendered(&files, &PageStyle::STATIC_SITE).contains("</a><br>\n"));
    }

    #[test]
    fn unknown_hashes_and_metadata_without_hash() {
        let mut a = file("a-1.0.tar.gz", "/files/a/k/a-1.0.tar.gz");
        a.core_metadata = CoreMetadata::Available(Hashes::default());
        let html = rendered(&[a], &PageStyle::SERVED);
        assert!(
            html.contains("<a href=\"/files/a/k/a-1.0.tar.gz\" data-dist-info-metadata=\"true\""),
            "{html}"
        );
        assert!(html.contains("content=\"1.0\""), "{html}");
    }

    #[test]
    fn root_links() {
        let root = |style| {
            String::from_utf8(render_root_html(
                [("foo-bar", "Foo.Bar")].into_iter(),
                style,
            ))
            .unwrap()
        };
        let served = root(&PageStyle::SERVED);
        assert!(
            served.contains("<a href=\"foo-bar/\">Foo.Bar</a><br />"),
            "{served}"
        );
        assert!(served.contains("content=\"1.0\""), "{served}");
        let written = root(&PageStyle::STATIC_SITE);
        assert!(
            written.contains("<a href=\"foo-bar/\">Foo.Bar</a><br>"),
            "{written}"
        );
        assert!(written.contains("content=\"1.1\""), "{written}");
    }
}
