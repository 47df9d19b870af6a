//! `validate`: does an index keep PEP 825's promises?
//!
//! For every project page (PEP 691 JSON):
//! - every release with variant wheels links its `{name}-{version}-variants.json`, which is
//!   valid index-level metadata;
//! - it agrees with each variant wheel's `variant.json` (combining them changes nothing) and
//!   covers every wheel's label; a label no wheel carries is a warning;
//! - every linked file, and every PEP 658 `.metadata` file, has the hash the page gives;
//! - its PEP 503 HTML page (what pip asks for) is there, every file it links is there with the
//!   hash it gives, and it links what the JSON page links (a difference is a warning: a publish
//!   writes one page, then the other), as the HTML project list names what the JSON one names;
//! - a page the project list does not name but a client can still ask for (a site directory's
//!   `simple/{project}/`, left by an interrupted run) is checked as well: none may link a file
//!   that is not there.
//!
//! Where the pages and files come from is a [`SiteReader`]: [`LocalSite`] reads a built site
//! directory; [`HttpSite`] reads a served index with the index client (range reads for each
//! wheel's `variant.json`, hashes computed while streaming). Files a reader cannot reach (a local site whose wheels are linked by URL) are
//! reported as not checked, never as valid.
//!
//! Pages are read with the shared page model (`vari_simple`, as the index client reads them and
//! the proxy and `index build` write them): the same bounds (100,000 links a page), API 1.x
//! only, hashes from the `hashes` map or the URL fragment, PEP 714's `core-metadata` or the
//! older `dist-info-metadata`.

mod http;
mod local;
mod reader;

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use pep440_rs::Version;
use rayon::prelude::*;
use url::Url;
use vari_core::filename::{variants_json_filename, WheelFilename};
use vari_core::metadata::{combine, properties_of, read_json, SourceKind, VariantMetadata};
use vari_simple::{CoreMetadata, PageFormat, SkippedLink};

pub use http::HttpSite;
pub use local::LocalSite;
pub use reader::{FetchError, HtmlPage, SiteReader};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The index breaks a rule; installers may choose wrongly or fail.
    Error,
    /// Suspicious or unchecked, but not wrong.
    Warning,
}

/// One finding: the file at fault (a page path such as `simple/foo/index.json`, or a linked
/// file's name), the key inside it when there is one, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The file at fault.
    pub file: String,
    /// The key path inside it (`variants.cu128`, `hashes.sha256`), when there is one.
    pub key: Option<String>,
    /// What is wrong, without a trailing period.
    pub message: String,
}

/// Everything [`validate`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationReport {
    /// Projects checked.
    pub projects: usize,
    /// Files linked from their pages, and checked where reachable.
    pub files: usize,
    /// The findings, by project, then file.
    pub problems: Vec<Problem>,
}

impl ValidationReport {
    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }
}

/// Why validation could not run at all (as opposed to finding problems).
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The site directory does not exist (the operating system's "No such file or directory"
    /// says neither what was looked for nor what to give instead).
    #[error(
        "{}: no such site directory (give the directory `vari index build` wrote, or the \
         http(s) URL of a served index)",
        .path.display()
    )]
    Missing {
        /// The directory given.
        path: std::path::PathBuf,
    },
    /// The path given is a file, not a site directory.
    #[error(
        "{}: not a directory (a site is the directory `vari index build` wrote)",
        .path.display()
    )]
    NotADirectory {
        /// The path given.
        path: std::path::PathBuf,
    },
    /// The site directory cannot be resolved.
    #[error("{}: {source}", .path.display())]
    Site {
        /// The directory given.
        path: std::path::PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The index URL is not an http(s) URL, or the HTTP client could not start.
    #[error("{url}: {message}")]
    Http {
        /// The URL given.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The project list could not be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
}

/// A file of a project page, as the shared page model reads it (`vari_simple`).
type PageFile = vari_simple::PageFile<Url>;

/// The page path used in messages.
const ROOT_PAGE: &str = "simple/index.json";

/// What [`validate_with`] checks beyond the index's own validity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Also check that uv 0.13 installs each release as intended (`vari_core::uv`): every
    /// reason it does not is an error on the release's `*-variants.json`.
    pub for_uv: bool,
}

/// Checks the index `reader` gives access to (see the module docs).
pub fn validate(reader: &dyn SiteReader) -> Result<ValidationReport, ValidateError> {
    validate_with(reader, &ValidateOptions::default())
}

