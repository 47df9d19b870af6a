//! `derive_variant`: a variant wheel made from another wheel whose binaries were rewritten
//! (`vari wheel slim` keeps some GPU architectures of a fat build).
//!
//! The same copy as `make_variant` — every member the edit leaves alone copied raw, in order —
//! with, in addition, new contents for the members the caller rewrote and their RECORD rows
//! (hash and size) updated. The source may be a plain wheel (`variant.json` is added) or a
//! variant wheel (its `variant.json` and label are replaced).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::check::parse_filename;
use crate::error::{WheelError, WheelErrorKind};
use crate::make::{
    create_out_dir, invalid_record, open_archive, read_record_bytes, stem, wheel_output,
    write_wheel, WrittenWheel,
};
use crate::record::record_row;
use crate::record_edit::RecordEdit;
use crate::rewrite::ArchiveEdit;
use crate::valid_values::ValidValues;
use crate::variant::{describe, VariantSpec};

/// Writes into `out_dir` the variant wheel `spec` describes, made of `wheel` with the members
/// named in `replaced` given new contents (and RECORD rows). Every other member is copied raw;
/// the output appears only once complete. The new contents are held in memory and deflated
/// once.
///
/// A replaced member must be a file of the wheel other than its RECORD and `variant.json`,
/// which this function writes itself.
pub fn derive_variant(
    wheel: &Path,
    out_dir: &Path,
    replaced: BTreeMap<String, Vec<u8>>,
    spec: &VariantSpec,
    valid: &ValidValues,
) -> Result<WrittenWheel, WheelError> {
    derive(wheel, out_dir, replaced, BTreeMap::new(), spec, valid)
}

/// [`derive_variant`] with the new contents in files (`member → file`), read as they are
/// written: memory holds buffers, never a member, however large the rewritten binaries. The
/// files are the caller's (left as they are).
pub fn derive_variant_from_files(
    wheel: &Path,
    out_dir: &Path,
    replaced: BTreeMap<String, PathBuf>,
    spec: &VariantSpec,
    valid: &ValidValues,
) -> Result<WrittenWheel, WheelError> {
    derive(wheel, out_dir, BTreeMap::new(), replaced, spec, valid)
}

fn derive(
    wheel: &Path,
    out_dir: &Path,
    replaced: BTreeMap<String, Vec<u8>>,
    replaced_from: BTreeMap<String, PathBuf>,
    spec: &VariantSpec,
    valid: &ValidValues,
) -> Result<WrittenWheel, WheelError> {
    let fail = |kind| WheelError::new(wheel, kind);
    let filename = parse_filename(wheel)?;
    let described = describe(spec, valid).map_err(fail)?;
    let mut archive = open_archive(wheel)?;
    let dist_info = archive.dist_info(&filename)?;
    let variant_member = format!("{dist_info}/variant.json");
    let has_variant_json = archive.contains(&variant_member);
    match (&filename.label, has_variant_json) {
        (Some(label), false) => {
            return Err(fail(WheelErrorKind::LabelWithoutVariantJson {
                label: label.to_string(),
                member: variant_member,
            }))
        }
        (None, true) => {
            return Err(fail(WheelErrorKind::VariantJsonWithoutLabel {
                member: variant_member,
            }))
        }
        _ => {}
    }
    let (record_member, record) = read_record_bytes(&mut archive, wheel, &dist_info)?;
    for name in replaced.keys().chain(replaced_from.keys()) {
        let problem = if *name == record_member || *name == variant_member {
            Some("written by vari itself, not replaceable")
        } else if !archive.contains(name) {
            Some("not a member of the wheel")
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(fail(WheelErrorKind::Member {
                member: name.clone(),
                message: message.to_owned(),
            }));
        }
    }

    let variant_bytes = described.text.into_bytes();
    let mut rows: std::collections::HashMap<String, String> = replaced
        .iter()
        .map(|(name, bytes)| (name.clone(), record_row(name, bytes)))
        .collect();
    for (name, path) in &replaced_from {
        let row = record_row_of_file(name, path).map_err(|e| {
            fail(WheelErrorKind::Member {
                member: name.clone(),
                message: format!("{}: {e}", path.display()),
            })
        })?;
        rows.insert(name.clone(), row);
    }
    let mut record_edit = RecordEdit {
        replace: rows,
        insert_before: Some(record_member.clone()),
        ..RecordEdit::default()
    };
    let variant_row = record_row(&variant_member, &variant_bytes);
    if has_variant_json {
        record_edit
            .replace
            .insert(variant_member.clone(), variant_row);
    } else {
        record_edit.insert.push(variant_row);
    }
    let new_record = record_edit
        .apply(&record)
        .map_err(|e| fail(invalid_record(&record_member, e)))?;

    let mut edit = ArchiveEdit {
        replace: replaced.into_iter().collect(),
        replace_from: replaced_from.into_iter().collect(),
        insert_before: Some(record_member.clone()),
        ..ArchiveEdit::default()
    };
    edit.replace.insert(record_member, new_record);
    if has_variant_json {
        edit.replace.insert(variant_member, variant_bytes);
    } else {
        edit.insert.push((variant_member, variant_bytes));
    }

    let stem = stem(wheel);
    let plain = match &filename.label {
        Some(label) => stem
            .strip_suffix(label.as_str())
            .and_then(|s| s.strip_suffix('-'))
            .unwrap_or(&stem),
        None => &stem,
    };
    let output = wheel_output(wheel, out_dir, &format!("{plain}-{}.whl", described.label))?;
    create_out_dir(wheel, out_dir)?;
    let (size, sha256) = write_wheel(wheel, &output, &mut archive, &edit, false)?;
    Ok(WrittenWheel {
        path: output,
        label: Some(described.label),
        metadata: Some(described.metadata),
        warnings: described.warnings,
        size,
        sha256,
    })
}

/// The RECORD row of `member` whose contents are the file at `path`, read in blocks.
fn record_row_of_file(member: &str, path: &Path) -> std::io::Result<String> {
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;
    use sha2::Digest;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = sha2::Sha256::new();
    let mut size = 0u64;
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        size += n as u64;
    }
    let digest = URL_SAFE_NO_PAD.encode(hasher.finalize());
    Ok(format!(
        "{},sha256={digest},{size}",
        crate::record::csv_field(member)
    ))
}
