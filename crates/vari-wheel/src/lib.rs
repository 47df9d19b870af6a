//! Variant wheel archives: reading `variant.json` and checking RECORD without extracting.
//!
//! [`inspect`] opens a wheel, reads its zip central directory, finds the `.dist-info` directory,
//! and reads only `RECORD` and (for a variant wheel) `variant.json`. It checks that the label in
//! the filename and the metadata agree (`spec/format.md` §2–3, PEP 825 "Variant metadata") and
//! that `variant.json` matches its RECORD hash.
//!
//! ```no_run
//! let info = vari_wheel::inspect("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl".as_ref())?;
//! if let Some(metadata) = &info.metadata {
//!     println!("{} has {} variant(s)", info.filename, metadata.variants.len());
//! }
//! # Ok::<(), vari_wheel::WheelError>(())
//! ```

mod archive;
mod error;
mod record;

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use vari_core::filename::WheelFilename;
use vari_core::metadata::{properties_of, read_json, SourceKind, VariantMetadata};

use crate::archive::Archive;
pub use crate::error::{WheelError, WheelErrorKind};
pub use crate::record::RecordCheck;
use crate::record::{Record, VerifyError};

/// The most `variant.json` may inflate to. Real files are a few KiB; the cap keeps a hostile
/// wheel from exhausting memory.
pub const MAX_VARIANT_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// The most `RECORD` may inflate to. A wheel with 100 000 files has a RECORD of ~15 MiB.
pub const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// What [`inspect`] learned about a wheel.
#[derive(Debug, Clone)]
pub struct WheelInfo {
    /// The wheel's path, as given.
    pub path: PathBuf,
    /// The parsed file name.
    pub filename: WheelFilename,
    /// The wheel's `variant.json`, with exactly one variant whose label is the filename's;
    /// `None` for a plain (non-variant) wheel.
    pub metadata: Option<VariantMetadata>,
    /// The `.dist-info` directory's name in the archive (`test_package-0.dist-info`).
    pub dist_info: String,
    /// What was verified of RECORD.
    pub record: RecordCheck,
}

/// Opens and checks the wheel at `path` (see the crate docs for what is checked).
pub fn inspect(path: &Path) -> Result<WheelInfo, WheelError> {
    let file = File::open(path)
        .map_err(|source| WheelError::new(path, WheelErrorKind::Open { source }))?;
    inspect_reader(path, BufReader::new(file))
}

/// Like [`inspect`], for a wheel already open or in memory. `path` supplies the file name (which
/// carries the label) and names the wheel in errors; it is not opened.
pub fn inspect_reader<R: Read + Seek>(path: &Path, reader: R) -> Result<WheelInfo, WheelError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| WheelError::new(path, WheelErrorKind::NoFileName))?;
    let filename = WheelFilename::parse(name)
        .map_err(|source| WheelError::new(path, WheelErrorKind::Filename { source }))?;

    let mut archive = Archive::open(path, reader)?;
    let dist_info = archive.dist_info(&filename)?;
    let (record, mut record_check) = read_record(&mut archive, path, &dist_info)?;

    let variant_member = format!("{dist_info}/variant.json");
    let metadata = match (&filename.label, archive.contains(&variant_member)) {
        (None, false) => None,
        (None, true) => {
            return Err(WheelError::new(
                path,
                WheelErrorKind::VariantJsonWithoutLabel {
                    member: variant_member,
                },
            ))
        }
        (Some(label), false) => {
            return Err(WheelError::new(
                path,
                WheelErrorKind::LabelWithoutVariantJson {
                    label: label.to_string(),
                    member: variant_member,
                },
            ))
        }
        (Some(label), true) => {
            let bytes = archive.read(&variant_member, MAX_VARIANT_JSON_BYTES)?;
            verify_member(&record, path, &record_check.member, &variant_member, &bytes)?;
            record_check.verified.push(variant_member.clone());
            let metadata = parse_variant_json(path, &variant_member, &bytes)?;
            check_label(path, &variant_member, label.as_str(), &metadata)?;
            Some(metadata)
        }
    };

    Ok(WheelInfo {
        path: path.to_owned(),
        filename,
        metadata,
        dist_info,
        record: record_check,
    })
}

/// Reads and parses `{dist_info}/RECORD`.
fn read_record<R: Read + Seek>(
    archive: &mut Archive<R>,
    path: &Path,
    dist_info: &str,
) -> Result<(Record, RecordCheck), WheelError> {
    let member = format!("{dist_info}/RECORD");
    if !archive.contains(&member) {
        return Err(WheelError::new(
            path,
            WheelErrorKind::MissingRecord { member },
        ));
    }
    let bytes = archive.read(&member, MAX_RECORD_BYTES)?;
    let record = Record::parse(&bytes).map_err(|e| {
        WheelError::new(
            path,
            WheelErrorKind::InvalidRecord {
                member: member.clone(),
                line: e.line,
                message: e.message,
            },
        )
    })?;
    let check = RecordCheck {
        member,
        entries: record.len(),
        verified: Vec::new(),
    };
    Ok((record, check))
}

