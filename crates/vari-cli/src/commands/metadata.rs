//! `vari metadata validate`, `merge` and `convert`.

use std::path::Path;
use std::process::ExitCode;

use owo_colors::OwoColorize;
use serde_json::json;
use vari_core::filename::{normalize_name, WheelFilename};
use vari_core::metadata::{self, write_json_as, SchemaGeneration, SchemaUrl, VariantMetadata};
use vari_core::uv::{for_uv, ChoiceDifference, UvView};

use crate::cli::{ConvertArgs, Installer, MergeArgs, ValidateArgs};
use crate::error::CliError;
use crate::load::{self, InputKind};
use crate::output;
use crate::output::json_text;

/// The outcome of checking one file: every problem as `key: message`.
struct FileCheck<'a> {
    path: &'a Path,
    problems: Vec<(Option<String>, String)>,
    /// With `--for uv`: what uv makes of it.
    uv: Option<UvCheck>,
}

/// What uv 0.13 makes of one file (`vari_core::uv`), with the `Requires-Dist` lines whose
/// variant markers it cannot parse (wheels).
struct UvCheck {
    view: UvView,
    differences: Vec<ChoiceDifference>,
    markers: Vec<String>,
}

impl UvCheck {
    fn of(path: &Path) -> Option<Self> {
        let meta = metadata_of(path)?;
        let view = UvView::of(&meta);
        let differences = view.compare_on_linux(&meta);
        let markers = match InputKind::of(path) {
            InputKind::Wheel => vari_wheel::read_core_metadata(path)
                .map(|text| metadata::variant_marker_requirements(&text))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        Some(Self {
            view,
            differences,
            markers,
        })
    }

    fn as_intended(&self) -> bool {
        self.view.installs_as_intended(&self.differences) && self.markers.is_empty()
    }

    /// Why not, one line each (`vari_core::uv`'s sentences, and the variant markers).
    fn reasons(&self) -> Vec<String> {
        let mut out = self.view.reasons(&self.differences);
        out.extend(self.markers.iter().map(|line| {
            format!("Requires-Dist {line:?}: uv cannot parse variant markers and fails")
        }));
        out
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "as_intended": self.as_intended(),
            "rejected": self.view.rejected,
            "skipped": self.view.skipped,
            "variant_markers": self.markers,
            "differences": self.differences.iter().map(|d| json!({
                "target": d.target.to_string(),
                "vari": d.vari.as_ref().map(ToString::to_string),
                "uv": d.uv.as_ref().map(ToString::to_string),
            })).collect::<Vec<_>>(),
        })
    }
}

impl FileCheck<'_> {
    fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|(key, message)| match key {
                Some(key) => format!("{key}: {message}"),
                None => message.clone(),
            })
            .collect()
    }
}

/// Every problem of one file, found by the reader for its kind.
fn check_file(path: &Path) -> Vec<(Option<String>, String)> {
    let from_metadata = |errors: Vec<metadata::MetadataError>| {
        errors
            .into_iter()
            .map(|e| (Some(e.path).filter(|p| !p.is_empty()), e.message))
            .collect()
    };
    let text = |path: &Path| load::read_text(path).map_err(|e| vec![(None, io_reason(&e))]);
    let result: Result<(), Vec<(Option<String>, String)>> = match InputKind::of(path) {
        // Every member's hash and size against RECORD, not only variant.json's.
        InputKind::Wheel => {
            let mut problems = load::validation_problems(path);
            if let Ok(vari_wheel::WheelInfo {
                metadata: Some(meta),
                ..
            }) = vari_wheel::inspect(path)
            {
                let single =
                    metadata::check_single_values(&meta, &vari_select::builtin_feature_kinds);
                problems.extend(from_metadata(single));
            }
            match problems.is_empty() {
                true => Ok(()),
                false => Err(problems),
            }
        }
        InputKind::Pyproject => text(path).and_then(|t| {
            metadata::read_pyproject(&t)
                .map(drop)
                .map_err(from_metadata)
        }),
        // PEP 817: several values of a feature its provider says is single-value must not exist.
        kind @ (InputKind::VariantJson | InputKind::IndexJson) => text(path).and_then(|t| {
            let (meta, warnings) =
                metadata::read_json_with_warnings(&t, kind.source_kind()).map_err(from_metadata)?;
            // Read tolerantly (PyTorch 2.8's `00000000` null label): valid, but said.
            for warning in &warnings {
                output::warn(&format!(
                    "{}: {}: {}",
                    path.display(),
                    warning.path,
                    warning.message
                ));
            }
            match metadata::check_single_values(&meta, &vari_select::builtin_feature_kinds) {
                problems if problems.is_empty() => Ok(()),
                problems => Err(from_metadata(problems)),
            }
        }),
        InputKind::Directory => Err(vec![(
            None,
            "is a directory; give the files in it".to_owned(),
        )]),
    };
    result.err().unwrap_or_default()
}

