//! The fast path of [`resolve_releases`](super::resolve_releases): one `uv pip compile` for
//! every target at once, through a proxy that serves the targets' union
//! ([`vari_proxy::ProxySettings::union`]), instead of one per target.
//!
//! When it applies: to every target at once when they differ in Python version or platform
//! ([`universal_wanted`]: one `uv pip compile --universal`, each pin placed by its marker,
//! [`super::universal`]); else, or when that cannot be trusted, to each group of targets with
//! the same Python version, platform, marker environment and wheel tags (they differ in
//! hardware only), when some group has two targets or more ([`groups`]). The groups resolve at once, one uv run each, and their results are
//! joined when they pin the same versions (else the per-target path decides: it agrees or
//! names the disagreement). Within a group uv sees, for each release,
//! the dependencies each target's own variant states, all together; a version is listed when
//! any target is shown a file of it. The resolution is one version per package that satisfies
//! every target's constraints at once, which is what the per-target path's agreement step
//! converges to when it succeeds.
//!
//! Why it is then verified: a version listed because one target can use it may be pinned for
//! a target that cannot (the per-target path would have hidden it from that target and
//! resolved something else, or reported that the targets disagree). So each target's own
//! closure is walked over the union's pins: from the requirements, along uv's `# via` edges,
//! an edge from a release with variants kept only when the file the target is shown states
//! that dependency ([`vari_proxy::UnionShown`]). Every release in a target's closure must
//! have a file the target is shown; every pinned release must be in some target's closure.
//! The closures give each release's targets, as the per-target resolutions would have.
//!
//! When it cannot be trusted — uv fails on the union (two targets' variants pin conflicting
//! runtimes), a target is shown nothing of a release in its closure, the proxy cannot say
//! what it showed — the per-target path runs, unchanged, and gives its own result or error.
//! [`PER_TARGET_VARIABLE`] forces that path (to compare both).
//!
//! While uv resolves, the requirements' likely releases are listed ahead ([`super::prefetch`]):
//! what is left after uv is the releases it pinned that were not guessed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;

use vari_client::IndexClient;
use vari_core::markers::{split_requirement, Marker, TargetEnvironment, VariantMarkerContext};
use vari_lock::LockedRelease;
use vari_proxy::{ProxySettings, UnionShown, UnionVersion};

use super::prefetch::{while_running, Guessing, Prefetched};
use super::request::{LockingError, LockingRequest, LockingTarget};
use super::steps::{
    check_pinned, compile_request, list_files, requirements_text, write_inputs, Pins, Scratch,
};
use super::universal::{self, Applies};
use crate::compile::{
    compile_through, read_marked_pins, read_output_text, read_via, CompileRequest, MarkedPin, Pin,
};
use crate::lock_files::{LockFilesError, LockFilesTarget, Texts};

/// Set (to anything but the empty string), every target is resolved on its own: the path the
/// union's result is checked against in tests, and a way around the fast path.
pub const PER_TARGET_VARIABLE: &str = "VARI_LOCK_PER_TARGET";

/// Whether `request`'s targets are resolved by one universal resolution: two targets or more,
/// not all alike but for their hardware, all with a Python version (or none with one: the
/// Python uv finds), and the per-target path not asked for.
pub(super) fn universal_wanted(request: &LockingRequest<'_>) -> bool {
    let forced = std::env::var_os(PER_TARGET_VARIABLE).is_some_and(|v| !v.is_empty());
    let targets = request.targets;
    let Some(first) = targets.first() else {
        return false;
    };
    let versions = targets
        .iter()
        .filter(|t| t.lock.python_version.is_some())
        .count();
    let consistent = versions == 0 || versions == targets.len();
    let differ = targets.iter().any(|t| !alike(first, t));
    !forced && consistent && differ
}