/// [`validate`] with `options`.
pub fn validate_with(
    reader: &dyn SiteReader,
    options: &ValidateOptions,
) -> Result<ValidationReport, ValidateError> {
    let mut report = ValidationReport::default();
    let Some(bytes) = reader.root_page()? else {
        report.problems.push(error(
            ROOT_PAGE,
            None,
            "missing: not a simple index built with PEP 691 JSON pages",
        ));
        return Ok(report);
    };
    let listed = std::str::from_utf8(&bytes)
        .map_err(|_| "it is not UTF-8".to_owned())
        .and_then(vari_simple::parse_root_json);
    let projects = match listed {
        Ok(Some(projects)) => projects,
        Ok(None) => {
            let message = "not a PEP 691 project list: it has no `projects` list";
            report.problems.push(error(ROOT_PAGE, None, message));
            return Ok(report);
        }
        Err(e) => {
            report.problems.push(error(
                ROOT_PAGE,
                None,
                format!("not a PEP 691 project list: {e}"),
            ));
            return Ok(report);
        }
    };
    let names: BTreeSet<String> = projects
        .iter()
        .map(|name| vari_core::project::normalize(name))
        .collect();
    // Projects only the HTML list names are requested by clients too.
    let html_only = check_root_html(reader, &names, &mut report.problems);
    let mut known = names.clone();
    known.extend(html_only.iter().cloned());
    let mut unlisted: Vec<String> = html_only.into_iter().collect();
    unlisted.extend(reader.unlisted_pages(&known));
    let all: Vec<(&str, bool)> = names
        .iter()
        .map(|name| (name.as_str(), true))
        .chain(unlisted.iter().map(|name| (name.as_str(), false)))
        .collect();
    let checked: Vec<(usize, Vec<Problem>)> = all
        .par_iter()
        .map(|(name, listed)| ProjectCheck::new(reader, name, *options, *listed).run())
        .collect();
    report.projects = names.len();
    for (files, problems) in checked {
        report.files += files;
        report.problems.extend(problems);
    }
    Ok(report)
}

/// [`validate_with`] on a site directory, and on each class's index of a mirror site
/// ([`LocalSite::classes`]) like the root: a class's findings name its pages
/// (`t/{class}/simple/…`), or the class for a linked file.
pub fn validate_site(
    site: &LocalSite,
    options: &ValidateOptions,
) -> Result<ValidationReport, ValidateError> {
    let mut report = validate_with(site, options)?;
    for class in site.classes() {
        let checked = validate_with(&site.class(&class)?, options)?;
        report.files += checked.files;
        report.problems.extend(
            checked
                .problems
                .into_iter()
                .map(|problem| in_class(&class, problem)),
        );
    }
    Ok(report)
}

/// `problem`, found checking the index of `class`, said of that index.
fn in_class(class: &str, mut problem: Problem) -> Problem {
    if problem.file.starts_with("simple/") {
        problem.file = format!("{}/{class}/{}", crate::site::CLASSES_DIR, problem.file);
    } else {
        problem.message = format!("{} (linked by class {class}'s index)", problem.message);
    }
    problem
}

/// The HTML project list: there (an error when not), naming the projects the JSON one names
/// (a warning when not: a publish writes the two one after the other, and a run stopped
/// between them leaves them apart, each naming pages that are there). Returns the projects
/// only it names, whose pages are checked too.
fn check_root_html(
    reader: &dyn SiteReader,
    names: &BTreeSet<String>,
    problems: &mut Vec<Problem>,
) -> BTreeSet<String> {
    const PAGE: &str = "simple/index.html";
    let (base, bytes) = match reader.html_page(None) {
        Ok(HtmlPage::Found(base, bytes)) => (base, bytes),
        Ok(HtmlPage::NotChecked) => return BTreeSet::new(),
        Ok(HtmlPage::Missing) => {
            let message = "missing: a client asking for HTML gets nothing";
            problems.push(error(PAGE, None, message));
            return BTreeSet::new();
        }
        Err(e) => {
            problems.push(error(PAGE, None, e.to_string()));
            return BTreeSet::new();
        }
    };
    let listed = std::str::from_utf8(&bytes)
        .map_err(|_| "it is not UTF-8".to_owned())
        .and_then(|text| vari_simple::parse_root(&base, PageFormat::Html, text));
    let listed = match listed {
        Ok(listed) => listed,
        Err(e) => {
            let message = format!("not a PEP 503 project list: {e}");
            problems.push(error(PAGE, None, message));
            return BTreeSet::new();
        }
    };
    let html: BTreeSet<String> = listed
        .iter()
        .map(|name| vari_core::project::normalize(name))
        .collect();
    for name in html.difference(names) {
        let message = format!("lists `{name}`, which {ROOT_PAGE} does not");
        problems.push(warning(PAGE, None, message));
    }
    for name in names.difference(&html) {
        let message = format!("does not list `{name}`, which {ROOT_PAGE} does");
        problems.push(warning(PAGE, None, message));
    }
    html.difference(names).cloned().collect()
}

