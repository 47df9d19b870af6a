//! [`IndexClient`]: the front door that ties settings, HTTP, pages, find-links, variant
//! metadata, core metadata and downloads together.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures_util::stream::{self, StreamExt};
use pep440_rs::Version;
use sha2::Digest;

use crate::auth::{split_credentials, CredentialStore, Credentials};
use crate::download::{self, Downloaded, Progress};
use crate::error::{ClientError, HashMismatch};
use crate::find_links::{self, Links};
use crate::http::Http;
use crate::limits::BodyKind;
use crate::listings::Kept;
use crate::name::ProjectName;
use crate::range::read_member;
use crate::raw::{self, FetchedBody};
use crate::settings::{ClientSettings, FindLinks};
use crate::simple::{CoreMetadata, FileSource, IndexFile, Project, RawFile};
use crate::variants::{version_variants, VersionVariants};

/// A find-links source's links and the credentials they carried.
type FlatLinks = (Arc<Links>, Vec<(url::Url, Credentials)>);

// Serving what the sources list again (the proxy): the project list, files as they arrive.
mod listing;
mod passthrough;
// A project's pages before they are parsed, and their digest.
mod source;
pub use listing::ProjectList;
pub use passthrough::FileStream;
pub use source::ProjectSource;

/// The index client. Cheap to share by reference across tasks; every method is `async`.
///
/// ```no_run
/// # async fn run() -> Result<(), vari_client::ClientError> {
/// use vari_client::{ClientSettings, IndexClient, IndexUrl, ProjectName};
/// let client = IndexClient::new(ClientSettings {
///     indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
///     ..ClientSettings::default()
/// })?;
/// let project = client.project(&ProjectName::new("torch").unwrap()).await?;
/// for version in project.versions() {
///     let variants = client.variant_metadata(&project, version).await?;
///     println!("{version}: {variants:?}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct IndexClient {
    settings: ClientSettings,
    http: Http,
    /// Find-links sources read once per client, by position in the settings.
    flat: Mutex<HashMap<usize, FlatLinks>>,
}

impl IndexClient {
    /// Builds the client: reads netrc, sets up TLS and the cache.
    pub fn new(settings: ClientSettings) -> Result<Self, ClientError> {
        let credentials = CredentialStore::new(&settings.netrc)?;
        let http = Http::new(&settings, credentials)?;
        Ok(Self::with_http(settings, http))
    }

    /// A client for other `settings` (other sources: a build family's own index) that shares
    /// this one's connection pool, TLS sessions and bound on parallel requests, so that a run
    /// asking several sets of sources opens one pool, not one per set. Its credentials, cache
    /// mode, limits and kept listings are those of `settings`; the connect and read timeouts
    /// are this client's.
    pub fn sharing(&self, settings: ClientSettings) -> Result<Self, ClientError> {
        let credentials = CredentialStore::new(&settings.netrc)?;
        let http = self.http.sharing(&settings, credentials)?;
        Ok(Self::with_http(settings, http))
    }

    /// The client over `http`, with the credentials `settings`' sources carry.
    fn with_http(settings: ClientSettings, http: Http) -> Self {
        for index in &settings.indexes {
            if let Some(c) = index.credentials() {
                http.credentials().insert(index.url(), c.clone());
            }
        }
        for source in &settings.find_links {
            if let FindLinks::Page {
                url,
                credentials: Some(c),
            } = source
            {
                http.credentials().insert(url, c.0.clone());
            }
        }
        Self {
            settings,
            http,
            flat: Mutex::new(HashMap::new()),
        }
    }

    /// The settings the client was built with.
    pub fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    /// Every file the sources list for `name`.
    ///
    /// Indexes are asked in order. With
    /// [`IndexStrategy::FirstIndex`](crate::IndexStrategy::FirstIndex) the first index that
    /// has the project (any answer but 404/410) supplies its files and later indexes are not
    /// asked; with [`IndexStrategy::UnsafeBestMatch`](crate::IndexStrategy::UnsafeBestMatch)
    /// all are merged. Find-links sources are always added. Fails with
    /// [`ClientError::ProjectNotFound`] when no source has the project.
    ///
    /// When the settings keep listings ([`Listings`](crate::Listings)), the first answer for
    /// `name` is kept and every later request (of this client or another made from the same
    /// settings) gets it, with the credentials its links carried.
    pub async fn project(&self, name: &ProjectName) -> Result<Project, ClientError> {
        let listings = &self.settings.listings;
        // Kept per sources too: a client made for one build family's own index (PyTorch's
        // `cu128`) shares the run's listings but must not take the default index's answer for
        // the same name, nor give it its own.
        let key = match listings.keeps() {
            true => self.listing_key(name),
            false => String::new(),
        };
        if let Some(kept) = listings.get(&key) {
            return Ok(self.take_kept(kept));
        }
        let mut credentials = Vec::new();
        let project = self.read_project(name, &mut credentials).await?;
        if !listings.keeps() {
            return Ok(project);
        }
        let kept = listings.keep(
            &key,
            Kept {
                project,
                credentials,
            },
        );
        Ok(self.take_kept(kept))
    }

