//! Reading the CLI's inputs: metadata files of every kind, wheels, directories of wheels and
//! target profiles, with failures turned into one-line [`CliError`]s that name the file and key.

use std::path::{Path, PathBuf};

use vari_core::filename::WheelFilename;
use vari_core::metadata::{self, MetadataError, SourceKind, VariantMetadata};
use vari_core::{Profile, VariantLabel};
use vari_detect::facts::{profile_from_facts, FactsError};
use vari_detect::{detect, DetectContext, DetectOptions, Detection, Sysroot};
use vari_wheel::{WheelError, WheelErrorKind, WheelInfo};

use crate::error::CliError;

/// What kind of metadata a path holds, decided by its name (and whether it is a directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `pyproject.toml` (or any `.toml`): the `[variant]` table.
    Pyproject,
    /// A wheel's `variant.json`.
    VariantJson,
    /// An index file, `*-variants.json` (any other `.json`).
    IndexJson,
    /// A wheel.
    Wheel,
    /// A directory of wheels.
    Directory,
}

impl InputKind {
    /// The kind of `path`.
    pub fn of(path: &Path) -> Self {
        if path.is_dir() {
            return Self::Directory;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".whl") {
            Self::Wheel
        } else if name.ends_with(".toml") {
            Self::Pyproject
        } else if name == "variant.json" {
            Self::VariantJson
        } else {
            Self::IndexJson
        }
    }

    /// The source kind the metadata reader validates a JSON file against.
    pub fn source_kind(self) -> SourceKind {
        match self {
            Self::VariantJson => SourceKind::WheelFile,
            _ => SourceKind::IndexFile,
        }
    }
}

/// Reads a whole text file.
pub fn read_text(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::io(path, e))
}

/// The error for a file with metadata problems: the first one, with a count of the others.
pub fn metadata_error(path: &Path, errors: &[MetadataError]) -> CliError {
    match errors.first() {
        None => CliError::invalid(path, None, "invalid variant metadata"),
        Some(first) => {
            let more = match errors.len() - 1 {
                0 => String::new(),
                1 => " (and 1 more problem: see `vari metadata validate`)".to_owned(),
                n => format!(" (and {n} more problems: see `vari metadata validate`)"),
            };
            CliError::invalid(
                path,
                Some(first.path.clone()),
                format!("{}{more}", first.message),
            )
        }
    }
}

/// Every problem in a metadata file as `key: message` lines (for `validate`).
pub fn problem_lines(errors: &[MetadataError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| {
            if e.path.is_empty() {
                e.message.clone()
            } else {
                format!("{}: {}", e.path, e.message)
            }
        })
        .collect()
}

/// A wheel error as `(key, message)` pairs: the CLI names the wheel itself, and a
/// `variant.json` problem names the member and the key inside it.
pub fn wheel_problems(error: &WheelError) -> Vec<(Option<String>, String)> {
    if let WheelErrorKind::InvalidVariantJson { member, errors } = error.kind.as_ref() {
        return errors
            .iter()
            .map(|e| {
                let key = if e.path.is_empty() {
                    member.clone()
                } else {
                    format!("{member}: {}", e.path)
                };
                (Some(key), e.message.clone())
            })
            .collect();
    }
    vec![(None, error.kind.to_string())]
}

/// A wheel error as a one-line [`CliError`].
pub fn wheel_error(wheel: &Path, error: &WheelError) -> CliError {
    let problems = wheel_problems(error);
    let more = problems.len().saturating_sub(1);
    match problems.into_iter().next() {
        Some((key, message)) if more > 0 => {
            CliError::invalid(wheel, key, format!("{message} (and {more} more problems)"))
        }
        Some((key, message)) => CliError::invalid(wheel, key, message),
        None => CliError::invalid(wheel, None, "invalid wheel"),
    }
}

/// Opens a wheel and checks it.
pub fn inspect_wheel(path: &Path) -> Result<WheelInfo, CliError> {
    vari_wheel::inspect(path).map_err(|e| wheel_error(path, &e))
}

