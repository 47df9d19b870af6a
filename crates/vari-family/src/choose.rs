//! Choosing within a family: the best build this target supports first, then that build's
//! newest version the requirement allows.
//!
//! The builds of a family are published on their own schedules (faiss-cpu is at 1.15.1 while
//! faiss-gpu-cu12 is at 1.14.1.post1). Choosing the newest version first and then a build of it
//! would silently fall back to the CPU build because it released first, the failure users of
//! split packages complain about. So the order is the other way round: builds are ranked as
//! the variants of one release are (PEP 825 ordering, through [`vari_core::ordering::rank`]:
//! the target's supported properties, the user's `prefer`/`forbid` patterns, the null build
//! last), and the first build with a version the requirement allows is chosen, at its newest
//! such version. The report says, for every other build, why it lost and which newer version
//! it would have given.
//!
//! A build whose line is read from its requirements ([`Build::line_from_requirements`]) may
//! span lines across its versions (onnxruntime-gpu: CUDA 12 up to 1.26, CUDA 13 from 1.27):
//! each line it offers is ranked as a build of its own, so a CUDA 12 machine gets the newest
//! CUDA 12 version rather than nothing.

use std::collections::BTreeMap;

use pep440_rs::{Version, VersionSpecifiers};
use serde::Serialize;
use vari_core::markers::TargetEnvironment;
use vari_core::metadata::{
    DefaultPriorities, SchemaGeneration, VariantMetadata, VariantProperties,
};
use vari_core::ordering::{rank, SelectionOptions};
use vari_core::{Profile, Property, VariantLabel};

use crate::line::CudaLine;
use crate::model::{Build, Family};

/// One version a build offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The version (with its local tag, as listed).
    pub version: Version,
    /// For a build whose line is read from its requirements: what this version's requirements
    /// say ([`crate::cuda_line`]); `None` when they were not read.
    pub line: Option<CudaLine>,
}

impl Offer {
    /// A version without a line read from its requirements.
    pub fn new(version: Version) -> Self {
        Self {
            version,
            line: None,
        }
    }
}

/// How the user moves the choice besides the requirement's version specifiers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyOptions {
    /// Property patterns (`prefer`, `forbid`, `enable-optional`), as for real variants.
    /// `variant` and `no_variants` name real variant labels and are not applied to builds.
    pub selection: SelectionOptions,
    /// Builds put first, in this order (among those the target supports).
    pub prefer_builds: Vec<String>,
    /// Builds never chosen.
    pub forbid_builds: Vec<String>,
    /// Only this build may be chosen.
    pub only_build: Option<String>,
    /// Whether pre-releases may be chosen.
    pub pre: bool,
}

/// Why a build was not chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// It was chosen.
    Chosen,
    /// It fits and has a version the requirement allows, but a better build was chosen.
    RanksBelow {
        /// Its place among the builds that fit (1 = best).
        rank: usize,
    },
    /// The target does not support what it requires, or a `forbid` pattern rules it out (the
    /// same one-line reasons as for variants).
    Unsupported {
        /// Why.
        reason: String,
    },
    /// The user ruled the build out by name.
    NotWanted {
        /// Why (`forbidden by name`, `not the requested build cu128`).
        reason: String,
    },
    /// It fits, but none of its versions is allowed by the requirement (or it has no wheel
    /// this target can install).
    NoVersion {
        /// How many versions it offers (versions with a wheel this target can install).
        offered: usize,
        /// How many of them the requirement allows but are pre-releases, which were not
        /// allowed (`--pre` allows them).
        #[serde(default, skip_serializing_if = "is_zero")]
        pre_releases: usize,
    },
    /// Its line could not be read from its requirements.
    UnknownLine {
        /// Why.
        reason: String,
    },
}

