//! Simple-repository pages: PEP 503 HTML, PEP 691 JSON, and the [`Project`] they describe.

mod classify;
mod link_rule;
mod model;

use std::collections::{BTreeMap, BTreeSet};

use pep440_rs::Version;
use url::Url;
use vari_core::VariantLabel;

pub(crate) use classify::classify;
pub(crate) use model::RawFile;
pub use model::{FileKind, FileSource, IndexFile, PageWarning};
pub use vari_simple::{CoreMetadata, HashAlgorithm, Hashes, PageFormat, Yanked};

use crate::name::ProjectName;

/// The `Accept` header of a project page request: PEP 691 JSON first, HTML as fallback.
pub(crate) const ACCEPT_SIMPLE: &str =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

/// A page that could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {message}")]
pub struct PageError {
    /// The page.
    pub url: Url,
    /// What is wrong with it.
    pub message: String,
}

/// Everything the indexes and find-links sources list for one project.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    /// The project, normalised.
    pub name: ProjectName,
    /// Its wheels and source distributions, in source order then page order.
    pub files: Vec<IndexFile>,
    /// Its index-level variant metadata files (PEP 825) per version; more than one when
    /// several sources list one.
    pub variants_json: BTreeMap<Version, Vec<IndexFile>>,
    /// Links that were skipped, and why.
    pub warnings: Vec<PageWarning>,
    /// The pages and directories that contributed, in order.
    pub sources: Vec<FileSource>,
    /// How much longer the index pages read may be used without asking again: the least
    /// of what their servers allowed (`Cache-Control`, `Expires`); `None` when no page came
    /// from an HTTP server.
    pub fresh_for: Option<std::time::Duration>,
}

impl Project {
    /// An empty project.
    pub(crate) fn new(name: ProjectName) -> Self {
        Self {
            name,
            files: Vec::new(),
            variants_json: BTreeMap::new(),
            warnings: Vec::new(),
            sources: Vec::new(),
            fresh_for: None,
        }
    }

    /// Notes that one page read may be used for `fresh_for` more: the project is fresh as
    /// long as its least fresh page.
    pub(crate) fn limit_freshness(&mut self, fresh_for: Option<std::time::Duration>) {
        self.fresh_for = match (self.fresh_for, fresh_for) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Parses one project page (HTML or JSON, as `content_type` says) served at `page_url`
    /// (the URL after redirects: relative links resolve against it).
    ///
    /// ```
    /// use vari_client::{FileSource, Project, ProjectName};
    /// let url = url::Url::parse("https://example.com/simple/foo/").unwrap();
    /// let html = r#"<a href="foo-1.0-py3-none-any-cu12.whl#sha256=aa">x</a>
    ///               <a href="foo-1.0-variants.json">y</a>"#;
    /// let name = ProjectName::new("foo").unwrap();
    /// let project = Project::from_page(&name, &url, Some("text/html"), html,
    ///     FileSource::Index(url.clone())).unwrap();
    /// assert_eq!(project.files[0].hashes.sha256(), Some("aa"));
    /// assert_eq!(project.variants_json.len(), 1);
    /// ```
    pub fn from_page(
        name: &ProjectName,
        page_url: &Url,
        content_type: Option<&str>,
        body: &str,
        source: FileSource,
    ) -> Result<Self, PageError> {
        let (raw, problems) = parse_links(page_url, content_type, body)?;
        let mut project = Self::new(name.clone());
        project.add(raw, problems, source, page_url.as_str());
        Ok(project)
    }

    /// Adds the links of one page or directory.
    pub(crate) fn add(
        &mut self,
        raw: Vec<RawFile>,
        problems: Vec<String>,
        source: FileSource,
        location: &str,
    ) {
        self.warnings
            .extend(problems.into_iter().map(|message| PageWarning {
                location: location.to_owned(),
                message,
            }));
        // Links must not carry credentials into anything that is printed; the client moved
        // them to its credential store before this point, and `from_page` drops them.
        let raw = raw
            .into_iter()
            .map(|mut file| {
                // Checked first: copying every URL of a 5,000-link page to find none is waste.
                if !file.url.username().is_empty() || file.url.password().is_some() {
                    file.url = crate::auth::redact(&file.url);
                }
                file
            })
            .collect();
        let mut files = classify(raw, &self.name, &source, location, &mut self.warnings);
        self.sources.push(source);
        // The `variants.json` links are moved to the end in place (a stable sort keeps page
        // order on both sides) and split off, so the wheels stay in the vector `classify` built:
        // a page of 100,000 files is not copied into a second vector of the same size.
        let is_variants_json =
            |file: &IndexFile| matches!(file.kind, FileKind::VariantsJson { .. });
        if files.iter().any(is_variants_json) {
            files.sort_by_key(is_variants_json);
        }
        let first = files.partition_point(|file| !is_variants_json(file));
        for file in files.split_off(first) {
            self.variants_json
                .entry(file.version().clone())
                .or_default()
                .push(file);
        }
        if self.files.is_empty() {
            self.files = files;
        } else {
            self.files.append(&mut files);
        }
    }

    /// Merges another source's files after this one's.
    pub(crate) fn merge(&mut self, other: Project) {
        self.files.extend(other.files);
        for (version, links) in other.variants_json {
            self.variants_json.entry(version).or_default().extend(links);
        }
        self.warnings.extend(other.warnings);
        self.sources.extend(other.sources);
        self.limit_freshness(other.fresh_for);
    }

    /// Whether any source listed a file of the project.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.variants_json.is_empty()
    }

