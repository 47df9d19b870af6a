//! `vari select`: the wheel each requirement resolves to, from package indexes, for this
//! machine or a target. Argument mapping and rendering only: the rules are in `vari-select`.
//!
//! Human output is one line per requirement (name, version, file, label, why), the chosen
//! wheel's dependencies under it, and with `--explain` every file of the considered versions
//! with its fate, grouped so that a page of a thousand files stays readable.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{json, Value};
use vari_family::Verdict;
use vari_select::{CandidateFate, Target, VersionReport};

use crate::cli::SelectArgs;
use crate::error::CliError;
use crate::explain::{examples, group_key, skipped_text, why, Choice, Choices};
use crate::output;
use crate::settings::{runtime, FamilyStep, FromIndexes};
use crate::table::count;

/// Installable candidates listed one by one in `--explain` before the rest are counted.
const CANDIDATES_SHOWN: usize = 10;

/// Selects a wheel for every requirement and prints the choices; the requirements that failed
/// get an `error:` line each, and make the command fail.
pub(super) fn run(args: &SelectArgs) -> Result<ExitCode, CliError> {
    let mut session = FromIndexes::resolve(
        &args.requirements,
        &args.index,
        &args.target,
        &args.selection,
        !args.no_deps,
    )?;
    let runtime = runtime()?;
    let families = session.through_families(&runtime)?;
    let outcomes = session.select_all(&runtime);
    let choices = Choices::new(&session.requests, outcomes, session.target());
    if args.json {
        let selections: Vec<Value> = choices
            .items
            .iter()
            .map(|(request, choice)| choice.json(request, session.target()))
            .collect();
        let families: Vec<Value> = families
            .iter()
            .map(|step| {
                json!({
                    "requirement": step.requirement,
                    "choice": step.choice,
                    "source": step.source.as_ref().map(|s| s.url().to_string()),
                    "group": step.group.as_ref().map(|(name, members)| json!({
                        "name": name,
                        "members": members,
                    })),
                })
            })
            .collect();
        output::print_data(&crate::output::json_text(
            &json!({ "selections": selections, "families": families }),
        ))?;
    } else {
        let mut text = String::new();
        for step in &families {
            text.push_str(&family_text(step, args.explain));
        }
        text.push_str(&human(&choices, session.target(), args.explain));
        output::print(&text)?;
    }
    Ok(choices.status())
}

/// The line saying a request was chosen through a build family, and with `--explain` every other
/// build's reason.
fn family_text(step: &FamilyStep, explain: bool) -> String {
    let Some(chosen) = &step.choice.chosen else {
        return String::new();
    };
    let fitting = step
        .choice
        .builds
        .iter()
        .filter(|b| matches!(b.verdict, Verdict::Chosen | Verdict::RanksBelow { .. }))
        .count();
    let from = step
        .source
        .as_ref()
        .map(|s| format!(" from {}", s.url()))
        .unwrap_or_default();
    let why = match &step.group {
        Some((group, members)) => format!(
            "the best line that {} all offer (group {group})",
            members.join(", ")
        ),
        None => fitting_text(fitting),
    };
    let mut text = format!(
        "{}: family {} chooses build {} ({} {}{from}): {why}\n",
        step.requirement, step.choice.family, chosen.build, chosen.requirement, chosen.version,
    );
    if explain {
        for line in step.choice.explanation() {
            text.push_str(&format!("  - {line}\n"));
        }
    }
    text
}

/// Why a family's build is chosen among the `fitting` ones ("the best of 1" reads as a slip).
fn fitting_text(fitting: usize) -> String {
    match fitting {
        1 => "the only build that fits".to_owned(),
        n => format!("the best of {} that fit", count(n, "build")),
    }
}

fn human(choices: &Choices, target: &Target, explain: bool) -> String {
    let mut text = String::new();
    if explain {
        // What the target is made of, when it is not simply this machine (a baseline CPU for
        // another architecture, markers from this machine for a profile without a platform).
        for note in &target.notes {
            text.push_str(&format!("target: {note}\n"));
        }
    }
    for (request, choice) in &choices.items {
        let resolution = match choice {
            Choice::Skipped { marker } => {
                text.push_str(&format!("{request}: {}\n", skipped_text(marker)));
                continue;
            }
            // Said on stderr, in `error:` lines.
            Choice::Failed(_) => continue,
            Choice::Chosen(resolution) => resolution,
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

#[cfg(test)]
mod tests {
    use super::fitting_text;

    #[test]
    fn one_fitting_build_is_the_only_one() {
        assert_eq!(fitting_text(1), "the only build that fits");
        assert_eq!(fitting_text(2), "the best of 2 builds that fit");
    }
}