fn problem(
    severity: Severity,
    file: &str,
    key: Option<String>,
    message: impl Into<String>,
) -> Problem {
    Problem {
        severity,
        file: file.to_owned(),
        key,
        message: message.into(),
    }
}

fn error(file: &str, key: Option<String>, message: impl Into<String>) -> Problem {
    problem(Severity::Error, file, key, message)
}

fn warning(file: &str, key: Option<String>, message: impl Into<String>) -> Problem {
    problem(Severity::Warning, file, key, message)
}

/// The checks of one project page.
struct ProjectCheck<'a> {
    reader: &'a dyn SiteReader,
    name: &'a str,
    page_path: String,
    problems: Vec<Problem>,
    /// Files the reader cannot reach (hosted elsewhere).
    unreachable: usize,
    options: ValidateOptions,
    /// Whether the project list names the project (else its pages were found on the site).
    listed: bool,
}

/// A variant wheel linked from the page.
struct LinkedWheel<'a> {
    filename: &'a str,
    parsed: WheelFilename,
    url: &'a Url,
}

impl<'a> ProjectCheck<'a> {
    fn new(
        reader: &'a dyn SiteReader,
        name: &'a str,
        options: ValidateOptions,
        listed: bool,
    ) -> Self {
        Self {
            reader,
            name,
            page_path: format!("simple/{name}/index.json"),
            problems: Vec::new(),
            unreachable: 0,
            options,
            listed,
        }
    }

    fn run(mut self) -> (usize, Vec<Problem>) {
        let page = match self.reader.project_page(self.name) {
            Ok(Some((base, bytes))) => {
                let page = std::str::from_utf8(&bytes)
                    .map_err(|_| "it is not UTF-8".to_owned())
                    .and_then(|text| vari_simple::parse_project(&base, PageFormat::Json, text));
                match page {
                    Ok(page) => page,
                    Err(e) => {
                        self.error_on_page(format!("not a PEP 691 project page: {e}"));
                        return (0, self.problems);
                    }
                }
            }
            Ok(None) => {
                let message = match self.listed {
                    true => "missing, but the project list links it",
                    false => "missing, but the project's HTML page is there",
                };
                self.error_on_page(message.to_owned());
                // What the HTML page links must be there all the same.
                self.check_html(&[]);
                return (0, self.problems);
            }
            Err(e) => {
                self.error_on_page(e.to_string());
                return (0, self.problems);
            }
        };
        for skipped in &page.problems {
            let problem = match skipped {
                SkippedLink::InvalidUrl {
                    filename,
                    url,
                    reason,
                } => error(
                    &self.page_path,
                    Some(format!("files.{filename}.url")),
                    format!("`{url}` is not a URL: {reason}"),
                ),
                other => error(&self.page_path, None, other.to_string()),
            };
            self.problems.push(problem);
        }
        for file in &page.files {
            self.check_hashes(file);
        }
        self.check_html(&page.files);
        self.check_releases(&page.files);
        if self.unreachable > 0 {
            let page_path = self.page_path.clone();
            self.problems.push(warning(
                &page_path,
                None,
                format!(
                    "{} linked file(s) are not reachable from here and were not checked",
                    self.unreachable
                ),
            ));
        }
        (page.files.len(), self.problems)
    }

