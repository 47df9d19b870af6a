//! `vari rank`: the variants of a release in the order an installer would prefer them, and the
//! file it would install. Argument mapping and rendering only: the rules are in `vari-select`.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use owo_colors::Style;
use serde::{Serialize, Serializer};
use tracing::debug;
use vari_core::metadata::{property_refs, VariantProperties};
use vari_core::ordering::{Rejection, SelectionOptions};
use vari_core::{FeatureValue, VariantLabel};
use vari_select::{
    choose, Choice, FileFate, HardwareSource, InputKind, Release, Target, VariantRejection,
    VariantVerdict,
};

use super::target;
use crate::cli::{RankArgs, SelectionArgs};
use crate::error::CliError;
use crate::output;
use crate::table::{abbreviate, Cell, Table};

/// Values of one feature shown before the list is abbreviated (the column wraps, so a dozen fit).
const VALUES_SHOWN: usize = 10;

/// One entry of the `--json` `variants` list (`spec/cli.md`), borrowing from the choice so that
/// large releases are written without copying every property.
#[derive(Serialize)]
struct Row<'a> {
    label: &'a VariantLabel,
    compatible: bool,
    #[serde(serialize_with = "property_strings")]
    properties: &'a VariantProperties,
    reason: Option<String>,
    /// The variant's wheel files (only when the release was given with its wheels).
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<Vec<String>>,
}

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

/// The `--json` document: `{"order", "variants"}`, and for a release given with its wheels the
/// file to install and the non-variant fallback.
#[derive(Serialize)]
struct RankJson<'a> {
    order: &'a [VariantLabel],
    variants: &'a [Row<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    chosen: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    non_variant: Option<Vec<String>>,
}

/// Ranks FILE's variants for the target and prints the order.
pub fn run(args: &RankArgs) -> Result<ExitCode, CliError> {
    let started = Instant::now();
    let release = read_release(&args.file)?;
    for warning in &release.warnings {
        output::warn(&warning.to_string());
    }
    debug!(elapsed = ?started.elapsed(), variants = release.metadata.variants.len(), "read");
    let config = super::config::load()?;
    let target = target::resolve(&args.target, &config)?;
    for note in &target.notes {
        debug!("{note}");
    }
    for warning in &target.hardware.warnings {
        output::warn(&warning.to_string());
    }
    // The command line's lists replace the configured ones.
    let options = config.selection(selection_options(&args.selection));
    debug!(elapsed = ?started.elapsed(), target = %target.hardware.source, "target");
    let choice = choose(&release, &target, &options);
    debug!(elapsed = ?started.elapsed(), compatible = choice.order.len(), "ranked");
    warn_unmatched(&choice, &release, &target, &options, &args.file);
    let rows = rows(&choice, &release, &target);
    if args.json {
        output::print_bytes(&rank_json(&choice, &release, &rows))?;
    } else {
        output::print(&human(&rows, &choice, &release, &target))?;
    }
    debug!(elapsed = ?started.elapsed(), "printed");
    drop(rows);
    // The process ends right after: handing a large release's thousands of small allocations
    // back to the allocator one by one would add ~15% to the run for nothing.
    std::mem::forget(choice);
    std::mem::forget(release);
    Ok(ExitCode::SUCCESS)
}

/// The release at FILE, or on standard input for `-`.
fn read_release(file: &Path) -> Result<Release, CliError> {
    let from = |e: vari_select::InputError| CliError::Invalid {
        path: e.path,
        key: e.key,
        message: e.message,
    };
    if file == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::io("<stdin>", e))?;
        let name = Path::new("<stdin>");
        let text = vari_select::text_of(name, bytes).map_err(from)?;
        return Release::from_json_text(name, &text, InputKind::IndexJson).map_err(from);
    }
    Release::read(file).map_err(from)
}

pub(crate) fn selection_options(args: &SelectionArgs) -> SelectionOptions {
    SelectionOptions {
        prefer: args.prefer.clone(),
        forbid: args.forbid.clone(),
        variant: args.variant.clone(),
        no_variants: args.no_variants,
        enable_optional: args.enable_optional.iter().cloned().collect(),
    }
}

/// Warns about options that match nothing: a typo would otherwise pass silently.
fn warn_unmatched(
    choice: &Choice,
    release: &Release,
    target: &Target,
    selection: &SelectionOptions,
    file: &Path,
) {
    if let Some(label) = &choice.unmatched_variant {
        output::warn(&format!(
            "--variant {label}: {} has no variant with this label, so none is selectable",
            file.display()
        ));
    }
    let release_properties = || release.metadata.variants.values().flat_map(property_refs);
    let in_release = |pattern: &vari_core::ordering::Pattern| {
        release_properties().any(|(ns, f, v)| hits(pattern, ns, f, v))
    };
    let in_target = |pattern: &vari_core::ordering::Pattern| {
        target.hardware.profile.namespaces.iter().any(|ns| {
            ns.features.iter().any(|f| {
                f.values
                    .iter()
                    .any(|v| hits(pattern, &ns.namespace, &f.name, v))
            })
        })
    };
    for (flag, patterns) in [
        ("--prefer", &selection.prefer),
        ("--forbid", &selection.forbid),
    ] {
        for pattern in patterns {
            if !in_release(pattern) && !in_target(pattern) {
                output::warn(&format!(
                    "{flag} {pattern}: matches no property of the release or the target"
                ));
            }
        }
    }
    for namespace in &selection.enable_optional {
        if !release.metadata.providers.contains_key(namespace) {
            output::warn(&format!(
                "--enable-optional {namespace}: the release has no provider for this namespace"
            ));
        }
    }
}

