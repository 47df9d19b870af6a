//! `vari wheel label` and `vari wheel inspect`.

use std::process::ExitCode;

use owo_colors::{OwoColorize, Style};
use serde_json::json;
use vari_core::label::default_label;
use vari_core::metadata::{properties_of, write_json, VariantMetadata};
use vari_core::Property;
use vari_wheel::WheelInfo;

use super::json_text;
use crate::cli::{InspectArgs, LabelArgs};
use crate::error::CliError;
use crate::load::inspect_wheel;
use crate::output;
use crate::table::{Cell, Table};

/// Prints the default label of the given properties (`null` for none).
pub fn label(args: &LabelArgs) -> Result<ExitCode, CliError> {
    let properties = args.properties.iter().chain(&args.positional);
    output::print_data(&format!("{}\n", default_label(properties)))?;
    Ok(ExitCode::SUCCESS)
}

/// Shows a wheel: filename parts, label, properties, providers and the RECORD check.
pub fn inspect(args: &InspectArgs) -> Result<ExitCode, CliError> {
    let info = inspect_wheel(&args.wheel)?;
    let text = if args.json {
        json_text(&inspect_json(&info, &args.wheel)?)
    } else {
        inspect_human(&info)
    };
    if args.json {
        output::print_data(&text)?;
    } else {
        output::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The properties of the wheel's own variant (its `variant.json` holds exactly one).
fn wheel_properties(meta: &VariantMetadata) -> Vec<Property> {
    meta.variants
        .values()
        .flat_map(properties_of)
        .collect::<Vec<_>>()
}

fn inspect_json(info: &WheelInfo, path: &std::path::Path) -> Result<serde_json::Value, CliError> {
    let metadata = match &info.metadata {
        None => serde_json::Value::Null,
        Some(meta) => {
            let written = write_json(meta, meta.generation)
                .map_err(|e| CliError::invalid(path, Some(e.path), e.message))?;
            serde_json::from_str(&written.text).map_err(|e| {
                CliError::Other(format!("internal error: re-reading variant.json: {e}"))
            })?
        }
    };
    let properties: Vec<String> = info
        .metadata
        .as_ref()
        .map(wheel_properties)
        .unwrap_or_default()
        .iter()
        .map(ToString::to_string)
        .collect();
    Ok(json!({
        "name": info.filename.name,
        "version": info.filename.version.to_string(),
        "label": info.filename.label.as_ref().map(ToString::to_string),
        "properties": properties,
        "metadata": metadata,
    }))
}

fn inspect_human(info: &WheelInfo) -> String {
    let f = &info.filename;
    let mut table = Table::new(&["", ""]);
    let key = Style::new().bold();
    let mut row = |k: &str, v: String| table.row(vec![Cell::new(k).styled(key), Cell::new(v)]);
    row("name", f.name.clone());
    row("version", f.version.to_string());
    if let Some(build) = &f.build {
        row("build", format!("{}{}", build.number, build.suffix));
    }
    row(
        "tags",
        format!(
            "{}-{}-{}",
            f.python_tags.join("."),
            f.abi_tags.join("."),
            f.platform_tags.join(".")
        ),
    );
    match (&f.label, &info.metadata) {
        (Some(label), Some(meta)) => {
            row("label", label.to_string());
            let props = wheel_properties(meta);
            row(
                "properties",
                if props.is_empty() {
                    "(none: the null variant)".to_owned()
                } else {
                    props
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                },
            );
            row("providers", providers_text(meta));
            row("schema", meta.generation.to_string());
        }
        _ => row("label", "not a variant wheel".to_owned()),
    }
    row("dist-info", info.dist_info.clone());
    row("RECORD", record_text(&info.record));
    let mut text = format!("{}\n", info.path.display().bold());
    // The header row is blank; skip it.
    let rendered = table.render(output::width());
    text.extend(rendered.lines().skip(1).map(|l| format!("  {l}\n")));
    text
}

/// `well-formed, 5 entries; variant.json matches its hash`.
fn record_text(record: &vari_wheel::RecordCheck) -> String {
    let mut text = format!("well-formed, {} entries", record.entries);
    if !record.verified.is_empty() {
        let short: Vec<&str> = record
            .verified
            .iter()
            .map(|m| m.rsplit('/').next().unwrap_or(m))
            .collect();
        let verb = if short.len() == 1 {
            "matches its hash"
        } else {
            "match their hashes"
        };
        text.push_str(&format!("; {} {verb}", short.join(", ")));
    }
    text
}

/// One line per provider namespace: how its support is obtained.
fn providers_text(meta: &VariantMetadata) -> String {
    if meta.providers.is_empty() {
        return "(none listed)".to_owned();
    }
    meta.providers
        .iter()
        .map(|(ns, p)| {
            let mut parts = vec![format!("{ns}:")];
            match &p.kind {
                vari_core::metadata::ProviderKind::InstallTime => {
                    parts.push(format!("plugin {}", p.requires.join(", ")));
                }
                vari_core::metadata::ProviderKind::AheadOfTime => {
                    parts.push("ahead-of-time (static properties)".to_owned());
                }
                vari_core::metadata::ProviderKind::Builtin(name) => {
                    parts.push(format!("built-in {name}"));
                }
            }
            if let Some(marker) = &p.enable_if {
                parts.push(format!("if {marker}"));
            }
            if p.optional {
                parts.push("(optional)".to_owned());
            }
            parts.join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}
