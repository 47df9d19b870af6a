//! `vari wheel label`, `inspect`, `make-variant`, `unmake`, `validate` and `repack` (whose
//! `split` builds are split with vari-slim).

use std::path::Path;
use std::process::ExitCode;

use owo_colors::{OwoColorize, Style};
use serde_json::json;
use vari_core::label::default_label;
use vari_core::metadata::{properties_of, write_json, VariantMetadata};
use vari_core::{Located, Property};
use vari_wheel::{
    Depth, LabelChoice, RepackConfig, RepackError, Validation, VariantSpec, WheelError,
    WheelErrorKind,
};

use crate::cli::{
    InspectArgs, LabelArgs, MakeVariantArgs, RepackArgs, UnmakeArgs, WheelValidateArgs,
};
use crate::error::CliError;
use crate::load::{self, validation_problems, wheel_error, Problem};
use crate::output;
use crate::output::json_text;
use crate::table::{Cell, Table};

/// Prints the default label of the given properties (`null` for none).
pub(super) fn label(args: &LabelArgs) -> Result<ExitCode, CliError> {
    let properties = args.properties.iter().chain(&args.positional);
    output::print_data(&format!("{}\n", default_label(properties)))?;
    Ok(ExitCode::SUCCESS)
}

/// Shows a wheel: filename parts, label, properties, providers and the RECORD check. A wheel
/// with problems (a label that disagrees with its variant.json, a RECORD mismatch) is still
/// shown, with the problems flagged, and the command fails.
pub(super) fn inspect(args: &InspectArgs) -> Result<ExitCode, CliError> {
    let v = vari_wheel::check(&args.wheel, Depth::Metadata)
        .map_err(|e| wheel_error(&args.wheel, &e))?;
    if args.json {
        output::print_data(&json_text(&inspect_json(&v, &args.wheel)?))?;
    } else {
        output::print(&inspect_human(&v))?;
    }
    match v.errors().next() {
        None => Ok(ExitCode::SUCCESS),
        Some(first) => Err(wheel_error(&args.wheel, &first)),
    }
}

/// The properties of the wheel's own variant (its `variant.json` holds exactly one).
fn wheel_properties(meta: &VariantMetadata) -> Vec<Property> {
    meta.variants
        .values()
        .flat_map(properties_of)
        .collect::<Vec<_>>()
}

fn inspect_json(v: &Validation, path: &Path) -> Result<serde_json::Value, CliError> {
    let metadata = match &v.metadata {
        None => serde_json::Value::Null,
        Some(meta) => {
            let written = write_json(meta, meta.generation).map_err(|e| e.in_file(path))?;
            serde_json::from_str(&written.text).map_err(|e| {
                CliError::Other(format!("internal error: re-reading variant.json: {e}"))
            })?
        }
    };
    let properties: Vec<String> = v
        .metadata
        .as_ref()
        .map(wheel_properties)
        .unwrap_or_default()
        .iter()
        .map(ToString::to_string)
        .collect();
    let f = &v.filename;
    let tags: Vec<String> = f
        .python_tags
        .iter()
        .flat_map(|py| {
            f.abi_tags.iter().flat_map(move |abi| {
                f.platform_tags
                    .iter()
                    .map(move |plat| format!("{py}-{abi}-{plat}"))
            })
        })
        .collect();
    let record = v.record.as_ref().map(|r| {
        json!({
            "member": r.member,
            "entries": r.entries,
            "verified": r.verified,
        })
    });
    let problems: Vec<String> = v.problems.iter().map(ToString::to_string).collect();
    Ok(json!({
        "name": f.name,
        "version": f.version.to_string(),
        "label": f.label.as_ref().map(ToString::to_string),
        "properties": properties,
        "metadata": metadata,
        "tags": tags,
        "dist_info": v.dist_info,
        "record": record,
        "problems": problems,
    }))
}