/// Reads the metadata of one file strictly: any problem is an error.
///
/// Wheels must be variant wheels; directories are not accepted here.
pub fn read_metadata(path: &Path) -> Result<VariantMetadata, CliError> {
    match InputKind::of(path) {
        InputKind::Pyproject => {
            metadata::read_pyproject(&read_text(path)?).map_err(|e| metadata_error(path, &e))
        }
        kind @ (InputKind::VariantJson | InputKind::IndexJson) => {
            metadata::read_json(&read_text(path)?, kind.source_kind())
                .map_err(|e| metadata_error(path, &e))
        }
        InputKind::Wheel => inspect_wheel(path)?
            .metadata
            .ok_or_else(|| CliError::invalid(path, None, "not a variant wheel (no variant.json)")),
        InputKind::Directory => Err(CliError::invalid(
            path,
            None,
            "is a directory; give the metadata files or wheels in it",
        )),
    }
}

/// Reads a JSON metadata file leniently: invalid entries are dropped and returned as warnings.
pub fn read_json_lenient(
    path: &Path,
    kind: InputKind,
) -> Result<(VariantMetadata, Vec<MetadataError>), CliError> {
    metadata::read_json_lenient(&read_text(path)?, kind.source_kind())
        .map_err(|e| metadata_error(path, &e))
}

/// The metadata to rank and what else was learnt about the release on the way.
#[derive(Debug)]
pub struct RankInput {
    /// The combined metadata, restricted to the labels that can be installed.
    pub metadata: VariantMetadata,
    /// Labels of wheels that cannot be ranked, with why (no metadata for the label, unreadable).
    pub unusable: Vec<(VariantLabel, String)>,
    /// Non-variant wheels of the release (the fallback after every variant).
    pub plain_wheels: Vec<String>,
    /// Problems that were skipped over, as `file: key: message` lines.
    pub warnings: Vec<String>,
}

impl RankInput {
    /// The input of a single metadata file or wheel: no other wheels to account for.
    fn of(metadata: VariantMetadata, warnings: Vec<String>) -> Self {
        Self {
            metadata,
            unusable: Vec::new(),
            plain_wheels: Vec::new(),
            warnings,
        }
    }
}

/// Reads what `vari rank FILE` ranks: a `*-variants.json`, a `variant.json`, a wheel or a
/// directory of wheels. JSON is read leniently (invalid variants dropped with a warning).
pub fn rank_input(path: &Path) -> Result<RankInput, CliError> {
    let kind = InputKind::of(path);
    match kind {
        InputKind::Directory => directory_input(path),
        InputKind::Wheel => Ok(RankInput::of(read_metadata(path)?, Vec::new())),
        InputKind::Pyproject => Err(CliError::invalid(
            path,
            None,
            "a pyproject.toml lists no variants to rank; rank a *-variants.json, a wheel or a directory of wheels",
        )),
        InputKind::VariantJson | InputKind::IndexJson => {
            let (metadata, problems) = read_json_lenient(path, kind)?;
            Ok(RankInput::of(metadata, located(path, &problems)))
        }
    }
}

/// `file: key: message` lines for metadata problems.
fn located(path: &Path, problems: &[MetadataError]) -> Vec<String> {
    problem_lines(problems)
        .into_iter()
        .map(|line| format!("{}: {line}", path.display()))
        .collect()
}

/// The wheels of one directory, by parsed filename.
struct DirectoryListing {
    wheels: Vec<(PathBuf, WheelFilename)>,
    index_files: Vec<PathBuf>,
    /// `*.whl` files whose names are not wheel filenames (skipped).
    warnings: Vec<String>,
}

fn list_directory(dir: &Path) -> Result<DirectoryListing, CliError> {
    let mut listing = DirectoryListing {
        wheels: Vec::new(),
        index_files: Vec::new(),
        warnings: Vec::new(),
    };
    let entries = std::fs::read_dir(dir).map_err(|e| CliError::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| CliError::io(dir, e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".whl") {
            match WheelFilename::parse(name) {
                Ok(filename) => listing.wheels.push((path, filename)),
                Err(e) => listing
                    .warnings
                    .push(format!("{}: skipped: {e}", path.display())),
            }
        } else if name.ends_with("-variants.json") {
            listing.index_files.push(path);
        }
    }
    // Directory order is arbitrary; sorting makes warnings and errors reproducible.
    listing.wheels.sort_by(|a, b| a.0.cmp(&b.0));
    listing.index_files.sort();
    listing.warnings.sort();
    Ok(listing)
}

