//! PEP 691 JSON pages (API version 1.1: PEP 700's `versions` and `size`; PEP 714's
//! `core-metadata`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::site::{ProjectPage, API_VERSION};

#[derive(Serialize)]
struct Meta {
    #[serde(rename = "api-version")]
    api_version: &'static str,
}

const META: Meta = Meta {
    api_version: API_VERSION,
};

#[derive(Serialize)]
struct Root<'a> {
    meta: Meta,
    projects: Vec<RootProject<'a>>,
}

#[derive(Serialize)]
struct RootProject<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct Project<'a> {
    meta: Meta,
    name: &'a str,
    versions: &'a [String],
    files: Vec<File<'a>>,
}

#[derive(Serialize)]
struct File<'a> {
    filename: &'a str,
    url: &'a str,
    hashes: BTreeMap<&'static str, &'a str>,
    #[serde(rename = "requires-python", skip_serializing_if = "Option::is_none")]
    requires_python: Option<&'a str>,
    #[serde(rename = "core-metadata", skip_serializing_if = "Option::is_none")]
    core_metadata: Option<BTreeMap<&'static str, &'a str>>,
    /// PEP 714: the old key, for clients that predate it.
    #[serde(rename = "dist-info-metadata", skip_serializing_if = "Option::is_none")]
    dist_info_metadata: Option<BTreeMap<&'static str, &'a str>>,
    size: u64,
}

fn to_text(value: &impl Serialize) -> String {
    // These structures hold only strings, numbers and string-keyed maps: serialising cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The project list.
pub(crate) fn root_json(projects: &[&str]) -> String {
    to_text(&Root {
        meta: META,
        projects: projects.iter().map(|name| RootProject { name }).collect(),
    })
}

/// A project page.
pub(crate) fn project_json(page: &ProjectPage) -> String {
    let files = page
        .files
        .iter()
        .map(|f| {
            let metadata = f
                .core_metadata_sha256
                .as_deref()
                .map(|h| BTreeMap::from([("sha256", h)]));
            File {
                filename: &f.filename,
                url: &f.url,
                hashes: BTreeMap::from([("sha256", f.sha256.as_str())]),
                requires_python: f.requires_python.as_deref(),
                core_metadata: metadata.clone(),
                dist_info_metadata: metadata,
                size: f.size,
            }
        })
        .collect();
    to_text(&Project {
        meta: META,
        name: &page.name,
        versions: &page.versions,
        files,
    })
}
