//! PEP 691 JSON pages (`application/vnd.pypi.simple.v1+json`), read and written; PEP 700's
//! `size`, `upload-time` and `versions`; PEP 714's `core-metadata` next to PEP 658's
//! `dist-info-metadata`.

use std::collections::BTreeMap;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use url::Url;

use crate::hashes::Hashes;
use crate::html::{filename_of, fragment_hashes};
use crate::model::{api_version, CoreMetadata, PageFile, ProjectPage, Yanked};
use crate::parsed::{ParsedPage, SkippedLink, MAX_PAGE_LINKS};
use crate::style::PageStyle;

/// The page with each file entry left as its text: an entry is parsed into a [`File`] and
/// turned into a [`PageFile`] one at a time, so a page of 100,000 files never holds every
/// entry's parsed form (maps, strings) at once next to the files built from them.
#[derive(Deserialize)]
struct Page<'a> {
    meta: Meta,
    #[serde(borrow, default, deserialize_with = "at_most_max_links")]
    files: Vec<&'a RawValue>,
}

/// The `files` list, refused once it passes [`MAX_PAGE_LINKS`] entries (while parsing: each
/// entry costs memory before the list is complete).
fn at_most_max_links<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<&'de RawValue>, D::Error> {
    struct Bounded;
    impl<'de> serde::de::Visitor<'de> for Bounded {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of files")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<&'de RawValue>, A::Error> {
            let mut files = Vec::new();
            while let Some(file) = seq.next_element()? {
                if files.len() == MAX_PAGE_LINKS {
                    return Err(serde::de::Error::custom(format!(
                        "the page lists more than {MAX_PAGE_LINKS} files"
                    )));
                }
                files.push(file);
            }
            Ok(files)
        }
    }
    deserializer.deserialize_seq(Bounded)
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "api-version")]
    api_version: String,
}

