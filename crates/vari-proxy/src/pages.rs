//! One project's page: from the upstream files and `vari_select::present`'s decisions to the
//! rows the page lists (with how each file is delivered), logged and journalled, and rendered
//! once in both formats.
//!
//! Per shown file:
//! - a variant wheel whose METADATA uses no variant marker: the upstream bytes under the shown
//!   name, with their hashes; its PEP 658 metadata is the upstream text;
//! - a variant wheel whose METADATA uses variant markers: a rewritten copy (markers evaluated
//!   for the target, see [`crate::rewrite`]), listed without a hash until the copy exists
//!   (building it means downloading the wheel, which a page request should not wait for: it
//!   starts when the metadata or the wheel is asked for), and its PEP 658 metadata rewritten
//!   (known at once);
//! - a variant wheel whose METADATA could not be read: a copy built on download after reading
//!   the METADATA from the wheel itself, listed without hash or metadata until then;
//! - a non-variant wheel of a project that has variants: as a variant wheel (the three cases
//!   above), its markers evaluated for a non-variant wheel (an empty label, no property);
//! - anything else: the upstream file, its hashes, and its PEP 658 metadata as the upstream
//!   advertises it; a remote wheel the upstream offers no metadata for is advertised with
//!   metadata all the same, read from the wheel with range requests when first asked for and kept
//!   ([`crate::metadata_texts`]): its SHA-256 once read, `true` until then. An installer then
//!   never downloads a wheel whole (nor asks the proxy for ranges) to read its dependencies.
//!
//! Every file is linked through the proxy (`/t/{fingerprint}/files/{project}/{key}/{name}`, the
//! target's prefix whether the page was asked for under it or not), so downloads are
//! journalled; the proxy redirects to upstreams that need no credentials, reads `file:`
//! sources from disk, and streams the rest.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use url::Url;
use vari_client::{ClientError, CoreMetadata, Hashes, IndexClient, IndexFile, ProjectName};
use vari_core::markers::VariantMarkerContext;
use vari_core::metadata::resolve_variant_markers;
use vari_select::{Presentation, Shown, ShownBecause, SourceClients};
use vari_simple::{PageFile, PageStyle};

use crate::context::Context;
use crate::describe;
use crate::error::ServeError;
use crate::journal::{HiddenVersion, Served};
use crate::rewrite::{RewriteJob, Rewrites};

/// The proxy's pages are laid out as served pages (compact; see [`PageStyle`]).
const STYLE: PageStyle = PageStyle::SERVED;

/// How a file's bytes reach the installer.
#[derive(Debug, Clone)]
pub(crate) enum Delivery {
    /// A redirect to the upstream URL (http or https, no credentials needed).
    Redirect(Url),
    /// Read from this local file (`file:` sources), ranges honoured.
    Local(PathBuf),
    /// Streamed from the upstream through the client (which holds the credentials).
    Stream(Url),
    /// A rewritten copy, built on first download.
    Rewrite(Arc<RewriteJob>),
    /// These bytes, made by the proxy (a build family's selector wheel: [`crate::selector`]).
    Bytes(Bytes),
}

/// How a file's PEP 658 metadata reaches the installer.
#[derive(Debug, Clone)]
pub(crate) enum MetadataDelivery {
    /// Not advertised.
    None,
    /// These bytes (read or rewritten by the proxy).
    Text(Bytes),
    /// A redirect to the upstream's `.metadata`.
    Redirect(Url),
    /// Read through the client (the upstream's `.metadata`, else range requests of the wheel)
    /// and kept ([`crate::metadata_texts`]).
    Fetch,
}

/// One listed file and everything needed to serve it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The path segment that tells files of the project apart.
    pub(crate) key: String,
    /// The row as listed (for a rewritten copy, without hash and size; see [`render`]).
    pub(crate) listed: PageFile,
    /// The upstream file.
    pub(crate) file: IndexFile,
    /// For the journal: version, label and why.
    pub(crate) served: Served,
    pub(crate) delivery: Delivery,
    pub(crate) metadata: MetadataDelivery,
}

/// A rendered format of the page, with its entity tag.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub(crate) body: Bytes,
    pub(crate) etag: String,
}

impl Rendered {
    pub(crate) fn new(body: impl Into<Bytes>, suffix: &str) -> Self {
        let body: Bytes = body.into();
        let digest = hex::encode(Sha256::digest(&body));
        Self::with_digest(body, &digest, suffix)
    }

