//! `vari select`: the wheel each requirement resolves to, from package indexes, for this
//! machine or a target. Argument mapping and rendering only: the rules are in `vari-select`.
//!
//! Human output is one line per requirement (name, version, file, label, why), the chosen
//! wheel's dependencies under it, and with `--explain` every file of the considered versions
//! with its fate, grouped so that a page of a thousand files stays readable.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{json, Value};
use vari_core::ordering::Rejection;
use vari_select::{
    CandidateFate, CandidateFile, ChosenBecause, NamespaceNeed, Outcome, Request, Resolution,
    Target, VariantRejection, VersionReport,
};

use super::index_source::{prepare, runtime};
use super::rank::{optional_hint, reason};
use crate::cli::SelectArgs;
use crate::error::CliError;
use crate::output;
use crate::table::count;

/// Files of one kind listed by name before the rest are counted.
const EXAMPLES: usize = 3;
/// Installable candidates listed one by one in `--explain` before the rest are counted.
const CANDIDATES_SHOWN: usize = 10;

/// Selects a wheel for every requirement and prints the choices.
pub(super) fn run(args: &SelectArgs) -> Result<ExitCode, CliError> {
    let session = prepare(
        &args.requirements,
        &args.index,
        &args.target,
        &args.selection,
        !args.no_deps,
    )?;
    let outcomes = session.select_all(&runtime()?);
    let mut results = Vec::new();
    for (request, outcome) in session.requests.iter().zip(outcomes) {
        let outcome = outcome.map_err(|e| CliError::Other(e.to_string()))?;
        if let Outcome::Resolved(resolution) = &outcome {
            for warning in &resolution.warnings {
                output::warn(warning);
            }
            if resolution.chosen.is_none() {
                return Err(CliError::Other(nothing_fits(
                    request,
                    resolution,
                    &session.target,
                )));
            }
        }
        results.push((request, outcome));
    }
    if args.json {
        let selections: Vec<Value> = results
            .iter()
            .map(|(request, outcome)| selection_json(request, outcome, &session.target))
            .collect();
        output::print_data(&super::json_text(&json!({ "selections": selections })))?;
    } else {
        output::print(&human(&results, &session.target, args.explain))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The requirement's one-line answer: why this file (and, when newer versions were passed
/// over, why they were).
pub(crate) fn why(resolution: &Resolution, target: &Target) -> String {
    let Some(chosen) = &resolution.chosen else {
        return String::new();
    };
    let mut text = match &chosen.because {
        ChosenBecause::BestVariant { selectable } => format!(
            "the best of {} that fit {}",
            count(*selectable, "variant"),
            target.hardware.source
        ),
        ChosenBecause::NullVariant => {
            let report = resolution.chosen_report();
            match report
                .map(|r| needs_text(r, target))
                .filter(|t| !t.is_empty())
            {
                Some(needs) => format!("the null variant: {needs}"),
                None => "the null variant: no variant with properties fits".to_owned(),
            }
        }
        ChosenBecause::NoVariantFits { variants } => {
            let report = resolution.chosen_report();
            match report
                .map(|r| needs_text(r, target))
                .filter(|t| !t.is_empty())
            {
                Some(needs) => format!("the non-variant wheel: {needs}"),
                None => format!(
                    "the non-variant wheel: none of {} fits",
                    count(*variants, "variant")
                ),
            }
        }
        ChosenBecause::NoVariants => "the non-variant wheel (no variant wheel for this \
                                      Python and platform)"
            .to_owned(),
        ChosenBecause::VariantsDisabled => "the non-variant wheel (--no-variants)".to_owned(),
    };
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

/// Why no file of `report` fits: the first reason that covers the version.
fn unfit_text(report: &VersionReport, target: &Target) -> String {
    let wheels: Vec<&CandidateFile> = report
        .files
        .iter()
        .filter(|f| f.fate != CandidateFate::SdistNotConsidered)
        .collect();
    if wheels.is_empty() {
        return "has only source distributions (only wheels are selected)".to_owned();
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
    let needs = needs_text(report, target);
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
fn needs_text(report: &VersionReport, target: &Target) -> String {
    report
        .needs
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
        .map(|w| {
            format!(
                "{}-{}-{}",
                w.python_tags.join("."),
                w.abi_tags.join("."),
                w.platform_tags.join(".")
            )
        })
        .unwrap_or_else(|_| "sdist".to_owned())
}

/// The first few distinct items, then how many more.
fn examples(items: impl Iterator<Item = String>, total: usize) -> String {
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

fn selection_json(request: &Request, outcome: &Outcome, target: &Target) -> Value {
    let resolution = match outcome {
        Outcome::Skipped { marker } => {
            return json!({
                "requirement": request.as_str(), "name": request.name().as_str(),
                "version": null, "filename": null, "url": null, "label": null, "sha256": null,
                "reason": format!("skipped: the marker `{marker}` is false for the target"),
            })
        }
        Outcome::Resolved(resolution) => resolution,
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

fn human(results: &[(&Request, Outcome)], target: &Target, explain: bool) -> String {
    let mut text = String::new();
    if explain {
        // What the target is made of, when it is not simply this machine (a baseline CPU for
        // another architecture, markers from this machine for a profile without a platform).
        for note in &target.notes {
            text.push_str(&format!("target: {note}\n"));
        }
    }
    for (request, outcome) in results {
        let resolution = match outcome {
            Outcome::Skipped { marker } => {
                text.push_str(&format!(
                    "{request}: skipped (`{marker}` is false for the target)\n"
                ));
                continue;
            }
            Outcome::Resolved(resolution) => resolution,
        };
        let Some(chosen) = &resolution.chosen else {
            continue;
        };
        let label = chosen
            .label
            .as_ref()
            .map(|l| l.to_string())
            .unwrap_or_else(|| "-".to_owned());
        text.push_str(&format!(
            "{} {}  {}  {label}  {}\n",
            resolution.name,
            chosen.version,
            chosen.file.filename,
            why(resolution, target)
        ));
        if let Some(dependencies) = &chosen.dependencies {
            if !dependencies.is_empty() {
                let list: Vec<&str> = dependencies
                    .iter()
                    .map(|d| d.requirement.as_str())
                    .collect();
                text.push_str(&format!("  requires: {}\n", list.join(", ")));
            }
        }
        if explain {
            for report in &resolution.versions {
                text.push_str(&explain_version(
                    &resolution.name.to_string(),
                    report,
                    target,
                ));
            }
            if !resolution.prereleases_ignored.is_empty() {
                text.push_str(&format!(
                    "  not considered: {} ({})\n",
                    count(resolution.prereleases_ignored.len(), "pre-release"),
                    examples(
                        resolution
                            .prereleases_ignored
                            .iter()
                            .map(ToString::to_string),
                        resolution.prereleases_ignored.len()
                    )
                ));
            }
        }
    }
    text
}

/// One version's files, grouped by fate: installable files one by one (the first ten), the
/// rest one line per reason with a count and examples.
fn explain_version(name: &str, report: &VersionReport, target: &Target) -> String {
    let mut text = format!(
        "\n  {name} {} ({}):\n",
        report.version,
        count(report.files.len(), "file")
    );
    let mut installable = 0;
    let mut groups: BTreeMap<(u8, String), Vec<&str>> = BTreeMap::new();
    for file in &report.files {
        match &file.fate {
            CandidateFate::Chosen => {
                text.push_str(&format!("    ✓ chosen   {}\n", file.filename));
            }
            CandidateFate::Candidate { rank } => {
                installable += 1;
                if installable <= CANDIDATES_SHOWN {
                    text.push_str(&format!("    {rank:>2} next   {}\n", file.filename));
                }
            }
            other => {
                let key = group_key(other, target);
                groups.entry(key).or_default().push(&file.filename);
            }
        }
    }
    if installable > CANDIDATES_SHOWN {
        text.push_str(&format!(
            "       … {} more\n",
            count(installable - CANDIDATES_SHOWN, "candidate")
        ));
    }
    for ((_, why), files) in groups {
        let files_text = match files.len() {
            1 => files[0].to_owned(),
            n => format!(
                "{} ({})",
                count(n, "file"),
                examples(files.iter().map(|f| short_name(f)), n)
            ),
        };
        text.push_str(&format!("    ✗ {files_text}: {why}\n"));
    }
    text
}

/// A wheel's name without the `{name}-{version}-` the version's header already says and the
/// `.whl` every wheel has (`cp312-cp312-win_amd64-cu128`), so that examples of a large group
/// stay short; other files keep their whole name.
fn short_name(filename: &str) -> String {
    match filename
        .strip_suffix(".whl")
        .map(|f| f.splitn(3, '-').nth(2))
    {
        Some(Some(rest)) => rest.to_owned(),
        _ => filename.to_owned(),
    }
}

/// The explanation line a file falls under, with its place among the groups.
fn group_key(fate: &CandidateFate, target: &Target) -> (u8, String) {
    match fate {
        CandidateFate::VariantRejected(rejection) => (0, reason(rejection, target)),
        CandidateFate::LabelNotDescribed => (
            1,
            "the version's variant metadata does not describe its label".to_owned(),
        ),
        CandidateFate::UnusableMetadata { why } => (2, format!("unusable variant metadata: {why}")),
        CandidateFate::Unusable(why) => (3, why.to_string()),
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