/// The targets in groups alike but for their hardware (each group in the targets' order, the
/// groups in the order of their first target), when resolving each group as one union saves
/// uv runs (a group of two or more) and the per-target path is not asked for.
pub(super) fn groups(request: &LockingRequest<'_>) -> Option<Vec<Vec<LockingTarget>>> {
    let forced = std::env::var_os(PER_TARGET_VARIABLE).is_some_and(|v| !v.is_empty());
    let mut groups: Vec<Vec<LockingTarget>> = Vec::new();
    for target in request.targets {
        match groups.iter_mut().find(|g| alike(&g[0], target)) {
            Some(group) => group.push(target.clone()),
            None => groups.push(vec![target.clone()]),
        }
    }
    let saves = groups.iter().any(|g| g.len() > 1);
    (!forced && saves).then_some(groups)
}

/// [`resolve`] for each group of targets ([`groups`]) at once, the results joined: `None` when
/// one cannot be trusted or the groups pin different versions of a package (the per-target
/// path then resolves, and agrees or names the disagreement).
pub(super) async fn resolve_groups(
    request: &LockingRequest<'_>,
    groups: &[Vec<LockingTarget>],
    scratch: &Scratch,
    client: &IndexClient,
    files: &[LockFilesTarget],
) -> Result<Option<(Pins, Vec<LockedRelease>)>, LockingError> {
    request.progress.resolving(groups.len());
    let each = groups.iter().enumerate().map(|(i, group)| {
        let request = LockingRequest {
            targets: group,
            ..*request
        };
        let slot = format!("union-{i}");
        async move { resolve(&request, &slot, scratch, client, files, false).await }
    });
    let mut joined: Option<(Pins, Vec<LockedRelease>)> = None;
    for result in futures_util::future::join_all(each).await {
        let Some((pins, releases)) = result? else {
            return Ok(None);
        };
        joined = match joined {
            None => Some((pins, releases)),
            Some(so_far) => match join(so_far, (pins, releases)) {
                Some(both) => Some(both),
                None => return Ok(None),
            },
        };
    }
    // Each package's targets in the targets' order, as the per-target path lists them.
    let order = |name: &String| request.targets.iter().position(|t| t.lock.name == *name);
    Ok(joined.map(|(mut pins, mut releases)| {
        for (_, targets) in pins.values_mut() {
            targets.sort_by_key(order);
        }
        for release in &mut releases {
            release.targets.sort_by_key(order);
        }
        (pins, releases)
    }))
}

/// Two groups' results as one: `None` when they pin different versions of a package. A
/// release both list is listed alike by both (the files every target can use), so only its
/// targets are joined.
fn join(
    (mut pins, mut releases): (Pins, Vec<LockedRelease>),
    (more_pins, more_releases): (Pins, Vec<LockedRelease>),
) -> Option<(Pins, Vec<LockedRelease>)> {
    for (name, (version, targets)) in more_pins {
        match pins.get_mut(&name) {
            Some((known, _)) if *known != version => {
                tracing::debug!("the groups of targets pin {name} {known} and {version}");
                return None;
            }
            Some((_, known_targets)) => known_targets.extend(targets),
            None => {
                pins.insert(name, (version, targets));
            }
        }
    }
    for release in more_releases {
        match releases.iter_mut().find(|r| r.name == release.name) {
            Some(known) => known.targets.extend(release.targets),
            None => releases.push(release),
        }
    }
    Some((pins, releases))
}

/// Whether two targets resolve alike but for their hardware.
pub(super) fn alike(a: &LockingTarget, b: &LockingTarget) -> bool {
    let (a_tags, b_tags) = (a.files.target.python.tags(), b.files.target.python.tags());
    a.lock.python_version == b.lock.python_version
        && a.uv_platform() == b.uv_platform()
        && a.files.target.markers == b.files.target.markers
        && a_tags.len() == b_tags.len()
        && a_tags.iter().eq(b_tags.iter())
}

/// Every target of `request` (on several Pythons or platforms) resolved by one universal
/// resolution over their union and verified per target ([`super::universal`]); `None` when
/// it cannot be trusted (the caller resolves as before).
pub(super) async fn resolve_universal(
    request: &LockingRequest<'_>,
    scratch: &Scratch,
    client: &IndexClient,
    files: &[LockFilesTarget],
) -> Result<Option<(Pins, Vec<LockedRelease>)>, LockingError> {
    request.progress.resolving(1);
    resolve(request, "universal", scratch, client, files, true).await
}