/// One build (or one line of a build whose line is read per version) and its fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildReport {
    /// The build's name.
    pub build: String,
    /// The distribution it is published as.
    pub distribution: String,
    /// What it requires here (the catalog's properties, with the line read from the
    /// requirements when it is read so).
    pub requires: Vec<String>,
    /// The newest version the requirement allows, if any.
    pub newest: Option<String>,
    /// Whether `newest` is newer than the chosen version (what this build would have given).
    pub newer_than_chosen: bool,
    /// Its fate.
    pub verdict: Verdict,
}

/// The choice within one family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FamilyChoice {
    /// The family.
    pub family: String,
    /// The chosen build and version, if any fits.
    pub chosen: Option<Chosen>,
    /// Every build: the chosen one, then the others that fit in rank order, then the rest.
    pub builds: Vec<BuildReport>,
}

/// The chosen build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chosen {
    /// The build's name.
    pub build: String,
    /// What to ask for (`cupy-cuda12x`, `jax[cuda12]`).
    pub requirement: String,
    /// The distribution.
    pub distribution: String,
    /// The version.
    pub version: String,
    /// Whether it is the family's CPU (null) build.
    pub null: bool,
}

impl FamilyChoice {
    /// One line on why nothing fits, for the front-ends' error: each build with its reason.
    pub fn why_nothing(&self) -> String {
        let reasons: Vec<String> = self
            .builds
            .iter()
            .map(|b| {
                format!(
                    "{} ({}): {}",
                    b.build,
                    b.distribution,
                    verdict_text(&b.verdict)
                )
            })
            .collect();
        format!("no build of {} fits: {}", self.family, reasons.join("; "))
    }

    /// One line per build that was not chosen: why it lost, and the newer version it would
    /// have given when it has one.
    pub fn explanation(&self) -> Vec<String> {
        let chosen = self.chosen.as_ref();
        self.builds
            .iter()
            .filter(|b| b.verdict != Verdict::Chosen)
            .map(|b| {
                let mut line = format!(
                    "{} ({}): {}",
                    b.build,
                    b.distribution,
                    verdict_text(&b.verdict)
                );
                if let (true, Some(newest), Some(chosen)) = (b.newer_than_chosen, &b.newest, chosen)
                {
                    line.push_str(&format!(
                        "; it would have given {newest}, newer than {} {}",
                        chosen.distribution, chosen.version
                    ));
                }
                line
            })
            .collect()
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The reason of a verdict in words.
pub fn verdict_text(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Chosen => "chosen".to_owned(),
        Verdict::RanksBelow { rank } => format!("fits, but ranks {rank} for this target"),
        Verdict::Unsupported { reason } | Verdict::NotWanted { reason } => reason.clone(),
        // The offers are the wheels this target can install: a build whose index lists only
        // source distributions (tensorrt-cu12 on PyPI) or wheels for other platforms has none.
        Verdict::NoVersion { offered: 0, .. } => {
            "fits, but offers no wheel this target can install".to_owned()
        }
        Verdict::NoVersion {
            offered,
            pre_releases: 0,
        } => match offered {
            1 => "fits, but its one version is not allowed by the requirement".to_owned(),
            n => format!("fits, but none of its {n} versions is allowed by the requirement"),
        },
        // Saying "not allowed by the requirement" would send the user to change a specifier
        // that already allows them.
        Verdict::NoVersion {
            offered,
            pre_releases,
        } => format!(
            "fits, but {} the requirement allows only {}, which {} not allowed (`--pre` allows \
             pre-releases)",
            match offered {
                1 => "of its one version".to_owned(),
                n => format!("of its {n} versions"),
            },
            match pre_releases {
                1 => "a pre-release".to_owned(),
                n => format!("{n} pre-releases"),
            },
            match pre_releases {
                1 => "is",
                _ => "are",
            }
        ),
        Verdict::UnknownLine { reason } => reason.clone(),
    }
}

/// One rankable entry: a build, or one line of a build whose line is read per version.
struct Entry<'f> {
    build: &'f Build,
    requires: Vec<Property>,
    offers: Vec<&'f Offer>,
    unknown_line: Option<String>,
}

