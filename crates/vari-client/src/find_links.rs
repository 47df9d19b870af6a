//! `--find-links` sources: a local directory (its files are the links) or one HTML page whose
//! anchors are the links, for any project.

use url::Url;

use crate::error::ClientError;
use crate::http::Http;
use crate::limits::BodyKind;
use crate::settings::FindLinks;
use crate::simple::{parse_links, RawFile};

/// Every link of a source, before classification, and the problems met reading it.
#[derive(Debug, Default)]
pub(crate) struct Links {
    pub(crate) files: Vec<RawFile>,
    pub(crate) problems: Vec<String>,
}

pub(crate) async fn read(http: &Http, source: &FindLinks) -> Result<Links, ClientError> {
    match source {
        FindLinks::Directory(dir) => list_directory(dir),
        FindLinks::Page { url, .. } => {
            let fetched = http
                .get(url, "text/html", BodyKind::Page)
                .await?
                .ok_or_else(|| ClientError::Status {
                    url: url.clone(),
                    status: 404,
                })?;
            let body = crate::simple::page_text(&fetched.body);
            // A flat page is HTML whatever it is served as (file: pages have no type).
            let content_type = fetched.content_type.as_deref().or(Some("text/html"));
            let (files, problems) = parse_links(&fetched.url, content_type, &body)?;
            Ok(Links { files, problems })
        }
    }
}

fn list_directory(dir: &std::path::Path) -> Result<Links, ClientError> {
    let io = |source| ClientError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let absolute = std::path::absolute(dir).map_err(io)?;
    let mut links = Links::default();
    for entry in std::fs::read_dir(&absolute).map_err(io)? {
        let entry = entry.map_err(io)?;
        // `metadata` follows symlinks: a link to a wheel counts as the wheel.
        if !std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let Ok(filename) = entry.file_name().into_string() else {
            links.problems.push(format!(
                "skipping {}: the name is not UTF-8",
                entry.path().display()
            ));
            continue;
        };
        let Ok(url) = Url::from_file_path(entry.path()) else {
            continue;
        };
        let mut file = RawFile::new(filename, url);
        file.size = std::fs::metadata(entry.path()).ok().map(|m| m.len());
        links.files.push(file);
    }
    // Directory order is the file system's; sort so results do not depend on it.
    links.files.sort_by(|a, b| a.filename.cmp(&b.filename));
    Ok(links)
}