/// A directory of wheels of one release: the release's `*-variants.json` when the directory has
/// it, else the combination of the wheels' `variant.json` files. Wheels whose label the metadata
/// does not describe are reported as unusable; labels without a wheel are not ranked.
fn directory_input(dir: &Path) -> Result<RankInput, CliError> {
    let mut listing = list_directory(dir)?;
    let mut warnings = std::mem::take(&mut listing.warnings);
    let Some((_, first)) = listing.wheels.first() else {
        return Err(CliError::invalid(
            dir,
            None,
            "no wheels (*.whl) in this directory",
        ));
    };
    let release = (first.name.clone(), first.version.clone());
    if let Some((path, other)) = listing
        .wheels
        .iter()
        .find(|(_, f)| (f.name.clone(), f.version.clone()) != release)
    {
        return Err(CliError::invalid(
            path,
            None,
            format!(
                "is {} {}, but the directory also has {} {}: rank one release at a time",
                other.name, other.version, release.0, release.1
            ),
        ));
    }
    let mut unusable = Vec::new();
    let plain_wheels: Vec<String> = listing
        .wheels
        .iter()
        .filter(|(_, f)| f.label.is_none())
        .map(|(p, _)| file_name(p))
        .collect();

    let index_name = first.variants_json_name();
    let index_file = listing
        .index_files
        .iter()
        .find(|p| file_name(p) == index_name);
    let mut combined = match index_file {
        Some(index) => {
            let (meta, problems) = read_json_lenient(index, InputKind::IndexJson)?;
            warnings.extend(located(index, &problems));
            meta
        }
        None => wheels_metadata(&listing, &mut warnings, &mut unusable)?,
    };

    let wheel_labels: Vec<&VariantLabel> = listing
        .wheels
        .iter()
        .filter_map(|(_, f)| f.label.as_ref())
        .collect();
    for label in &wheel_labels {
        let already = unusable.iter().any(|(l, _)| l == *label);
        if !combined.variants.contains_key(*label) && !already {
            unusable.push((
                (*label).clone(),
                "the release metadata has no entry for this label".to_owned(),
            ));
        }
    }
    combined
        .variants
        .retain(|label, _| wheel_labels.contains(&label));
    Ok(RankInput {
        metadata: combined,
        unusable,
        plain_wheels,
        warnings,
    })
}

