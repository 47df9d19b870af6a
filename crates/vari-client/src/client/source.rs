//! A project's index pages as fetched, before they are parsed ([`ProjectSource`]), and a
//! digest of them: a front-end that derives something costly from a page (the proxy's
//! rendered pages) can tell from the digest that the pages are the ones it derived it from,
//! and skip parsing them. Revalidating a page costs a conditional request and a read of the
//! cached body; parsing a large page (numpy's lists over 4,000 files) costs far more.

use std::time::Duration;

use sha2::{Digest, Sha256};
use url::Url;

use super::IndexClient;
use crate::error::ClientError;
use crate::http::Fetched;
use crate::limits::BodyKind;
use crate::name::ProjectName;
use crate::settings::IndexStrategy;
use crate::simple::{parse_links, FileSource, Project, ACCEPT_SIMPLE};

/// One index's page of a project, as fetched.
pub(super) struct SourcePage {
    index: Url,
    /// The URL asked for (after the index's base, before redirects).
    asked: Url,
    fetched: Fetched,
}

/// The pages of one project from the indexes that have it, as they answered (from the HTTP
/// cache, revalidated as the cache requires), not parsed yet ([`IndexClient::project_source`]).
pub struct ProjectSource {
    name: ProjectName,
    pages: Vec<SourcePage>,
    digest: String,
    fresh_for: Option<Duration>,
}

impl std::fmt::Debug for ProjectSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectSource")
            .field("name", &self.name)
            .field("pages", &self.pages.len())
            .field("digest", &self.digest)
            .finish()
    }
}

impl ProjectSource {
    /// The project's name.
    pub fn name(&self) -> &ProjectName {
        &self.name
    }

    /// A SHA-256 (hex) of every page: the URL it was asked at, the URL it came from, its
    /// content type and its bytes, in the order the indexes were asked. Equal digests mean
    /// the pages parse to the same files.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// How much longer the servers allow the pages to be used without asking again (the
    /// shortest; `None` when no page set a limit), as [`Project::fresh_for`].
    pub fn fresh_for(&self) -> Option<Duration> {
        self.fresh_for
    }
}

impl IndexClient {
    /// The pages of `name` as [`Self::project`] reads them, not parsed: `None` when the
    /// project is not read from index pages alone (find-links sources, which are read once
    /// per client and hold no page of their own, or listings kept by the settings), for which
    /// [`Self::project`] is the way. Fails with [`ClientError::ProjectNotFound`] when no index
    /// has the project.
    pub async fn project_source(
        &self,
        name: &ProjectName,
    ) -> Result<Option<ProjectSource>, ClientError> {
        if !self.settings.find_links.is_empty() || self.settings.listings.keeps() {
            return Ok(None);
        }
        let mut tried = Vec::new();
        let pages = self.fetch_pages(name, &mut tried).await?;
        if pages.is_empty() {
            return Err(ClientError::ProjectNotFound {
                name: name.to_string(),
                tried,
            });
        }
        let mut digest = Sha256::new();
        let mut fresh_for: Option<Duration> = None;
        for page in &pages {
            for part in [
                page.asked.as_str().as_bytes(),
                page.fetched.url.as_str().as_bytes(),
                page.fetched
                    .content_type
                    .as_deref()
                    .unwrap_or("")
                    .as_bytes(),
            ] {
                // Lengths first: no two different pages hash alike by moving a boundary.
                digest.update((part.len() as u64).to_le_bytes());
                digest.update(part);
            }
            digest.update((page.fetched.body.len() as u64).to_le_bytes());
            digest.update(&page.fetched.body);
            fresh_for = match (fresh_for, page.fetched.fresh_for) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(Some(ProjectSource {
            name: name.clone(),
            pages,
            digest: hex::encode(digest.finalize()),
            fresh_for,
        }))
    }

    /// The project `source` lists, parsed as [`Self::project`] parses its pages.
    pub fn project_from_source(&self, source: ProjectSource) -> Result<Project, ClientError> {
        let mut project = Project::new(source.name);
        for page in source.pages {
            self.add_page(&mut project, page, &mut Vec::new())?;
        }
        Ok(project)
    }

    /// Each index's page of `name`, in order (only the first that has it with
    /// [`IndexStrategy::FirstIndex`]); the pages asked for are added to `tried`.
    pub(super) async fn fetch_pages(
        &self,
        name: &ProjectName,
        tried: &mut Vec<String>,
    ) -> Result<Vec<SourcePage>, ClientError> {
        let mut pages = Vec::new();
        for index in &self.settings.indexes {
            let asked = index.url().join(&format!("{name}/")).map_err(|e| {
                ClientError::Page(crate::simple::PageError {
                    url: index.url().clone(),
                    message: e.to_string(),
                })
            })?;
            tried.push(asked.to_string());
            let Some(fetched) = self.http.get(&asked, ACCEPT_SIMPLE, BodyKind::Page).await? else {
                continue;
            };
            pages.push(SourcePage {
                index: index.url().clone(),
                asked,
                fetched,
            });
            if self.settings.strategy == IndexStrategy::FirstIndex {
                break;
            }
        }
        Ok(pages)
    }

    /// Parses `page` into `project`; the credentials its links carried are added to
    /// `credentials`.
    pub(super) fn add_page(
        &self,
        project: &mut Project,
        page: SourcePage,
        credentials: &mut Vec<(Url, crate::auth::Credentials)>,
    ) -> Result<(), ClientError> {
        let SourcePage {
            index,
            asked,
            fetched,
        } = page;
        project.limit_freshness(fetched.fresh_for);
        let body = crate::simple::page_text(&fetched.body);
        let (mut raw, problems) =
            parse_links(&fetched.url, fetched.content_type.as_deref(), &body)?;
        // The page is no longer needed: freed before its links are classified, so its text
        // and the files built from it are not held at once.
        drop(body);
        drop(fetched);
        credentials.extend(self.keep_link_credentials(&mut raw));
        project.add(raw, problems, FileSource::Index(index), asked.as_str());
        Ok(())
    }
}