    /// What a listing of `name` is kept under: the sources asked (indexes, find-links, the
    /// strategy) and the name.
    fn listing_key(&self, name: &ProjectName) -> String {
        let settings = &self.settings;
        let mut key = String::new();
        for index in &settings.indexes {
            key.push_str(&index.to_string());
            key.push('\n');
        }
        key.push_str(&format!(
            "{:?}\n{:?}\n",
            settings.find_links, settings.strategy
        ));
        key.push_str(name.as_str());
        key
    }

    /// A kept listing, its links' credentials in this client's store.
    fn take_kept(&self, kept: Kept) -> Project {
        for (url, credentials) in kept.credentials {
            self.http.credentials().insert(&url, credentials);
        }
        kept.project
    }

    /// [`Self::project`] read from the sources; the credentials its links carried are added
    /// to `credentials`.
    async fn read_project(
        &self,
        name: &ProjectName,
        credentials: &mut Vec<(url::Url, Credentials)>,
    ) -> Result<Project, ClientError> {
        let mut project = Project::new(name.clone());
        let mut tried = Vec::new();
        let pages = self.fetch_pages(name, &mut tried).await?;
        let mut found = !pages.is_empty();
        for page in pages {
            self.add_page(&mut project, page, credentials)?;
        }
        for (position, source) in self.settings.find_links.iter().enumerate() {
            tried.push(source.location());
            let (links, carried) = self.flat_links(position, source).await?;
            credentials.extend(carried);
            let mut flat = Project::new(name.clone());
            flat.add(
                links.files.clone(),
                links.problems.clone(),
                FileSource::FindLinks(source.location()),
                &source.location(),
            );
            found |= !flat.is_empty();
            project.merge(flat);
        }
        if !found {
            return Err(ClientError::ProjectNotFound {
                name: name.to_string(),
                tried,
            });
        }
        Ok(project)
    }

    /// Several projects, fetched in parallel (bounded by the concurrency setting), in the
    /// order given.
    pub async fn projects(&self, names: &[ProjectName]) -> Vec<Result<Project, ClientError>> {
        stream::iter(names.iter().map(|name| self.project(name)))
            .buffered(self.settings.concurrency.max(1))
            .collect()
            .await
    }

    /// The links of a find-links source (read once per client), and the credentials they
    /// carried.
    async fn flat_links(
        &self,
        position: usize,
        source: &FindLinks,
    ) -> Result<FlatLinks, ClientError> {
        if let Some(links) = self
            .flat
            .lock()
            .ok()
            .and_then(|m| m.get(&position).cloned())
        {
            return Ok(links);
        }
        let mut links = find_links::read(&self.http, source).await?;
        let carried = self.keep_link_credentials(&mut links.files);
        let links = (Arc::new(links), carried);
        if let Ok(mut map) = self.flat.lock() {
            map.insert(position, links.clone());
        }
        Ok(links)
    }

    /// Moves credentials found in links (`https://user:token@host/file.whl`) into the store,
    /// for that realm only, so no kept URL carries them. Returns them, by the link's URL.
    fn keep_link_credentials(&self, raw: &mut [RawFile]) -> Vec<(url::Url, Credentials)> {
        let mut moved = Vec::new();
        for file in raw {
            if file.url.username().is_empty() && file.url.password().is_none() {
                continue;
            }
            if let (clean, Some(credentials)) = split_credentials(file.url.clone()) {
                self.http.credentials().insert(&clean, credentials.clone());
                moved.push((clean.clone(), credentials));
                file.url = clean;
            }
        }
        moved
    }

