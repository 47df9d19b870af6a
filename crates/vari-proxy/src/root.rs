//! The `/simple/` page: every project the upstream indexes' root pages and the find-links
//! sources list, rendered once in both formats.

use std::sync::Arc;
use std::time::Instant;

use vari_client::IndexClient;
use vari_simple::{render_root_html, render_root_json, PageStyle};

use crate::error::ServeError;
use crate::pages::Rendered;

/// The project list, ready to answer.
#[derive(Debug)]
pub(crate) struct RootPage {
    pub(crate) built: Instant,
    pub(crate) json: Rendered,
    pub(crate) html: Rendered,
}

pub(crate) async fn build(client: Arc<IndexClient>) -> Result<RootPage, ServeError> {
    let list = client.project_names().await.map_err(ServeError::client)?;
    for warning in &list.warnings {
        tracing::info!("project list: {warning}");
    }
    let style = &PageStyle::SERVED;
    let json = render_root_json(list.projects.values().map(String::as_str), style);
    let html = render_root_html(
        list.projects
            .iter()
            .map(|(normal, shown)| (normal.as_str(), shown.as_str())),
        style,
    );
    Ok(RootPage {
        built: Instant::now(),
        json: Rendered::new(json, "j"),
        html: Rendered::new(html, "h"),
    })
}
