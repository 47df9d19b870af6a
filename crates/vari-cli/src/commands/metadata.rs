//! `vari metadata validate`, `merge` and `convert`.

use std::path::Path;
use std::process::ExitCode;

use owo_colors::OwoColorize;
use serde_json::json;
use vari_core::metadata::{self, write_json, SchemaGeneration, VariantMetadata};

use super::json_text;
use crate::cli::{ConvertArgs, MergeArgs, ValidateArgs};
use crate::error::CliError;
use crate::load::{self, InputKind};
use crate::output;

/// The outcome of checking one file: every problem as `key: message`.
struct FileCheck<'a> {
    path: &'a Path,
    problems: Vec<(Option<String>, String)>,
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
        InputKind::Wheel => vari_wheel::inspect(path)
            .map(drop)
            .map_err(|e| load::wheel_problems(&e)),
        InputKind::Pyproject => text(path).and_then(|t| {
            metadata::read_pyproject(&t)
                .map(drop)
                .map_err(from_metadata)
        }),
        kind @ (InputKind::VariantJson | InputKind::IndexJson) => text(path).and_then(|t| {
            metadata::read_json(&t, kind.source_kind())
                .map(drop)
                .map_err(from_metadata)
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

/// Checks every file and reports each; exit 1 when any is invalid.
pub fn validate(args: &ValidateArgs) -> Result<ExitCode, CliError> {
    let checks: Vec<FileCheck> = args
        .files
        .iter()
        .map(|path| FileCheck {
            path,
            problems: check_file(path),
        })
        .collect();
    let text = if args.json {
        let files: Vec<serde_json::Value> = checks
            .iter()
            .map(|c| {
                json!({
                    "path": c.path.display().to_string(),
                    "ok": c.problems.is_empty(),
                    "errors": c.lines(),
                })
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
        }
        text
    };
    if args.json {
        output::print_data(&text)?;
    } else {
        output::print(&text)?;
    }
    let invalid: Vec<&FileCheck> = checks.iter().filter(|c| !c.problems.is_empty()).collect();
    match invalid.first() {
        None => Ok(ExitCode::SUCCESS),
        Some(first) => {
            // `validate` completed, but the contract still wants one `error:` line naming the
            // first file at fault and the key inside it.
            let (key, message) = first.problems[0].clone();
            let others = first.problems.len() - 1 + (invalid.len() - 1);
            let suffix = match others {
                0 => String::new(),
                n => format!(" (and {n} more problems)"),
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
    dest: Option<&Path>,
    subject: &Path,
) -> Result<(), CliError> {
    let written = write_json(meta, generation)
        .map_err(|e| CliError::invalid(subject, Some(e.path), e.message))?;
    for warning in &written.warnings {
        output::warn(&format!("{}: {warning}", subject.display()));
    }
    match dest {
        Some(dest) => {
            output::write_atomically(dest, written.text.as_bytes())?;
            output::print_data(&format!("{}\n", dest.display()))
        }
        None => output::print_data(&written.text),
    }
}

/// Combines metadata files and wheels into one `*-variants.json`.
pub fn merge(args: &MergeArgs) -> Result<ExitCode, CliError> {
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
    let combined = metadata::combine(read.iter().map(|(s, m)| (s.as_str(), m)))
        .map_err(|e| CliError::Other(e.to_string()))?;
    let generation = args.schema.unwrap_or(combined.generation);
    write_metadata(&combined, generation, Some(&args.output), &args.output)?;
    Ok(ExitCode::SUCCESS)
}

/// Rewrites one metadata file in another schema generation.
pub fn convert(args: &ConvertArgs) -> Result<ExitCode, CliError> {
    let meta = load::read_metadata(&args.file)?;
    let generation = args.schema.unwrap_or(meta.generation);
    write_metadata(&meta, generation, args.output.as_deref(), &args.file)?;
    Ok(ExitCode::SUCCESS)
}