/// Checks `bytes` of `member` against its RECORD row.
fn verify_member(
    record: &Record,
    path: &Path,
    record_member: &str,
    member: &str,
    bytes: &[u8],
) -> Result<(), WheelError> {
    record.verify(member, bytes).map_err(|e| match e {
        VerifyError::NotListed => WheelError::new(
            path,
            WheelErrorKind::NotInRecord {
                member: member.to_owned(),
                record: record_member.to_owned(),
            },
        ),
        VerifyError::Unverifiable { line, message } => WheelError::new(
            path,
            WheelErrorKind::InvalidRecord {
                member: record_member.to_owned(),
                line,
                message,
            },
        ),
        VerifyError::Hash {
            algorithm,
            expected,
            actual,
        } => WheelError::new(
            path,
            WheelErrorKind::HashMismatch {
                member: member.to_owned(),
                record: record_member.to_owned(),
                algorithm,
                expected,
                actual,
            },
        ),
        VerifyError::Size { expected, actual } => WheelError::new(
            path,
            WheelErrorKind::SizeMismatch {
                member: member.to_owned(),
                record: record_member.to_owned(),
                expected,
                actual,
            },
        ),
    })
}

fn parse_variant_json(
    path: &Path,
    member: &str,
    bytes: &[u8],
) -> Result<VariantMetadata, WheelError> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        WheelError::new(
            path,
            WheelErrorKind::NotUtf8 {
                member: member.to_owned(),
            },
        )
    })?;
    read_json(text, SourceKind::WheelFile).map_err(|errors| {
        WheelError::new(
            path,
            WheelErrorKind::InvalidVariantJson {
                member: member.to_owned(),
                errors,
            },
        )
    })
}

/// `variant.json` must have exactly one variant, labelled as in the filename; `null` and "no
/// properties" go together.
fn check_label(
    path: &Path,
    member: &str,
    filename_label: &str,
    metadata: &VariantMetadata,
) -> Result<(), WheelError> {
    let mut variants = metadata.variants.iter();
    let (json_label, properties) = match (variants.next(), variants.next()) {
        (Some(only), None) => only,
        _ => {
            return Err(WheelError::new(
                path,
                WheelErrorKind::VariantCount {
                    member: member.to_owned(),
                    labels: metadata.variants.keys().map(ToString::to_string).collect(),
                },
            ))
        }
    };
    if json_label.as_str() != filename_label {
        return Err(WheelError::new(
            path,
            WheelErrorKind::LabelMismatch {
                member: member.to_owned(),
                filename_label: filename_label.to_owned(),
                json_label: json_label.to_string(),
            },
        ));
    }
    let has_properties = properties_of(properties).next().is_some();
    let problem = match (json_label.is_null(), has_properties) {
        (true, true) => "is the null variant but has properties",
        (false, false) => "has no properties, so it must be labelled `null`",
        _ => return Ok(()),
    };
    Err(WheelError::new(
        path,
        WheelErrorKind::NullVariant {
            member: member.to_owned(),
            label: json_label.to_string(),
            problem,
        },
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use vari_core::metadata::{DefaultPriorities, SchemaGeneration, VariantProperties};
    use vari_core::{Property, VariantLabel};

    use super::*;

    /// Metadata built directly, bypassing `read_json` (which already rejects some of these), so
    /// the wheel-level checks are tested on their own.
    fn metadata(variants: &[(&str, &[&str])]) -> VariantMetadata {
        let mut map = BTreeMap::new();
        for (label, props) in variants {
            let mut properties = VariantProperties::new();
            for p in *props {
                let p: Property = p.parse().unwrap();
                properties
                    .get_or_insert_with(p.namespace, Default::default)
                    .get_or_insert_with(p.feature, Default::default)
                    .insert(p.value);
            }
            map.insert(VariantLabel::new(*label).unwrap(), properties);
        }
        VariantMetadata {
            generation: SchemaGeneration::V0_1,
            schema_url: None,
            priorities: DefaultPriorities::default(),
            providers: BTreeMap::new(),
            static_properties: BTreeMap::new(),
            variants: map,
        }
    }

    fn check(label: &str, variants: &[(&str, &[&str])]) -> Result<(), WheelError> {
        check_label(
            Path::new("w.whl"),
            "d/variant.json",
            label,
            &metadata(variants),
        )
    }

    #[test]
    fn one_matching_variant_passes() {
        assert!(check("v3", &[("v3", &["x86_64 :: level :: v3"])]).is_ok());
        assert!(check("null", &[("null", &[])]).is_ok());
    }

    #[test]
    fn variant_count_must_be_one() {
        let e = check("a", &[("a", &["x :: y :: z"]), ("b", &["x :: y :: w"])]).unwrap_err();
        assert!(
            matches!(*e.kind, WheelErrorKind::VariantCount { ref labels, .. } if labels == &["a", "b"])
        );
        assert!(e.to_string().contains("found 2: [a, b]"), "{e}");
        assert!(matches!(
            *check("a", &[]).unwrap_err().kind,
            WheelErrorKind::VariantCount { .. }
        ));
    }

    #[test]
    fn label_must_match_filename() {
        let e = check("a", &[("b", &["x :: y :: z"])]).unwrap_err();
        assert!(matches!(*e.kind, WheelErrorKind::LabelMismatch { .. }));
        assert!(e.to_string().contains("label `a`") && e.to_string().contains("variants.b"));
    }

    #[test]
    fn null_goes_with_no_properties() {
        let e = check("null", &[("null", &["x :: y :: z"])]).unwrap_err();
        assert!(
            e.to_string()
                .contains("is the null variant but has properties"),
            "{e}"
        );
        let e = check("a", &[("a", &[])]).unwrap_err();
        assert!(e.to_string().contains("must be labelled `null`"), "{e}");
    }
}
