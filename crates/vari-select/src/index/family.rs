//! Selecting through a build family (issue 35): for a requirement on a family's name (`cupy`,
//! `torch`), what each build offers, the build and version [`vari_family::choose`] takes for the
//! target, and the requirement to select in its place (`cupy-cuda12x==14.2.0`,
//! `torch==2.9.0+cu128` from the cu128 index).
//!
//! Where each build's versions come from:
//! - builds published under their own names or extras (by name, by extra): the client's own
//!   sources, as any other project;
//! - builds on an index or links page of their own (by index: PyTorch's `whl/cu128`): that source
//!   alone, asked only for the distributions the catalog publishes there
//!   ([`vari_family::SourceMap::may_serve`]), through a client of its own ([`SourceClients`]), so
//!   that a family's index never answers for another name. Every build's page is asked for in
//!   one round, at most [`SOURCE_CONCURRENCY`] at a time, and a build whose line is read from
//!   its requirements has those read as soon as its page arrives; the run's clients share one
//!   connection pool, and each source's page, read once, is the one the chosen wheel is then
//!   selected from.
//!
//! A version counts as offered when it has a wheel the target can install: not yanked, its
//! `requires-python` allowing the target's Python and its tags the target's; a by-index build's
//! versions are only those carrying its local tag (`+cu128`).
//!
//! The family does not apply, and the request selects as itself, when the sources list none of
//! its builds, when the user named one of its sources as an index (`--index-url
//! https://download.pytorch.org/whl/cpu`: exactly that is wanted), and, for a family with builds
//! on sources of their own, when the user's sources publish PEP 825 variants under the family's
//! name (PyTorch's variant index: PEP 825 chooses there).
//!
//! Families of a group (torch, torchvision, torchaudio, xformers) asked for together take one
//! line ([`choose_families`], [`vari_family::group_line`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::join_all;
use futures_util::stream::{self, StreamExt};
use pep440_rs::Version;
use vari_client::{ClientError, ClientSettings, FindLinks, IndexClient, IndexFile, ProjectName};
use vari_family::{
    choose, group_line, offered_lines, BuildSource, Catalog, Family, FamilyChoice, FamilyOptions,
    GroupConflict, Offer, Verdict,
};

use super::family_sources::SourceClients;
use super::request::Request;
use super::select::SelectError;
use crate::target::Target;

/// How many of a family's own sources are asked at the same time.
pub const SOURCE_CONCURRENCY: usize = 8;

/// Whether `file` is a wheel the target can install: not yanked, `requires-python` allowing the
/// target's Python, tags the target's.
fn installable(file: &IndexFile, target: &Target) -> bool {
    let python = target.python.version;
    let python = Version::new([
        u64::from(python.major),
        u64::from(python.minor),
        u64::from(python.patch.unwrap_or(0)),
    ]);
    file.yanked.is_none()
        && file
            .requires_python
            .as_ref()
            .is_none_or(|r| r.contains(&python))
        && file
            .wheel()
            .is_some_and(|w| target.python.tags().is_compatible(w))
}

/// What each build of `family` offers for `target`: by-name and by-extra builds from the client's
/// sources, by-index builds from their own source each (`sources`' client for it); every page
/// in one round, at most [`SOURCE_CONCURRENCY`] at a time, a build's lines read from its
/// requirements as soon as its page arrives. A build whose source does not have its name offers
/// nothing.
pub async fn family_offers(
    client: &IndexClient,
    sources: &SourceClients,
    family: &Family,
    target: &Target,
) -> Result<BTreeMap<String, Vec<Offer>>, SelectError> {
    // The catalog validated the names already; one that still does not parse is not asked.
    let asked: Vec<_> = family
        .builds
        .iter()
        .filter_map(|b| Some((b, ProjectName::new(&b.distribution).ok()?)))
        .collect();
    let found: Vec<Result<Option<Vec<Offer>>, SelectError>> = stream::iter(asked.iter())
        .map(|(build, name)| build_offers(client, sources, build, name, target))
        .buffered(SOURCE_CONCURRENCY)
        .collect()
        .await;
    let mut offers = BTreeMap::new();
    for ((build, _), list) in asked.iter().zip(found) {
        let Some(list) = list? else {
            continue;
        };
        offers
            .entry(build.name.clone())
            .or_insert_with(Vec::new)
            .extend(list);
    }
    Ok(offers)
}

