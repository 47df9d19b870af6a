//! What the proxy's journal cannot say, because the installer never asked the proxy about it:
//! requirements it found satisfied by a distribution installed as another variant
//! ([`kept_requirements`]), and, after it failed, the requirements nothing fits ([`unmet`]).
//! These select once, for exactly those requirements; everything the installer asked about is
//! the journal's.

use std::path::PathBuf;

use vari_client::{ClientSettings, IndexClient};
use vari_select::{select_all, IndexOptions, Outcome, Request, Resolution, Target};

use crate::list::list_installed;

/// A requirement left installed as another variant (or as the plain wheel) of the version the
/// target's choice is a variant of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRequirement {
    /// The project, normalised.
    pub project: String,
    /// The installed version.
    pub version: String,
    /// Its label, `None` for a plain wheel.
    pub installed: Option<String>,
    /// The label chosen for the target.
    pub chosen: String,
}

/// The requirements whose distribution is installed in `site_packages` and that `asked` (the
/// projects the proxy answered for, or that are otherwise accounted for) does not name, but is
/// another variant of the version the selector chooses for the target from `sources`.
/// Requirements that are not PEP 508 names (paths, URLs) are left out; sources that cannot be
/// read make it say nothing.
pub async fn kept_requirements(
    sources: ClientSettings,
    requirements: &[String],
    target: &Target,
    options: &IndexOptions,
    site_packages: &[PathBuf],
    asked: &[&str],
) -> Vec<KeptRequirement> {
    let listing = list_installed(site_packages);
    let installed = |name: &str| {
        listing
            .distributions
            .iter()
            .find(|d| d.normalized_name() == name)
    };
    let requests: Vec<Request> = requirements
        .iter()
        .filter_map(|r| Request::parse(r).ok())
        .filter(|r| {
            let name = r.name().as_str();
            !asked.contains(&name) && installed(name).is_some()
        })
        .collect();
    if requests.is_empty() {
        return Vec::new();
    }
    let Some(outcomes) = selected(sources, &requests, target, options).await else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    for (_, outcome) in outcomes {
        let Outcome::Resolved(resolution) = outcome else {
            continue;
        };
        let Some(chosen) = &resolution.chosen else {
            continue;
        };
        let Some(label) = &chosen.label else {
            continue;
        };
        let Some(dist) = installed(resolution.name.as_str()) else {
            continue;
        };
        let installed_label = dist.variant.as_ref().map(|v| v.label.to_string());
        if dist.version == chosen.version.to_string()
            && installed_label.as_deref() != Some(label.as_str())
        {
            kept.push(KeptRequirement {
                project: resolution.name.to_string(),
                version: dist.version.clone(),
                installed: installed_label,
                chosen: label.to_string(),
            });
        }
    }
    kept
}

/// After the installer failed: the requirements nothing fits, each with the selector's
/// resolution (every version judged, and what the variants need), so that a front-end can say
/// what would fit rather than only the installer's "no matching distribution". Requirements
/// that are not PEP 508 names are left out; sources that cannot be read give nothing.
pub async fn unmet(
    sources: ClientSettings,
    requirements: &[String],
    target: &Target,
    options: &IndexOptions,
) -> Vec<(Request, Resolution)> {
    let requests: Vec<Request> = requirements
        .iter()
        .filter_map(|r| Request::parse(r).ok())
        .collect();
    if requests.is_empty() {
        return Vec::new();
    }
    let Some(outcomes) = selected(sources, &requests, target, options).await else {
        return Vec::new();
    };
    outcomes
        .into_iter()
        .filter_map(|(request, outcome)| match outcome {
            Outcome::Resolved(resolution) if resolution.chosen.is_none() => {
                Some((request, *resolution))
            }
            _ => None,
        })
        .collect()
}

/// The outcome of each request that could be looked at; `None` when the client cannot start.
async fn selected(
    sources: ClientSettings,
    requests: &[Request],
    target: &Target,
    options: &IndexOptions,
) -> Option<Vec<(Request, Outcome)>> {
    let client = match IndexClient::new(sources) {
        Ok(client) => client,
        Err(e) => {
            tracing::debug!("cannot look at the requirements again: {e}");
            return None;
        }
    };
    let outcomes = select_all(&client, requests, target, options).await;
    Some(
        requests
            .iter()
            .cloned()
            .zip(outcomes)
            .filter_map(|(request, outcome)| Some((request, outcome.ok()?)))
            .collect(),
    )
}