/// Chooses within `family` for the target (`profile`, `env`), given what each build offers
/// (`available`, by build name; a build not listed offers nothing) and the requirement's
/// version specifiers.
///
/// ```
/// use std::collections::BTreeMap;
/// use vari_family::{builtin, choose, FamilyOptions, Offer};
/// let faiss = builtin().family("faiss").unwrap();
/// let mut available = BTreeMap::new();
/// available.insert("cpu".to_owned(), vec![Offer::new("1.15.1".parse().unwrap())]);
/// available.insert("cu12".to_owned(), vec![Offer::new("1.14.1.post1".parse().unwrap())]);
/// let profile = vari_core::Profile::from_json(r#"{"schema": "vari-profile/1", "namespaces": [
///   {"namespace": "nvidia", "features": [{"name": "cuda_version_lower_bound",
///    "values": ["12.8", "12.7", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12"]}]}]}"#).unwrap();
/// let env = vari_core::markers::TargetEnvironment::from_platform(None, "3.12").unwrap();
/// let choice = choose(faiss, &available, &Default::default(), &profile, &env, &FamilyOptions::default());
/// let chosen = choice.chosen.as_ref().unwrap();
/// assert_eq!((chosen.distribution.as_str(), chosen.version.as_str()), ("faiss-gpu-cu12", "1.14.1.post1"));
/// assert!(choice.explanation().iter().any(|l| l.contains("would have given 1.15.1")));
/// ```
pub fn choose(
    family: &Family,
    available: &BTreeMap<String, Vec<Offer>>,
    specifiers: &VersionSpecifiers,
    profile: &Profile,
    env: &TargetEnvironment,
    options: &FamilyOptions,
) -> FamilyChoice {
    let entries = entries(family, available);
    // The builds as the variants of one release: internal labels `b0`, `b1`, … (the null build
    // `null`), so that build names need not be unique across lines.
    let mut meta = VariantMetadata {
        generation: SchemaGeneration::V0_1,
        schema_url: None,
        priorities: DefaultPriorities {
            namespace: family.namespaces.clone(),
            ..DefaultPriorities::default()
        },
        providers: BTreeMap::new(),
        static_properties: BTreeMap::new(),
        variants: BTreeMap::new(),
    };
    let mut labels: Vec<VariantLabel> = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let label = match entry.build.null {
            true => VariantLabel::null(),
            false => VariantLabel::new(format!("b{i:02}")).unwrap_or_else(|_| VariantLabel::null()),
        };
        let mut properties = VariantProperties::default();
        for p in &entry.requires {
            if !meta.priorities.namespace.contains(&p.namespace) {
                meta.priorities.namespace.push(p.namespace.clone());
            }
            properties
                .get_or_insert_with(p.namespace.clone(), Default::default)
                .get_or_insert_with(p.feature.clone(), Default::default)
                .insert(p.value.clone());
        }
        meta.variants.insert(label.clone(), properties);
        labels.push(label);
    }
    let mut selection = options.selection.clone();
    selection.variant = None;
    selection.no_variants = false;
    let ranking = rank(&meta, profile, env, &selection);
    let index_of = |label: &VariantLabel| labels.iter().position(|l| l == label);

    // Fitting entries best first, the user's preferred builds moved to the front.
    let mut order: Vec<usize> = ranking.order.iter().filter_map(index_of).collect();
    for name in options.prefer_builds.iter().rev() {
        let (preferred, rest): (Vec<usize>, Vec<usize>) =
            order.iter().partition(|&&i| entries[i].build.name == *name);
        order = preferred.into_iter().chain(rest).collect();
    }

    // As PEP 440 says: pre-releases when asked for, or when a specifier names one (`>=2.0rc1`).
    let pre = options.pre || specifiers.iter().any(|s| s.version().any_prerelease());
    let allowed = |offer: &Offer| {
        specifiers.contains(&offer.version) && (pre || !offer.version.any_prerelease())
    };
    let newest = |entry: &Entry<'_>| -> Option<Version> {
        entry
            .offers
            .iter()
            .filter(|o| allowed(o))
            .map(|o| o.version.clone())
            .max()
    };

    let mut verdicts: Vec<Option<Verdict>> = vec![None; entries.len()];
    let mut chosen: Option<(usize, Version)> = None;
    let mut fitting_rank = 0;
    let mut sequence: Vec<usize> = Vec::new();
    for &i in &order {
        let entry = &entries[i];
        sequence.push(i);
        if let Some(reason) = not_wanted(entry.build, options) {
            verdicts[i] = Some(Verdict::NotWanted { reason });
            continue;
        }
        if let Some(reason) = &entry.unknown_line {
            verdicts[i] = Some(Verdict::UnknownLine {
                reason: reason.clone(),
            });
            continue;
        }
        match newest(entry) {
            None => {
                let pre_releases = match pre {
                    true => 0,
                    false => entry
                        .offers
                        .iter()
                        .filter(|o| o.version.any_prerelease() && specifiers.contains(&o.version))
                        .count(),
                };
                verdicts[i] = Some(Verdict::NoVersion {
                    offered: entry.offers.len(),
                    pre_releases,
                })
            }
            Some(version) => {
                fitting_rank += 1;
                if chosen.is_none() {
                    chosen = Some((i, version));
                    verdicts[i] = Some(Verdict::Chosen);
                } else {
                    verdicts[i] = Some(Verdict::RanksBelow { rank: fitting_rank });
                }
            }
        }
    }
    // The rest: what the target does not support (or a pattern forbids), in catalog order.
    for (i, entry) in entries.iter().enumerate() {
        if verdicts[i].is_some() {
            continue;
        }
        sequence.push(i);
        let reason = ranking
            .get(labels[i].as_str())
            .and_then(|v| v.rejection.as_ref())
            .map(ToString::to_string)
            .or_else(|| entry.unknown_line.clone())
            .unwrap_or_else(|| "not selectable for this target".to_owned());
        verdicts[i] = Some(match &entry.unknown_line {
            Some(reason) => Verdict::UnknownLine {
                reason: reason.clone(),
            },
            None => Verdict::Unsupported { reason },
        });
    }
    let chosen_version = chosen.as_ref().map(|(_, v)| v.clone());
    let builds = sequence
        .into_iter()
        .map(|i| {
            let entry = &entries[i];
            let newest = newest(entry);
            BuildReport {
                build: entry.build.name.clone(),
                distribution: entry.build.requirement(),
                requires: entry.requires.iter().map(ToString::to_string).collect(),
                newer_than_chosen: matches!((&newest, &chosen_version), (Some(n), Some(c)) if n > c),
                newest: newest.map(|v| v.to_string()),
                verdict: verdicts[i].clone().unwrap_or(Verdict::Chosen),
            }
        })
        .collect();
    FamilyChoice {
        family: family.name.clone(),
        chosen: chosen.map(|(i, version)| {
            let build = entries[i].build;
            Chosen {
                build: build.name.clone(),
                requirement: build.requirement(),
                distribution: build.distribution.clone(),
                version: version.to_string(),
                null: build.null,
            }
        }),
        builds,
    }
}

