//! The CLI's words for the selector's data, in one place: why a variant is rejected (with the
//! flags that would change it), why a file is chosen, why a version or a requirement has no
//! wheel for the target, and the `--explain` groups. Every command that explains a selection
//! (`rank`, `select`, `download`, `install`) words it here, so they say the same; and what
//! becomes of each requirement of a list ([`Choices`]): its choice or its own error.

use std::process::ExitCode;

use serde_json::{json, Value};
use vari_core::ordering::Rejection;
use vari_core::Namespace;
use vari_select::{
    CandidateFate, CandidateFile, ChosenBecause, HardwareSource, NamespaceNeed, Outcome, Request,
    Resolution, SelectError, Target, VariantRejection, VersionReport,
};

use crate::error::{error_line, warn};
use crate::table::count;

/// Files of one kind listed by name before the rest are counted.
const EXAMPLES: usize = 3;

/// Why a variant was rejected, worded for this command line (with its flags as hints) and, for
/// a namespace detection found absent, what detection found.
pub(crate) fn reason(rejection: &VariantRejection, target: &Target) -> String {
    match rejection {
        VariantRejection::Ranking(r) => ranking_reason(r, target),
        VariantRejection::NoFittingWheel { tags } => format!(
            "no wheel for this target's Python and platform (its wheels: {})",
            tags.join(", ")
        ),
        VariantRejection::Unusable(why) => why.to_string(),
    }
}

fn ranking_reason(rejection: &Rejection, target: &Target) -> String {
    match rejection {
        Rejection::UnsupportedNamespace {
            namespace,
            provider,
        } => {
            let provider = provider
                .as_ref()
                .map(|p| format!(" (provider {p})"))
                .unwrap_or_default();
            match (
                &target.hardware.source,
                target.hardware.absent_reason(namespace),
            ) {
                (_, Some(why)) => format!(
                    "namespace `{namespace}` was not detected on {}: {why}",
                    detected_where(&target.hardware.source)
                ),
                (HardwareSource::Host { .. } | HardwareSource::Sysroot(_), None) => format!(
                    "namespace `{namespace}`{provider} is not detected on {}",
                    detected_where(&target.hardware.source)
                ),
                (_, None) => format!(
                    "namespace `{namespace}`{provider} is not supported: the target profile does \
                     not list it"
                ),
            }
        }
        Rejection::OptionalNotEnabled { namespace } => {
            format!("{rejection} {}", optional_hint(namespace))
        }
        Rejection::Forbidden { pattern } => format!("forbidden by --forbid {pattern}"),
        Rejection::NotRequested { requested } => {
            format!("not the requested variant (--variant {requested})")
        }
        Rejection::VariantsDisabled => "variant wheels are disabled (--no-variants)".to_owned(),
        other => other.to_string(),
    }
}

/// The flag that turns an optional provider on, as a hint after the reason.
pub(crate) fn optional_hint(namespace: &Namespace) -> String {
    format!("(turn it on with --enable-optional {namespace})")
}

fn detected_where(source: &HardwareSource) -> String {
    match source {
        HardwareSource::Sysroot(dir) => format!("the snapshot {}", dir.display()),
        _ => "this machine".to_owned(),
    }
}

/// The requirement's one-line answer: why this file (and, when newer versions were passed
/// over, why they were).
pub(crate) fn why(resolution: &Resolution, target: &Target) -> String {
    let Some(chosen) = &resolution.chosen else {
        return String::new();
    };
    let needs = resolution
        .chosen_report()
        .map_or(&[][..], |report| report.needs.as_slice());
    let mut text = chosen_text(&chosen.because, needs, target);
    if let Some(newest) = resolution.passed_over().first() {
        let more = match resolution.passed_over().len() {
            1 => String::new(),
            n => format!(" (and {} more)", count(n - 1, "newer version")),
        };
        text = format!(
            "{} {} {}{more}; chose {}: {text}",
            resolution.name,
            newest.version,
            unfit_text(newest, target),
            chosen.version
        );
    }
    text
}