fn inspect_human(v: &Validation) -> String {
    let f = &v.filename;
    let mut table = Table::new(&["", ""]);
    let key = Style::new().bold();
    let mut row = |k: &str, v: String| table.row(vec![Cell::new(k).styled(key), Cell::new(v)]);
    row("name", f.name.clone());
    row("version", f.version.to_string());
    if let Some(build) = &f.build {
        row("build", format!("{}{}", build.number, build.suffix));
    }
    row("tags", f.tag_triple().to_string());
    match (&f.label, &v.metadata) {
        (Some(label), Some(meta)) => {
            row("label", label.to_string());
            if let Some(json_label) = meta.variants.keys().find(|l| l.as_str() != label.as_str()) {
                row(
                    "variant.json",
                    format!("✗ describes `{json_label}`, not `{label}`"),
                );
            }
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
        (Some(label), None) => row("label", format!("{label} (variant.json unreadable)")),
        (None, _) => row("label", "not a variant wheel".to_owned()),
    }
    if let Some(dist_info) = &v.dist_info {
        row("dist-info", dist_info.clone());
    }
    if let Some(record) = &v.record {
        row("RECORD", record_text(record));
    }
    if !v.problems.is_empty() {
        row(
            "problems",
            v.problems
                .iter()
                .map(|p| format!("✗ {p}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
    let mut text = format!("{}\n", v.path.display().bold());
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

/// Splits a fat build for `vari wheel repack` (`split = "nvidia :: sm_arch"` in a build).
struct Splitter {
    /// Accept properties whose values cannot be checked.
    skip_validation: bool,
}

impl vari_wheel::SplitBuild for Splitter {
    fn split(
        &self,
        wheel: &std::path::Path,
        out_dir: &std::path::Path,
        prefix: &vari_core::VariantLabel,
    ) -> Result<Vec<vari_wheel::WrittenWheel>, String> {
        let options = vari_slim::SlimOptions {
            label: Some(prefix.clone()),
            valid: load::built_in_valid_values(),
            skip_validation: self.skip_validation,
        };
        let reports =
            vari_slim::split_wheel(wheel, out_dir, &options).map_err(|e| e.to_string())?;
        Ok(reports
            .into_iter()
            .map(|r| vari_wheel::WrittenWheel {
                path: r.output,
                label: r.label,
                metadata: r.metadata,
                warnings: r.warnings,
                size: r.output_size,
                sha256: None,
            })
            .collect())
    }
}

/// Reads what a wheel's binaries need with vari-scan (CUDA fat binaries, CUDA runtime, x86-64
/// level), for `make-variant --infer` and `repack`'s `infer`.
struct Scanner;

impl vari_wheel::InferProperties for Scanner {
    fn infer(&self, wheel: &Path) -> Result<Vec<Property>, String> {
        vari_scan::scan_wheel(wheel)
            .map(|scan| scan.properties())
            .map_err(|e| e.to_string())
    }
}

/// Writes the variant wheel and prints its path.
pub(super) fn make_variant(args: &MakeVariantArgs) -> Result<ExitCode, CliError> {
    let mut properties = args.properties.clone();
    if args.infer {
        use vari_wheel::InferProperties as _;
        let found = Scanner
            .infer(&args.wheel)
            .map_err(|message| CliError::invalid(&args.wheel, None, message))?;
        if found.is_empty() {
            output::warn(&format!(
                "{}: the binaries need no property vari can read",
                args.wheel.display()
            ));
        }
        for p in found {
            if !properties.contains(&p) {
                properties.push(p);
            }
        }
    }
    let label = match (&args.label, args.null) {
        (_, true) => LabelChoice::Null,
        (Some(label), false) => LabelChoice::Given(label.clone()),
        (None, false) => LabelChoice::Default,
    };
    let metadata = args
        .metadata
        .as_deref()
        .map(load::read_metadata)
        .transpose()?;
    let mut spec = VariantSpec {
        properties,
        label,
        metadata,
        schema: args.schema,
        skip_validation: args.skip_validation,
    };
    if args.for_installer == Some(crate::cli::Installer::Uv) {
        let (for_uv, warnings) = spec.for_uv();
        for warning in warnings {
            output::warn(&format!("{}: {warning}", args.wheel.display()));
        }
        spec = for_uv;
    }
    let made = vari_wheel::make_variant(
        &args.wheel,
        &args.output,
        &spec,
        &load::built_in_valid_values(),
    )
    .map_err(|e| made_error(&args.wheel, &e))?;
    for warning in &made.warnings {
        output::warn(warning);
    }
    if args.for_installer.is_none() {
        if let Some(why) = made.metadata.as_ref().and_then(not_selected_by_uv) {
            output::warn(&format!(
                "{}: {why}; --for uv writes metadata uv reads",
                made.path.display()
            ));
        }
    }
    output::print_data(&format!("{}\n", made.path.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Why uv 0.13 would not select a made variant as vari does (`vari_core::uv`'s model of uv):
/// it cannot read the metadata, or it has no provider for a namespace the variant uses.
fn not_selected_by_uv(meta: &vari_core::metadata::VariantMetadata) -> Option<String> {
    let view = vari_core::uv::UvView::of(meta);
    if let Some(rejected) = view.rejected {
        return Some(format!("uv 0.13 cannot read its variant.json ({rejected})"));
    }
    let unusable: Vec<String> = meta
        .variants
        .values()
        .flat_map(|v| v.keys())
        .filter(|ns| !ns.is_abi_dependency() && !view.usable.contains(*ns))
        .map(ToString::to_string)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    (!unusable.is_empty()).then(|| {
        format!(
            "uv 0.13 ignores namespace(s) {} as written (no provider it uses), so uv installs \
             another build than this one where it fits",
            unusable.join(", ")
        )
    })
}

/// A make-variant failure, with the hint the library cannot give (it names no flag).
fn made_error(wheel: &Path, e: &WheelError) -> CliError {
    let mut error = wheel_error(wheel, e);
    if let (WheelErrorKind::InvalidProperties { .. }, CliError::Invalid(Located { message, .. })) =
        (e.kind.as_ref(), &mut error)
    {
        *message = message.replace(
            "(skip validation to accept it)",
            "(--skip-validation accepts it)",
        );
    }
    error
}

/// Writes the plain wheel and prints its path.
pub(super) fn unmake(args: &UnmakeArgs) -> Result<ExitCode, CliError> {
    let made =
        vari_wheel::unmake(&args.wheel, &args.output).map_err(|e| wheel_error(&args.wheel, &e))?;
    output::print_data(&format!("{}\n", made.path.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Checks every wheel fully; exit 1 when any is invalid.
pub(super) fn validate(args: &WheelValidateArgs) -> Result<ExitCode, CliError> {
    let checks: Vec<(&Path, Vec<Problem>)> = args
        .wheels
        .iter()
        .map(|w| (w.as_path(), validation_problems(w)))
        .collect();
    for wheel in &args.wheels {
        load::warn_declared_vs_code(wheel);
    }
    let line = |(key, message): &Problem| match key {
        Some(key) => format!("{key}: {message}"),
        None => message.clone(),
    };
    if args.json {
        let files: Vec<serde_json::Value> = checks
            .iter()
            .map(|(path, problems)| {
                json!({
                    "path": path.display().to_string(),
                    "ok": problems.is_empty(),
                    "errors": problems.iter().map(line).collect::<Vec<_>>(),
                })
            })
            .collect();
        output::print_data(&json_text(&json!({ "files": files })))?;
    } else {
        let mut text = String::new();
        for (path, problems) in &checks {
            if problems.is_empty() {
                text.push_str(&format!(
                    "{} {}\n",
                    "ok     ".green().bold(),
                    path.display()
                ));
            } else {
                text.push_str(&format!("{} {}\n", "invalid".red().bold(), path.display()));
                for p in problems {
                    text.push_str(&format!("        {}\n", line(p)));
                }
            }
        }
        output::print(&text)?;
    }
    let invalid: Vec<_> = checks.iter().filter(|(_, p)| !p.is_empty()).collect();
    match invalid.first() {
        None => Ok(ExitCode::SUCCESS),
        Some((path, problems)) => {
            let (key, message) = problems[0].clone();
            let others = problems.len() - 1 + (invalid.len() - 1);
            let message = if others == 0 {
                message
            } else {
                format!("{message} (and {} more)", count(others, "problem"))
            };
            Err(CliError::invalid(path, key, message))
        }
    }
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Repacks the builds and prints the written paths, one a line.
pub(super) fn repack(args: &RepackArgs) -> Result<ExitCode, CliError> {
    let mut config = RepackConfig::load(&args.config)?;
    if args.for_installer == Some(crate::cli::Installer::Uv) {
        config.for_uv = true;
    }
    let splitter = Splitter {
        skip_validation: config.skip_validation,
    };
    let out = vari_wheel::repack_with(
        &config,
        &args.wheels,
        &args.output,
        &load::built_in_valid_values(),
        Some(&Scanner),
        Some(&splitter),
    )
    .map_err(|e| match e {
        RepackError::Config(e) => e.into(),
        RepackError::Wheel(e) => wheel_error(&e.path.clone(), &e),
        RepackError::Combine { file, message } => CliError::invalid(file, None, message),
        RepackError::Write { path, message } => CliError::invalid(path, None, message),
    })?;
    for warning in &out.warnings {
        output::warn(warning);
    }
    let mut text = String::new();
    for w in &out.wheels {
        text.push_str(&format!("{}\n", w.path.display()));
    }
    for p in &out.variants_json {
        text.push_str(&format!("{}\n", p.display()));
    }
    output::print_data(&text)?;
    Ok(ExitCode::SUCCESS)
}