    /// The page `body` whose SHA-256 (hex) is `sha256`, known already (a kept page's).
    pub(crate) fn with_digest(body: Bytes, sha256: &str, suffix: &str) -> Self {
        Self {
            etag: format!("\"{}-{suffix}\"", &sha256[..24.min(sha256.len())]),
            body,
        }
    }
}

/// What a request needs of a project's page: one format of it, or its entries (to serve a
/// file it lists). A page taken from disk ([`crate::stored_pages`]) has the one format it was
/// kept in and no entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    Json,
    Html,
    Entries,
}

impl Want {
    /// What a page answer in `format` needs.
    pub(crate) fn format(format: crate::negotiate::Format) -> Self {
        match format {
            crate::negotiate::Format::Json => Self::Json,
            crate::negotiate::Format::Html(_) => Self::Html,
        }
    }
}

/// One format of a page, rendered (and digested for its entity tag) when first asked for. An
/// installer asks for one format only (uv JSON, pip HTML), and rendering both for every page
/// built was wasted work each time an installer revalidated its pages (numpy's lists over 4,000
/// files). Dereferences to the [`Rendered`] page.
pub(crate) struct LazyRendered(LazyLock<Rendered, Box<dyn FnOnce() -> Rendered + Send>>);

impl LazyRendered {
    /// `format` of the page of `name` listing `rows` and `versions`, rendered on first use.
    fn new(
        name: ProjectName,
        rows: Arc<Vec<PageFile>>,
        versions: Arc<Vec<String>>,
        json: bool,
    ) -> Self {
        Self(LazyLock::new(Box::new(move || {
            let page = vari_simple::ProjectPage {
                name: name.as_str(),
                files: &rows,
                versions: &versions,
            };
            match json {
                true => Rendered::new(vari_simple::render_project_json(page, &STYLE), "j"),
                false => Rendered::new(vari_simple::render_project_html(page, &STYLE), "h"),
            }
        })))
    }
}

impl std::ops::Deref for LazyRendered {
    type Target = Rendered;

    fn deref(&self) -> &Rendered {
        &self.0
    }
}

impl std::fmt::Debug for LazyRendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyRendered")
    }
}

/// A project's page, ready to answer.
#[derive(Debug)]
pub(crate) struct ProjectPage {
    pub(crate) name: ProjectName,
    /// When the upstream was read.
    pub(crate) built: Instant,
    /// Until when the upstream allowed its pages to be used without asking again (`None`:
    /// no HTTP page set a limit, only the proxy's own page TTL applies).
    pub(crate) upstream_fresh_until: Option<Instant>,
    pub(crate) entries: Vec<Entry>,
    /// The rows as rendered (rewritten copies with their hash once built).
    rows: Arc<Vec<PageFile>>,
    by_key: HashMap<String, usize>,
    /// The formats the page can answer in: both for a built page (each rendered when first
    /// asked for), the one kept for a page taken from disk.
    json: Option<LazyRendered>,
    html: Option<LazyRendered>,
    /// Taken from disk ([`crate::stored_pages`]): no entries, one format.
    pub(crate) from_disk: bool,
    /// For a union of targets ([`crate::union`]): what each target is shown of each version.
    pub(crate) union: Vec<crate::union_view::UnionVersion>,
}

impl ProjectPage {
    /// Whether the page has what `want` needs.
    pub(crate) fn serves(&self, want: Want) -> bool {
        match want {
            Want::Json => self.json.is_some(),
            Want::Html => self.html.is_some(),
            Want::Entries => !self.from_disk,
        }
    }

    /// The page in `format`, when it has that format ([`Self::serves`]).
    pub(crate) fn rendered(&self, format: crate::negotiate::Format) -> Option<&Rendered> {
        match format {
            crate::negotiate::Format::Json => self.json.as_deref(),
            crate::negotiate::Format::Html(_) => self.html.as_deref(),
        }
    }