#[derive(Deserialize)]
struct File {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: BTreeMap<String, String>,
    #[serde(rename = "requires-python")]
    requires_python: Option<String>,
    #[serde(rename = "core-metadata")]
    core_metadata: Option<MetadataFlag>,
    #[serde(rename = "dist-info-metadata")]
    dist_info_metadata: Option<MetadataFlag>,
    yanked: Option<YankedFlag>,
    size: Option<u64>,
    #[serde(rename = "upload-time")]
    upload_time: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MetadataFlag {
    Present(bool),
    Hashes(BTreeMap<String, String>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum YankedFlag {
    Flag(bool),
    Reason(String),
}

/// The files of a PEP 691 project page. Relative URLs are resolved against `page_url`.
pub(crate) fn parse_project(text: &str, page_url: &Url) -> Result<ParsedPage, String> {
    let page: Page = serde_json::from_str(text).map_err(|e| format!("invalid JSON page: {e}"))?;
    let major = page.meta.api_version.split('.').next().unwrap_or_default();
    if major != "1" {
        return Err(format!(
            "unsupported simple API version {} (vari reads 1.x)",
            page.meta.api_version
        ));
    }
    let mut problems = Vec::new();
    let mut files = Vec::with_capacity(page.files.len());
    for (position, entry) in page.files.into_iter().enumerate() {
        let file: File = serde_json::from_str(entry.get())
            .map_err(|e| format!("invalid JSON page: files[{position}]: {e}"))?;
        let mut url = match page_url.join(&file.url) {
            Ok(url) => url,
            Err(e) => {
                problems.push(SkippedLink::InvalidUrl {
                    filename: file.filename,
                    url: file.url,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut hashes: Hashes = file.hashes.iter().collect();
        if hashes.is_empty() {
            hashes = fragment_hashes(&url);
        }
        url.set_fragment(None);
        // PEP 691 says `filename` is authoritative; fall back to the URL when it is empty.
        let filename = if file.filename.is_empty() {
            match filename_of(&url) {
                Some(name) => name,
                None => continue,
            }
        } else {
            file.filename
        };
        // PEP 714: `core-metadata` is the current key; `dist-info-metadata` the old one.
        let core_metadata = match file.core_metadata.or(file.dist_info_metadata) {
            None | Some(MetadataFlag::Present(false)) => CoreMetadata::Absent,
            Some(MetadataFlag::Present(true)) => CoreMetadata::Available(Hashes::default()),
            Some(MetadataFlag::Hashes(map)) => CoreMetadata::Available(map.iter().collect()),
        };
        let yanked = match file.yanked {
            None | Some(YankedFlag::Flag(false)) => None,
            Some(YankedFlag::Flag(true)) => Some(Yanked { reason: None }),
            Some(YankedFlag::Reason(reason)) => Some(Yanked {
                reason: Some(reason).filter(|r| !r.trim().is_empty()),
            }),
        };
        files.push(PageFile {
            filename,
            url,
            hashes,
            requires_python: file.requires_python,
            yanked,
            core_metadata,
            size: file.size,
            upload_time: file.upload_time,
        });
    }
    Ok(ParsedPage { files, problems })
}

#[derive(Deserialize)]
struct RootPage {
    projects: Option<Vec<RootProject>>,
}

#[derive(Deserialize)]
struct RootProject {
    name: String,
}

/// The names a PEP 691 project list lists, as written; `None` when it has no `projects` list
/// (PEP 691 requires one: a checker says so, a reader may take it as empty).
pub fn parse_root_json(text: &str) -> Result<Option<Vec<String>>, String> {
    let page: RootPage =
        serde_json::from_str(text).map_err(|e| format!("invalid JSON page: {e}"))?;
    Ok(page
        .projects
        .map(|projects| projects.into_iter().map(|p| p.name).collect()))
}

#[derive(Serialize)]
struct MetaOut {
    #[serde(rename = "api-version")]
    api_version: &'static str,
}

/// A yank or metadata flag as PEP 691 writes it.
#[derive(Serialize)]
#[serde(untagged)]
enum Flag<'a> {
    Bool(bool),
    Reason(&'a str),
    Hashes(&'a Hashes),
}

#[derive(Serialize)]
struct FileOut<'a> {
    filename: &'a str,
    url: &'a str,
    hashes: &'a Hashes,
    #[serde(rename = "requires-python", skip_serializing_if = "Option::is_none")]
    requires_python: Option<&'a str>,
    #[serde(rename = "core-metadata", skip_serializing_if = "Option::is_none")]
    core_metadata: Option<Flag<'a>>,
    /// PEP 714: the old key, for clients that predate it.
    #[serde(rename = "dist-info-metadata", skip_serializing_if = "Option::is_none")]
    dist_info_metadata: Option<Flag<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    yanked: Option<Flag<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(rename = "upload-time", skip_serializing_if = "Option::is_none")]
    upload_time: Option<&'a str>,
}

impl<'a> FileOut<'a> {
    fn new(file: &'a PageFile) -> Self {
        // PEP 714 and PEP 658 say the same thing under two keys: `true`, or the hashes.
        let metadata = || match &file.core_metadata {
            CoreMetadata::Absent => None,
            CoreMetadata::Available(hashes) if hashes.is_empty() => Some(Flag::Bool(true)),
            CoreMetadata::Available(hashes) => Some(Flag::Hashes(hashes)),
        };
        Self {
            filename: &file.filename,
            url: &file.url,
            hashes: &file.hashes,
            requires_python: file.requires_python.as_deref(),
            core_metadata: metadata(),
            dist_info_metadata: metadata(),
            yanked: file
                .yanked
                .as_ref()
                .map(|yanked| match yanked.reason.as_deref() {
                    None | Some("") => Flag::Bool(true),
                    Some(reason) => Flag::Reason(reason),
                }),
            size: file.size,
            upload_time: file.upload_time.as_deref(),
        }
    }
}

/// A project page with its fields in the style's order.
struct ProjectOut<'a> {
    page: ProjectPage<'a>,
    versions_first: bool,
}

impl Serialize for ProjectOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let page = &self.page;
        let files: Vec<FileOut<'_>> = page.files.iter().map(FileOut::new).collect();
        let mut out = serializer.serialize_struct("ProjectPage", 4)?;
        out.serialize_field(
            "meta",
            &MetaOut {
                api_version: api_version(page.files),
            },
        )?;
        out.serialize_field("name", page.name)?;
        if self.versions_first {
            out.serialize_field("versions", page.versions)?;
            out.serialize_field("files", &files)?;
        } else {
            out.serialize_field("files", &files)?;
            out.serialize_field("versions", page.versions)?;
        }
        out.end()
    }
}

#[derive(Serialize)]
struct RootOut<'a> {
    meta: MetaOut,
    projects: Vec<RootProjectOut<'a>>,
}

#[derive(Serialize)]
struct RootProjectOut<'a> {
    name: &'a str,
}

fn to_bytes(value: &impl Serialize, style: &PageStyle) -> Vec<u8> {
    // These structures hold only strings, numbers and string-keyed maps: serialising cannot fail.
    if style.pretty_json {
        let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    } else {
        serde_json::to_vec(value).unwrap_or_default()
    }
}

/// The PEP 691 project page.
pub fn render_project_json(page: ProjectPage<'_>, style: &PageStyle) -> Vec<u8> {
    let out = ProjectOut {
        page,
        versions_first: style.versions_first,
    };
    to_bytes(&out, style)
}

/// The PEP 691 project list of `names`.
pub fn render_root_json<'a>(names: impl Iterator<Item = &'a str>, style: &PageStyle) -> Vec<u8> {
    let page = RootOut {
        meta: MetaOut {
            api_version: style.root_api_version,
        },
        projects: names.map(|name| RootProjectOut { name }).collect(),
    };
    to_bytes(&page, style)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pep_691_fields() {
        let text = r#"{
          "meta": {"api-version": "1.1"},
          "name": "foo",
          "files": [
            {"filename": "foo-1.0-py3-none-any.whl", "url": "../../files/foo-1.0-py3-none-any.whl",
             "hashes": {"sha256": "ABC"}, "requires-python": ">=3.9",
             "dist-info-metadata": {"sha256": "def"}, "size": 1234,
             "upload-time": "2025-01-01T00:00:00.000000Z"},
            {"filename": "foo-1.1-py3-none-any.whl", "url": "https://cdn.example.org/x.whl",
             "hashes": {}, "yanked": "bad build", "core-metadata": true,
             "dist-info-metadata": false},
            {"filename": "foo-1.2.tar.gz", "url": "/f/foo-1.2.tar.gz", "hashes": {}, "yanked": true}
          ],
          "versions": ["1.0", "1.1", "1.2"]
        }"#;
        let page = Url::parse("https://example.com/simple/foo/").unwrap();
        let ParsedPage { files, problems } = parse_project(text, &page).unwrap();
        assert!(problems.is_empty());
        assert_eq!(
            files[0].url.as_str(),
            "https://example.com/files/foo-1.0-py3-none-any.whl"
        );
        assert_eq!(files[0].hashes.sha256(), Some("abc"));
        assert_eq!(files[0].size, Some(1234));
        assert_eq!(files[0].requires_python.as_deref(), Some(">=3.9"));
        let CoreMetadata::Available(h) = &files[0].core_metadata else {
            panic!()
        };
        assert_eq!(h.sha256(), Some("def"));
        assert_eq!(
            files[1].yanked.as_ref().unwrap().reason.as_deref(),
            Some("bad build")
        );
        assert_eq!(
            files[1].core_metadata,
            CoreMetadata::Available(Hashes::default())
        );
        assert_eq!(files[2].yanked, Some(Yanked { reason: None }));
        assert_eq!(files[2].core_metadata, CoreMetadata::Absent);
    }

    #[test]
    fn unknown_major_api_versions_are_refused() {
        let page = Url::parse("https://example.com/simple/foo/").unwrap();
        let err =
            parse_project(r#"{"meta": {"api-version": "2.0"}, "files": []}"#, &page).unwrap_err();
        assert!(err.contains("2.0"), "{err}");
        assert!(parse_project("{", &page)
            .unwrap_err()
            .contains("invalid JSON"));
    }

    #[test]
    fn pages_list_a_bounded_number_of_files() {
        let page = Url::parse("https://example.com/simple/foo/").unwrap();
        let entry = r#"{"filename": "a", "url": "/a"},"#;
        let json = format!(
            r#"{{"meta": {{"api-version": "1.0"}}, "files": [{}{{"filename": "b", "url": "/b"}}]}}"#,
            entry.repeat(MAX_PAGE_LINKS)
        );
        let err = parse_project(&json, &page).unwrap_err();
        assert!(err.contains("more than 100000 files"), "{err}");
    }

    fn files() -> Vec<PageFile> {
        vec![
            PageFile {
                filename: "a-1.0-py3-none-any.whl".into(),
                url: "/files/a/k1/a-1.0-py3-none-any.whl".into(),
                hashes: Hashes::sha256_of("ab"),
                requires_python: Some(">=3.9".into()),
                yanked: None,
                size: Some(10),
                upload_time: None,
                core_metadata: CoreMetadata::Available(Hashes::sha256_of("cd")),
            },
            PageFile {
                filename: "a-2.0.tar.gz".into(),
                url: "/files/a/k2/a-2.0.tar.gz".into(),
                hashes: Hashes::default(),
                requires_python: None,
                yanked: Some(Yanked {
                    reason: Some("broken".into()),
                }),
                size: None,
                upload_time: Some("2025-01-01T00:00:00Z".into()),
                core_metadata: CoreMetadata::Absent,
            },
        ]
    }

    fn page<'a>(files: &'a [PageFile], versions: &'a [String]) -> ProjectPage<'a> {
        ProjectPage {
            name: "a",
            files,
            versions,
        }
    }

    #[test]
    fn project_pages_carry_every_pep_691_field() {
        let versions = ["1.0".to_owned(), "2.0".to_owned()];
        let body = render_project_json(page(&files(), &versions), &PageStyle::SERVED);
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        // One size unknown: PEP 700 fields cannot be promised.
        assert_eq!(value["meta"]["api-version"], "1.0");
        let first = &value["files"][0];
        assert_eq!(first["hashes"]["sha256"], "ab");
        assert_eq!(first["requires-python"], ">=3.9");
        assert_eq!(first["core-metadata"]["sha256"], "cd");
        assert_eq!(first["dist-info-metadata"]["sha256"], "cd");
        assert!(first.get("yanked").is_none());
        let second = &value["files"][1];
        assert_eq!(second["yanked"], "broken");
        assert_eq!(second["hashes"], serde_json::json!({}));
        assert!(second.get("core-metadata").is_none());
        assert_eq!(value["versions"], serde_json::json!(["1.0", "2.0"]));

        let mut sized = files();
        sized[1].size = Some(3);
        sized[1].yanked = Some(Yanked { reason: None });
        sized[1].core_metadata = CoreMetadata::Available(Hashes::default());
        let body = render_project_json(page(&sized, &[]), &PageStyle::SERVED);
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["meta"]["api-version"], "1.1");
        assert_eq!(value["files"][1]["yanked"], true);
        assert_eq!(value["files"][1]["core-metadata"], true);
    }

    #[test]
    fn styles_lay_the_same_page_out() {
        let files = &files()[..1];
        let versions = ["1.0".to_owned()];
        let served = render_project_json(page(files, &versions), &PageStyle::SERVED);
        assert_eq!(
            String::from_utf8(served).unwrap(),
            r#"{"meta":{"api-version":"1.1"},"name":"a","files":[{"filename":"a-1.0-py3-none-any.whl","url":"/files/a/k1/a-1.0-py3-none-any.whl","hashes":{"sha256":"ab"},"requires-python":">=3.9","core-metadata":{"sha256":"cd"},"dist-info-metadata":{"sha256":"cd"},"size":10}],"versions":["1.0"]}"#
        );
        let written = render_project_json(page(files, &versions), &PageStyle::STATIC_SITE);
        let written = String::from_utf8(written).unwrap();
        assert!(
            written.starts_with("{\n  \"meta\": {\n    \"api-version\": \"1.1\"\n  },\n  \"name\": \"a\",\n  \"versions\": [\n    \"1.0\"\n  ],\n  \"files\": ["),
            "{written}"
        );
        assert!(written.ends_with("}\n"), "{written}");
        let root = render_root_json(["Foo", "bar"].into_iter(), &PageStyle::SERVED);
        assert_eq!(
            String::from_utf8(root).unwrap(),
            r#"{"meta":{"api-version":"1.0"},"projects":[{"name":"Foo"},{"name":"bar"}]}"#
        );
    }
}