/// What one build offers: its page's installable versions carrying its local tag, with their
/// lines when the build's line is read from its requirements. `None` when its source does not
/// have the name.
async fn build_offers(
    client: &IndexClient,
    sources: &SourceClients,
    build: &vari_family::Build,
    name: &ProjectName,
    target: &Target,
) -> Result<Option<Vec<Offer>>, SelectError> {
    let own: Option<Arc<IndexClient>> = match &build.source {
        None => None,
        Some(source) => Some(sources.client(client, source)?),
    };
    let reader = own.as_deref().unwrap_or(client);
    let project = match reader.project(name).await {
        Ok(project) => project,
        Err(ClientError::ProjectNotFound { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut versions: Vec<_> = project
        .files
        .iter()
        .filter(|f| installable(f, target))
        .map(|f| f.version().clone())
        .filter(|v| vari_family::carries_local(build, v))
        .collect();
    versions.sort();
    versions.dedup();
    let mut list: Vec<Offer> = versions.into_iter().map(Offer::new).collect();
    if build.line_from_requirements {
        read_lines(reader, &project, target, &mut list).await;
    }
    Ok(Some(list))
}

/// The newest versions whose line is read from their requirements: enough to reach back past a
/// change of line, few enough that a family costs a handful of metadata reads.
pub(super) const LINE_READS: usize = 8;

/// Reads the CUDA line of the newest [`LINE_READS`] versions from one wheel's core metadata
/// each (PEP 658, else range reads), concurrently: a wheel the target can install, since a
/// release's wheels for other platforms may need other libraries (or none), else any of its
/// wheels. A version whose metadata cannot be read keeps no line (the build's own `requires`
/// then apply).
async fn read_lines(
    client: &IndexClient,
    project: &vari_client::Project,
    target: &Target,
    offers: &mut [Offer],
) {
    let newest = offers.len().saturating_sub(LINE_READS);
    let wanted = &mut offers[newest..];
    let files: Vec<_> = wanted
        .iter()
        .map(|offer| {
            let of_version = |f: &&IndexFile| {
                f.yanked.is_none() && f.wheel().is_some() && *f.version() == offer.version
            };
            project
                .files
                .iter()
                .filter(of_version)
                .find(|f| installable(f, target))
                .or_else(|| project.files.iter().find(of_version))
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

/// The choice within `family` for `request` on `target`: each build's offers, ranked for the
/// target's hardware.
///
/// `None` when the family does not apply and the request selects as itself: no source lists
/// any of its builds (a mirror holding only `cupy`), or, for a family with builds on sources of
/// their own, the client's sources publish PEP 825 variants under the family's name (PyTorch's
/// variant index), which keeps such a project under PEP 825's rules.
pub async fn choose_in_family(
    client: &IndexClient,
    sources: &SourceClients,
    family: &Family,
    request: &Request,
    target: &Target,
    options: &FamilyOptions,
) -> Result<Option<FamilyChoice>, SelectError> {
    Ok(offers_if_applies(client, sources, family, target)
        .await?
        .map(|offers| choose_with(family, &offers, request, target, options)))
}

/// The choice within `family` for `request` on `target` when the installer, not vari, decides
/// which of a group's members are asked for (the proxy serves one page at a time): the choice
/// of [`choose_in_family`], moved to the line every member of its groups takes whose sources
/// offer a build for the target. The members are the group's families that share a build name
/// with `family` (vLLM's PyPI build, whose line is read from its requirements, pins torch only
/// when both are asked for, which a page cannot know) and offer a build here; a member whose
/// sources cannot be read is left out, as is a group whose members share no line (each page
/// then keeps its own best build). Every member's page takes the same line, whichever page the
/// installer reads first.
///
/// Returns the choice and, when a group moved it, the group's name and the members that took
/// part.
pub async fn choose_across_group(
    client: &IndexClient,
    sources: &SourceClients,
    catalog: &Catalog,
    family: &Family,
    request: &Request,
    target: &Target,
    options: &FamilyOptions,
) -> Result<Option<(FamilyChoice, Option<(String, Vec<String>)>)>, SelectError> {
    let Some(offers) = offers_if_applies(client, sources, family, target).await? else {
        return Ok(None);
    };
    let own = choose_with(family, &offers, request, target, options);
    if own.chosen.is_none() {
        return Ok(Some((own, None)));
    }
    let shares = |other: &Family| {
        other.name != family.name
            && other
                .builds
                .iter()
                .any(|b| family.builds.iter().any(|o| o.name == b.name))
    };
    for group in catalog.groups_of(&family.name) {
        let members: Vec<&Family> = group
            .families
            .iter()
            .filter_map(|name| catalog.family(name))
            .filter(|other| shares(other))
            .collect();
        let found = join_all(members.iter().map(|member| async move {
            let request = Request::parse(&member.name).ok()?;
            choose_in_family(client, sources, member, &request, target, options)
                .await
                .ok()
                .flatten()
        }))
        .await;
        let chosen: Vec<(&Family, FamilyChoice)> = members
            .into_iter()
            .zip(found)
            .filter_map(|(member, choice)| Some((member, choice?)))
            .filter(|(_, choice)| choice.chosen.is_some())
            .collect();
        if chosen.is_empty() {
            continue;
        }
        let mut pairs: Vec<(&Family, &FamilyChoice)> = vec![(family, &own)];
        pairs.extend(chosen.iter().map(|(member, choice)| (*member, choice)));
        let Ok(Some(line)) = group_line(&group.name, &pairs) else {
            continue;
        };
        let names: Vec<String> = pairs.iter().map(|(f, _)| f.name.clone()).collect();
        if own.chosen.as_ref().is_some_and(|c| c.build == line) || family.build(&line).is_none() {
            return Ok(Some((own, None)));
        }
        let lines: Vec<(String, Vec<String>)> = pairs
            .iter()
            .map(|(f, choice)| (f.name.clone(), offered_lines(choice)))
            .collect();
        let only = FamilyOptions {
            only_build: Some(line.clone()),
            ..options.clone()
        };
        let moved = choose_with(family, &offers, request, target, &only);
        let moved = regroup(&own, moved, &group.name, &line, &lines);
        return Ok(Some((moved, Some((group.name.clone(), names)))));
    }
    Ok(Some((own, None)))
}

/// What the family's builds offer, or `None` when the family does not apply
/// ([`choose_in_family`]).
async fn offers_if_applies(
    client: &IndexClient,
    sources: &SourceClients,
    family: &Family,
    target: &Target,
) -> Result<Option<BTreeMap<String, Vec<Offer>>>, SelectError> {
    // The user's sources are asked about variants alongside the builds' own sources, not
    // before them: one round trip instead of two.
    let has_sources = family.builds.iter().any(|b| b.source.is_some());
    let (variants, offers) = futures_util::future::join(
        async {
            match has_sources {
                true => publishes_variants(client, &family.name).await,
                false => Ok(false),
            }
        },
        family_offers(client, sources, family, target),
    )
    .await;
    if variants? {
        return Ok(None);
    }
    let offers = offers?;
    Ok((!offers.is_empty()).then_some(offers))
}

/// Whether the client's sources list `name` with PEP 825 variants (variant wheels or a
/// `variants.json`); a source that does not have the name says no.
async fn publishes_variants(client: &IndexClient, name: &str) -> Result<bool, SelectError> {
    let Ok(name) = ProjectName::new(name) else {
        return Ok(false);
    };
    match client.project(&name).await {
        Ok(project) => Ok(!project.variants_json.is_empty()
            || project
                .files
                .iter()
                .any(|f| f.wheel().is_some_and(|w| w.label.is_some()))),
        Err(ClientError::ProjectNotFound { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn choose_with(
    family: &Family,
    offers: &BTreeMap<String, Vec<Offer>>,
    request: &Request,
    target: &Target,
    options: &FamilyOptions,
) -> FamilyChoice {
    choose(
        family,
        offers,
        request.specifiers(),
        &target.hardware.profile,
        &target.markers,
        options,
    )
}

/// The build of `family` whose source the client's own settings name (an `--index-url` or
/// `--find-links` that is the family's cu128 index): the user asked for exactly that source.
pub fn named_source<'f>(
    settings: &ClientSettings,
    family: &'f Family,
) -> Option<&'f vari_family::Build> {
    let same = |a: &url::Url, b: &url::Url| {
        a.as_str().trim_end_matches('/') == b.as_str().trim_end_matches('/')
    };
    family.builds.iter().find(|build| match &build.source {
        None => false,
        Some(source) => {
            settings.indexes.iter().any(|i| same(i.url(), source.url()))
                || settings.find_links.iter().any(|f| match f {
                    FindLinks::Page { url, .. } => same(url, source.url()),
                    FindLinks::Directory(_) => false,
                })
        }
    })
}

/// The note for a request on a build's own name (`cupy-cuda12x`) when this target's best build
/// of its family is another: the request is the user's choice and is selected as asked.
fn build_asked_by_name(
    catalog: &Catalog,
    request: &Request,
    target: &Target,
    options: &FamilyOptions,
) -> Option<String> {
    let family = catalog.family_of_distribution(request.name().as_str())?;
    if !request.applies_to(target) {
        return None;
    }
    let best = vari_family::rank_builds(family, &target.hardware.profile, &target.markers, options)
        .chosen?;
    let asked = request.name().as_str();
    if best.distribution == asked {
        return None;
    }
    Some(format!(
        "{}: a build of family {} asked for by name, selected as asked (this target's best build \
         is {}, {})",
        request.as_str(),
        family.name,
        best.build,
        best.requirement
    ))
}

/// One request chosen through its family.
#[derive(Debug, Clone)]
pub struct FamilyPick {
    /// The request's position among those given.
    pub position: usize,
    /// The family's choice, with every build's reason.
    pub choice: FamilyChoice,
    /// Where the chosen build is selected from: its own source, or `None` for the client's.
    pub source: Option<BuildSource>,
    /// The client that asks that source alone, holding the page the choice was made from: the
    /// one to select and download the chosen build with (`None` for the client's sources).
    pub client: Option<Arc<IndexClient>>,
    /// When the request's group moved it to a line all requested members offer: the group and
    /// the members that took part (`pytorch`, `torch, torchvision`).
    pub group: Option<(String, Vec<String>)>,
}

/// What [`choose_families`] found: the picks, and notes on requests left as given.
#[derive(Debug, Clone, Default)]
pub struct FamilyPicks {
    /// One per request chosen through its family, in the requests' order.
    pub picks: Vec<FamilyPick>,
    /// Requests on a family's name that were selected as given, and why (`torch: the index
    /// https://download.pytorch.org/whl/cpu is the family's build cpu; …`).
    pub notes: Vec<String>,
}

/// A request chosen through its family: its position, the family, what its builds offer, the
/// choice.
type Member<'c> = (
    usize,
    &'c Family,
    BTreeMap<String, Vec<Offer>>,
    FamilyChoice,
);

/// Why choosing through the families failed.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    /// A source could not be read for `requirement`.
    #[error("{requirement}: {error}")]
    Select {
        /// The requirement as given.
        requirement: String,
        /// What failed.
        error: SelectError,
    },
    /// Members of a group asked for together cannot take one line.
    #[error(transparent)]
    Group(#[from] GroupConflict),
}

/// Chooses through the catalog for every request on a family's name that applies to the target,
/// families concurrently; then the requested members of each group take one line together
/// ([`vari_family::group_line`]). A request on a build's own name (`cupy-cuda12x`) is not a
/// family's and is left alone, as is one whose family does not apply ([`choose_in_family`]) or
/// whose family's source the client's settings name ([`named_source`], with a note when this
/// target's best build is another). The families' own sources are asked through clients made
/// for this call ([`choose_families_with`] to share them across calls).
pub async fn choose_families(
    client: &IndexClient,
    catalog: &Catalog,
    requests: &[Request],
    target: &Target,
    options: &FamilyOptions,
) -> Result<FamilyPicks, FamilyError> {
    let sources = SourceClients::new();
    choose_families_with(client, &sources, catalog, requests, target, options).await
}

/// [`choose_families`], asking the families' own sources through `sources`: a run that chooses
/// for several targets (a lock's classes) reads each source's page once.
pub async fn choose_families_with(
    client: &IndexClient,
    sources: &SourceClients,
    catalog: &Catalog,
    requests: &[Request],
    target: &Target,
    options: &FamilyOptions,
) -> Result<FamilyPicks, FamilyError> {
    let mut notes = Vec::new();
    let mut asked: Vec<(usize, &Family)> = Vec::new();
    for (position, request) in requests.iter().enumerate() {
        let Some(family) = catalog.family(request.name().as_str()) else {
            if let Some(note) = build_asked_by_name(catalog, request, target, options) {
                notes.push(note);
            }
            continue;
        };
        if !request.applies_to(target) {
            continue;
        }
        if let Some(build) = named_source(client.settings(), family) {
            let best = vari_family::rank_builds(
                family,
                &target.hardware.profile,
                &target.markers,
                options,
            );
            let mut note = format!(
                "{}: {} is the source of family {}'s build {}; selecting from it as given",
                request.as_str(),
                build
                    .source
                    .as_ref()
                    .map(|s| s.url().to_string())
                    .unwrap_or_default(),
                family.name,
                build.name
            );
            if let Some(best) = best.chosen.filter(|b| b.build != build.name) {
                note.push_str(&format!(" (this target's best build is {})", best.build));
            }
            notes.push(note);
            continue;
        }
        asked.push((position, family));
    }
    let found = join_all(
        asked
            .iter()
            .map(|(_, family)| offers_if_applies(client, sources, family, target)),
    )
    .await;
    let mut chosen: Vec<Member<'_>> = Vec::new();
    for ((position, family), offers) in asked.into_iter().zip(found) {
        let request = &requests[position];
        let offers = offers.map_err(|error| FamilyError::Select {
            requirement: request.as_str().to_owned(),
            error,
        })?;
        let Some(offers) = offers else {
            continue;
        };
        let choice = choose_with(family, &offers, request, target, options);
        chosen.push((position, family, offers, choice));
    }
    // The group rule: each group's requested members take the best line they all offer.
    let mut groups: Vec<Option<(String, Vec<String>)>> = vec![None; chosen.len()];
    for group in &catalog.groups {
        let members: Vec<usize> = (0..chosen.len())
            .filter(|&i| group.families.contains(&chosen[i].1.name))
            .collect();
        if members.len() < 2 {
            continue;
        }
        let pairs: Vec<(&Family, &FamilyChoice)> = members
            .iter()
            .map(|&i| (chosen[i].1, &chosen[i].3))
            .collect();
        let Some(line) = group_line(&group.name, &pairs)? else {
            continue;
        };
        let names: Vec<String> = members.iter().map(|&i| chosen[i].1.name.clone()).collect();
        let lines: Vec<(String, Vec<String>)> = members
            .iter()
            .map(|&i| (chosen[i].1.name.clone(), offered_lines(&chosen[i].3)))
            .collect();
        for &i in &members {
            let (position, family, offers, choice) = &chosen[i];
            let has_line = family.builds.iter().any(|b| b.name == line);
            if !has_line || choice.chosen.as_ref().is_some_and(|c| c.build == line) {
                continue;
            }
            let only = FamilyOptions {
                only_build: Some(line.clone()),
                ..options.clone()
            };
            let moved = choose_with(family, offers, &requests[*position], target, &only);
            let replaced = regroup(choice, moved, &group.name, &line, &lines);
            chosen[i].3 = replaced;
            groups[i] = Some((group.name.clone(), names.clone()));
        }
    }
    let mut picks = Vec::with_capacity(chosen.len());
    for ((position, family, _, choice), group) in chosen.into_iter().zip(groups) {
        let source = choice
            .chosen
            .as_ref()
            .and_then(|c| family.build(&c.build))
            .and_then(|b| b.source.clone());
        // Made while the family's offers were read (the same source, the same client).
        let client = match &source {
            None => None,
            Some(source) => {
                Some(
                    sources
                        .client(client, source)
                        .map_err(|error| FamilyError::Select {
                            requirement: requests[position].as_str().to_owned(),
                            error,
                        })?,
                )
            }
        };
        picks.push(FamilyPick {
            position,
            choice,
            source,
            client,
            group,
        });
    }
    Ok(FamilyPicks { picks, notes })
}

/// The choice of a group member moved to `line`: `moved` (chosen with only that build allowed),
/// with each other build's reason taken from the member's own choice, and the builds that fit
/// but ranked above the line saying which member does not offer them.
fn regroup(
    own: &FamilyChoice,
    mut moved: FamilyChoice,
    group: &str,
    line: &str,
    members: &[(String, Vec<String>)],
) -> FamilyChoice {
    for report in &mut moved.builds {
        if !matches!(report.verdict, Verdict::NotWanted { .. }) {
            continue;
        }
        let before = own
            .builds
            .iter()
            .find(|b| b.build == report.build && b.requires == report.requires);
        report.verdict = match before.map(|b| &b.verdict) {
            Some(Verdict::Chosen | Verdict::RanksBelow { .. }) => {
                let lacking: Vec<&str> = members
                    .iter()
                    .filter(|(_, lines)| !lines.contains(&report.build))
                    .map(|(name, _)| name.as_str())
                    .collect();
                Verdict::NotWanted {
                    reason: format!(
                        "fits, but group {group} takes {line}: {} does not offer {}",
                        lacking.join(", "),
                        report.build
                    ),
                }
            }
            Some(other) => other.clone(),
            None => report.verdict.clone(),
        };
    }
    moved
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
    use vari_client::IndexUrl;
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
    fn a_family_source_the_user_names_is_found_with_or_without_its_slash() {
        let torch = vari_family::builtin().family("torch").unwrap();
        let settings = |urls: &[&str]| ClientSettings {
            indexes: urls.iter().map(|u| IndexUrl::parse(u).unwrap()).collect(),
            ..ClientSettings::default()
        };
        let named = named_source(&settings(&["https://download.pytorch.org/whl/cpu"]), torch);
        assert_eq!(named.map(|b| b.name.as_str()), Some("cpu"));
        let named = named_source(
            &settings(&[
                "https://pypi.org/simple/",
                "https://download.pytorch.org/whl/cu128/",
            ]),
            torch,
        );
        assert_eq!(named.map(|b| b.name.as_str()), Some("cu128"));
        assert!(named_source(&settings(&["https://pypi.org/simple/"]), torch).is_none());
        // Another family's index is not this one's.
        let cupy = vari_family::builtin().family("cupy").unwrap();
        assert!(named_source(&settings(&["https://download.pytorch.org/whl/cpu"]), cupy).is_none());
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
