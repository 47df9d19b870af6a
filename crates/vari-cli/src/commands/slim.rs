//! `vari wheel slim` and `vari wheel split` (vari-slim): arguments in, the report out, as a
//! table or as JSON.

use std::process::ExitCode;

use owo_colors::{OwoColorize, Style};
use serde_json::{json, Value};
use vari_slim::{CodeSize, Keep, SlimError, SlimOptions, SlimReport};

use crate::cli::{SlimArgs, SplitArgs};
use crate::error::CliError;
use crate::load::{built_in_valid_values, wheel_error};
use crate::output::{self, json_text};
use crate::table::{Cell, Table};

/// Writes the slim wheel and prints what it saved.
pub(super) fn slim(args: &SlimArgs) -> Result<ExitCode, CliError> {
    let options = SlimOptions {
        label: args.label.clone(),
        valid: built_in_valid_values(),
        skip_validation: args.skip_validation,
    };
    let keep = Keep::new(args.keep.iter().copied());
    let spinner = crate::progress::Spinner::new(format!(
        "slimming {}: rewriting its GPU code for {}",
        file_name(&args.wheel),
        args.keep
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let report = vari_slim::slim_wheel(&args.wheel, &args.output, &keep, &options)
        .map_err(|e| slim_error(&args.wheel, e));
    drop(spinner);
    print(&[report?], args.json)
}

/// Writes one slim wheel per architecture family and prints what each saved.
pub(super) fn split(args: &SplitArgs) -> Result<ExitCode, CliError> {
    let options = SlimOptions {
        label: args.label.clone(),
        valid: built_in_valid_values(),
        skip_validation: args.skip_validation,
    };
    // Reading the wheel's families first (a spinner), then one step per family written.
    let name = file_name(&args.wheel);
    let mut spinner = Some(crate::progress::Spinner::new(format!(
        "splitting {name}: reading its GPU families"
    )));
    let bar = crate::progress::Count::hidden();
    let mut on_family = |step: vari_slim::SplitStep| {
        spinner.take();
        if step.index == 1 {
            bar.start(&format!("splitting {name}"), step.count as u64);
        } else {
            bar.inc();
        }
        bar.set_message(family_message(&name, step));
    };
    let reports =
        vari_slim::split_wheel_reporting(&args.wheel, &args.output, &options, &mut on_family)
            .map_err(|e| slim_error(&args.wheel, e));
    drop(spinner);
    bar.finish();
    print(&reports?, args.json)
}

/// What `wheel split` says it is writing: `splitting NAME: writing the 8.x wheel (2 of 3)`.
fn family_message(name: &str, step: vari_slim::SplitStep) -> String {
    format!(
        "splitting {name}: writing the {}.x wheel ({} of {})",
        step.major, step.index, step.count
    )
}

/// The wheel's file name, for progress lines.
fn file_name(wheel: &std::path::Path) -> String {
    wheel.file_name().map_or_else(
        || wheel.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn print(reports: &[SlimReport], as_json: bool) -> Result<ExitCode, CliError> {
    for report in reports {
        for warning in &report.warnings {
            output::warn(warning);
        }
    }
    if as_json {
        let wheels: Vec<Value> = reports.iter().map(report_json).collect();
        output::print_data(&json_text(&json!({ "wheels": wheels })))?;
    } else {
        let text: Vec<String> = reports.iter().map(human).collect();
        output::print(&text.join("\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One `error:` line naming the wheel and, when one is at fault, the member.
fn slim_error(wheel: &std::path::Path, e: SlimError) -> CliError {
    match e {
        SlimError::Read(e) => CliError::invalid(&e.wheel, e.member, e.problem.to_string()),
        SlimError::Member {
            wheel,
            member,
            problem,
        } => CliError::invalid(&wheel, Some(member), problem.to_string()),
        SlimError::Wheel(e) => wheel_error(wheel, &e),
        SlimError::NothingKept { wheel, message } => CliError::invalid(&wheel, None, message),
        SlimError::Unreadable { wheel, member, why } => CliError::invalid(
            &wheel,
            Some(member),
            format!(
                "has GPU code vari cannot read ({why}), so which GPU families it serves is \
                 unknown; no wheel is split from it"
            ),
        ),
        SlimError::Spill {
            wheel,
            member,
            message,
        } => CliError::invalid(&wheel, Some(member).filter(|m| !m.is_empty()), message),
    }
}

fn code_json(code: &[CodeSize]) -> Vec<Value> {
    code.iter()
        .map(|c| json!({ "code": c.name(), "before": c.before, "after": c.after }))
        .collect()
}

fn report_json(report: &SlimReport) -> Value {
    let files: Vec<Value> = report
        .files
        .iter()
        .map(|f| {
            json!({
                "path": f.path,
                "changed": f.changed,
                "left_whole": f.left_whole.map(|w| w.describe()),
                "code": code_json(&f.code),
            })
        })
        .collect();
    let left_whole: Vec<Value> = report
        .left_whole()
        .map(|(path, why)| json!({ "path": path, "reason": why.describe() }))
        .collect();
    json!({
        "wheel": report.wheel.display().to_string(),
        "output": report.output.display().to_string(),
        "label": report.label.as_ref().map(ToString::to_string),
        "properties": report.properties.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "size": { "before": report.wheel_size, "after": report.output_size },
        "code": code_json(&report.code()),
        "left_whole": left_whole,
        "files": files,
    })
}

/// `12.3 MiB`, `456 KiB`, `789 B`.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / f64::from(1 << 10)),
        n => format!("{n} B"),
    }
}

fn human(report: &SlimReport) -> String {
    let key = Style::new().bold();
    let mut out = format!(
        "{} → {}\n",
        report.wheel.display(),
        report.output.display().bold()
    );
    let change = 100.0 * report.output_size as f64 / report.wheel_size.max(1) as f64 - 100.0;
    let change = if change <= 0.0 {
        format!("{:.0}% smaller", -change)
    } else {
        format!("{change:.0}% larger")
    };
    let mut table = Table::new(&["", ""]);
    let mut row = |k: &str, v: String| table.row(vec![Cell::new(k).styled(key), Cell::new(v)]);
    row(
        "label",
        report
            .label
            .as_ref()
            .map_or_else(|| "-".to_owned(), ToString::to_string),
    );
    row(
        "properties",
        report
            .properties
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    );
    row(
        "size",
        format!(
            "{} → {} ({change})",
            bytes(report.wheel_size),
            bytes(report.output_size)
        ),
    );
    let left: Vec<String> = report
        .left_whole()
        .map(|(path, why)| format!("{path} ({})", why.describe()))
        .collect();
    if !left.is_empty() {
        row(
            "left whole",
            format!(
                "{}: {}",
                crate::table::count(left.len(), "file"),
                left.join(", ")
            ),
        );
    }
    out.push_str(&table.render(output::width()));
    let mut code = Table::new(&["GPU code", "fat build", "slim build"]);
    for c in report.code() {
        let after = if c.after == 0 {
            "-".to_owned()
        } else {
            bytes(c.after)
        };
        code.row(vec![
            Cell::new(c.name()),
            Cell::new(bytes(c.before)),
            Cell::new(after),
        ]);
    }
    if !code.is_empty() {
        out.push_str(&code.render(output::width()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_progress_names_the_family_and_how_far() {
        let step = vari_slim::SplitStep {
            major: 8,
            index: 2,
            count: 3,
        };
        assert_eq!(
            family_message("nvlike-1.0-py3-none-manylinux_2_28_x86_64.whl", step),
            "splitting nvlike-1.0-py3-none-manylinux_2_28_x86_64.whl: writing the 8.x wheel (2 of 3)"
        );
    }
}
