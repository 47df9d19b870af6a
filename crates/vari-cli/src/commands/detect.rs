//! `vari detect`: what this machine, a snapshot or a profile supports.

use std::process::ExitCode;
use std::time::Duration;

use owo_colors::{OwoColorize, Style};
use vari_core::{FeatureSupport, Profile};
use vari_detect::{Detection, ProviderReport, Sysroot};
use vari_select::Target;

use crate::cli::DetectArgs;
use crate::error::CliError;
use crate::output;
use crate::settings::{configured_target_settings, target_error};
use crate::table::{abbreviate, Cell, Table};

/// Values shown before a long list is abbreviated.
const VALUES_SHOWN: usize = 2;

/// `abi_dependency` packages listed before the rest are summarised (an environment has one
/// per installed package, about a hundred).
const ABI_PACKAGES_SHOWN: usize = 3;

/// Runs detection (or reads the profile) and prints the supported properties; `list_all`
/// (`-v`) lists every `abi_dependency` package instead of summarising them.
pub(super) fn run(args: &DetectArgs, list_all: bool) -> Result<ExitCode, CliError> {
    // What this machine (or the snapshot, or the profile named) supports: the configured
    // profile is for choosing, not for describing the hardware.
    let mut settings = configured_target_settings(&args.target, None)?;
    settings.use_cache = !args.no_cache;
    let target = Target::resolve(&settings).map_err(target_error)?;
    let hardware = &target.hardware;
    for warning in &hardware.warnings {
        output::warn(&warning.to_string());
    }
    // What a reader should know (a profile without a platform, a plain file tree): on stderr,
    // so that `--json` stays the document alone.
    let detection_notes = hardware.detection.iter().flat_map(|d| &d.notes);
    for note in target.notes.iter().chain(detection_notes) {
        output::note(note);
    }
    let text = match (&hardware.detection, &hardware.sysroot) {
        (Some(detection), Some(sysroot)) if !args.json => {
            detection_human(detection, sysroot, list_all)
        }
        _ if args.json => hardware.profile.to_json(),
        _ => profile_human(&hardware.profile, &hardware.source.to_string(), list_all),
    };
    if args.json {
        output::print_data(&text)?;
    } else {
        output::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `Linux x86_64 glibc 2.36`, or `unknown platform`.
fn platform_text(profile: &Profile) -> String {
    let parts: Vec<&str> = profile
        .platform
        .iter()
        .flat_map(|p| [&p.system, &p.machine, &p.libc])
        .filter_map(|s| s.as_deref())
        .collect();
    if parts.is_empty() {
        "unknown platform".to_owned()
    } else {
        parts.join(" ")
    }
}

/// The rows of one present namespace: one per feature, the features whose only value is `on`
/// gathered on one `(on)` row (x86_64 and aarch64 report dozens), then a `(source)` row.
///
/// Unless `list_all`, `abi_dependency` (one feature per installed package) shows its first
/// [`ABI_PACKAGES_SHOWN`] packages and a `(more)` row with the count of the rest.
///
/// Feature names cannot contain parentheses, so the pseudo-rows cannot be mistaken for
/// features.
fn feature_rows(
    table: &mut Table,
    namespace: &str,
    features: &[FeatureSupport],
    source: &str,
    list_all: bool,
) {
    let ns_style = Style::new().bold().cyan();
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut switched_on: Vec<&str> = Vec::new();
    let summarise = !list_all
        && namespace == vari_core::Namespace::ABI_DEPENDENCY
        && features.len() > ABI_PACKAGES_SHOWN + 1;
    let (features, hidden) = if summarise {
        features.split_at(ABI_PACKAGES_SHOWN)
    } else {
        (features, &[][..])
    };
    for feature in features {
        let only_on = feature.values.len() == 1 && feature.values[0].as_str() == "on";
        if only_on && !feature.multi_value {
            switched_on.push(feature.name.as_str());
            continue;
        }
        let name = if feature.multi_value {
            format!("{} (multi)", feature.name)
        } else {
            feature.name.to_string()
        };
        rows.push((name, abbreviate(&feature.values, VALUES_SHOWN)));
    }
    if !switched_on.is_empty() {
        rows.push((ON_ROW.to_owned(), switched_on.join(" ")));
    }
    if !hidden.is_empty() {
        rows.push((
            "(more)".to_owned(),
            format!(
                "… and {} more packages ({} in all; --json or -v lists all)",
                hidden.len(),
                features.len() + hidden.len()
            ),
        ));
    }
    if !source.is_empty() {
        rows.push(("(source)".to_owned(), source.to_owned()));
    }
    for (i, (feature, values)) in rows.into_iter().enumerate() {
        let pseudo = feature.starts_with('(');
        let style = if pseudo {
            Style::new().dimmed()
        } else {
            Style::new()
        };
        table.row(vec![
            Cell::new(if i == 0 { namespace } else { "" }).styled(ns_style),
            Cell::new(feature).styled(style),
            Cell::new(values).styled(style),
        ]);
    }
}

/// The pseudo-feature gathering the features whose only value is `on`.
const ON_ROW: &str = "(on)";

/// The explanation printed under a table that has an [`ON_ROW`].
fn on_row_note(rendered: &str) -> &'static str {
    if rendered.lines().any(|l| l.contains(ON_ROW)) {
        "(on): features supported with the value `on`, most preferred first\n"
    } else {
        ""
    }
}

/// `0.4 ms`, `12 ms`, `1.2 s`.
fn duration_text(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

fn new_table() -> Table {
    Table::new(&["namespace", "feature", "values"])
}

/// Renders a features table with its footnote, or says that nothing is supported.
fn features_text(table: &Table) -> String {
    if table.is_empty() {
        return "no supported namespaces\n".to_owned();
    }
    let rendered = table.render(output::width());
    let note = on_row_note(&rendered);
    format!("{rendered}{note}")
}

fn detection_human(detection: &Detection, sysroot: &Sysroot, list_all: bool) -> String {
    let profile = detection.profile();
    let mut present = new_table();
    let mut absent = Table::new(&["namespace", "time", "why"]);
    for report in &detection.reports {
        add_report(&mut present, &mut absent, report, list_all);
    }
    let origin = if sysroot.is_host() {
        if detection.from_cache {
            " (cached; --no-cache to query again)".to_owned()
        } else {
            String::new()
        }
    } else {
        match sysroot.manifest() {
            Some(m) => format!(
                " (snapshot of {} taken {}: {})",
                m.host,
                m.created,
                sysroot.root().display()
            ),
            None => format!(" (file tree {})", sysroot.root().display()),
        }
    };
    let mut text = format!("{}{origin}\n", platform_text(&profile).bold());
    for note in &detection.notes {
        text.push_str(&format!("{} {note}\n", "note:".cyan().bold()));
    }
    text.push('\n');
    text.push_str(&features_text(&present));
    if !absent.is_empty() {
        let heading = match (sysroot.is_host(), sysroot.manifest()) {
            (true, _) => "not supported here:",
            (false, Some(_)) => "not supported by the snapshot:",
            (false, None) => "not supported by the file tree:",
        };
        text.push_str(&format!("\n{}\n", heading.bold()));
        text.push_str(&absent.render(output::width()));
    }
    text
}

fn add_report(present: &mut Table, absent: &mut Table, report: &ProviderReport, list_all: bool) {
    let time = duration_text(report.elapsed);
    match &report.features {
        Some(features) => {
            let source = match &report.note {
                Some(note) => format!("{}; {note} ({time})", report.source),
                None => format!("{} ({time})", report.source),
            };
            feature_rows(
                present,
                report.namespace.as_str(),
                features,
                &source,
                list_all,
            );
        }
        None => {
            // The note says why; the source of an absent namespace adds nothing to it.
            let why = report.note.clone().unwrap_or_else(|| report.source.clone());
            absent.row(vec![
                Cell::new(report.namespace.as_str()).styled(Style::new().dimmed()),
                Cell::new(time),
                Cell::new(why),
            ]);
        }
    }
}

fn profile_human(profile: &Profile, origin: &str, list_all: bool) -> String {
    let mut table = new_table();
    for ns in &profile.namespaces {
        let source = ns.source.as_deref().unwrap_or("");
        feature_rows(
            &mut table,
            ns.namespace.as_str(),
            &ns.features,
            source,
            list_all,
        );
    }
    let mut text = format!("{} ({origin})\n\n", platform_text(profile).bold());
    text.push_str(&features_text(&table));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_short() {
        assert_eq!(duration_text(Duration::from_micros(420)), "0.4 ms");
        assert_eq!(duration_text(Duration::from_millis(12)), "12 ms");
        assert_eq!(duration_text(Duration::from_millis(1234)), "1.2 s");
    }
}
