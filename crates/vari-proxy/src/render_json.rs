//! PEP 691 JSON pages (with PEP 700's `size` and `versions`, PEP 714's `core-metadata` next
//! to PEP 658's `dist-info-metadata`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{api_version, Listed};

#[derive(Serialize)]
struct Meta {
    #[serde(rename = "api-version")]
    api_version: &'static str,
}

#[derive(Serialize)]
struct ProjectPage<'a> {
    meta: Meta,
    name: &'a str,
    files: Vec<File<'a>>,
    versions: &'a [String],
}

#[derive(Serialize)]
#[serde(untagged)]
enum Flag<'a> {
    Bool(bool),
    Reason(&'a str),
    Hashes(&'a BTreeMap<String, String>),
}

#[derive(Serialize)]
struct File<'a> {
    filename: &'a str,
    url: &'a str,
    hashes: &'a BTreeMap<String, String>,
    #[serde(rename = "requires-python", skip_serializing_if = "Option::is_none")]
    requires_python: Option<&'a str>,
    #[serde(rename = "core-metadata", skip_serializing_if = "Option::is_none")]
    core_metadata: Option<Flag<'a>>,
    #[serde(rename = "dist-info-metadata", skip_serializing_if = "Option::is_none")]
    dist_info_metadata: Option<Flag<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    yanked: Option<Flag<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(rename = "upload-time", skip_serializing_if = "Option::is_none")]
    upload_time: Option<&'a str>,
}

/// The project page of `name` listing `files`; `versions` ascending.
pub(crate) fn project(name: &str, files: &[Listed], versions: &[String]) -> Vec<u8> {
    let page = ProjectPage {
        meta: Meta {
            api_version: api_version(files),
        },
        name,
        files: files
            .iter()
            .map(|file| File {
                filename: &file.filename,
                url: &file.href,
                hashes: &file.hashes,
                requires_python: file.requires_python.as_deref(),
                core_metadata: metadata(file),
                dist_info_metadata: metadata(file),
                yanked: file.yanked.as_ref().map(|reason| match reason.as_deref() {
                    None | Some("") => Flag::Bool(true),
                    Some(reason) => Flag::Reason(reason),
                }),
                size: file.size,
                upload_time: file.upload_time.as_deref(),
            })
            .collect(),
        versions,
    };
    serde_json::to_vec(&page).unwrap_or_default()
}

#[derive(Serialize)]
struct RootPage<'a> {
    meta: Meta,
    projects: Vec<RootProject<'a>>,
}

#[derive(Serialize)]
struct RootProject<'a> {
    name: &'a str,
}

/// PEP 714 and PEP 658 say the same thing under two keys: `true`, or the metadata's hashes.
fn metadata(file: &Listed) -> Option<Flag<'_>> {
    file.core_metadata
        .as_ref()
        .map(|hashes| match hashes.is_empty() {
            true => Flag::Bool(true),
            false => Flag::Hashes(hashes),
        })
}

/// The root page listing `names`.
pub(crate) fn root<'a>(names: impl Iterator<Item = &'a str>) -> Vec<u8> {
    let page = RootPage {
        meta: Meta { api_version: "1.0" },
        projects: names.map(|name| RootProject { name }).collect(),
    };
    serde_json::to_vec(&page).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Vec<Listed> {
        vec![
            Listed {
                filename: "a-1.0-py3-none-any.whl".into(),
                href: "/files/a/k1/a-1.0-py3-none-any.whl".into(),
                hashes: [("sha256".to_owned(), "ab".to_owned())].into(),
                requires_python: Some(">=3.9".into()),
                yanked: None,
                size: Some(10),
                upload_time: None,
                core_metadata: Some([("sha256".to_owned(), "cd".to_owned())].into()),
            },
            Listed {
                filename: "a-2.0.tar.gz".into(),
                href: "/files/a/k2/a-2.0.tar.gz".into(),
                hashes: BTreeMap::new(),
                requires_python: None,
                yanked: Some(Some("broken".into())),
                size: None,
                upload_time: Some("2025-01-01T00:00:00Z".into()),
                core_metadata: None,
            },
        ]
    }

    #[test]
    fn project_pages_carry_every_pep_691_field() {
        let body = project("a", &listed(), &["1.0".into(), "2.0".into()]);
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

        let mut sized = listed();
        sized[1].size = Some(3);
        sized[1].yanked = Some(None);
        sized[1].core_metadata = Some(BTreeMap::new());
        let value: serde_json::Value = serde_json::from_slice(&project("a", &sized, &[])).unwrap();
        assert_eq!(value["meta"]["api-version"], "1.1");
        assert_eq!(value["files"][1]["yanked"], true);
        assert_eq!(value["files"][1]["core-metadata"], true);
    }

    #[test]
    fn root_pages() {
        let body = root(["Foo", "bar"].into_iter());
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value["projects"][1]["name"], "bar");
    }
}
