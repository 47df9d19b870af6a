//! Reading the CLI's inputs: metadata files of every kind, wheels, directories of wheels and
//! target profiles, with failures turned into one-line [`CliError`]s that name the file and key.

use std::path::Path;

use vari_core::metadata::{self, MetadataError, VariantMetadata};
use vari_wheel::{WheelError, WheelErrorKind, WheelInfo};

use crate::error::CliError;

pub(crate) use vari_select::InputKind;

/// Reads a whole text file (a byte-order mark dropped; binary content named for what it is).
/// `-` is standard input.
pub(crate) fn read_text(path: &Path) -> Result<String, CliError> {
    if path == Path::new("-") {
        let bytes = read_stdin()?;
        return vari_select::text_of(Path::new("<stdin>"), bytes).map_err(CliError::from);
    }
    vari_select::read_text(path).map_err(CliError::from)
}

/// Standard input, whole, up to the ceiling of a metadata file (`vari_fs::InputKind`).
pub(crate) fn read_stdin() -> Result<Vec<u8>, CliError> {
    let limit = vari_fs::InputKind::Metadata.limit();
    let mut bytes = Vec::new();
    vari_fs::input::read_bounded(std::io::stdin().lock(), limit, &mut bytes)
        .map_err(|e| CliError::io("<stdin>", e))?;
    if bytes.len() as u64 > limit {
        return Err(CliError::invalid(
            "<stdin>",
            None,
            format!(
                "is larger than the limit of {limit} bytes (raise it with {})",
                vari_fs::input::MAX_INPUT_BYTES_ENV
            ),
        ));
    }
    Ok(bytes)
}

/// The error for a file with metadata problems: the first one, with a count of the others.
pub(crate) fn metadata_error(path: &Path, errors: &[MetadataError]) -> CliError {
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

/// A wheel error as `(key, message)` pairs: the CLI names the wheel itself, and a
/// `variant.json` problem names the member and the key inside it.
pub(crate) fn wheel_problems(error: &WheelError) -> Vec<(Option<String>, String)> {
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
pub(crate) fn wheel_error(wheel: &Path, error: &WheelError) -> CliError {
    let problems = wheel_problems(error);
    let more = problems.len().saturating_sub(1);
    match problems.into_iter().next() {
        Some((key, message)) if more > 0 => CliError::invalid(
            wheel,
            key,
            format!(
                "{message} (and {})",
                crate::table::count(more, "more problem")
            ),
        ),
        Some((key, message)) => CliError::invalid(wheel, key, message),
        None => CliError::invalid(wheel, None, "invalid wheel"),
    }
}

/// Opens a wheel and checks it.
pub(crate) fn inspect_wheel(path: &Path) -> Result<WheelInfo, CliError> {
    if path.is_dir() {
        return Err(CliError::invalid(
            path,
            None,
            "is a directory, not a wheel file",
        ));
    }
    vari_wheel::inspect(path).map_err(|e| wheel_error(path, &e))
}

/// Reads the metadata of one file strictly: any problem is an error.
///
/// Wheels must be variant wheels; directories are not accepted here.
pub(crate) fn read_metadata(path: &Path) -> Result<VariantMetadata, CliError> {
    match InputKind::of(path) {
        InputKind::Pyproject => {
            metadata::read_pyproject(&read_text(path)?).map_err(|e| metadata_error(path, &e))
        }
        kind @ (InputKind::VariantJson | InputKind::IndexJson) => {
            let (meta, warnings) =
                metadata::read_json_with_warnings(&read_text(path)?, kind.source_kind())
                    .map_err(|e| metadata_error(path, &e))?;
            for warning in &warnings {
                crate::error::warn(&format!(
                    "{}: {}: {}",
                    path.display(),
                    warning.path,
                    warning.message
                ));
            }
            Ok(meta)
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

/// One problem: the key inside the file (when there is one) and the message.
pub(crate) type Problem = (Option<String>, String);

/// Every problem of a wheel, for `vari wheel validate` and `vari metadata validate`: every
/// member against RECORD, the dist-info name, the label against variant.json. Each problem is
/// `(key, message)`; the message names the archive member.
pub(crate) fn validation_problems(wheel: &Path) -> Vec<Problem> {
    match vari_wheel::validate(wheel) {
        Err(e) => wheel_problems(&e),
        Ok(v) => v.errors().flat_map(|e| wheel_problems(&e)).collect(),
    }
}

/// Warns (one `warning:` line each) where a variant wheel's declared `sm_arch`, `x86_64 ::
/// level` or `cuda_version_lower_bound` disagrees with what its binaries contain. A plain or
/// unreadable wheel has nothing to compare (its problems are reported elsewhere).
pub(crate) fn warn_declared_vs_code(wheel: &std::path::Path) {
    let Ok(info) = vari_wheel::inspect(wheel) else {
        return;
    };
    let Some(meta) = info.metadata else {
        return;
    };
    let declared: Vec<vari_core::Property> = meta
        .variants
        .values()
        .flat_map(vari_core::metadata::properties_of)
        .collect();
    if declared.is_empty() {
        return;
    }
    match vari_scan::scan_wheel(wheel) {
        Ok(scan) => {
            for warning in scan.check_declared(&declared) {
                crate::error::warn(&warning.to_string());
            }
        }
        Err(e) => crate::error::warn(&format!("cannot compare with the code: {e}")),
    }
}

/// Every valid value of the namespaces the built-in providers know (each registered
/// provider's "all configs"; providers whose features are open, `abi_dependency`, add none).
pub(crate) fn built_in_valid_values() -> vari_wheel::ValidValues {
    vari_detect::registry::providers()
        .iter()
        .filter_map(|provider| {
            let features = provider.all_features();
            if features.is_empty() {
                return None;
            }
            Some(vari_core::NamespaceSupport {
                namespace: provider.namespace().parse().ok()?,
                source: None,
                features,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