/// Why a file is chosen: the selector's reason, with what the variants need that the target
/// lacks (`needs`, [`VersionReport::needs`]) when the choice is a fallback.
pub(crate) fn chosen_text(
    because: &ChosenBecause,
    needs: &[NamespaceNeed],
    target: &Target,
) -> String {
    let needs = needs_text(needs, target);
    match because {
        ChosenBecause::BestVariant { selectable } => format!(
            "the best of {} that fit {}",
            count(*selectable, "variant"),
            target.hardware.source
        ),
        ChosenBecause::NullVariant if needs.is_empty() => {
            "the null variant: no variant with properties fits".to_owned()
        }
        ChosenBecause::NullVariant => format!("the null variant: {needs}"),
        ChosenBecause::NoVariantFits { variants } if needs.is_empty() => format!(
            "the non-variant wheel: none of {} fits",
            count(*variants, "variant")
        ),
        ChosenBecause::NoVariantFits { .. } => format!("the non-variant wheel: {needs}"),
        ChosenBecause::NoVariants => "the non-variant wheel (no variant wheel for this \
                                      Python and platform)"
            .to_owned(),
        ChosenBecause::VariantsDisabled => "the non-variant wheel (--no-variants)".to_owned(),
    }
}

/// `skipped (`MARKER` is false for the target)`, after the requirement.
pub(crate) fn skipped_text(marker: &str) -> String {
    format!("skipped (`{marker}` is false for the target)")
}

/// Why no file of `report` fits: the first reason that covers the version.
/// Why a version with no wheel fits nothing (see [`unfit_text`]).
const ONLY_SDISTS: &str = "has only source distributions (only wheels are selected)";

pub(crate) fn unfit_text(report: &VersionReport, target: &Target) -> String {
    let wheels: Vec<&CandidateFile> = report
        .files
        .iter()
        .filter(|f| f.fate != CandidateFate::SdistNotConsidered)
        .collect();
    if wheels.is_empty() {
        return ONLY_SDISTS.to_owned();
    }
    let all = |pred: &dyn Fn(&CandidateFate) -> bool| wheels.iter().all(|f| pred(&f.fate));
    if all(&|f| matches!(f, CandidateFate::Yanked { .. })) {
        return "is yanked (pin it with == to use it anyway)".to_owned();
    }
    if let Some(CandidateFate::RequiresPython { requires }) = wheels
        .iter()
        .map(|f| &f.fate)
        .find(|f| matches!(f, CandidateFate::RequiresPython { .. }))
    {
        if all(&|f| {
            matches!(
                f,
                CandidateFate::RequiresPython { .. } | CandidateFate::Yanked { .. }
            )
        }) {
            return format!(
                "needs Python {requires} (the target has {})",
                target.python.version.full()
            );
        }
    }
    let needs = needs_text(&report.needs, target);
    if !needs.is_empty() {
        return format!(
            "has no build for {}: {needs}{}",
            target_name(target),
            ruled_out_text(report, target)
        );
    }
    if all(&|f| {
        matches!(
            f,
            CandidateFate::WrongTags
                | CandidateFate::RequiresPython { .. }
                | CandidateFate::Yanked { .. }
        )
    }) {
        return format!(
            "has no wheel for this Python and platform ({}, {}): its wheels are for {}",
            target.python.version.short(),
            target.python.platform,
            examples(wheels.iter().map(|f| tag_part(&f.filename)), wheels.len())
        );
    }
    let rejected: Vec<String> = report
        .variants
        .iter()
        .filter_map(|v| {
            Some(format!(
                "{}: {}",
                v.label,
                reason(v.rejection.as_ref()?, target)
            ))
        })
        .collect();
    match rejected.is_empty() {
        true => format!("has no build for {}", target_name(target)),
        false => format!(
            "has no build for {}: {}",
            target_name(target),
            rejected.join("; ")
        ),
    }
}

