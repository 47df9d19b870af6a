//! The projects the sources list, for a front-end that serves its own `/simple/` page (the
//! proxy): each index's root page (PEP 503 HTML anchors or the PEP 691 JSON `projects` list)
//! and the names of the files in each find-links source.

use std::collections::BTreeMap;

use url::Url;

use super::IndexClient;
use crate::error::ClientError;
use crate::limits::BodyKind;
use crate::name::ProjectName;
use crate::simple::{PageError, PageFormat, PageWarning, ACCEPT_SIMPLE};

/// Every project the client's sources list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectList {
    /// Normalised name → the name as the first source spelled it.
    pub projects: BTreeMap<ProjectName, String>,
    /// Sources without a project list (an index whose root page is missing) and entries that
    /// are not project names.
    pub warnings: Vec<PageWarning>,
}

impl IndexClient {
    /// The projects listed by every index's root page and every find-links source, merged.
    ///
    /// An index without a root page (404, 410) contributes a warning; any other failure is the
    /// error (the caller cannot tell a partial list from a complete one otherwise).
    pub async fn project_names(&self) -> Result<ProjectList, ClientError> {
        let mut list = ProjectList::default();
        for index in &self.settings.indexes {
            let url = index.url();
            let Some(fetched) = self.http.get(url, ACCEPT_SIMPLE, BodyKind::Page).await? else {
                list.warnings.push(PageWarning {
                    location: url.to_string(),
                    message: "the index has no project list".to_owned(),
                });
                continue;
            };
            let body = String::from_utf8_lossy(&fetched.body);
            let names = root_names(&fetched.url, fetched.content_type.as_deref(), &body).map_err(
                |message| {
                    ClientError::Page(PageError {
                        url: url.clone(),
                        message,
                    })
                },
            )?;
            add(&mut list, names, url.as_str());
        }
        for (position, source) in self.settings.find_links.iter().enumerate() {
            let (links, _) = self.flat_links(position, source).await?;
            let names = links
                .files
                .iter()
                .filter_map(|file| project_of_file(&file.filename))
                .collect();
            add(&mut list, names, &source.location());
        }
        Ok(list)
    }
}

fn add(list: &mut ProjectList, names: Vec<String>, location: &str) {
    for name in names {
        match ProjectName::new(&name) {
            Ok(normal) => {
                list.projects.entry(normal).or_insert(name);
            }
            Err(e) => list.warnings.push(PageWarning {
                location: location.to_owned(),
                message: e.to_string(),
            }),
        }
    }
}

/// The project names of a root page (see [`vari_simple::parse_root`]).
fn root_names(
    page_url: &Url,
    content_type: Option<&str>,
    body: &str,
) -> Result<Vec<String>, String> {
    vari_simple::parse_root(page_url, PageFormat::detect(content_type, body), body)
}

/// The project a distribution file belongs to, from its name: a wheel's first part, or an
/// sdist's name before its version (`foo-bar-1.0.tar.gz` → `foo-bar`).
fn project_of_file(filename: &str) -> Option<String> {
    if let Ok(wheel) = vari_core::filename::WheelFilename::parse(filename) {
        return Some(wheel.name);
    }
    let lower = filename.to_ascii_lowercase();
    let stem_len = [".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar"]
        .iter()
        .find(|ext| lower.ends_with(*ext))
        .map(|ext| filename.len() - ext.len())?;
    let (name, version) = filename[..stem_len].rsplit_once('-')?;
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_pages_in_both_formats() {
        let url = Url::parse("https://example.com/simple/").unwrap();
        let json = r#"{"meta": {"api-version": "1.0"}, "projects": [{"name": "Foo.Bar"}, {"name": "baz"}]}"#;
        assert_eq!(
            root_names(&url, Some("application/vnd.pypi.simple.v1+json"), json).unwrap(),
            ["Foo.Bar", "baz"]
        );
        let html = r#"<html><body><a href="/simple/foo-bar/">Foo.Bar</a>
            <a href="/simple/a-b/"></a><a href="qux/">qu&#120;</a></body></html>"#;
        assert_eq!(
            root_names(&url, Some("text/html"), html).unwrap(),
            ["Foo.Bar", "a-b", "qux"]
        );
        assert!(root_names(&url, Some("application/json"), "{").is_err());
    }

    #[test]
    fn file_names_give_project_names() {
        assert_eq!(
            project_of_file("Foo_Bar-1.0-py3-none-any.whl").as_deref(),
            Some("foo_bar")
        );
        assert_eq!(
            project_of_file("foo-bar-2.0.tar.gz").as_deref(),
            Some("foo-bar")
        );
        assert_eq!(project_of_file("foo-1.0-variants.json"), None);
        assert_eq!(project_of_file("notes.txt"), None);
        assert_eq!(project_of_file("foo-bar.zip"), None);
    }
}