/// Which builds of `family` fit the target, best first, and why the others do not, without
/// looking at versions (`vari families show`): the ranking [`choose`] starts from. The
/// reports carry no versions; `chosen` is the best build.
pub fn rank_builds(
    family: &Family,
    profile: &Profile,
    env: &TargetEnvironment,
    options: &FamilyOptions,
) -> FamilyChoice {
    let available: BTreeMap<String, Vec<Offer>> = family
        .builds
        .iter()
        .map(|b| {
            let text = match &b.local {
                Some(tag) => format!("0+{tag}"),
                None => "0".to_owned(),
            };
            let offers = text.parse().map(Offer::new).into_iter().collect();
            (b.name.clone(), offers)
        })
        .collect();
    let mut choice = choose(
        family,
        &available,
        &VersionSpecifiers::default(),
        profile,
        env,
        &FamilyOptions {
            pre: true,
            ..options.clone()
        },
    );
    for report in &mut choice.builds {
        report.newest = None;
        report.newer_than_chosen = false;
    }
    if let Some(chosen) = &mut choice.chosen {
        chosen.version.clear();
    }
    choice
}

/// Why the user's build options rule `build` out, if they do.
fn not_wanted(build: &Build, options: &FamilyOptions) -> Option<String> {
    if let Some(only) = &options.only_build {
        if *only != build.name {
            return Some(format!("not the requested build `{only}`"));
        }
    }
    options
        .forbid_builds
        .contains(&build.name)
        .then(|| format!("build `{}` is forbidden by the user", build.name))
}