/// Whether `pattern` covers the property `ns :: f :: v` (given as borrowed parts).
fn hits(
    pattern: &vari_core::ordering::Pattern,
    ns: &vari_core::Namespace,
    f: &vari_core::FeatureName,
    v: &FeatureValue,
) -> bool {
    use vari_core::ordering::Pattern;
    match pattern {
        Pattern::Namespace(n) => n == ns,
        Pattern::Feature(r) => r.namespace == *ns && r.feature == *f,
        Pattern::Property(p) => p.namespace == *ns && p.feature == *f && p.value == *v,
    }
}

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
                (HardwareSource::Host | HardwareSource::Sysroot(_), None) => format!(
                    "namespace `{namespace}`{provider} is not detected on {}",
                    detected_where(&target.hardware.source)
                ),
                (_, None) => format!(
                    "namespace `{namespace}`{provider} is not supported: the target profile does \
                     not list it"
                ),
            }
        }
        Rejection::OptionalNotEnabled { namespace } => format!(
            "namespace `{namespace}` comes from an optional provider that is off (turn it on with \
             --enable-optional {namespace})"
        ),
        Rejection::Forbidden { pattern } => format!("forbidden by --forbid {pattern}"),
        Rejection::NotRequested { requested } => {
            format!("not the requested variant (--variant {requested})")
        }
        Rejection::VariantsDisabled => "variant wheels are disabled (--no-variants)".to_owned(),
        other => other.to_string(),
    }
}

fn detected_where(source: &HardwareSource) -> String {
    match source {
        HardwareSource::Sysroot(dir) => format!("the snapshot {}", dir.display()),
        _ => "this machine".to_owned(),
    }
}

/// File names, without their directory.
fn file_names<'a>(files: impl Iterator<Item = &'a vari_select::ReleaseFile>) -> Vec<String> {
    files.map(vari_select::ReleaseFile::name).collect()
}

fn rows<'a>(choice: &'a Choice, release: &'a Release, target: &Target) -> Vec<Row<'a>> {
    choice
        .variants
        .iter()
        .map(|v: &VariantVerdict| Row {
            label: v.label,
            compatible: v.is_selectable(),
            properties: v.properties,
            reason: v.rejection.as_ref().map(|r| reason(r, target)),
            files: release
                .has_files
                .then(|| file_names(release.files_of(v.label))),
        })
        .collect()
}

/// The `--json` document, pretty-printed, as UTF-8.
fn rank_json(choice: &Choice, release: &Release, rows: &[Row]) -> Vec<u8> {
    let document = RankJson {
        order: &choice.order,
        variants: rows,
        chosen: release
            .has_files
            .then(|| choice.chosen().map(vari_select::ReleaseFile::name)),
        non_variant: release.has_files.then(|| file_names(release.plain_files())),
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

/// `1 variant`, `2 variants`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn human(rows: &[Row], choice: &Choice, release: &Release, target: &Target) -> String {
    let compatible = choice.order.len();
    let mut text = String::new();
    if !rows.is_empty() {
        text.push_str(&format!(
            "{}, {compatible} selectable for {}\n\n",
            count(rows.len(), "variant"),
            target.hardware.source
        ));
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
    }
    let plain = file_names(release.plain_files());
    if !plain.is_empty() && !rows.is_empty() {
        text.push_str(&format!(
            "\nnon-variant fallback (after every variant): {}\n",
            plain.join(", ")
        ));
    }
    if release.has_files {
        text.push('\n');
        text.push_str(&install_line(choice, release));
        text.push('\n');
    } else if compatible == 0 {
        text.push_str("\nno variant fits this target\n");
    }
    text
}

/// `install: FILE (variant LABEL)`, or why nothing can be installed.
fn install_line(choice: &Choice, release: &Release) -> String {
    let Some(chosen) = choice.chosen() else {
        let wrong_tags = choice
            .files
            .iter()
            .filter(|f| f.fate == FileFate::WrongTags)
            .count();
        return if wrong_tags == release.files.len() && wrong_tags > 0 {
            "nothing to install: no wheel is for this target's Python and platform".to_owned()
        } else {
            "nothing to install: no variant fits this target and there is no non-variant wheel"
                .to_owned()
        };
    };
    match &chosen.filename.label {
        Some(label) => format!("install: {} (variant {label})", chosen.name()),
        None if choice.order.is_empty() && !release.metadata.variants.is_empty() => format!(
            "install: {} (the non-variant wheel: no variant fits)",
            chosen.name()
        ),
        None => format!("install: {} (the non-variant wheel)", chosen.name()),
    }
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
        assert_eq!(
            properties_text(&VariantProperties::new()),
            "(no properties)"
        );
    }

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(count(1, "variant"), "1 variant");
        assert_eq!(count(0, "variant"), "0 variants");
        assert_eq!(count(2, "problem"), "2 problems");
    }
}