/// Combines the `variant.json` of every variant wheel in the listing; unreadable wheels are
/// skipped with a warning and reported unusable.
fn wheels_metadata(
    listing: &DirectoryListing,
    warnings: &mut Vec<String>,
    unusable: &mut Vec<(VariantLabel, String)>,
) -> Result<VariantMetadata, CliError> {
    let mut read: Vec<(String, VariantMetadata)> = Vec::new();
    for (path, filename) in &listing.wheels {
        let Some(label) = &filename.label else {
            continue;
        };
        match vari_wheel::inspect(path) {
            Ok(WheelInfo {
                metadata: Some(meta),
                ..
            }) => read.push((path.display().to_string(), meta)),
            Ok(_) => unusable.push((label.clone(), "the wheel has no variant.json".to_owned())),
            Err(e) => {
                let reason = wheel_error(path, &e).one_line();
                warnings.push(reason.clone());
                unusable.push((label.clone(), format!("unreadable wheel: {reason}")));
            }
        }
    }
    if read.is_empty() {
        let dir = listing
            .wheels
            .first()
            .and_then(|(p, _)| p.parent())
            .unwrap_or(Path::new("."));
        return Err(CliError::invalid(
            dir,
            None,
            "no readable variant wheel and no *-variants.json: nothing to rank",
        ));
    }
    metadata::combine(read.iter().map(|(source, meta)| (source.as_str(), meta)))
        .map_err(|e| CliError::Other(e.to_string()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether a facts document says `inherit = "host"` (malformed TOML is reported by the facts
/// reader itself).
fn inherits_from_host(text: &str) -> bool {
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("inherit")
                .and_then(|v| v.as_str().map(|s| s == "host"))
        })
        .unwrap_or(false)
}

/// A `toml` parse error without its source excerpt: (`line L column C`, the explanation).
///
/// The crate renders errors as a multi-line snippet with a caret; the CLI reports one line.
fn compact_toml_error(message: &str) -> (Option<String>, String) {
    let mut position = None;
    let mut parts = Vec::new();
    for line in message.lines().map(str::trim) {
        if let Some(at) = line.strip_prefix("TOML parse error at ") {
            position = Some(at.replace(", ", " "));
        } else if !line.is_empty() && !line.contains('|') {
            parts.push(line);
        }
    }
    (position, parts.join("; "))
}

/// This machine's profile (cached detection), with `abi_dependency` read from the `python`
/// environment when there is one.
pub fn detect_host(python: Option<&Path>) -> Result<Profile, CliError> {
    detect_host_reports(python).map(|d| d.profile())
}

/// This machine's detection (cached), with each provider's report.
pub fn detect_host_reports(python: Option<&Path>) -> Result<Detection, CliError> {
    let mut context = DetectContext::from_process_env(Sysroot::host());
    context.python = python.map(Path::to_path_buf);
    check_overrides(&context)?;
    Ok(detect(&DetectOptions {
        context,
        use_cache: true,
    }))
}

/// Fails on a malformed override variable: detection alone would only drop that namespace,
/// and a selection made without it would quietly be the wrong one.
pub fn check_overrides(context: &DetectContext) -> Result<(), CliError> {
    vari_detect::overrides::check_overrides(context).map_err(|e| CliError::Other(e.to_string()))
}

/// Reads a target profile: `vari-profile/1` JSON, or hardware facts when the name ends in `.toml`.
pub fn read_profile(path: &Path, python: Option<&Path>) -> Result<Profile, CliError> {
    let text = read_text(path)?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
    {
        let base = path.parent().unwrap_or(Path::new("."));
        // Detecting this machine costs time; only a profile that inherits from it needs it.
        let host = match inherits_from_host(&text) {
            true => Some(detect_host(python)?),
            false => None,
        };
        return profile_from_facts(&text, base, host.as_ref()).map_err(|e| match e {
            FactsError::Invalid { path: key, message } => {
                CliError::invalid(path, Some(key), message)
            }
            FactsError::Syntax(message) => {
                let (position, message) = compact_toml_error(&message);
                CliError::invalid(path, position, format!("not valid TOML: {message}"))
            }
        });
    }
    Profile::from_json(&text).map_err(|e| match e {
        vari_core::profile::ProfileError::Invalid { path: key, message } => {
            CliError::invalid(path, Some(key), message)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_file_names() {
        assert_eq!(
            InputKind::of(Path::new("x/pyproject.toml")),
            InputKind::Pyproject
        );
        assert_eq!(
            InputKind::of(Path::new("x/variant.json")),
            InputKind::VariantJson
        );
        assert_eq!(
            InputKind::of(Path::new("torch-2.8-variants.json")),
            InputKind::IndexJson
        );
        assert_eq!(
            InputKind::of(Path::new("a-1-py3-none-any.WHL")),
            InputKind::Wheel
        );
        assert_eq!(InputKind::of(Path::new(".")), InputKind::Directory);
    }

    #[test]
    fn toml_errors_lose_their_snippet() {
        let message = "TOML parse error at line 1, column 8\n  |\n1 | [nvidia\n  |        ^\ninvalid table header\nexpected `.`, `]`\n";
        assert_eq!(
            compact_toml_error(message),
            (
                Some("line 1 column 8".to_owned()),
                "invalid table header; expected `.`, `]`".to_owned()
            )
        );
    }

    #[test]
    fn metadata_error_counts_the_rest() {
        let errors = vec![
            MetadataError {
                path: "variants.a".into(),
                message: "bad".into(),
            },
            MetadataError {
                path: "variants.b".into(),
                message: "worse".into(),
            },
        ];
        let e = metadata_error(Path::new("f.json"), &errors);
        assert_eq!(
            e.to_string(),
            "f.json: variants.a: bad (and 1 more problem: see `vari metadata validate`)"
        );
    }
}