/// `; LABELS: REASON` for the variants the user's own options ruled out (they would fit).
fn ruled_out_text(report: &VersionReport, target: &Target) -> String {
    let mut by_reason: Vec<(String, Vec<&str>)> = Vec::new();
    for verdict in &report.variants {
        let Some(
            rejection @ VariantRejection::Ranking(
                Rejection::Forbidden { .. }
                | Rejection::NotRequested { .. }
                | Rejection::VariantsDisabled,
            ),
        ) = &verdict.rejection
        else {
            continue;
        };
        let why = reason(rejection, target);
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, labels)) => labels.push(verdict.label.as_str()),
            None => by_reason.push((why, vec![verdict.label.as_str()])),
        }
    }
    by_reason
        .iter()
        .map(|(why, labels)| format!("; {} would fit, but {why}", labels.join(", ")))
        .collect()
}

fn target_name(target: &Target) -> String {
    target.hardware.source.to_string()
}

/// What the variants need that the target lacks, one clause per namespace.
fn needs_text(needs: &[NamespaceNeed], target: &Target) -> String {
    needs
        .iter()
        .map(|need| need_text(need, target))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A need in `vari-select`'s words, with the flag that would change it: the library's clause
/// names no flag.
fn need_text(need: &NamespaceNeed, target: &Target) -> String {
    let clause = need.describe(target);
    match flag_hint(need) {
        Some(hint) => format!("{clause} {hint}"),
        None => clause.to_string(),
    }
}

/// The command-line flag that lets a need be met, when one does.
fn flag_hint(need: &NamespaceNeed) -> Option<String> {
    match &need.rejection {
        Rejection::UnsupportedNamespace { .. }
            if need.absent_reason.is_none() && !need.builtin_provider =>
        {
            Some("(--profile)".to_owned())
        }
        Rejection::OptionalNotEnabled { namespace } => Some(optional_hint(namespace)),
        _ => None,
    }
}

/// The `error:` line of a requirement nothing fits, naming what would.
pub(crate) fn nothing_fits(request: &Request, resolution: &Resolution, target: &Target) -> String {
    match resolution.versions.first() {
        None if resolution.versions_listed == 0 => {
            format!(
                "{}: the sources list no files of {}",
                request, resolution.name
            )
        }
        None => {
            let pre = match resolution.prereleases_ignored.is_empty() {
                true => String::new(),
                false => " (pre-releases are considered only with --pre)".to_owned(),
            };
            format!(
                "{request}: none of the {} of {} satisfies the requirement{pre}",
                count(resolution.versions_listed, "version"),
                resolution.name
            )
        }
        Some(newest) => {
            let older = match resolution.versions.len() {
                1 => String::new(),
                n => format!(", nor {} older", count(n - 1, "version")),
            };
            // `torch 2.10.0 has …` says it all when the requirement is the bare name.
            let prefix = match request.as_str() == resolution.name.as_str() {
                true => String::new(),
                false => format!("{request}: "),
            };
            format!(
                "{prefix}{} {} {}{older}",
                resolution.name,
                newest.version,
                unfit_text(newest, target)
            )
        }
    }
}

/// `cp312-cp312-win_amd64` from a wheel name (`sdist` for anything else).
fn tag_part(filename: &str) -> String {
    vari_core::filename::WheelFilename::parse(filename)
        .map(|w| w.tag_triple().to_string())
        .unwrap_or_else(|_| "sdist".to_owned())
}

/// The first few distinct items, then how many more.
pub(crate) fn examples(items: impl Iterator<Item = String>, total: usize) -> String {
    let mut distinct: Vec<String> = Vec::new();
    for item in items {
        if !distinct.contains(&item) {
            distinct.push(item);
        }
    }
    let shown = distinct.len().min(EXAMPLES);
    let mut text = distinct[..shown].join(", ");
    if distinct.len() > shown {
        text.push_str(&format!(", … ({} in all)", total));
    }
    text
}

/// The explanation line a file falls under, with its place among the groups.
pub(crate) fn group_key(fate: &CandidateFate, target: &Target) -> (u8, String) {
    match fate {
        CandidateFate::VariantRejected(rejection) => (0, reason(rejection, target)),
        CandidateFate::LabelNotDescribed => (
            1,
            "the version's variant metadata does not describe its label".to_owned(),
        ),
        CandidateFate::UnusableMetadata { why } => (2, format!("unusable variant metadata: {why}")),
        CandidateFate::Unusable(why) => (3, why.to_string()),
        CandidateFate::Malformed { why } => (3, why.clone()),
        CandidateFate::RequiresPython { requires } => (
            4,
            format!(
                "requires Python {requires} (the target has {})",
                target.python.version.full()
            ),
        ),
        CandidateFate::Yanked { reason } => (
            5,
            match reason {
                Some(why) => format!("yanked: {why}"),
                None => "yanked".to_owned(),
            },
        ),
        CandidateFate::WrongTags => (
            6,
            format!(
                "tags for another Python or platform than {} on {}",
                target.python.version.short(),
                target.python.platform
            ),
        ),
        CandidateFate::SdistNotConsidered => (
            7,
            "source distribution (only wheels are selected)".to_owned(),
        ),
        CandidateFate::Chosen | CandidateFate::Candidate { .. } => (8, String::new()),
    }
}

// What every command that selects from indexes for a list of requirements (`select`,
// `download`, `install --dry-run`) says about each: its choice, the marker that skips it, or
// its own error, in the order given. One requirement failing does not hide the others: each
// failure gets its `error:` line (with the explanation of what would fit), the others their
// choice, and the command exits non-zero when any failed ([`Choices::status`]). The JSON shape
// of one requirement ([`Choice::json`]) is shared, so that `select --json`, `download --json`
// and `install --dry-run --json` are read by the same code.

/// What became of one requirement.
pub(crate) enum Choice {
    /// A wheel was chosen (`resolution.chosen` is set).
    Chosen(Box<Resolution>),
    /// Its marker is false for the target.
    Skipped {
        /// The marker.
        marker: String,
    },
    /// Nothing fits, or the sources could not be read: the `error:` line's text.
    Failed(String),
}

/// Every requirement with what became of it, in the order given.
pub(crate) struct Choices<'a> {
    pub(crate) items: Vec<(&'a Request, Choice)>,
}

impl<'a> Choices<'a> {
    /// Sorts each outcome into a [`Choice`], printing the selector's warnings as they come.
    pub(crate) fn new(
        requests: &'a [Request],
        outcomes: Vec<Result<Outcome, SelectError>>,
        target: &Target,
    ) -> Self {
        let items = requests
            .iter()
            .zip(outcomes)
            .map(|(request, outcome)| (request, Choice::new(request, outcome, target)))
            .collect();
        Self { items }
    }

    /// Prints one `error:` line per failed requirement, and says how the command ends: failure
    /// when any requirement failed.
    pub(crate) fn status(&self) -> ExitCode {
        let mut failed = false;
        for (_, choice) in &self.items {
            if let Choice::Failed(message) = choice {
                error_line(message);
                failed = true;
            }
        }
        match failed {
            true => ExitCode::FAILURE,
            false => ExitCode::SUCCESS,
        }
    }
}

impl Choice {
    fn new(request: &Request, outcome: Result<Outcome, SelectError>, target: &Target) -> Self {
        match outcome {
            Err(e) => Choice::Failed(e.to_string()),
            Ok(Outcome::Skipped { marker }) => Choice::Skipped { marker },
            Ok(Outcome::Resolved(resolution)) => {
                for warning in &resolution.warnings {
                    warn(warning);
                }
                match resolution.chosen {
                    Some(_) => Choice::Chosen(resolution),
                    None => Choice::Failed(nothing_fits(request, &resolution, target)),
                }
            }
        }
    }

    /// `{"requirement", "name", "version", "filename", "url", "label", "sha256", "reason",
    /// "dependencies", "passed_over"}`; a skipped requirement has nulls and its reason, a
    /// failed one nulls and `"error"`.
    pub(crate) fn json(&self, request: &Request, target: &Target) -> Value {
        let resolution = match self {
            Choice::Skipped { marker } => {
                return json!({
                    "requirement": request.as_str(), "name": request.name().as_str(),
                    "version": null, "filename": null, "url": null, "label": null, "sha256": null,
                    "reason": format!("skipped: the marker `{marker}` is false for the target"),
                })
            }
            Choice::Failed(message) => {
                return json!({
                    "requirement": request.as_str(), "name": request.name().as_str(),
                    "version": null, "filename": null, "url": null, "label": null, "sha256": null,
                    "reason": null, "error": message,
                })
            }
            Choice::Chosen(resolution) => resolution,
        };
        let chosen = resolution.chosen.as_ref();
        json!({
            "requirement": request.as_str(),
            "name": resolution.name.as_str(),
            "version": chosen.map(|c| c.version.to_string()),
            "filename": chosen.map(|c| c.file.filename.clone()),
            "url": chosen.map(|c| c.file.url.to_string()),
            "label": chosen.and_then(|c| c.label.as_ref().map(|l| l.to_string())),
            "sha256": chosen.and_then(|c| c.file.hashes.sha256().map(str::to_owned)),
            "reason": why(resolution, target),
            "dependencies": chosen.and_then(|c| c.dependencies.as_ref()).map(|deps| {
                deps.iter()
                    .map(|d| match &d.marker {
                        Some(m) => format!("{}; {m}", d.requirement),
                        None => d.requirement.clone(),
                    })
                    .collect::<Vec<_>>()
            }),
            "passed_over": resolution.passed_over().iter().map(|r| json!({
                "version": r.version.to_string(),
                "reason": unfit_text(r, target),
            })).collect::<Vec<_>>(),
        })
    }
}

/// `installed torch 2.10.0 variant cu128 (nvidia :: cuda_version_lower_bound :: 12.8): why`:
/// one package's line, for every command that installs (`install`, `sync`).
pub(crate) fn choice_line(
    verb: &str,
    name: &str,
    version: &str,
    label: Option<&str>,
    properties: Option<&vari_core::metadata::VariantProperties>,
    why: &str,
) -> String {
    let variant = match label {
        Some(label) => format!(" variant {label}"),
        None => " (no variant)".to_owned(),
    };
    let properties = match properties {
        Some(p) if p.is_empty() => " (no properties)".to_owned(),
        Some(p) => format!(
            " ({})",
            crate::table::properties_text(p).replace('\n', ", ")
        ),
        None => String::new(),
    };
    format!("{verb} {name} {version}{variant}{properties}: {why}\n")
}

/// Why a lock's entry is installed with the file the plan chose: `select`'s reason for the
/// file, and for an entry a variant brought in, which one.
pub(crate) fn planned_text(planned: &vari_select::locked::Planned, target: &Target) -> String {
    let file = match &planned.file {
        vari_select::locked::PlannedFile::Wheel { because, .. } => chosen_text(
            because,
            planned.report.as_ref().map_or(&[], |r| &r.needs),
            target,
        ),
        vari_select::locked::PlannedFile::Sdist => format!(
            "the sdist: no listed wheel fits (it {})",
            match &planned.report {
                Some(report) => unfit_text(report, target),
                None => ONLY_SDISTS.to_owned(),
            }
        ),
    };
    match &planned.needed_by {
        vari_select::locked::NeededBy::Lock => file,
        vari_select::locked::NeededBy::Variant { of, requirement } => {
            format!("{file}; the chosen variant of {of} requires it (`{requirement}`)")
        }
        vari_select::locked::NeededBy::Dependency { of } => format!("{file}; {of} requires it"),
    }
}

/// What a sync of a lock did (or, dry, would do): one line per package with its variant and
/// why, and per removal; and the same as the `--json` document.
pub(crate) fn synced_report(
    synced: &vari_install::sync::Synced,
    target: &Target,
    dry_run: bool,
) -> (String, Value) {
    let (verb_new, verb_old, verb_removed) = match dry_run {
        true => ("would install", "unchanged", "would remove"),
        false => ("installed", "unchanged", "removed"),
    };
    let mut text = String::new();
    // Which build each family took, first: the packages below follow from it.
    let mut families: Vec<Value> = Vec::new();
    for taken in &synced.builds {
        let reason = taken.reason();
        text.push_str(&format!(
            "{}: build {}, {reason}\n",
            taken.family, taken.build
        ));
        families.push(json!({
            "family": taken.family,
            "build": taken.build,
            "distribution": taken.distribution,
            "null": taken.null,
            "reason": reason,
        }));
    }
    let mut packages: Vec<Value> = Vec::new();
    for (entry, installs) in &synced.entries {
        let planned = &entry.planned;
        let action = match installs {
            true => verb_new,
            false => verb_old,
        };
        let why = planned_text(planned, target);
        let version = planned
            .version
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        let label = planned.label.as_ref().map(|l| l.as_str());
        let properties = planned.properties.as_ref();
        text.push_str(&choice_line(
            action,
            &planned.name,
            &version,
            label,
            properties,
            &why,
        ));
        packages.push(json!({
            "name": planned.name,
            "version": version,
            "label": label,
            "filename": entry.file.filename,
            "reason": why,
            "action": action,
        }));
    }
    for (name, version) in &synced.removed {
        text.push_str(&format!(
            "{verb_removed} {name} {version}: the lock does not list it\n"
        ));
    }
    let document = json!({
        "lock": synced.lock.path().display().to_string(),
        "families": families,
        "packages": packages,
        "removed": synced.removed.iter().map(|(name, version)| json!({
            "name": name, "version": version,
        })).collect::<Vec<_>>(),
    });
    (text, document)
}

/// A lock that cannot be installed on the target, in one line; for a package no listed file
/// fits, what `select` says about such a version.
pub(crate) fn plan_error_text(error: &vari_select::locked::PlanError, target: &Target) -> String {
    match error {
        vari_select::locked::PlanError::NothingFits {
            name,
            version,
            report,
            ..
        } => format!("{name} {version} {}", unfit_text(report, target)),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use vari_core::{Namespace, VariantLabel};
    use vari_select::TargetSettings;

    use super::*;

    /// Python 3.12 on Linux x86_64 with an empty profile: nothing detected, nothing probed.
    fn target() -> Target {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("empty.json");
        std::fs::write(
            &profile,
            r#"{"schema": "vari-profile/1", "namespaces": []}"#,
        )
        .unwrap();
        let mut settings = TargetSettings {
            profile: Some(profile),
            ..TargetSettings::default()
        };
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        Target::resolve(&settings).unwrap()
    }

    fn need(
        namespace: &str,
        rejection: fn(Namespace) -> Rejection,
        builtin: bool,
    ) -> NamespaceNeed {
        let namespace: Namespace = namespace.parse().unwrap();
        NamespaceNeed {
            labels: vec!["cu128".parse::<VariantLabel>().unwrap()],
            rejection: rejection(namespace.clone()),
            namespace,
            builtin_provider: builtin,
            absent_reason: None,
        }
    }

    fn unsupported(namespace: Namespace) -> Rejection {
        Rejection::UnsupportedNamespace {
            namespace,
            provider: None,
        }
    }

    #[test]
    fn the_library_clause_then_the_flag_that_would_help() {
        let target = target();
        let unknown = need("ascend", unsupported, false);
        assert_eq!(
            need_text(&unknown, &target),
            "builds cu128 need namespace `ascend`, which no built-in provider detects: only a \
             profile that lists it can select them (--profile)"
        );
        let optional = need(
            "nvidia",
            |namespace| Rejection::OptionalNotEnabled { namespace },
            true,
        );
        assert_eq!(
            need_text(&optional, &target),
            "builds for NVIDIA GPUs (cu128): namespace `nvidia` comes from an optional provider \
             that is off (turn it on with --enable-optional nvidia)"
        );
        // A built-in provider's namespace: no flag adds it, so the clause stands alone.
        let builtin = need("nvidia", unsupported, true);
        let text = need_text(&builtin, &target);
        assert!(
            text.starts_with("builds for NVIDIA GPUs (cu128), which profile ")
                && text.ends_with(" does not list"),
            "{text}"
        );
    }
}
