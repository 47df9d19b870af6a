//! The clients that ask a build family's own sources (PyTorch's `whl/cu128`): each asks its
//! source alone, so that a family's index never answers for another name or another source's
//! build; [`SourceClients`] keeps one per source for a run, all over the run's connection pool.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use vari_client::{ClientSettings, FindLinks, IndexClient, IndexUrl, Listings};
use vari_family::BuildSource;

use super::select::SelectError;

/// The settings that ask `source` alone, with `base`'s cache, limits, timeouts, credentials
/// settings and kept listings.
fn source_settings(
    base: &ClientSettings,
    source: &BuildSource,
) -> Result<ClientSettings, SelectError> {
    let mut settings = base.clone();
    let invalid = |message: String| SelectError::Source {
        url: source.url().to_string(),
        message,
    };
    match source {
        BuildSource::Index(url) => {
            settings.indexes = vec![IndexUrl::parse(url.as_str()).map_err(|e| invalid(e.message))?];
            settings.find_links = Vec::new();
        }
        BuildSource::FindLinks(url) => {
            settings.indexes = Vec::new();
            settings.find_links =
                vec![FindLinks::parse(url.as_str()).map_err(|e| invalid(e.message))?];
        }
    }
    Ok(settings)
}

/// A client that asks `source` alone, with `base`'s cache, limits, timeouts and credentials
/// settings: how a by-index build's versions are listed and its wheel selected and downloaded,
/// without the user's other sources and without the family's index answering for other names.
/// A run that asks several sources, or one source more than once, uses [`SourceClients`].
pub fn source_client(
    base: &ClientSettings,
    source: &BuildSource,
) -> Result<IndexClient, SelectError> {
    Ok(IndexClient::new(source_settings(base, source)?)?)
}

/// One client per family source for a run, made on first use from the run's client
/// ([`IndexClient::sharing`]: one connection pool, one TLS session cache, one bound on parallel
/// requests for every source), each keeping the listings it reads: a build's page is read once
/// a run, for its versions, for its lines and for selecting (and downloading) the chosen wheel,
/// and the wheel selected is one the choice saw. When the run's client keeps listings already
/// (a lock), the sources' clients keep theirs with them.
#[derive(Debug, Default)]
pub struct SourceClients {
    clients: Mutex<BTreeMap<BuildSource, Arc<IndexClient>>>,
}

impl SourceClients {
    /// No client made yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client that asks `source` alone, sharing `base`'s pool: the one made for `source`
    /// earlier in the run, else a new one.
    pub fn client(
        &self,
        base: &IndexClient,
        source: &BuildSource,
    ) -> Result<Arc<IndexClient>, SelectError> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(source) {
            return Ok(client.clone());
        }
        let mut settings = source_settings(base.settings(), source)?;
        if !settings.listings.keeps() {
            settings.listings = Listings::kept();
        }
        let client = Arc::new(base.sharing(settings)?);
        clients.insert(source.clone(), client.clone());
        Ok(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_source_client_asks_that_source_alone() {
        let base = ClientSettings {
            indexes: vec![IndexUrl::pypi()],
            ..ClientSettings::default()
        };
        let url = url::Url::parse("https://download.pytorch.org/whl/cu128").unwrap();
        let client = source_client(&base, &BuildSource::Index(url.clone())).unwrap();
        let indexes: Vec<String> = client
            .settings()
            .indexes
            .iter()
            .map(|i| i.to_string())
            .collect();
        assert_eq!(indexes, ["https://download.pytorch.org/whl/cu128/"]);
        assert!(client.settings().find_links.is_empty());
        let client = source_client(&base, &BuildSource::FindLinks(url)).unwrap();
        assert!(client.settings().indexes.is_empty());
        assert_eq!(client.settings().find_links.len(), 1);
    }

    #[test]
    fn a_run_makes_one_client_per_source_that_keeps_what_it_reads() {
        let base = IndexClient::new(ClientSettings {
            indexes: vec![IndexUrl::pypi()],
            ..ClientSettings::default()
        })
        .unwrap();
        let source = |line: &str| {
            BuildSource::Index(
                url::Url::parse(&format!("https://download.pytorch.org/whl/{line}")).unwrap(),
            )
        };
        let sources = SourceClients::new();
        let cu128 = sources.client(&base, &source("cu128")).unwrap();
        let again = sources.client(&base, &source("cu128")).unwrap();
        let cu126 = sources.client(&base, &source("cu126")).unwrap();
        assert!(Arc::ptr_eq(&cu128, &again));
        assert!(!Arc::ptr_eq(&cu128, &cu126));
        let indexes = |c: &IndexClient| -> Vec<String> {
            c.settings().indexes.iter().map(|i| i.to_string()).collect()
        };
        assert_eq!(indexes(&cu126), ["https://download.pytorch.org/whl/cu126/"]);
        // The run's client keeps nothing; each source's client keeps its own pages.
        assert!(!base.settings().listings.keeps());
        assert!(cu128.settings().listings.keeps());
    }
}