/// The rankable entries: one per build, or one per line for a build whose line is read from
/// its versions' requirements. Offers of a by-index build with a local tag are only the
/// versions carrying that tag.
fn entries<'f>(family: &'f Family, available: &'f BTreeMap<String, Vec<Offer>>) -> Vec<Entry<'f>> {
    let mut out = Vec::new();
    for build in &family.builds {
        let offers: Vec<&Offer> = available
            .get(&build.name)
            .into_iter()
            .flatten()
            .filter(|o| carries_local(build, &o.version))
            .collect();
        if !build.line_from_requirements {
            out.push(Entry {
                build,
                requires: build.requires.clone(),
                offers,
                unknown_line: None,
            });
            continue;
        }
        // Group the versions by what they require once their line is read (versions that name
        // no line keep the build's own `requires`, and join the versions whose line says the
        // same), in order of each group's newest version.
        let mut sorted = offers;
        sorted.sort_by(|a, b| b.version.cmp(&a.version));
        let mut groups: Vec<(Vec<Property>, Option<String>, Vec<&Offer>)> = Vec::new();
        for offer in sorted {
            let mut requires: Vec<Property> = build.requires.clone();
            let mut unknown = None;
            match &offer.line {
                Some(line @ CudaLine::Major { .. }) => {
                    if let Some(p) = line.property() {
                        requires
                            .retain(|r| !(r.namespace == p.namespace && r.feature == p.feature));
                        requires.push(p);
                    }
                }
                Some(CudaLine::Conflicting(found)) => {
                    unknown = Some(format!(
                        "its requirements name several CUDA lines ({})",
                        found
                            .iter()
                            .map(|(_, r)| r.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                Some(CudaLine::Unknown) | None => {}
            }
            if unknown.is_none() && requires.is_empty() {
                unknown = Some("its CUDA line could not be read from its requirements".to_owned());
            }
            requires.sort();
            match groups
                .iter_mut()
                .find(|(r, u, _)| *r == requires && *u == unknown)
            {
                Some((_, _, list)) => list.push(offer),
                None => groups.push((requires, unknown, vec![offer])),
            }
        }
        if groups.is_empty() {
            let unknown = build
                .requires
                .is_empty()
                .then(|| "its CUDA line could not be read from its requirements".to_owned());
            groups.push((build.requires.clone(), unknown, Vec::new()));
        }
        for (requires, unknown_line, offers) in groups {
            out.push(Entry {
                build,
                requires,
                offers,
                unknown_line,
            });
        }
    }
    out
}

/// Whether `version` is one of `build`'s: any version when the build has no local tag, else
/// only versions with that tag (`2.9.1+cu128` on the cu128 index).
pub fn carries_local(build: &Build, version: &Version) -> bool {
    let Some(tag) = &build.local else {
        return true;
    };
    let local: Vec<String> = version.local().iter().map(ToString::to_string).collect();
    local.join(".") == *tag
}