/// The pins and the listed releases of one resolution over the union of `request`'s targets,
/// verified per target; `None` when it cannot be trusted (the caller resolves per target).
/// `slot` names uv's files in the scratch directory, so that groups can resolve at once.
/// `universal`: the targets differ in Python or platform, and uv resolves for all of them at
/// once ([`super::universal`]); else they are alike but for their hardware.
async fn resolve(
    request: &LockingRequest<'_>,
    slot: &str,
    scratch: &Scratch,
    client: &IndexClient,
    files: &[LockFilesTarget],
    universal: bool,
) -> Result<Option<(Pins, Vec<LockedRelease>)>, LockingError> {
    let Some(first) = request.targets.first() else {
        return Ok(None);
    };
    let python_version = match universal {
        true => universal::lowest_python(request.targets),
        false => first.lock.python_version.clone(),
    };
    let how = |compile_request: CompileRequest| CompileRequest {
        universal,
        python_version: python_version.clone(),
        ..compile_request
    };
    // Without preferences, nothing needs a file: the requirements go to uv's standard input
    // and the pins come back on its standard output.
    let compile_request = match request.preferences.is_empty() {
        true => how(CompileRequest {
            annotate: true,
            piped: Some(requirements_text(request.requirements)?),
            ..compile_request(request, PathBuf::from("-"), PathBuf::from("-"), first)
        }),
        false => {
            let scratch = scratch.path()?;
            let (input, output) =
                write_inputs(&scratch, request.requirements, request.preferences, slot)?;
            how(CompileRequest {
                annotate: true,
                ..compile_request(request, input, output, first)
            })
        }
    };
    let targets = request.targets.iter().map(|t| t.files.target.clone());
    let settings = ProxySettings {
        selection: request.selection.clone(),
        // The listing after uv reads the texts uv read (`Texts::Proxy`): the index sends each once.
        keep_metadata: true,
        ..ProxySettings::for_union(request.sources.clone(), targets.collect())
            .map_err(|e| resolve_error(first, e.into()))?
    };
    // Where the time goes, at debug level (`-v`): the phases after the proxy starts.
    let clock = std::time::Instant::now();
    let proxy = vari_install::stable_port::start_stable(settings)
        .await
        .map_err(|e| resolve_error(first, e.into()))?;
    tracing::debug!("union proxy started after {:.1?}", clock.elapsed());
    let prefetched = Prefetched::default();
    let verified = async {
        let guessing = Guessing {
            client,
            proxy: &proxy,
            requirements: request.requirements,
            preferences: request.preferences,
            pre: request.pre,
            python: python_version.as_deref().and_then(|v| v.parse().ok()),
            targets: files,
            selection: request.selection,
        };
        let compiled = compile_through(&proxy, &compile_request);
        let piped = match while_running(compiled, &guessing, &prefetched).await {
            Ok(piped) => piped,
            Err(e) => {
                tracing::debug!("the union of the targets does not resolve ({e}); each alone");
                return Ok(None);
            }
        };
        let text = match piped {
            Some(text) => text,
            None => {
                read_output_text(&compile_request.output).map_err(|e| resolve_error(first, e))?
            }
        };
        let marked = read_marked_pins(&text).map_err(|message| {
            resolve_error(
                first,
                crate::compile::CompileError::Output {
                    path: compile_request.output.clone(),
                    message,
                },
            )
        })?;
        let everyone: Vec<String> = request
            .targets
            .iter()
            .map(|t| t.lock.name.clone())
            .collect();
        let environments: Vec<TargetEnvironment> = request
            .targets
            .iter()
            .map(|t| t.files.target.markers.clone())
            .collect();
        let (mut pinned, applies) = match universal {
            true => match universal::place(marked, &everyone, &environments) {
                Some(placed) => placed,
                None => return Ok(None),
            },
            // Alike targets: every pin is everyone's (uv writes no markers for one platform).
            false => {
                let mut pinned = Pins::new();
                for MarkedPin { pin, .. } in marked {
                    pinned.insert(pin.name, (pin.version, everyone.clone()));
                }
                (pinned, Applies::new())
            }
        };
        for target in request.targets {
            let own: Vec<Pin> = pinned
                .iter()
                .filter(|(_, (_, targets))| targets.contains(&target.lock.name))
                .map(|(name, (version, _))| Pin {
                    name: name.clone(),
                    version: version.clone(),
                })
                .collect();
            match check_pinned(request.requirements, &own, target) {
                Ok(()) => {}
                // Where uv's markers and vari's reading of them part: each group or target
                // alone decides.
                Err(e) if universal => {
                    tracing::debug!("the universal resolution does not hold for a target: {e}");
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
        tracing::debug!("uv resolved after {:.1?}", clock.elapsed());
        // Resolved: what follows is listing the pinned releases' files.
        let names: Vec<&str> = request
            .targets
            .iter()
            .map(|t| t.lock.name.as_str())
            .collect();
        request.progress.resolved(&names.join(", "));
        let via = read_via(&text);
        let texts = Texts::Proxy(&proxy);
        let listed = list_files(request, client, texts, &pinned, files, Some(&prefetched));
        let mut releases = match listed.await {
            Ok(releases) => releases,
            Err(LockingError::Files(LockFilesError::NoFiles { name, version })) => {
                tracing::debug!("the union pinned {name} {version}, which no target can use");
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        tracing::debug!("files listed after {:.1?}", clock.elapsed());
        let mut views: BTreeMap<String, Vec<UnionShown>> = BTreeMap::new();
        for release in releases.iter().filter(|r| r.variants_json.is_some()) {
            let version = release.version.to_string();
            match proxy.union_view(&release.name).await {
                Ok(known) => {
                    if let Some(found) = shown_of(known, &version) {
                        views.insert(release.name.clone(), found);
                    }
                }
                Err(e) => {
                    tracing::debug!("cannot verify the union's resolution: {e}");
                    return Ok(None);
                }
            }
        }
        // The requirements each target asks for (alike targets: the first one's are everyone's).
        let roots: BTreeSet<String> = environments
            .iter()
            .flat_map(|env| root_names(request.requirements, std::slice::from_ref(env)))
            .collect();
        let graph = Graph {
            pins: &pinned,
            via: &via,
            roots: &roots,
            applies: &applies,
        };
        let Some(targets_of) = closures(&graph, &views, &everyone, &environments) else {
            return Ok(None);
        };
        for (name, (_, targets)) in pinned.iter_mut() {
            *targets = targets_of.get(name).cloned().unwrap_or_default();
        }
        for release in &mut releases {
            release.targets = targets_of.get(&release.name).cloned().unwrap_or_default();
            // Alike targets share their tags and Python: uv checked them for all.
            if !universal {
                continue;
            }
            let unusable = request.targets.iter().find(|target| {
                release.targets.contains(&target.lock.name) && !universal::usable(release, target)
            });
            if let Some(target) = unusable {
                tracing::debug!(
                    "the universal resolution pinned {} {}, of which {} can install no file",
                    release.name,
                    release.version,
                    target.lock.name
                );
                return Ok(None);
            }
        }
        if universal {
            tracing::debug!(
                "one universal resolution for {} targets on several Pythons or platforms",
                everyone.len()
            );
        }
        tracing::debug!(
            "resolved once for the union of {} targets ({} packages)",
            everyone.len(),
            pinned.len()
        );
        Ok(Some((pinned, releases)))
    }
    .await;
    proxy.shutdown().await;
    tracing::debug!(
        "verified per target, proxy stopped after {:.1?}",
        clock.elapsed()
    );
    verified
}

fn resolve_error(target: &LockingTarget, source: crate::compile::CompileError) -> LockingError {
    LockingError::Resolve {
        target: target.lock.name.clone(),
        source: Box::new(source),
    }
}

/// What each target is shown of `version`, when the union view lists it.
fn shown_of(known: Vec<UnionVersion>, version: &str) -> Option<Vec<UnionShown>> {
    known
        .into_iter()
        .find(|v| v.version == version)
        .map(|v| v.shown)
}

/// Per pinned package, the targets (in order) whose closure holds it; `None` when a target's
/// closure holds a release it is shown nothing of, or a pin is in no target's closure.
///
/// `views`: per release with variants, what each target is shown of the pinned version.
/// `environments`: the targets' marker environments, in the targets' order.
fn closures(
    graph: &Graph<'_>,
    views: &BTreeMap<String, Vec<UnionShown>>,
    targets: &[String],
    environments: &[TargetEnvironment],
) -> Option<BTreeMap<String, Vec<String>>> {
    let (pins, via) = (graph.pins, graph.via);
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut roots: Vec<&str> = pins
        .keys()
        .filter(|name| graph.roots.contains(*name))
        .map(String::as_str)
        .collect();
    for name in pins.keys() {
        // uv does not annotate what it read from its standard input: a root.
        let Some(parents) = via.get(name).filter(|p| !p.is_empty()) else {
            if !roots.contains(&name.as_str()) {
                roots.push(name);
            }
            continue;
        };
        for parent in parents {
            match pins.contains_key(parent) {
                true => children.entry(parent).or_default().push(name),
                false => {
                    if !roots.contains(&name.as_str()) {
                        roots.push(name);
                    }
                }
            }
        }
    }
    let mut holding: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Whether uv's marker on `name` holds for the target at `at` (it holds when none).
    let holds = |name: &str, at: usize| {
        graph
            .applies
            .get(name)
            .is_none_or(|holds| holds.get(at).copied().unwrap_or(false))
    };
    for (at, target) in targets.iter().enumerate() {
        let own_roots = roots.iter().copied().filter(|name| holds(name, at));
        let mut seen: BTreeSet<&str> = own_roots.clone().collect();
        let mut queue: VecDeque<&str> = own_roots.collect();
        while let Some(name) = queue.pop_front() {
            let shown = views.get(name).and_then(|v| v.get(at));
            if shown == Some(&UnionShown::Nothing) {
                tracing::debug!("the union pinned {name}, of which {target} is shown nothing");
                return None;
            }
            holding
                .entry(name.to_owned())
                .or_default()
                .push(target.clone());
            for &child in children.get(name).into_iter().flatten() {
                let follows = match shown {
                    Some(UnionShown::Requires(entries)) => {
                        states(entries, child, environments.get(at)?)
                    }
                    _ => true,
                };
                if follows && holds(child, at) && seen.insert(child) {
                    queue.push_back(child);
                }
            }
        }
    }
    match pins.keys().all(|name| holding.contains_key(name)) {
        true => Some(holding),
        false => None,
    }
}

/// The union's resolution as a graph.
struct Graph<'a> {
    pins: &'a Pins,
    /// uv's annotations (an entry that names no pin is an input file, and a pin without one
    /// was read from uv's standard input: either way the pin is a root).
    via: &'a BTreeMap<String, Vec<String>>,
    /// The names the requirements ask for (roots whatever the annotations say: uv names the
    /// other packages that need a root, not the standard input it read it from).
    roots: &'a BTreeSet<String>,
    /// Per pin, per target, whether uv's marker holds there (a universal resolution's): a
    /// target's closure holds no pin whose marker does not. Empty: every pin holds everywhere.
    applies: &'a Applies,
}

/// The normalised names of `requirements` whose marker holds in the first of `environments`
/// (the targets share one: [`alike`]); a requirement vari cannot read names none (uv read it).
fn root_names(requirements: &[String], environments: &[TargetEnvironment]) -> BTreeSet<String> {
    requirements
        .iter()
        .filter_map(|entry| {
            let (requirement, marker) = split_requirement(entry);
            let parsed = vari_core::metadata::parse_requirement(requirement.trim()).ok()?;
            let holds = match (
                marker.map(str::trim).filter(|m| !m.is_empty()),
                environments.first(),
            ) {
                (Some(text), Some(environment)) => Marker::parse(text).map_or(true, |marker| {
                    marker.evaluate(environment, &VariantMarkerContext::non_variant())
                }),
                _ => true,
            };
            holds.then(|| vari_core::project::normalize(parsed.name.as_ref()))
        })
        .collect()
}

/// Whether one of the `Requires-Dist` `entries` asks for `name` (normalised) in `environment`:
/// its marker holds there (variant markers are already evaluated; an entry for an extra counts,
/// as uv only followed it if the extra was asked for).
fn states(entries: &[String], name: &str, environment: &TargetEnvironment) -> bool {
    entries.iter().any(|entry| {
        let (requirement, marker) = split_requirement(entry);
        let named = vari_core::metadata::parse_requirement(requirement.trim())
            .is_ok_and(|r| vari_core::project::normalize(r.name.as_ref()) == name);
        named
            && match marker.map(str::trim).filter(|m| !m.is_empty()) {
                None => true,
                Some(text) if text.contains("extra") => true,
                Some(text) => Marker::parse(text).map_or(true, |marker| {
                    marker.evaluate(environment, &VariantMarkerContext::non_variant())
                }),
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pins(names: &[&str]) -> Pins {
        names
            .iter()
            .map(|n| (n.to_string(), ("1".to_owned(), Vec::new())))
            .collect()
    }

    fn via(lines: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        lines
            .iter()
            .map(|(n, p)| (n.to_string(), p.iter().map(|p| p.to_string()).collect()))
            .collect()
    }

    fn environments(count: usize) -> Vec<TargetEnvironment> {
        let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
        vec![env; count]
    }

    #[test]
    fn an_entry_whose_marker_does_not_hold_is_not_followed() {
        let env = &environments(1)[0];
        assert!(states(&["c>=1".into()], "c", env));
        assert!(!states(&["c ; python_version < '3'".into()], "c", env));
        assert!(states(&["c ; extra == 'x'".into()], "c", env));
        assert!(!states(&["d".into()], "c", env));
    }

    #[test]
    fn each_target_holds_what_its_own_variant_needs() {
        let pins = pins(&["demo", "runtime", "plain"]);
        let via = via(&[
            ("demo", &["-r in.txt"]),
            ("runtime", &["demo"]),
            ("plain", &["demo"]),
        ]);
        let views = BTreeMap::from([(
            "demo".to_owned(),
            vec![
                UnionShown::Requires(vec!["plain>=1".into()]),
                UnionShown::Requires(vec!["plain>=1".into(), "Runtime==1 ; extra == 'x'".into()]),
            ],
        )]);
        let targets = ["cpu".to_owned(), "gpu".to_owned()];
        let roots = BTreeSet::new();
        let graph = Graph {
            pins: &pins,
            via: &via,
            roots: &roots,
            applies: &Applies::new(),
        };
        let held = closures(&graph, &views, &targets, &environments(2)).unwrap();
        assert_eq!(held["demo"], ["cpu", "gpu"]);
        assert_eq!(held["plain"], ["cpu", "gpu"]);
        assert_eq!(held["runtime"], ["gpu"]);
        // A requirement is a root for every target, even when uv names only the variant that
        // also needs it (its input was piped).
        let via = super::tests::via(&[("demo", &[]), ("runtime", &["demo"]), ("plain", &["demo"])]);
        let roots = root_names(
            &["runtime".into(), "other ; python_version < '3'".into()],
            &environments(1),
        );
        assert_eq!(roots, BTreeSet::from(["runtime".to_owned()]));
        let graph = Graph {
            pins: &pins,
            via: &via,
            roots: &roots,
            applies: &Applies::new(),
        };
        let held = closures(&graph, &views, &targets, &environments(2)).unwrap();
        assert_eq!(held["demo"], ["cpu", "gpu"]);
        assert_eq!(held["plain"], ["cpu", "gpu"]);
        assert_eq!(held["runtime"], ["cpu", "gpu"]);
    }

    #[test]
    fn groups_join_when_they_pin_the_same_versions() {
        let release = super::super::steps::test_release;
        let pin = |version: &str, targets: &[&str]| {
            let targets = targets.iter().map(|t| t.to_string()).collect();
            (version.to_owned(), targets)
        };
        let py310 = (
            Pins::from([
                ("a".into(), pin("1", &["cpu-py3.10"])),
                ("tomli".into(), pin("1", &["cpu-py3.10"])),
            ]),
            vec![
                release("a", &["cpu-py3.10"]),
                release("tomli", &["cpu-py3.10"]),
            ],
        );
        let py312 = (
            Pins::from([("a".into(), pin("1", &["cpu-py3.12"]))]),
            vec![release("a", &["cpu-py3.12"])],
        );
        let (pins, releases) = join(py310.clone(), py312).unwrap();
        assert_eq!(pins["a"].1, ["cpu-py3.10", "cpu-py3.12"]);
        assert_eq!(pins["tomli"].1, ["cpu-py3.10"]);
        assert_eq!(releases.len(), 2);
        assert_eq!(releases[0].targets, ["cpu-py3.10", "cpu-py3.12"]);
        // Another version of `a`: not joined.
        let other = (
            Pins::from([("a".into(), pin("2", &["cpu-py3.12"]))]),
            vec![release("a", &["cpu-py3.12"])],
        );
        assert!(join(py310, other).is_none());
    }

    #[test]
    fn a_target_s_closure_holds_no_pin_whose_marker_does_not_hold_for_it() {
        let pins = pins(&["app", "tomli", "sub"]);
        let via = via(&[("app", &[]), ("tomli", &["app"]), ("sub", &["tomli"])]);
        // uv's markers: `tomli` and what only it needs, for Python 3.10 only.
        let applies = Applies::from([
            ("tomli".to_owned(), vec![true, false]),
            ("sub".to_owned(), vec![true, false]),
        ]);
        let roots = BTreeSet::from(["app".to_owned()]);
        let graph = Graph {
            pins: &pins,
            via: &via,
            roots: &roots,
            applies: &applies,
        };
        let targets = ["cpu-py3.10".to_owned(), "cpu-py3.12".to_owned()];
        let held = closures(&graph, &BTreeMap::new(), &targets, &environments(2)).unwrap();
        assert_eq!(held["app"], ["cpu-py3.10", "cpu-py3.12"]);
        assert_eq!(held["tomli"], ["cpu-py3.10"]);
        assert_eq!(held["sub"], ["cpu-py3.10"]);
    }

    #[test]
    fn a_release_one_target_is_shown_nothing_of_is_not_trusted() {
        let pins = pins(&["gpuonly"]);
        let via = via(&[("gpuonly", &["-r in.txt"])]);
        let views = BTreeMap::from([(
            "gpuonly".to_owned(),
            vec![UnionShown::Requires(Vec::new()), UnionShown::Nothing],
        )]);
        let targets = ["a100".to_owned(), "cpu".to_owned()];
        let roots = BTreeSet::new();
        let graph = Graph {
            pins: &pins,
            via: &via,
            roots: &roots,
            applies: &Applies::new(),
        };
        assert!(closures(&graph, &views, &targets, &environments(2)).is_none());
        // Pins no target's closure reaches (each needed only by the other) are not trusted
        // either.
        let pins = super::tests::pins(&["gpuonly", "a", "b"]);
        let via = super::tests::via(&[("gpuonly", &[]), ("a", &["b"]), ("b", &["a"])]);
        let graph = Graph {
            pins: &pins,
            via: &via,
            roots: &roots,
            applies: &Applies::new(),
        };
        assert!(closures(&graph, &BTreeMap::new(), &targets, &environments(2)).is_none());
    }
}
