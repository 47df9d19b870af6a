//! `replace_metadata`: a copy of a wheel with other core metadata (`METADATA`), such as the
//! one whose variant markers a variant-aware index has decided for installers that cannot
//! parse them.
//!
//! Driven like `make_variant` (`make.rs`): every member but METADATA and RECORD is copied raw
//! through the verbatim path (or the zip crate's raw copy), RECORD keeps every row's bytes but
//! METADATA's, and the output appears atomically, hashed while it is written.

use std::path::Path;

use crate::check::parse_filename;
use crate::core_metadata::check_headers;
use crate::error::{WheelError, WheelErrorKind};
use crate::make::{invalid_record, open_archive, read_record_bytes, write_wheel, WrittenWheel};
use crate::record::{record_row, Record};
use crate::record_edit::RecordEdit;
use crate::rewrite::ArchiveEdit;

/// The wheel's core metadata (`{dist-info}/METADATA`) as text, read with the same bounds as
/// every other metadata member.
pub fn read_core_metadata(source: &Path) -> Result<String, WheelError> {
    let filename = parse_filename(source)?;
    let mut archive = open_archive(source)?;
    let dist_info = archive.dist_info(&filename)?;
    let member = format!("{dist_info}/METADATA");
    let bytes = archive.read(&member, crate::repack::MAX_METADATA_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| WheelError::new(source, WheelErrorKind::NotUtf8 { member }))
}

/// Writes to `dest` a copy of the wheel `source` whose `{dist-info}/METADATA` is `metadata`:
/// RECORD's row of METADATA gets the new hash and size, and every other member is copied raw
/// (compressed bytes, timestamps, permissions), in order. The same input gives the same bytes;
/// nothing appears at `dest` unless the whole wheel was written.
///
/// `dest` is the output file itself, named as the caller wants (an index serving a variant
/// wheel to installers that reject labels names it without the label; `variant.json` is kept
/// inside). The result carries the output's size and SHA-256; its `label` is the one in
/// `dest`'s file name, and its `metadata` is `None` (`variant.json` is not read).
///
/// Errors name `source`: not a wheel, no METADATA, a `metadata` whose header block holds a
/// control character (a line break inside a field would add fields), or a RECORD without a
/// METADATA row (the copy would fail an installer's check); or the output could not be
/// written.
///
/// ```no_run
/// let metadata = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n";
/// let written = vari_wheel::replace_metadata(
///     "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl".as_ref(),
///     "cache/torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl".as_ref(),
///     metadata,
/// )?;
/// println!("{} {} bytes sha256={:?}", written.path.display(), written.size, written.sha256);
/// # Ok::<(), vari_wheel::WheelError>(())
/// ```
pub fn replace_metadata(
    source: &Path,
    dest: &Path,
    metadata: &[u8],
) -> Result<WrittenWheel, WheelError> {
    let fail = |kind| WheelError::new(source, kind);
    let filename = parse_filename(source)?;
    let mut archive = open_archive(source)?;
    let dist_info = archive.dist_info(&filename)?;
    let metadata_member = format!("{dist_info}/METADATA");
    let checked = std::str::from_utf8(metadata)
        .map_err(|_| "is not UTF-8".to_owned())
        .and_then(check_headers);
    if let Err(message) = checked {
        return Err(fail(WheelErrorKind::InvalidCoreMetadata {
            member: metadata_member,
            message: format!("the replacement {message}"),
        }));
    }
    if !archive.contains(&metadata_member) {
        return Err(fail(WheelErrorKind::InvalidCoreMetadata {
            member: metadata_member,
            message: "missing (every wheel must have one)".to_owned(),
        }));
    }
    let (record_member, record) = read_record_bytes(&mut archive, source, &dist_info)?;
    let listed = Record::parse(&record)
        .map_err(|e| fail(invalid_record(&record_member, e)))?
        .row(&metadata_member)
        .is_some();
    if !listed {
        return Err(fail(WheelErrorKind::NotInRecord {
            member: metadata_member,
            record: record_member,
        }));
    }
    let new_record = RecordEdit {
        replace: [(
            metadata_member.clone(),
            record_row(&metadata_member, metadata),
        )]
        .into_iter()
        .collect(),
        ..RecordEdit::default()
    }
    .apply(&record)
    .map_err(|e| fail(invalid_record(&record_member, e)))?;
    let edit = ArchiveEdit {
        replace: [
            (metadata_member, metadata.to_vec()),
            (record_member, new_record),
        ]
        .into_iter()
        .collect(),
        ..ArchiveEdit::default()
    };
    let (size, sha256) = write_wheel(source, dest, &mut archive, &edit, true)?;
    Ok(WrittenWheel {
        path: dest.to_owned(),
        label: parse_filename(dest).ok().and_then(|f| f.label),
        metadata: None,
        warnings: Vec::new(),
        size,
        sha256,
    })
}
