//! PEP 691 JSON pages (`application/vnd.pypi.simple.v1+json`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;
use url::Url;

use super::html::{filename_of, fragment_hashes};
use super::model::{CoreMetadata, Hashes, RawFile, Yanked};

/// The page with each file entry left as its text: an entry is parsed into a [`File`] and
/// turned into a [`RawFile`] one at a time, so a page of 100,000 files never holds every
/// entry's parsed form (maps, strings) at once next to the files built from them.
#[derive(Deserialize)]
struct Page<'a> {
    meta: Meta,
    #[serde(borrow, default, deserialize_with = "at_most_max_links")]
    files: Vec<&'a RawValue>,
}

/// The `files` list, refused once it passes [`super::MAX_PAGE_LINKS`] entries (while parsing:
/// each entry costs memory before the list is complete).
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
                if files.len() == super::MAX_PAGE_LINKS {
                    return Err(serde::de::Error::custom(format!(
                        "the page lists more than {} files",
                        super::MAX_PAGE_LINKS
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
pub(crate) fn parse_json(
    text: &str,
    page_url: &Url,
) -> Result<(Vec<RawFile>, Vec<String>), String> {
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
                problems.push(format!(
                    "{}: invalid url `{}`: {e}",
                    file.filename, file.url
                ));
                continue;
            }
        };
        let mut hashes = Hashes::default();
        for (algorithm, digest) in &file.hashes {
            hashes.insert(algorithm, digest);
        }
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
            Some(MetadataFlag::Hashes(map)) => {
                let mut hashes = Hashes::default();
                for (algorithm, digest) in &map {
                    hashes.insert(algorithm, digest);
                }
                CoreMetadata::Available(hashes)
            }
        };
        let yanked = match file.yanked {
            None | Some(YankedFlag::Flag(false)) => None,
            Some(YankedFlag::Flag(true)) => Some(Yanked { reason: None }),
            Some(YankedFlag::Reason(reason)) => Some(Yanked {
                reason: Some(reason).filter(|r| !r.trim().is_empty()),
            }),
        };
        files.push(RawFile {
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
    Ok((files, problems))
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
        let (files, problems) = parse_json(text, &page).unwrap();
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
            parse_json(r#"{"meta": {"api-version": "2.0"}, "files": []}"#, &page).unwrap_err();
        assert!(err.contains("2.0"), "{err}");
        assert!(parse_json("{", &page).unwrap_err().contains("invalid JSON"));
    }
}
