//! Which pages are kept on disk across runs, and building a page from its upstream source or
//! taking the kept one ([`crate::stored_pages`] holds the entries).
//!
//! A page is kept when its build read nothing but the project's index pages: a single target
//! (a union's page is built from every target's presentation), no build family of that name in
//! the catalog (its page depends on the family's other indexes and builds), index pages only
//! (no find-links source: [`vari_client::IndexClient::project_source`] answers `None`), and a
//! presentation without variants (a variant's `variants.json` and METADATA are read separately
//! and its choice is journalled; a kept page would skip both). What else the build derived —
//! its warnings, whether it offers metadata not read yet — is kept with the body and used
//! again with it.
//!
//! Entries are read and written on the page-build thread itself, not in the blocking pool: a
//! page is at most a few megabytes written to the page cache (not synced), and each thread
//! of the pool costs a stack and an allocator heap of its own, which a hundred builds at once
//! under a 1 GiB address-space limit cannot afford (`crate::builders`).

use std::sync::Arc;
use std::time::Instant;

use vari_client::{CoreMetadata, ProjectName, ProjectSource};

use crate::context::Context;
use crate::error::ServeError;
use crate::pages::{self, Delivery, MetadataDelivery, ProjectPage, Want};
use crate::stored_pages::{self, Derived, KeyParts};

/// The page of `name`: taken from disk when a page in the format `want` names was kept for
/// the upstream pages as they are now and this target, else built ([`pages::build`]) and kept
/// when it may be.
pub(crate) async fn build(
    context: Arc<Context>,
    name: ProjectName,
    want: Want,
) -> Result<ProjectPage, ServeError> {
    let started = Instant::now();
    // A family's pages (selector, own index, extra) are [`pages::build`]'s: never kept.
    let source = match may_keep(&context, &name) {
        true => context
            .client
            .project_source(&name)
            .await
            .map_err(ServeError::client)?,
        false => None,
    };
    match source {
        Some(source) => build_or_take(context, source, want, started).await,
        None => pages::build(context, name).await,
    }
}

/// Whether the page of `name` may be kept, as far as the context tells before the upstream is
/// read.
fn may_keep(context: &Context, name: &ProjectName) -> bool {
    context.union.is_empty()
        && context
            .families
            .as_ref()
            .is_none_or(|catalog| catalog.family(name.as_str()).is_none())
}

/// The key of the page of `source`'s project in `format` (`json` or `html`).
fn key(context: &Context, source: &ProjectSource, format: &str) -> String {
    stored_pages::key(&KeyParts {
        segment: &context.segment,
        project: source.name().as_str(),
        format,
        source: source.digest(),
    })
}

fn format_name(want: Want) -> Option<&'static str> {
    match want {
        Want::Json => Some("json"),
        Want::Html => Some("html"),
        Want::Entries => None,
    }
}

/// The page of `source`'s project: taken from disk when a page in the format `want` names
/// was kept for these upstream pages and this target, else built (and kept when it may be).
/// `started`: when the build began.
async fn build_or_take(
    context: Arc<Context>,
    source: ProjectSource,
    want: Want,
    started: Instant,
) -> Result<ProjectPage, ServeError> {
    let name = source.name().clone();
    let upstream_fresh_until = source.fresh_for().map(|fresh| started + fresh);
    let format = format_name(want);
    let key = format.map(|format| key(&context, &source, format));
    if let Some(key) = &key {
        if let Some(page) = take(&context, &name, key, want, upstream_fresh_until) {
            return Ok(page);
        }
    }
    let project = context
        .client
        .project_from_source(source)
        .map_err(ServeError::client)?;
    let presentation = pages::present(&context, &project).await?;
    let keep = !presentation.has_variants && presentation.hidden_versions.is_empty();
    let warnings: Vec<String> = presentation
        .warnings
        .iter()
        .map(|warning| pages::warning_line(&name, warning))
        .collect();
    let page = pages::from_presentation(context.clone(), project, presentation, started).await?;
    if let (true, Some(key)) = (keep && plain(&page), key) {
        let derived = Derived {
            warnings,
            offers_unread_metadata: offers_unread_metadata(&page),
        };
        // Rendered here rather than when the answer is written: the same work, once.
        let body = match want {
            Want::Json | Want::Entries => page.rendered(crate::negotiate::Format::Json),
            Want::Html => page.rendered(crate::negotiate::Format::Html("")),
        }
        .map(|rendered| rendered.body.clone());
        if let Some(body) = body {
            context.page_store.save(&key, &body, derived);
        }
    }
    Ok(page)
}

/// The page kept under `key`, when there is a valid one this process may use.
fn take(
    context: &Arc<Context>,
    name: &ProjectName,
    key: &str,
    want: Want,
    upstream_fresh_until: Option<Instant>,
) -> Option<ProjectPage> {
    let stored = context.page_store.load(key)?;
    if stored.derived.offers_unread_metadata && context.knows_any_metadata() {
        return None;
    }
    for line in &stored.derived.warnings {
        context.log_once(tracing::Level::WARN, line.clone());
    }
    tracing::debug!("{name}: page taken from disk (the upstream page is unchanged)");
    Some(ProjectPage::from_disk(
        name.clone(),
        stored.body,
        &stored.sha256,
        want,
        upstream_fresh_until,
    ))
}

/// Whether every entry of `page` is served as the upstream lists it (no rewritten copy, no
/// text made by the proxy): what its rendering depends on is then the upstream page alone.
fn plain(page: &ProjectPage) -> bool {
    page.entries.iter().all(|entry| {
        matches!(
            entry.delivery,
            Delivery::Redirect(_) | Delivery::Local(_) | Delivery::Stream(_)
        ) && matches!(
            entry.metadata,
            MetadataDelivery::None | MetadataDelivery::Redirect(_) | MetadataDelivery::Fetch
        )
    })
}

/// Whether `page` advertises metadata without a hash for a wheel its index offers none for
/// (the proxy had not read its text: `pages::offered`).
fn offers_unread_metadata(page: &ProjectPage) -> bool {
    page.entries.iter().any(|entry| {
        matches!(entry.file.core_metadata, CoreMetadata::Absent)
            && matches!(entry.metadata, MetadataDelivery::Fetch)
            && matches!(&entry.listed.core_metadata, CoreMetadata::Available(h) if h.is_empty())
    })
}