    /// A page taken from disk: `body` in the format `want` names, nothing else.
    pub(crate) fn from_disk(
        name: ProjectName,
        body: Bytes,
        sha256: &str,
        want: Want,
        upstream_fresh_until: Option<Instant>,
    ) -> Self {
        let ready = |suffix: &str| {
            let rendered = Rendered::with_digest(body.clone(), sha256, suffix);
            Some(LazyRendered(LazyLock::new(Box::new(move || rendered))))
        };
        let (json, html) = match want {
            Want::Json => (ready("j"), None),
            Want::Html => (None, ready("h")),
            Want::Entries => (None, None),
        };
        Self {
            name,
            built: Instant::now(),
            upstream_fresh_until,
            entries: Vec::new(),
            rows: Arc::new(Vec::new()),
            by_key: HashMap::new(),
            json,
            html,
            from_disk: true,
            union: Vec::new(),
        }
    }

    /// The entry behind `/files/{project}/{key}/…`.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.by_key.get(key).map(|&at| &self.entries[at])
    }

    /// The same entries rendered again (a rewritten copy now has its hash).
    pub(crate) fn rerendered(&self, rewrites: &Rewrites) -> Self {
        let mut page = render(
            self.name.clone(),
            self.built,
            self.entries.clone(),
            rewrites,
        );
        page.upstream_fresh_until = self.upstream_fresh_until;
        page.union = self.union.clone();
        page
    }

    /// How long a client may keep this page without asking again: what is left of the
    /// proxy's page TTL (`ttl`) and of the upstream's own freshness, whichever ends first.
    pub(crate) fn client_max_age(&self, ttl: Duration) -> Duration {
        let now = Instant::now();
        let proxy_left = (self.built + ttl).saturating_duration_since(now);
        match self.upstream_fresh_until {
            Some(until) => proxy_left.min(until.saturating_duration_since(now)),
            None => proxy_left,
        }
    }

    /// Whether the page lists `key` as a rewritten copy without its hash.
    pub(crate) fn lacks_hash(&self, key: &str) -> bool {
        self.by_key.get(key).is_some_and(|&at| {
            matches!(self.entries[at].delivery, Delivery::Rewrite(_))
                && self.rows[at].hashes.is_empty()
        })
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The key of an upstream file: a digest of its URL, stable across rebuilds of the page.
fn file_key(url: &Url) -> String {
    hex::encode(&Sha256::digest(url.as_str().as_bytes())[..8])
}

/// How the bytes of the upstream file at `url` reach the installer.
fn upstream(client: &IndexClient, url: &Url) -> Delivery {
    if url.scheme() == "file" {
        if let Ok(path) = url.to_file_path() {
            return Delivery::Local(path);
        }
    }
    if matches!(url.scheme(), "http" | "https") && !client.sends_credentials(url) {
        return Delivery::Redirect(url.clone());
    }
    Delivery::Stream(url.clone())
}

fn metadata_url(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_path(&format!("{}.metadata", url.path()));
    url
}

/// The row of `file` as the upstream lists it, under `filename`, linked under `prefix` (the
/// target's: a file's URL names the target it was chosen for, whichever URL listed it).
fn listed(
    prefix: &str,
    project: &ProjectName,
    key: &str,
    filename: &str,
    file: &IndexFile,
) -> PageFile {
    PageFile {
        filename: filename.to_owned(),
        url: format!(
            "{prefix}/files/{project}/{key}/{}",
            STYLE.file_segment(filename)
        ),
        hashes: file.hashes.clone(),
        requires_python: file.requires_python.as_ref().map(ToString::to_string),
        yanked: file.yanked.clone(),
        size: file.size,
        upload_time: file.upload_time.clone(),
        core_metadata: file.core_metadata.clone(),
    }
}

/// Reads the upstream and builds the page of `name`.
pub(crate) async fn build(
    context: Arc<Context>,
    name: ProjectName,
) -> Result<ProjectPage, ServeError> {
    let started = Instant::now();
    if let Some(page) = selector_page(&context, &name).await? {
        return Ok(page);
    }
    if let Some(page) = family_index_page(&context, &name, started).await? {
        return Ok(page);
    }
    if let Some(page) = family_extra_page(&context, &name, started).await? {
        return Ok(page);
    }
    let (project, presentation) = presented(&context, &name).await?;
    from_presentation(context, project, presentation, started).await
}

/// What every page build starts from (a single target's, a union's): the upstream's files of
/// `name` and what the context's target is shown of them.
pub(crate) async fn presented(
    context: &Context,
    name: &ProjectName,
) -> Result<(vari_client::Project, Presentation), ServeError> {
    let project = context
        .client
        .project(name)
        .await
        .map_err(ServeError::client)?;
    let presentation = present(context, &project).await?;
    Ok((project, presentation))
}

/// What the context's target is shown of `project`.
pub(crate) async fn present(
    context: &Context,
    project: &vari_client::Project,
) -> Result<Presentation, ServeError> {
    vari_select::present(
        &context.client,
        project,
        &context.target,
        &context.selection,
    )
    .await
    .map_err(ServeError::client)
}

/// A presentation's warning as logged: prefixed with the project's name unless it starts so.
pub(crate) fn warning_line(name: &ProjectName, warning: &str) -> String {
    match warning.starts_with(&format!("{name} ")) {
        true => warning.to_owned(),
        false => format!("{name}: {warning}"),
    }
}

/// Until when a page built from `project` may be used, by the upstream's freshness; counted
/// from `started`, before the upstream was read, so the build's own time is not added.
pub(crate) fn upstream_fresh_until(
    project: &vari_client::Project,
    started: Instant,
) -> Option<Instant> {
    project.fresh_for.map(|fresh| started + fresh)
}

/// The page of `project` as `presentation` shows it; `started`: when the upstream was read.
pub(crate) async fn from_presentation(
    context: Arc<Context>,
    project: vari_client::Project,
    presentation: Presentation,
    started: Instant,
) -> Result<ProjectPage, ServeError> {
    let name = project.name.clone();
    for warning in &presentation.warnings {
        context.log_once(tracing::Level::WARN, warning_line(&name, warning));
    }
    for hidden in &presentation.hidden {
        tracing::debug!(
            "{name} {}: hiding {} ({})",
            hidden.file.version(),
            hidden.file.filename,
            describe::hidden_file(&hidden.why)
        );
    }
    // The METADATA of every shown wheel whose variant markers are evaluated, read in parallel
    // (the client bounds it).
    let texts = futures_util::future::join_all(presentation.shown.iter().map(|shown| {
        let context = context.clone();
        let read = evaluates_markers(&presentation, shown);
        async move {
            match read {
                true => Some(context.core_metadata(&shown.file).await),
                false => None,
            }
        }
    }))
    .await;
    let mut entries = Vec::with_capacity(presentation.shown.len());
    for (shown, text) in presentation.shown.iter().zip(texts) {
        entries.push(entry(&context, &presentation, shown, text));
    }
    for report in &presentation.hidden_versions {
        let hidden = HiddenVersion {
            project: name.to_string(),
            version: report.version.to_string(),
            report: report.clone(),
            why: describe::hidden_version(report, &context.target),
        };
        let line = format!(
            "{} {} {}; no wheel of it is shown",
            hidden.project, hidden.version, hidden.why
        );
        let level = match context.journal.hidden(hidden) {
            true => tracing::Level::INFO,
            false => tracing::Level::DEBUG,
        };
        log(level, &line);
    }
    tracing::debug!(
        "{name}: page built in {} ms ({} files shown, {} hidden)",
        started.elapsed().as_millis(),
        presentation.shown.len(),
        presentation.hidden.len()
    );
    let mut page = render(name, Instant::now(), entries, &context.rewrites);
    page.upstream_fresh_until = upstream_fresh_until(&project, started);
    Ok(page)
}

/// The page of a build family's name as one selector wheel requiring the build chosen for the
/// target ([`crate::selector`]), when the catalog has a family of that name served so and the
/// sources list its builds; `None` otherwise (the page is built from the upstream as usual).
async fn selector_page(
    context: &Arc<Context>,
    name: &ProjectName,
) -> Result<Option<ProjectPage>, ServeError> {
    let Some((family, choice)) = family_choice(
        context,
        &SourceClients::new(),
        name,
        crate::selector::serves_selector,
    )
    .await?
    else {
        return Ok(None);
    };
    let Some(selector) = crate::selector::selector(family, &choice) else {
        context.log_once(tracing::Level::WARN, choice.why_nothing());
        return Ok(None);
    };
    let Ok(wheel) = vari_core::filename::WheelFilename::parse(&selector.filename) else {
        return Ok(None);
    };
    let key = "selector".to_owned();
    // The file name is made of a validated project name and a parsed version, so it always
    // forms a URL; were it not to, the page is built from the upstream as usual.
    let Ok(url) = Url::parse(&format!("vari:selector/{}", selector.filename)) else {
        return Ok(None);
    };
    let hashes = Hashes::sha256_of(&sha256_hex(&selector.bytes));
    let file = IndexFile {
        filename: selector.filename.clone(),
        kind: vari_client::FileKind::Wheel(wheel),
        url,
        hashes: hashes.clone(),
        requires_python: None,
        yanked: None,
        core_metadata: CoreMetadata::Available(Hashes::sha256_of(&sha256_hex(&selector.metadata))),
        size: Some(selector.bytes.len() as u64),
        upload_time: None,
        source: vari_client::FileSource::FindLinks("vari build-family catalog".to_owned()),
    };
    let why = format!(
        "family {} chooses build {} ({} {})",
        family.name,
        choice
            .chosen
            .as_ref()
            .map(|c| c.build.as_str())
            .unwrap_or_default(),
        choice
            .chosen
            .as_ref()
            .map(|c| c.requirement.as_str())
            .unwrap_or_default(),
        selector.version
    );
    let entry = Entry {
        listed: listed(&context.prefix(), name, &key, &selector.filename, &file),
        key,
        file,
        served: Served {
            project: name.to_string(),
            version: selector.version.clone(),
            shown_as: selector.filename.clone(),
            original: selector.filename.clone(),
            label: None,
            because: ShownBecause::ProjectHasNoVariants,
            why: why.clone(),
            downloaded: false,
        },
        delivery: Delivery::Bytes(selector.bytes.clone()),
        metadata: MetadataDelivery::Text(selector.metadata.clone()),
    };
    log(
        tracing::Level::INFO,
        &format!(
            "{name}: serving the selector {} requiring {} ({why})",
            selector.filename, selector.requirement
        ),
    );
    Ok(Some(render(
        name.clone(),
        Instant::now(),
        vec![entry],
        &context.rewrites,
    )))
}

/// The page of a family whose chosen build lives on an index of its own (`torch` → PyTorch's
/// `whl/cu128`): that index's files of the name, only the versions carrying the build's local
/// tag, presented for the target. Only the family's own name is asked of the family's index
/// (its other projects, `numpy`, are never served from it). `None` when the name is no such
/// family, the family does not apply ([`vari_select::choose_in_family`]), the command's sources
/// name one of the family's indexes (the user chose that index), or the chosen build is not on
/// a source of its own.
async fn family_index_page(
    context: &Arc<Context>,
    name: &ProjectName,
    started: Instant,
) -> Result<Option<ProjectPage>, ServeError> {
    // Only families with indexes of their own, and not when the command's sources name one of
    // them (the user chose that index).
    let on_own_index = |family: &vari_family::Family| {
        family.builds.iter().any(|b| b.source.is_some())
            && vari_select::named_source(context.client.settings(), family).is_none()
    };
    // The chosen build's page is served from the client that read it for the choice.
    let sources = SourceClients::new();
    let Some((family, choice)) = family_choice(context, &sources, name, on_own_index).await? else {
        return Ok(None);
    };
    let Some(chosen) = choice.chosen else {
        return Ok(None);
    };
    let Some(build) = family.build(&chosen.build) else {
        return Ok(None);
    };
    let Some(source) = &build.source else {
        return Ok(None);
    };
    let own = sources
        .client(&context.client, source)
        .map_err(family_error)?;
    let mut project = own.project(name).await.map_err(ServeError::client)?;
    project
        .files
        .retain(|f| vari_family::carries_local(build, f.version()));
    project.variants_json.clear();
    let presentation = vari_select::present(&own, &project, &context.target, &context.selection)
        .await
        .map_err(ServeError::client)?;
    log(
        tracing::Level::INFO,
        &format!(
            "{name}: serving build {} from {} (family {} chooses it for this target)",
            build.name,
            source.url(),
            family.name
        ),
    );
    let page = from_presentation(context.clone(), project, presentation, started).await?;
    // A build by extra on its own index (AMD's `torch[device-gfx950]`): its extra required.
    Ok(Some(match &build.extra {
        Some(extra) => with_extra_required(context, page, (&family.name, &build.name, extra)).await,
        None => page,
    }))
}

/// The page of a family chosen by extra (`jax` → `jax[cuda12]`, [`crate::family_extra`]): the
/// upstream's files of its name, presented for the target, each wheel with the chosen extra's
/// requirements made plain ones. `None` when the name is no such family, the family does not
/// apply, or its chosen build is not an extra of its own name on the proxy's sources (the CPU
/// build: the page is built as usual).
async fn family_extra_page(
    context: &Arc<Context>,
    name: &ProjectName,
    started: Instant,
) -> Result<Option<ProjectPage>, ServeError> {
    let Some((family, choice)) = family_choice(
        context,
        &SourceClients::new(),
        name,
        crate::family_extra::serves_extra,
    )
    .await?
    else {
        return Ok(None);
    };
    let Some(build) = choice.chosen.and_then(|chosen| family.build(&chosen.build)) else {
        return Ok(None);
    };
    let (Some(extra), None, true) = (
        &build.extra,
        &build.source,
        build.distribution == family.name,
    ) else {
        return Ok(None);
    };
    let (project, presentation) = presented(context, name).await?;
    let page = from_presentation(context.clone(), project, presentation, started).await?;
    Ok(Some(
        with_extra_required(context, page, (&family.name, &build.name, extra)).await,
    ))
}

/// `page` with each wheel whose METADATA has requirements behind the chosen build's extra
/// (`choice`: family, build, extra) served as a rewritten copy that requires them plainly, its
/// PEP 658 metadata the new text with its hash ([`crate::family_extra::require_extra`]).
async fn with_extra_required(
    context: &Arc<Context>,
    page: ProjectPage,
    choice: (&str, &str, &str),
) -> ProjectPage {
    let listed: Vec<crate::family_extra::Listed<'_>> = page
        .entries
        .iter()
        .map(|entry| crate::family_extra::Listed {
            file: &entry.file,
            shown_as: &entry.served.shown_as,
            served: match &entry.metadata {
                MetadataDelivery::Text(bytes) => Some(bytes),
                _ => None,
            },
            markers: match &entry.delivery {
                Delivery::Rewrite(job) => Some(&job.context),
                _ => None,
            },
        })
        .collect();
    let required =
        crate::family_extra::require_extra(context, page.name.as_str(), &listed, choice).await;
    let mut entries = page.entries.clone();
    for (entry, required) in entries.iter_mut().zip(required) {
        let Some(required) = required else {
            continue;
        };
        entry.listed.core_metadata =
            CoreMetadata::Available(Hashes::sha256_of(&sha256_hex(&required.metadata)));
        entry.metadata = MetadataDelivery::Text(required.metadata);
        entry.delivery = Delivery::Rewrite(Arc::new(required.job));
        entry.served.why = format!(
            "family {} chooses build {}: the requirements of extra {} required",
            choice.0, choice.1, choice.2
        );
    }
    let mut rendered = render(page.name.clone(), page.built, entries, &context.rewrites);
    rendered.upstream_fresh_until = page.upstream_fresh_until;
    rendered
}

/// The build family named `name` and its choice for the proxy's target, when the catalog has
/// one that `serves` says this kind of page is for and the proxy serves one target (a union
/// page lists what the upstream lists); `None` otherwise.
async fn family_choice<'a>(
    context: &'a Arc<Context>,
    sources: &SourceClients,
    name: &ProjectName,
    serves: impl Fn(&vari_family::Family) -> bool,
) -> Result<Option<(&'a vari_family::Family, vari_family::FamilyChoice)>, ServeError> {
    let Some(family) = context
        .families
        .as_ref()
        .and_then(|catalog| catalog.family(name.as_str()))
    else {
        return Ok(None);
    };
    if !context.union.is_empty() || !serves(family) {
        return Ok(None);
    }
    let Ok(request) = vari_select::Request::parse(name.as_str()) else {
        return Ok(None);
    };
    let options = vari_family::FamilyOptions {
        selection: context.selection.clone(),
        ..vari_family::FamilyOptions::default()
    };
    // Through the proxy the installer decides which of a group's members it asks for, one page
    // at a time: every member's page takes the line the whole group offers here.
    let Some(catalog) = context.families.as_ref() else {
        return Ok(None);
    };
    let choice = vari_select::choose_across_group(
        &context.client,
        sources,
        catalog,
        family,
        &request,
        &context.target,
        &options,
    )
    .await
    .map_err(family_error)?;
    Ok(choice.map(|(choice, group)| {
        if let (Some((group, members)), Some(chosen)) = (group, &choice.chosen) {
            context.log_once(
                tracing::Level::INFO,
                format!(
                    "{name}: group {group} takes build {} ({} offer it for this target)",
                    chosen.build,
                    members.join(", ")
                ),
            );
        }
        (family, choice)
    }))
}

