//! Selecting through a build family (issue 35): for a requirement on a family's name (`cupy`),
//! what each build offers on the indexes, the build and version [`vari_family::choose`] takes
//! for the target, and the requirement to select in its place (`cupy-cuda12x==14.2.0`).
//!
//! This round asks the client's own sources for the builds published under their own names
//! (the by-name layout). Builds on an index or links page of their own offer nothing here yet:
//! asking those sources, each only for its builds' names ([`vari_family::SourceMap`]), is the
//! next step, with the proxy, locks and mirrors.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use vari_client::{ClientError, IndexClient, ProjectName};
use vari_family::{choose, Family, FamilyChoice, FamilyOptions, Offer};

use super::request::Request;
use super::select::SelectError;
use crate::target::Target;

/// What each by-name build of `family` offers on the client's sources: its versions (yanked
/// files left out), fetched concurrently. A build whose name no source has offers nothing.
pub async fn family_offers(
    client: &IndexClient,
    family: &Family,
) -> Result<BTreeMap<String, Vec<Offer>>, SelectError> {
    // The catalog validated the names already; one that still does not parse is not asked.
    let asked: Vec<_> = family
        .builds
        .iter()
        .filter(|b| b.source.is_none())
        .filter_map(|b| Some((b, ProjectName::new(&b.distribution).ok()?)))
        .collect();
    let pages = join_all(asked.iter().map(|(_, name)| client.project(name))).await;
    let mut offers = BTreeMap::new();
    for ((build, _), page) in asked.into_iter().zip(pages) {
        let project = match page {
            Ok(project) => project,
            Err(ClientError::ProjectNotFound { .. }) => continue,
            Err(e) => return Err(e.into()),
        };
        let mut versions: Vec<_> = project
            .files
            .iter()
            .filter(|f| f.yanked.is_none())
            .map(|f| f.version().clone())
            .collect();
        versions.sort();
        versions.dedup();
        let mut list: Vec<Offer> = versions.into_iter().map(Offer::new).collect();
        if build.line_from_requirements {
            read_lines(client, &project, &mut list).await;
        }
        offers
            .entry(build.name.clone())
            .or_insert_with(Vec::new)
            .extend(list);
    }
    Ok(offers)
}

/// The newest versions whose line is read from their requirements: enough to reach back past a
/// change of line, few enough that a family costs a handful of metadata reads.
pub(super) const LINE_READS: usize = 8;

/// Reads the CUDA line of the newest [`LINE_READS`] versions from one wheel's core metadata
/// each (PEP 658, else range reads), concurrently. A version whose metadata cannot be read
/// keeps no line (the build's own `requires` then apply).
async fn read_lines(client: &IndexClient, project: &vari_client::Project, offers: &mut [Offer]) {
    let newest = offers.len().saturating_sub(LINE_READS);
    let wanted = &mut offers[newest..];
    let files: Vec<_> = wanted
        .iter()
        .map(|offer| {
            project.files.iter().find(|f| {
                f.yanked.is_none() && f.wheel().is_some() && *f.version() == offer.version
            })
        })
        .collect();
    let texts = join_all(files.iter().map(|file| async move {
        match file {
            Some(file) => client.core_metadata(file).await.ok(),
            None => None,
        }
    }))
    .await;
    for (offer, text) in wanted.iter_mut().zip(texts) {
        if let Some(text) = text {
            let requires = super::requires_dist(&text);
            offer.line = Some(vari_family::cuda_line(requires.iter().map(String::as_str)));
        }
    }
}

/// The choice within `family` for `request` on `target`: each build's offers from the client's
/// sources, ranked for the target's hardware.
///
/// `None` when the sources list none of the family's builds: the family does not apply there,
/// and the request selects as itself. That keeps a project that publishes PEP 825 variants
/// under the family's name (a repacked `cupy`, a mirror holding only `cupy`) under PEP 825's
/// rules.
pub async fn choose_in_family(
    client: &IndexClient,
    family: &Family,
    request: &Request,
    target: &Target,
    options: &FamilyOptions,
) -> Result<Option<FamilyChoice>, SelectError> {
    let offers = family_offers(client, family).await?;
    if offers.values().all(Vec::is_empty) {
        return Ok(None);
    }
    Ok(Some(choose(
        family,
        &offers,
        request.specifiers(),
        &target.hardware.profile,
        &target.markers,
        options,
    )))
}

/// The requirement that selects the chosen build at its version, with the request's extras and
/// marker (`cupy[all]; sys_platform == "linux"` → `cupy-cuda12x[all]==14.2.0; sys_platform ==
/// "linux"`); `None` when no build was chosen.
pub fn build_request(
    choice: &FamilyChoice,
    request: &Request,
) -> Option<Result<Request, super::RequestError>> {
    let chosen = choice.chosen.as_ref()?;
    let mut extras: Vec<String> = request.extras().to_vec();
    let base = match chosen.requirement.split_once('[') {
        Some((name, rest)) => {
            extras.insert(0, rest.trim_end_matches(']').to_owned());
            name.to_owned()
        }
        None => chosen.requirement.clone(),
    };
    let mut text = base;
    if !extras.is_empty() {
        text.push_str(&format!("[{}]", extras.join(",")));
    }
    text.push_str(&format!("=={}", chosen.version));
    if let Some(marker) = request.marker() {
        text.push_str(&format!("; {marker}"));
    }
    Some(Request::parse(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_family::Chosen;

    fn chosen(requirement: &str, distribution: &str) -> FamilyChoice {
        FamilyChoice {
            family: "f".into(),
            chosen: Some(Chosen {
                build: "cu12".into(),
                requirement: requirement.into(),
                distribution: distribution.into(),
                version: "1.2.0".into(),
                null: false,
            }),
            builds: Vec::new(),
        }
    }

    #[test]
    fn the_build_request_keeps_the_extras_and_the_marker() {
        let request = Request::parse("cupy[all]>=1; sys_platform == 'linux'").unwrap();
        let built = build_request(&chosen("cupy-cuda12x", "cupy-cuda12x"), &request)
            .unwrap()
            .unwrap();
        assert_eq!(built.name().as_str(), "cupy-cuda12x");
        assert_eq!(built.extras(), ["all"]);
        assert!(built.is_pinned());
        assert!(built.marker().unwrap().contains("sys_platform"));
        // A build by extra keeps its extra first.
        let request = Request::parse("jax").unwrap();
        let built = build_request(&chosen("jax[cuda12]", "jax"), &request)
            .unwrap()
            .unwrap();
        assert_eq!(
            (built.name().as_str(), built.extras()),
            ("jax", &["cuda12".to_owned()][..])
        );
        let none = FamilyChoice {
            chosen: None,
            ..chosen("x", "x")
        };
        assert!(build_request(&none, &request).is_none());
    }
}