    /// Every version with a wheel or source distribution, ascending.
    pub fn versions(&self) -> BTreeSet<&Version> {
        self.files.iter().map(IndexFile::version).collect()
    }

    /// The wheels and source distributions of `version`.
    pub fn files_of<'a>(&'a self, version: &'a Version) -> impl Iterator<Item = &'a IndexFile> {
        self.files.iter().filter(move |f| f.version() == version)
    }

    /// The variant labels of `version`'s wheels (the null variant included).
    pub fn variant_labels(&self, version: &Version) -> BTreeSet<VariantLabel> {
        self.files_of(version)
            .filter_map(|f| f.wheel()?.label.clone())
            .collect()
    }
}

/// A page body as text: borrowed when it is UTF-8, as pages are (checked with the standard
/// library's word-at-a-time validation, several times faster on a megabyte page than the
/// byte-at-a-time scan of `from_utf8_lossy`), else a copy with replacement characters.
pub(crate) fn page_text(body: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(body) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(body),
    }
}

/// The links of a page in either format, `page_url` being the page's URL after redirects.
///
/// Every page's links, index or find-links, pass here: links that may not be followed from
/// this page ([`link_rule`]) are dropped, each with a problem naming it (the caller names the
/// page).
pub(crate) fn parse_links(
    page_url: &Url,
    content_type: Option<&str>,
    body: &str,
) -> Result<(Vec<RawFile>, Vec<String>), PageError> {
    let format = PageFormat::detect(content_type, body);
    let parsed =
        vari_simple::parse_project(page_url, format, body).map_err(|message| PageError {
            url: page_url.clone(),
            message,
        })?;
    let mut files = parsed.files;
    let mut problems: Vec<String> = parsed.problems.iter().map(ToString::to_string).collect();
    files.retain(|file| match link_rule::refusal(page_url, &file.url) {
        None => true,
        Some(why) => {
            problems.push(format!(
                "skipping link `{}` ({}): {why}",
                crate::auth::redact(&file.url),
                file.filename
            ));
            false
        }
    });
    Ok((files, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_lose_their_credentials() {
        let url = Url::parse("https://example.com/simple/foo/").unwrap();
        let html = r#"<a href="https://u:token@files.example.com/foo-1.0-py3-none-any.whl">x</a>"#;
        let name = ProjectName::new("foo").unwrap();
        let project =
            Project::from_page(&name, &url, None, html, FileSource::Index(url.clone())).unwrap();
        assert_eq!(
            project.files[0].url.as_str(),
            "https://files.example.com/foo-1.0-py3-none-any.whl"
        );
    }

    #[test]
    fn pages_list_a_bounded_number_of_links() {
        let url = Url::parse("https://example.com/simple/foo/").unwrap();
        const MAX_PAGE_LINKS: usize = vari_simple::MAX_PAGE_LINKS;
        let links = |n: usize, close: &str| format!("<a href=\"/a\">x{close}").repeat(n);
        let many = links(MAX_PAGE_LINKS + 1, "");
        let err = parse_links(&url, Some("text/html"), &many).unwrap_err();
        assert!(err.message.contains("more than 100000 links"), "{err}");
        // Tags are counted before the parser builds a node for each.
        let tags = links(3 * MAX_PAGE_LINKS / 2 + 1, "</a>");
        let err = parse_links(&url, Some("text/html"), &tags).unwrap_err();
        assert!(err.message.contains("tags"), "{err}");
        let entry = r#"{"filename": "a", "url": "/a"},"#;
        let json = format!(
            r#"{{"meta": {{"api-version": "1.0"}}, "files": [{}{{"filename": "b", "url": "/b"}}]}}"#,
            entry.repeat(MAX_PAGE_LINKS)
        );
        let err = parse_links(&url, Some("application/json"), &json).unwrap_err();
        assert!(err.message.contains("more than 100000 files"), "{err}");
        let (files, _) = parse_links(&url, Some("text/html"), &links(1000, "</a>")).unwrap();
        assert_eq!(files.len(), 1000);
    }

    #[test]
    fn formats_are_negotiated_then_sniffed() {
        assert_eq!(
            PageFormat::detect(Some("application/vnd.pypi.simple.v1+json"), ""),
            PageFormat::Json
        );
        assert_eq!(
            PageFormat::detect(Some("text/html; charset=utf-8"), "{"),
            PageFormat::Html
        );
        assert_eq!(
            PageFormat::detect(None, "  {\"meta\": {}}"),
            PageFormat::Json
        );
        assert_eq!(PageFormat::detect(None, "<html>"), PageFormat::Html);
    }
}