/// The reason of an I/O error without the file name (the report names the file already).
fn io_reason(error: &CliError) -> String {
    match error {
        CliError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}

/// The metadata of a file that checked out alone, for checking the files given together.
fn metadata_of(path: &Path) -> Option<VariantMetadata> {
    match InputKind::of(path) {
        InputKind::Wheel => vari_wheel::inspect(path).ok()?.metadata,
        kind @ (InputKind::VariantJson | InputKind::IndexJson) => {
            metadata::read_json(&load::read_text(path).ok()?, kind.source_kind()).ok()
        }
        _ => None,
    }
}

/// Files of one release given together must agree: each wheel's label and properties with the
/// index file, and wheels sharing a label with each other. Adds each disagreement to the file
/// that brings it in (the later one, in the order given).
fn cross_check(checks: &mut [FileCheck]) {
    let mut groups: Vec<((String, String), Vec<usize>)> = Vec::new();
    for (index, check) in checks.iter().enumerate() {
        if !check.problems.is_empty() {
            continue;
        }
        let Some(release) = release_of(check.path) else {
            continue;
        };
        match groups.iter_mut().find(|(r, _)| *r == release) {
            Some((_, members)) => members.push(index),
            None => groups.push((release, vec![index])),
        }
    }
    for (_, members) in groups.into_iter().filter(|(_, m)| m.len() > 1) {
        // Index files first: a wheel is checked against the release's description.
        let mut ordered = members;
        ordered.sort_by_key(|&i| InputKind::of(checks[i].path) == InputKind::Wheel);
        let mut combined: Option<(VariantMetadata, bool)> = None;
        for index in ordered {
            let path = checks[index].path;
            let Some(meta) = metadata_of(path) else {
                continue;
            };
            let is_index = InputKind::of(path) == InputKind::IndexJson;
            let Some((acc, described)) = combined.take() else {
                combined = Some((meta, is_index));
                continue;
            };
            if described && !is_index {
                for label in meta.variants.keys() {
                    if !acc.variants.contains_key(label) {
                        checks[index].problems.push((
                            Some(format!("variants.{label}")),
                            "the index file given with it has no entry for this label".to_owned(),
                        ));
                    }
                }
            }
            let name = path.display().to_string();
            let sources = [("the files before it", &acc), (name.as_str(), &meta)];
            match metadata::combine(sources) {
                Ok(merged) => combined = Some((merged, described || is_index)),
                Err(e) => {
                    checks[index].problems.push((
                        None,
                        format!("disagrees with the files given before it: {e}"),
                    ));
                    combined = Some((acc, described));
                }
            }
        }
    }
}

/// Checks every file and reports each; exit 1 when any is invalid.
pub(super) fn validate(args: &ValidateArgs) -> Result<ExitCode, CliError> {
    let mut checks: Vec<FileCheck> = args
        .files
        .iter()
        .map(|path| FileCheck {
            path,
            problems: check_file(path),
            uv: None,
        })
        .collect();
    cross_check(&mut checks);
    if args.for_installer == Some(Installer::Uv) {
        for check in checks.iter_mut().filter(|c| c.problems.is_empty()) {
            check.uv = UvCheck::of(check.path);
        }
    }
    for check in &checks {
        if InputKind::of(check.path) == InputKind::Wheel {
            load::warn_declared_vs_code(check.path);
        }
    }
    let text = if args.json {
        let files: Vec<serde_json::Value> = checks
            .iter()
            .map(|c| {
                let mut file = json!({
                    "path": c.path.display().to_string(),
                    "ok": c.problems.is_empty(),
                    "errors": c.lines(),
                });
                if let Some(uv) = &c.uv {
                    file["uv"] = uv.json();
                }
                file
            })
            .collect();
        json_text(&json!({ "files": files }))
    } else {
        let mut text = String::new();
        for check in &checks {
            if check.problems.is_empty() {
                text.push_str(&format!(
                    "{} {}\n",
                    "ok     ".green().bold(),
                    check.path.display()
                ));
            } else {
                text.push_str(&format!(
                    "{} {}\n",
                    "invalid".red().bold(),
                    check.path.display()
                ));
                for line in check.lines() {
                    text.push_str(&format!("        {line}\n"));
                }
            }
            if let Some(uv) = &check.uv {
                let verdict = if uv.as_intended() {
                    "installs as intended with uv 0.13".green().to_string()
                } else {
                    "not as intended with uv 0.13:".yellow().to_string()
                };
                text.push_str(&format!("        {verdict}\n"));
                for line in uv.reasons() {
                    text.push_str(&format!("          {line}\n"));
                }
            }
        }
        text
    };
    if args.json {
        output::print_data(&text)?;
    } else {
        output::print(&text)?;
    }
    let invalid: Vec<&FileCheck> = checks.iter().filter(|c| !c.problems.is_empty()).collect();
    if invalid.is_empty() {
        if let Some((check, uv)) = checks
            .iter()
            .find_map(|c| c.uv.as_ref().filter(|u| !u.as_intended()).map(|u| (c, u)))
        {
            let reasons = uv.reasons();
            let more = match reasons.len().saturating_sub(1) {
                0 => String::new(),
                n => format!(" (and {})", crate::table::count(n, "more reason")),
            };
            return Err(CliError::invalid(
                check.path,
                None,
                format!(
                    "uv 0.13 does not install it as intended: {}{more}",
                    reasons.first().map_or("", String::as_str)
                ),
            ));
        }
    }
    match invalid.first() {
        None => Ok(ExitCode::SUCCESS),
        Some(first) => {
            // `validate` completed, but the contract still wants one `error:` line naming the
            // first file at fault and the key inside it.
            let (key, message) = first.problems[0].clone();
            let others = first.problems.len() - 1 + (invalid.len() - 1);
            let suffix = match others {
                0 => String::new(),
                n => format!(" (and {})", crate::table::count(n, "more problem")),
            };
            Err(CliError::invalid(
                first.path,
                key,
                format!("{message}{suffix}"),
            ))
        }
    }
}

/// Writes metadata in `generation` to `dest` atomically (stdout when `None`). The writer's
/// warnings go to stderr, naming `subject` (the file the metadata came from, or the merge
/// result).
fn write_metadata(
    meta: &VariantMetadata,
    generation: SchemaGeneration,
    url: SchemaUrl,
    dest: Option<&Path>,
    subject: &Path,
) -> Result<(), CliError> {
    let written = write_json_as(meta, generation, url).map_err(|e| e.in_file(subject))?;
    for warning in &written.warnings {
        output::warn(&format!("{}: {warning}", subject.display()));
    }
    match dest {
        Some(dest) if dest != Path::new("-") => {
            output::write_atomically(dest, written.text.as_bytes())?;
            output::print_data(&format!("{}\n", dest.display()))
        }
        _ => output::print_data(&written.text),
    }
}

/// Combines metadata files and wheels into one `*-variants.json`.
pub(super) fn merge(args: &MergeArgs) -> Result<ExitCode, CliError> {
    let mut read: Vec<(String, VariantMetadata)> = Vec::with_capacity(args.files.len());
    let mut plain = Vec::new();
    for path in &args.files {
        // A release may ship a plain wheel beside its variants (`dist/*.whl`): it has no
        // metadata to combine, which is worth a warning, not a failure.
        if InputKind::of(path) == InputKind::Wheel {
            match load::inspect_wheel(path)?.metadata {
                Some(meta) => read.push((path.display().to_string(), meta)),
                None => plain.push(path),
            }
            continue;
        }
        read.push((path.display().to_string(), load::read_metadata(path)?));
    }
    match plain.first() {
        Some(first) if read.is_empty() => {
            return Err(CliError::invalid(
                first,
                None,
                "not a variant wheel, and no other file has variant metadata to merge",
            ))
        }
        _ => {
            for path in plain {
                output::warn(&format!(
                    "{}: not a variant wheel (no variant.json); skipped",
                    path.display()
                ));
            }
        }
    }
    check_one_release(&args.files, &args.output)?;
    let combined = metadata::combine(read.iter().map(|(s, m)| (s.as_str(), m)))?;
    let generation = args.schema.unwrap_or(combined.generation);
    let url = schema_url(args.variantlib_url);
    write_metadata(&combined, generation, url, Some(&args.output), &args.output)?;
    Ok(ExitCode::SUCCESS)
}

/// The project and version a merge input belongs to, when its name says: a wheel's filename,
/// or `{name}-{version}-variants.json`.
fn release_of(path: &Path) -> Option<(String, String)> {
    let name = path.file_name()?.to_str()?;
    if let Ok(wheel) = WheelFilename::parse(name) {
        return Some((wheel.name, wheel.version.to_string()));
    }
    let parsed = vari_core::filename::parse_variants_json_filename(name)?.ok()?;
    Some((normalize_name(&parsed.name), parsed.version.to_string()))
}

/// One index file describes one version of one project: every input must belong to the same
/// release, and an output named like an index file must carry that release's name.
fn check_one_release(inputs: &[std::path::PathBuf], output: &Path) -> Result<(), CliError> {
    let mut first: Option<(&Path, (String, String))> = None;
    for path in inputs {
        let Some(release) = release_of(path) else {
            continue;
        };
        match &first {
            None => first = Some((path, release)),
            Some((first_path, expected)) if *expected != release => {
                return Err(CliError::invalid(
                    path,
                    None,
                    format!(
                        "is {} {}, but {} is {} {}: an index file describes one version of one \
                         project",
                        release.0,
                        release.1,
                        first_path.display(),
                        expected.0,
                        expected.1
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    let Some((_, (project, version))) = first else {
        return Ok(());
    };
    let expected = format!("{project}-{version}-variants.json");
    let given = output
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if output == Path::new("-") || given == expected {
        return Ok(());
    }
    if given.ends_with(vari_core::filename::VARIANTS_JSON_SUFFIX) {
        return Err(CliError::invalid(
            output,
            None,
            format!("names another release: the index file of {project} {version} is {expected}"),
        ));
    }
    output::warn(&format!(
        "{}: installers look for this metadata as {expected}",
        output.display()
    ));
    Ok(())
}

/// Rewrites one metadata file in another schema generation.
pub(super) fn convert(args: &ConvertArgs) -> Result<ExitCode, CliError> {
    let mut meta = load::read_metadata(&args.file)?;
    if args.for_installer == Some(Installer::Uv) {
        let (converted, warnings) = for_uv(&meta);
        for warning in warnings {
            output::warn(&format!("{}: {warning}", args.file.display()));
        }
        meta = converted;
    }
    let generation = args.schema.unwrap_or(meta.generation);
    let url = schema_url(args.variantlib_url);
    write_metadata(&meta, generation, url, args.output.as_deref(), &args.file)?;
    Ok(ExitCode::SUCCESS)
}

/// The `$schema` spelling `--variantlib-url` asks for.
fn schema_url(variantlib: bool) -> SchemaUrl {
    if variantlib {
        SchemaUrl::Variantlib
    } else {
        SchemaUrl::Standard
    }
}