    /// The variant metadata of `version` of `project` (PEP 825): its `variants.json` when a
    /// source links one, else each label's wheel's `variant.json` read with range requests.
    pub async fn variant_metadata(
        &self,
        project: &Project,
        version: &Version,
    ) -> Result<VersionVariants, ClientError> {
        version_variants(&self.http, project, version, self.settings.concurrency).await
    }

    /// The core metadata (`METADATA` text) of a wheel: from the index when it serves it
    /// (PEP 658, hash-checked), else read from the wheel with range requests.
    pub async fn core_metadata(&self, file: &IndexFile) -> Result<String, ClientError> {
        let Some(wheel) = file.wheel() else {
            return Err(ClientError::NotAWheel {
                url: file.url.clone(),
                filename: file.filename.clone(),
            });
        };
        if let CoreMetadata::Available(hashes) = &file.core_metadata {
            let mut url = file.url.clone();
            url.set_path(&format!("{}.metadata", file.url.path()));
            match self.http.get(&url, "*/*", BodyKind::Metadata).await? {
                Some(fetched) => {
                    if let Some(expected) = hashes.sha256() {
                        let actual = hex::encode(sha2::Sha256::digest(&fetched.body));
                        if actual != expected {
                            return Err(ClientError::HashMismatch(Box::new(HashMismatch {
                                url,
                                algorithm: "sha256".into(),
                                expected: expected.to_owned(),
                                actual,
                            })));
                        }
                    }
                    return utf8(&url, fetched.body);
                }
                None => tracing::debug!("{url} is advertised but missing; reading the wheel"),
            }
        }
        match read_member(&self.http, &file.url, wheel, "METADATA").await? {
            Some((_, bytes)) => utf8(&file.url, bytes),
            None => Err(ClientError::Archive {
                url: file.url.clone(),
                message: format!("no {}-….dist-info/METADATA in the wheel", wheel.name),
            }),
        }
    }

    /// Downloads `file` to `dest` (a file path) atomically, checking the index's hash while
    /// streaming. `progress` is called with (bytes so far, total when known).
    pub async fn download(
        &self,
        file: &IndexFile,
        dest: &Path,
        progress: Progress<'_>,
    ) -> Result<Downloaded, ClientError> {
        download::download(&self.http, file, dest, progress).await
    }

    /// The body at `url` as it is, fetched whole (through the cache, like pages) with `accept`
    /// as the `Accept` header; `None` when there is nothing there (404, 410). For callers that
    /// check what an index serves rather than parse it. Its ceiling is the `variants.json` one
    /// for a name ending in `-variants.json`, the metadata one for `.metadata`, else the page
    /// one ([`Limits`](crate::Limits)).
    pub async fn fetch(
        &self,
        url: &url::Url,
        accept: &str,
    ) -> Result<Option<FetchedBody>, ClientError> {
        raw::fetch(&self.http, url, accept).await
    }

    /// The lowercase hex SHA-256 of the file at `url`, computed while it streams (never held
    /// in memory or cached); `None` when there is nothing there (404, 410).
    pub async fn sha256(&self, url: &url::Url) -> Result<Option<String>, ClientError> {
        raw::sha256(&self.http, url).await
    }

    /// The member `{dist-info}/{file}` (`file` is `variant.json`, `METADATA`…) of the wheel
    /// `wheel` at `url`, with its name and content, read with range requests (the archive's
    /// tail, then the member) after its listing passed vari-wheel's checks (one `.dist-info`
    /// directory, safe member names; a wheel that fails them is [`ClientError::Archive`]);
    /// `None` when the wheel has no such member. A missing wheel is [`ClientError::Status`].
    pub async fn wheel_member(
        &self,
        url: &url::Url,
        wheel: &vari_core::filename::WheelFilename,
        file: &str,
    ) -> Result<Option<(String, Vec<u8>)>, ClientError> {
        read_member(&self.http, url, wheel, file).await
    }

    /// Whether the server of `url` was found to ignore range requests in this session.
    pub fn server_ignores_ranges(&self, url: &url::Url) -> bool {
        self.http.ignores_ranges(url)
    }
}

fn utf8(url: &url::Url, bytes: Vec<u8>) -> Result<String, ClientError> {
    String::from_utf8(bytes).map_err(|e| ClientError::Archive {
        url: url.clone(),
        message: format!("METADATA is not UTF-8: {e}"),
    })
}