    /// The project's HTML page: there (an error when not), and linking what the JSON page
    /// (`json`) links with the same hashes (a warning when not: the two are written one after
    /// the other, so a publish stopped between them leaves them apart); a file only it links,
    /// or links otherwise, is checked like the JSON page's (a missing file is an error).
    fn check_html(&mut self, json: &[PageFile]) {
        let html_path = format!("simple/{}/index.html", self.name);
        let (base, bytes) = match self.reader.html_page(Some(self.name)) {
            Ok(HtmlPage::Found(base, bytes)) => (base, bytes),
            Ok(HtmlPage::NotChecked) => return,
            Ok(HtmlPage::Missing) => {
                // A page no list names may be gone: nothing leads a client to it.
                if self.listed {
                    self.problems.push(error(
                        &html_path,
                        None,
                        "missing: a client asking for HTML (pip) gets nothing",
                    ));
                }
                return;
            }
            Err(e) => {
                self.problems.push(error(&html_path, None, e.to_string()));
                return;
            }
        };
        let page = std::str::from_utf8(&bytes)
            .map_err(|_| "it is not UTF-8".to_owned())
            .and_then(|text| vari_simple::parse_project(&base, PageFormat::Html, text));
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                self.problems.push(error(
                    &html_path,
                    None,
                    format!("not a PEP 503 project page: {e}"),
                ));
                return;
            }
        };
        let json_path = std::mem::replace(&mut self.page_path, html_path.clone());
        for file in &page.files {
            let same = json.iter().find(|j| j.filename == file.filename);
            match same {
                Some(j) if j.url == file.url && j.hashes.sha256() == file.hashes.sha256() => {}
                Some(_) => {
                    self.problems.push(warning(
                        &html_path,
                        Some(format!("files.{}", file.filename)),
                        format!("links it otherwise than {json_path} (URL or hash)"),
                    ));
                    self.check_hashes(file);
                }
                None => {
                    if self.listed || !json.is_empty() {
                        self.problems.push(warning(
                            &html_path,
                            Some(format!("files.{}", file.filename)),
                            format!("linked here but not from {json_path}"),
                        ));
                    }
                    self.check_hashes(file);
                }
            }
        }
        for file in json {
            if !page.files.iter().any(|h| h.filename == file.filename) {
                self.problems.push(warning(
                    &html_path,
                    Some(format!("files.{}", file.filename)),
                    format!("not linked here but from {json_path}"),
                ));
            }
        }
        self.page_path = json_path;
    }

    fn error_on_page(&mut self, message: String) {
        let page_path = self.page_path.clone();
        self.problems.push(error(&page_path, None, message));
    }

    /// The file's and its `.metadata` file's SHA-256 against the page.
    fn check_hashes(&mut self, file: &PageFile) {
        let url = &file.url;
        let expected = file.hashes.sha256();
        match self.reader.file_sha256(url) {
            Ok(Some(actual)) => {
                if let Some(expected) = expected.filter(|e| !e.eq_ignore_ascii_case(&actual)) {
                    self.problems.push(error(
                        &file.filename,
                        Some("hashes.sha256".to_owned()),
                        format!("the page says {expected}, the file has {actual}"),
                    ));
                }
            }
            Ok(None) => self.problems.push(error(
                &file.filename,
                None,
                format!("linked from {} but missing", self.page_path),
            )),
            Err(FetchError::NotReachable { .. }) => {
                self.unreachable += 1;
                return;
            }
            Err(e) => self
                .problems
                .push(error(&file.filename, None, e.to_string())),
        }
        let CoreMetadata::Available(hashes) = &file.core_metadata else {
            return;
        };
        let Some(expected) = hashes.sha256() else {
            return;
        };
        let metadata_name = format!("{}.metadata", file.filename);
        let mut metadata_url = url.clone();
        metadata_url.set_path(&format!("{}.metadata", url.path()));
        match self.reader.file_sha256(&metadata_url) {
            Ok(Some(actual)) if actual.eq_ignore_ascii_case(expected) => {}
            Ok(Some(actual)) => self.problems.push(error(
                &metadata_name,
                None,
                format!("the page's core-metadata.sha256 is {expected}, the file has {actual}"),
            )),
            Ok(None) => self.problems.push(error(
                &metadata_name,
                None,
                "missing, but the page announces it (core-metadata)",
            )),
            Err(FetchError::NotReachable { .. }) => self.unreachable += 1,
            Err(e) => self
                .problems
                .push(error(&metadata_name, None, e.to_string())),
        }
    }

    /// Per release with variant wheels: its `variants.json` is linked, valid, and agrees with
    /// each wheel.
    fn check_releases(&mut self, files: &[PageFile]) {
        let mut releases: BTreeMap<Version, Vec<LinkedWheel<'_>>> = BTreeMap::new();
        for file in files {
            let Ok(parsed) = WheelFilename::parse(&file.filename) else {
                continue;
            };
            if parsed.is_variant() {
                releases
                    .entry(parsed.version.clone())
                    .or_default()
                    .push(LinkedWheel {
                        filename: &file.filename,
                        parsed,
                        url: &file.url,
                    });
            }
        }
        for wheels in releases.values() {
            let first = &wheels[0].parsed;
            let expected = variants_json_filename(&first.name, &first.version);
            let Some(linked) = files.iter().find(|f| f.filename == expected) else {
                let page_path = self.page_path.clone();
                self.problems.push(error(
                    &page_path,
                    None,
                    format!(
                        "version {} has variant wheels ({}) but links no {expected}",
                        first.version, wheels[0].filename
                    ),
                ));
                continue;
            };
            if let Some(index) = self.read_variants_json(&expected, &linked.url) {
                self.check_wheels(&expected, &index, wheels);
                if self.options.for_uv {
                    self.check_for_uv(&expected, &index);
                }
            }
        }
    }

    /// Every reason uv 0.13 does not install the release as intended, as errors on `name`.
    fn check_for_uv(&mut self, name: &str, index: &VariantMetadata) {
        let view = vari_core::uv::UvView::of(index);
        let differences = view.compare_on_linux(index);
        for reason in view.reasons(&differences) {
            self.problems.push(error(
                name,
                None,
                format!("{}: {reason}", vari_core::uv::UV_VERSIONS),
            ));
        }
    }

    fn read_variants_json(&mut self, name: &str, url: &Url) -> Option<VariantMetadata> {
        let bytes = match self.reader.fetch(url) {
            Ok(Some(bytes)) => bytes,
            // Reported by the hash check already.
            Ok(None) => return None,
            Err(FetchError::NotReachable { .. }) => return None,
            Err(e) => {
                self.problems.push(error(name, None, e.to_string()));
                return None;
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            self.problems.push(error(name, None, "is not UTF-8"));
            return None;
        };
        match read_json(&text, SourceKind::IndexFile) {
            Ok(meta) => Some(meta),
            Err(errors) => {
                for e in errors {
                    self.problems.push(error(
                        name,
                        Some(e.path).filter(|p| !p.is_empty()),
                        e.message,
                    ));
                }
                None
            }
        }
    }

    fn check_wheels(&mut self, name: &str, index: &VariantMetadata, wheels: &[LinkedWheel<'_>]) {
        let mut labels_seen = BTreeSet::new();
        for wheel in wheels {
            let Some(label) = &wheel.parsed.label else {
                continue;
            };
            labels_seen.insert(label.clone());
            if !index.variants.contains_key(label) {
                self.problems.push(error(
                    name,
                    Some(format!("variants.{label}")),
                    format!("missing: {} has this label", wheel.filename),
                ));
            }
            let wheel_meta = match self.reader.wheel_variant(wheel.url, wheel.filename) {
                Ok(Some(meta)) => meta,
                Ok(None) => continue, // missing: reported by the hash check
                Err(FetchError::NotReachable { .. }) => continue,
                Err(e) => {
                    self.problems
                        .push(error(wheel.filename, None, e.to_string()));
                    continue;
                }
            };
            match combine([(name, index), (wheel.filename, &wheel_meta)]) {
                Err(e) => self
                    .problems
                    .push(error(wheel.filename, None, e.to_string())),
                Ok(combined) => {
                    if let Some(key) = first_difference(index, &combined) {
                        self.problems.push(error(
                            name,
                            Some(key.to_owned()),
                            format!(
                                "lacks what {}'s variant.json has there; rebuild the index",
                                wheel.filename
                            ),
                        ));
                    }
                }
            }
        }
        // Allowed, but an installer breaks the tie by label, so the later label is never chosen.
        let mut by_properties = BTreeMap::new();
        for (label, properties) in &index.variants {
            let key: Vec<String> = properties_of(properties).map(|p| p.to_string()).collect();
            match by_properties.entry(key) {
                Entry::Vacant(entry) => {
                    entry.insert(label);
                }
                Entry::Occupied(first) => self.problems.push(warning(
                    name,
                    Some(format!("variants.{label}")),
                    format!(
                        "has the same properties as `{}`, which installers prefer",
                        first.get()
                    ),
                )),
            }
        }
        for label in index.variants.keys() {
            if !labels_seen.contains(label) {
                self.problems.push(warning(
                    name,
                    Some(format!("variants.{label}")),
                    "no linked wheel has this label",
                ));
            }
        }
    }
}

/// The first top-level key where `combined` (the index file plus a wheel) differs from the
/// index file alone: what the index file is missing.
fn first_difference(index: &VariantMetadata, combined: &VariantMetadata) -> Option<&'static str> {
    if index.priorities.namespace != combined.priorities.namespace {
        Some("default-priorities.namespace")
    } else if index.priorities.feature != combined.priorities.feature {
        Some("default-priorities.feature")
    } else if index.priorities.property != combined.priorities.property {
        Some("default-priorities.property")
    } else if index.providers != combined.providers {
        Some("providers")
    } else if index.static_properties != combined.static_properties {
        Some("static-properties")
    } else if index.variants != combined.variants {
        Some("variants")
    } else {
        None
    }
}
