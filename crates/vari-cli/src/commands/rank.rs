//! `vari rank`: the variants of a release in the order an installer would prefer them.

use std::process::ExitCode;
use std::time::Instant;

use owo_colors::Style;
use serde::{Serialize, Serializer};
use tracing::debug;
use vari_core::markers::TargetEnvironment;
use vari_core::metadata::{property_refs, VariantProperties};
use vari_core::ordering::{rank, Ranking, Rejection, SelectionOptions};
use vari_core::{FeatureValue, VariantLabel};

use super::target::{self, Target};
use crate::cli::{RankArgs, SelectionArgs};
use crate::error::CliError;
use crate::load::{self, RankInput};
use crate::output;
use crate::table::{abbreviate, Cell, Table};

/// Values of one feature shown before the list is abbreviated (the column wraps, so a dozen fit).
const VALUES_SHOWN: usize = 10;

/// One row of the result: a ranked variant, or a wheel that could not be ranked.
///
/// Serialised as one entry of the `--json` `variants` list (`spec/cli.md`); it borrows from the
/// ranking so that large releases are written without copying every property.
#[derive(Serialize)]
struct Row<'a> {
    label: &'a VariantLabel,
    compatible: bool,
    #[serde(serialize_with = "property_strings")]
    properties: &'a VariantProperties,
    reason: Option<String>,
}

/// A wheel that could not be ranked has no properties to show.
static NO_PROPERTIES: VariantProperties = VariantProperties::new();

/// Writes properties as a list of `ns :: f :: v` strings. Each is assembled in one reused
/// buffer: a large release has tens of thousands of them, so neither an allocation nor the
/// formatting machinery per property.
fn property_strings<S: Serializer>(
    properties: &&VariantProperties,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(None)?;
    let mut text = String::new();
    for (ns, f, v) in property_refs(properties) {
        text.clear();
        for part in [ns.as_str(), " :: ", f.as_str(), " :: ", v.as_str()] {
            text.push_str(part);
        }
        seq.serialize_element(text.as_str())?;
    }
    seq.end()
}

/// The `--json` document: `{"order": [label, …], "variants": [row, …]}`.
#[derive(Serialize)]
struct RankJson<'a> {
    order: &'a [VariantLabel],
    variants: &'a [Row<'a>],
}

/// Ranks FILE's variants for the target and prints the order.
pub fn run(args: &RankArgs) -> Result<ExitCode, CliError> {
    let started = Instant::now();
    let input = load::rank_input(&args.file)?;
    for warning in &input.warnings {
        output::warn(warning);
    }
    debug!(elapsed = ?started.elapsed(), variants = input.metadata.variants.len(), "read");
    let target = target::resolve(&args.profile)?;
    let env = target_environment(&target.profile, &args.selection)?;
    let options = selection_options(&args.selection);
    debug!(elapsed = ?started.elapsed(), target = %target.description, "target");
    let ranking = rank(&input.metadata, &target.profile, &env, &options);
    debug!(elapsed = ?started.elapsed(), compatible = ranking.order.len(), "ranked");
    if let Some(label) = &ranking.unmatched_variant {
        output::warn(&format!(
            "--variant {label}: {} has no variant with this label, so none is selectable",
            args.file.display()
        ));
    }
    let rows = rows(&ranking, &input, &target);
    if args.json {
        output::print_bytes(&rank_json(&ranking, &rows))?;
    } else {
        output::print(&human(&rows, &ranking, &input, &target.description))?;
    }
    debug!(elapsed = ?started.elapsed(), "printed");
    drop(rows);
    // The process ends right after: handing a large release's thousands of small allocations
    // back to the allocator one by one would add ~15% to the run for nothing.
    std::mem::forget(ranking);
    std::mem::forget(input);
    Ok(ExitCode::SUCCESS)
}

/// The marker environment `enable-if` sees: the profile's platform and the target Python.
fn target_environment(
    profile: &vari_core::Profile,
    selection: &SelectionArgs,
) -> Result<TargetEnvironment, CliError> {
    let python = match &selection.python_version {
        Some(v) => v.clone(),
        None => target::default_python_version(),
    };
    TargetEnvironment::from_platform(profile.platform.as_ref(), &python)
        .map_err(|e| CliError::Other(format!("--python-version {python}: {e}")))
}

fn selection_options(args: &SelectionArgs) -> SelectionOptions {
    SelectionOptions {
        prefer: args.prefer.clone(),
        forbid: args.forbid.clone(),
        variant: args.variant.clone(),
        no_variants: args.no_variants,
        enable_optional: args.enable_optional.iter().cloned().collect(),
    }
}