/// A family's source failing, as the proxy answers it.
fn family_error(error: vari_select::SelectError) -> ServeError {
    match error {
        vari_select::SelectError::Index(e) => ServeError::client(e),
        other => ServeError::client(ClientError::Page(vari_client::PageError {
            url: Url::parse("vari:family").expect("a constant URL"),
            message: other.to_string(),
        })),
    }
}

/// Whether the variant markers of `shown`'s METADATA are evaluated before it is served: for
/// every wheel of a project that has variants, variant or not (a non-variant wheel's markers
/// see an empty label and no property, [`VariantMarkerContext::non_variant`]). Installers
/// without variant support cannot parse them, whatever wheel carries them. The wheels of a
/// project without variants are served as listed: reading every file's METADATA of every
/// project would multiply the proxy's upstream requests.
pub(crate) fn evaluates_markers(presentation: &Presentation, shown: &Shown) -> bool {
    shown.variant.is_some() || (presentation.has_variants && shown.file.wheel().is_some())
}

fn log(level: tracing::Level, line: &str) {
    match level {
        tracing::Level::WARN => tracing::warn!("{line}"),
        tracing::Level::INFO => tracing::info!("{line}"),
        _ => tracing::debug!("{line}"),
    }
}

/// The entry of one shown file, its choice logged and journalled.
pub(crate) fn entry(
    context: &Context,
    presentation: &Presentation,
    shown: &Shown,
    text: Option<Result<Arc<str>, ClientError>>,
) -> Entry {
    let name = &presentation.name;
    let file = &shown.file;
    let key = file_key(&file.url);
    let delivery = upstream(&context.client, &file.url);
    let mut listed = listed(&context.prefix(), name, &key, &shown.filename, file);
    let metadata = match (&file.core_metadata, &delivery) {
        // A remote wheel the index offers no metadata for: read from the wheel when asked
        // for ([`crate::metadata_texts`]), so that no installer downloads it whole to read it.
        // A local file (`file:` sources) is served by the proxy itself, ranges and all: an
        // installer reads its metadata that way at no cost to any index.
        (CoreMetadata::Absent, Delivery::Redirect(_) | Delivery::Stream(_))
            if file.wheel().is_some() =>
        {
            listed.core_metadata = offered(context, file);
            MetadataDelivery::Fetch
        }
        (CoreMetadata::Absent, _) => MetadataDelivery::None,
        (CoreMetadata::Available(_), Delivery::Redirect(url)) if !context.keep_metadata => {
            MetadataDelivery::Redirect(metadata_url(url))
        }
        (CoreMetadata::Available(_), _) => MetadataDelivery::Fetch,
    };
    let mut entry = Entry {
        listed,
        key,
        file: file.clone(),
        served: Served {
            project: name.to_string(),
            version: file.version().to_string(),
            shown_as: shown.filename.clone(),
            original: file.filename.clone(),
            label: None,
            because: shown.because.clone(),
            why: describe::shown(&shown.because, &context.target),
            downloaded: false,
        },
        delivery,
        metadata,
    };
    let tags = file.wheel().map(describe::tags).unwrap_or_default();
    let line = match (&shown.variant, text) {
        (Some(variant), Some(text)) => {
            entry.served.label = Some(variant.label.to_string());
            let note = deliver_evaluated(context, &mut entry, shown, &variant.markers, text);
            format!(
                "{} {} {tags}: serving label {} as {} ({}{note})",
                entry.served.project,
                entry.served.version,
                variant.label,
                entry.served.shown_as,
                entry.served.why
            )
        }
        (None, text) => {
            let note = match text {
                Some(text) => deliver_evaluated(
                    context,
                    &mut entry,
                    shown,
                    &VariantMarkerContext::non_variant(),
                    text,
                ),
                None => "",
            };
            // A non-variant wheel shown because its tag set's variants are all unusable is a
            // choice too; any other file is not.
            if !matches!(shown.because, ShownBecause::Fallback { .. }) {
                return entry;
            }
            let reason = &entry.served.why;
            format!(
                "{} {} {tags}: serving the non-variant wheel {} ({reason}{note})",
                entry.served.project, entry.served.version, entry.served.shown_as
            )
        }
        (Some(_), None) => return entry,
    };
    let level = match context.journal.choice(entry.served.clone()) {
        true => tracing::Level::INFO,
        false => tracing::Level::DEBUG,
    };
    log(level, &line);
    entry
}