/// Why a variant was rejected; for a namespace this machine lacks, what detection found.
fn reason(rejection: &Rejection, target: &Target) -> String {
    match rejection {
        Rejection::UnsupportedNamespace { namespace, .. } => {
            match target.absent_reason(namespace) {
                Some(why) => {
                    format!("namespace `{namespace}` was not detected on this machine: {why}")
                }
                None => rejection.to_string(),
            }
        }
        _ => rejection.to_string(),
    }
}

/// Ranked variants as the ranking lists them (selectable ones first, best first), then wheels
/// that could not be ranked.
fn rows<'a>(ranking: &'a Ranking, input: &'a RankInput, target: &Target) -> Vec<Row<'a>> {
    let mut rows: Vec<Row> = ranking
        .variants
        .iter()
        .map(|v| Row {
            label: v.label,
            compatible: v.compatible,
            properties: v.declared,
            reason: v.rejection.as_ref().map(|r| reason(r, target)),
        })
        .collect();
    rows.extend(input.unusable.iter().map(|(label, reason)| Row {
        label,
        compatible: false,
        properties: &NO_PROPERTIES,
        reason: Some(reason.clone()),
    }));
    rows
}

/// The `--json` document, pretty-printed, as UTF-8.
fn rank_json(ranking: &Ranking, rows: &[Row]) -> Vec<u8> {
    let document = RankJson {
        order: &ranking.order,
        variants: rows,
    };
    // Sized up front (a property line is ~30 bytes, a row's other fields and its reason a few
    // hundred) so the buffer is not copied as it grows; pages never written cost nothing.
    let properties: usize = rows
        .iter()
        .map(|r| property_refs(r.properties).count())
        .sum();
    let mut text = Vec::with_capacity(48 * properties + 512 * rows.len() + 64);
    // Labels, properties (written `ns :: f :: v`), booleans and strings always serialise.
    if serde_json::to_writer_pretty(&mut text, &document).is_err() {
        text.clear();
    }
    text.push(b'\n');
    text
}

/// Properties grouped per feature, one line each: `ns :: feature :: v1 v2 …`.
fn properties_text(properties: &VariantProperties) -> String {
    if properties.is_empty() {
        return "(no properties)".to_owned();
    }
    let mut lines = Vec::new();
    for (ns, features) in properties {
        for (feature, values) in features {
            let values: Vec<&str> = values.iter().map(FeatureValue::as_str).collect();
            lines.push(format!(
                "{ns} :: {feature} :: {}",
                abbreviate(&values, VALUES_SHOWN)
            ));
        }
    }
    lines.join("\n")
}

fn human(rows: &[Row], ranking: &Ranking, input: &RankInput, target: &str) -> String {
    let compatible = ranking.order.len();
    let mut text = format!(
        "{} variants, {} selectable for {target}\n\n",
        rows.len(),
        compatible
    );
    let mut table = Table::new(&["#", "label", "properties"]);
    let best = Style::new().green().bold();
    let rejected = Style::new().dimmed();
    // `rows` lists the selectable variants first, in `order`, then the rest.
    for (position, row) in rows.iter().enumerate() {
        if row.compatible {
            let style = if position == 0 {
                best
            } else {
                Style::new().bold()
            };
            table.row(vec![
                Cell::new((position + 1).to_string()),
                Cell::new(row.label.as_str()).styled(style),
                Cell::new(properties_text(row.properties)),
            ]);
        } else {
            let reason = row.reason.as_deref().unwrap_or("not selectable");
            table.row(vec![
                Cell::new("-").styled(rejected),
                Cell::new(row.label.as_str()).styled(rejected),
                Cell::new(format!("{}\n✗ {reason}", properties_text(row.properties)))
                    .styled(rejected),
            ]);
        }
    }
    text.push_str(&table.render(output::width()));
    if !input.plain_wheels.is_empty() {
        text.push_str(&format!(
            "\nnon-variant fallback (after every variant): {}\n",
            input.plain_wheels.join(", ")
        ));
    }
    if compatible == 0 {
        text.push_str("\nno variant fits this target\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_grouped_per_feature() {
        let mut props = VariantProperties::new();
        for p in ["b::f::1", "a::f::2", "a::g::x", "a::f::1"] {
            let p: vari_core::Property = p.parse().unwrap();
            props
                .get_or_insert_with(p.namespace, Default::default)
                .get_or_insert_with(p.feature, Default::default)
                .insert(p.value);
        }
        assert_eq!(
            properties_text(&props),
            "a :: f :: 1 2\na :: g :: x\nb :: f :: 1"
        );
        assert_eq!(properties_text(&NO_PROPERTIES), "(no properties)");
    }
}