/// The PEP 658 metadata a page advertises for a wheel whose index has none: the SHA-256 of
/// the text the proxy serves when it has read it already, else `true` (PEP 658 allows it when
/// the hash is not known; reading every listed wheel's METADATA to build a page would cost
/// what it saves).
fn offered(context: &Context, file: &IndexFile) -> CoreMetadata {
    match context.known_metadata(file) {
        Some(known) => CoreMetadata::Available(Hashes::sha256_of(&known.sha256)),
        None => CoreMetadata::Available(Hashes::default()),
    }
}

/// How a shown wheel whose variant markers are evaluated ([`evaluates_markers`]) is
/// delivered, from its METADATA `text` and what its markers see (`markers`: its variant's, or
/// a non-variant wheel's): as it is when no `Requires-Dist` uses a variant marker, else as a
/// rewritten copy; read from the wheel when downloaded when the text could not be read. Its
/// PEP 658 metadata is the text served, with that text's hash. Returns a note for the log line.
fn deliver_evaluated(
    context: &Context,
    entry: &mut Entry,
    shown: &Shown,
    markers: &VariantMarkerContext,
    text: Result<Arc<str>, ClientError>,
) -> &'static str {
    let file = &shown.file;
    let text = match text {
        Ok(text) => text,
        Err(e) => {
            context.log_once(
                tracing::Level::WARN,
                format!(
                    "{}: cannot read its METADATA ({e}); it is read from the wheel when the \
                     wheel is downloaded",
                    file.filename
                ),
            );
            let job = RewriteJob::new(file, &shown.filename, None, markers);
            entry.delivery = Delivery::Rewrite(Arc::new(job));
            entry.listed.core_metadata = CoreMetadata::Absent;
            entry.metadata = MetadataDelivery::None;
            return "";
        }
    };
    let (bytes, note) = match resolve_variant_markers(&text, markers) {
        Ok(None) => (Bytes::from(text.as_bytes().to_vec()), ""),
        Ok(Some(rewritten)) => {
            let bytes = Bytes::from(rewritten.into_bytes());
            let job = RewriteJob::new(file, &shown.filename, Some(bytes.clone()), markers);
            entry.delivery = Delivery::Rewrite(Arc::new(job));
            (bytes, "; its variant markers evaluated for this target")
        }
        Err(e) => {
            context.log_once(
                tracing::Level::WARN,
                format!(
                    "{}: cannot evaluate the variant markers of its METADATA ({e}); serving \
                     it as it is",
                    file.filename
                ),
            );
            (Bytes::from(text.as_bytes().to_vec()), "")
        }
    };
    // The proxy holds the text, so it serves it (PEP 658) whether or not the upstream does.
    entry.listed.core_metadata = CoreMetadata::Available(Hashes::sha256_of(&sha256_hex(&bytes)));
    entry.metadata = MetadataDelivery::Text(bytes);
    note
}

/// Renders `entries` in both formats; rewritten copies that exist get their hash and size.
pub(crate) fn render(
    name: ProjectName,
    built: Instant,
    entries: Vec<Entry>,
    rewrites: &Rewrites,
) -> ProjectPage {
    let rows: Vec<PageFile> = entries
        .iter()
        .map(|entry| {
            let mut row = entry.listed.clone();
            if let Delivery::Rewrite(job) = &entry.delivery {
                match rewrites.known(job) {
                    Some(built) => {
                        row.hashes = Hashes::sha256_of(&built.sha256);
                        row.size = Some(built.size);
                    }
                    None => {
                        row.hashes = Hashes::default();
                        row.size = None;
                    }
                }
            }
            row
        })
        .collect();
    let versions: BTreeSet<pep440_rs::Version> =
        entries.iter().map(|e| e.file.version().clone()).collect();
    let versions: Arc<Vec<String>> = Arc::new(versions.iter().map(ToString::to_string).collect());
    let rows = Arc::new(rows);
    let by_key = entries
        .iter()
        .enumerate()
        .rev()
        .map(|(at, entry)| (entry.key.clone(), at))
        .collect();
    ProjectPage {
        json: Some(LazyRendered::new(
            name.clone(),
            rows.clone(),
            versions.clone(),
            true,
        )),
        html: Some(LazyRendered::new(
            name.clone(),
            rows.clone(),
            versions,
            false,
        )),
        from_disk: false,
        name,
        built,
        upstream_fresh_until: None,
        entries,
        rows,
        by_key,
        union: Vec::new(),
    }
}
