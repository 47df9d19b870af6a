//! Examining a wheel and collecting every problem as data: the filename, the `.dist-info`
//! directory, RECORD, `variant.json` against the label, and (for [`Depth::Everything`]) every
//! member against RECORD.
//!
//! [`crate::inspect`] is this with [`Depth::Metadata`], failing on the first problem;
//! [`validate`] goes on past problems so that a report can list them all and a viewer can still
//! show a wheel whose label disagrees with its `variant.json`.

use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use vari_core::filename::WheelFilename;
use vari_core::metadata::{properties_of, read_json, SourceKind, VariantMetadata};

use crate::archive::Archive;
use crate::error::{WheelError, WheelErrorKind};
use crate::layout::{self, Reach};
use crate::limits::{MAX_RECORD_BYTES, MAX_VARIANT_JSON_BYTES};
use crate::reader::{SeekBufReader, INSPECT_BUFFER};
use crate::record::{Record, RecordCheck, VerifyError};

/// How much of a wheel to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// The filename, the `.dist-info` directory, RECORD's format, and `variant.json` (its
    /// RECORD hash, its contents, its label). Reads only the central directory, RECORD and
    /// `variant.json`: fast on any wheel.
    Metadata,
    /// Also every member's hash and size against RECORD, members RECORD does not list, and
    /// RECORD rows without a member. Decompresses the whole wheel.
    Everything,
}

/// What [`validate`] found: whatever could be read, and every problem.
#[derive(Debug)]
pub struct Validation {
    /// The wheel's path, as given.
    pub path: PathBuf,
    /// The parsed file name.
    pub filename: WheelFilename,
    /// The `.dist-info` directory matching the filename, when there is exactly one.
    pub dist_info: Option<String>,
    /// The wheel's `variant.json` as read (even when it disagrees with the label); `None` for a
    /// plain wheel or when it cannot be parsed.
    pub metadata: Option<VariantMetadata>,
    /// What was verified of RECORD, when RECORD could be read.
    pub record: Option<RecordCheck>,
    /// Every problem found, in the order checked (filename and archive layout first, then
    /// RECORD, `variant.json`, and members in archive order).
    pub problems: Vec<WheelErrorKind>,
    /// How many bytes checking members against RECORD inflated (0 for [`Depth::Metadata`]):
    /// each member's at most once, and at most its declared size.
    pub inflated: u64,
}

impl Validation {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }

    /// Each problem as a [`WheelError`] naming the wheel.
    pub fn errors(self) -> impl Iterator<Item = WheelError> {
        let path = self.path;
        self.problems
            .into_iter()
            .map(move |kind| WheelError::new(&path, kind))
    }
}

/// Checks everything about the wheel at `path` ([`Depth::Everything`]).
///
/// `Err` only when the wheel cannot be examined at all: it cannot be opened, is a directory,
/// its filename is not a wheel filename, or it is not a zip archive. Every other problem is in
/// [`Validation::problems`].
pub fn validate(path: &Path) -> Result<Validation, WheelError> {
    check(path, Depth::Everything)
}

/// Checks the wheel at `path` to the given depth (see [`validate`]).
pub fn check(path: &Path, depth: Depth) -> Result<Validation, WheelError> {
    let file = open(path)?;
    check_reader(
        path,
        SeekBufReader::with_capacity(INSPECT_BUFFER, file),
        depth,
    )
}

/// Opens a wheel file, telling a directory apart (reading one fails with a confusing "not a
/// zip archive").
pub(crate) fn open(path: &Path) -> Result<File, WheelError> {
    if path.is_dir() {
        return Err(WheelError::new(path, WheelErrorKind::IsADirectory));
    }
    File::open(path).map_err(|source| WheelError::new(path, WheelErrorKind::Open { source }))
}

/// The filename part of `path`, parsed.
pub(crate) fn parse_filename(path: &Path) -> Result<WheelFilename, WheelError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| WheelError::new(path, WheelErrorKind::NoFileName))?;
    WheelFilename::parse(name)
        .map_err(|source| WheelError::new(path, WheelErrorKind::Filename { source }))
}

/// Like [`check`], for a wheel already open or in memory; `path` names it (its file name
/// carries the label) and is not opened.
pub fn check_reader<R: Read + Seek>(
    path: &Path,
    reader: R,
    depth: Depth,
) -> Result<Validation, WheelError> {
    let filename = parse_filename(path)?;
    let mut reader = reader;
    let reach = match depth {
        Depth::Metadata => Reach::Listing,
        Depth::Everything => Reach::EveryMember,
    };
    let layout = layout::check(path, &mut reader, reach)?;
    let mut v = Validation {
        path: path.to_owned(),
        filename,
        dist_info: None,
        metadata: None,
        record: None,
        problems: layout.problems,
        inflated: 0,
    };
    // Members are inflated only when that is bounded (no overlapping data, a declared total
    // under the ceiling); the problems already say why not.
    let inflate = layout.inflate_safe;
    let mut archive = match depth {
        Depth::Metadata => Archive::from_central(path, reader, layout.cd)?,
        Depth::Everything => Archive::open(path, reader)?,
    };
    let dist_info = match archive.dist_info(&v.filename) {
        Ok(dir) => dir,
        Err(e) => {
            v.problems.push(*e.kind);
            return Ok(v);
        }
    };
    let mut record = read_record(&mut archive, &dist_info, &mut v.problems);
    check_variant_json(&mut archive, &dist_info, record.as_mut(), &mut v);
    if let Some((record, mut record_check)) = record {
        if depth == Depth::Everything && inflate {
            v.inflated +=
                verify_every_member(&mut archive, &record, &mut record_check, &mut v.problems);
        }
        v.record = Some(record_check);
    }
    v.dist_info = Some(dist_info);
    Ok(v)
}

/// Reads and parses `{dist_info}/RECORD`, or records why it cannot.
fn read_record<R: Read + Seek>(
    archive: &mut Archive<R>,
    dist_info: &str,
    problems: &mut Vec<WheelErrorKind>,
) -> Option<(Record, RecordCheck)> {
    let member = format!("{dist_info}/RECORD");
    if !archive.contains(&member) {
        problems.push(WheelErrorKind::MissingRecord { member });
        return None;
    }
    let bytes = match archive.read(&member, MAX_RECORD_BYTES) {
        Ok(bytes) => bytes,
        Err(e) => {
            problems.push(*e.kind);
            return None;
        }
    };
    match Record::parse(&bytes) {
        Ok(record) => {
            let check = RecordCheck {
                member,
                entries: record.len(),
                verified: Vec::new(),
            };
            Some((record, check))
        }
        Err(e) => {
            problems.push(WheelErrorKind::InvalidRecord {
                member,
                line: e.line,
                message: e.message,
            });
            None
        }
    }
}

/// Reads `variant.json` when the label says there should be one (or when there is one
/// anyway), verifies it against RECORD, and checks it against the label.
fn check_variant_json<R: Read + Seek>(
    archive: &mut Archive<R>,
    dist_info: &str,
    record: Option<&mut (Record, RecordCheck)>,
    v: &mut Validation,
) {
    let member = format!("{dist_info}/variant.json");
    let present = archive.contains(&member);
    let label = v.filename.label.as_ref().map(ToString::to_string);
    match (&label, present) {
        (None, false) => return,
        (None, true) => v.problems.push(WheelErrorKind::VariantJsonWithoutLabel {
            member: member.clone(),
        }),
        (Some(label), false) => {
            v.problems.push(WheelErrorKind::LabelWithoutVariantJson {
                label: label.clone(),
                member,
            });
            return;
        }
        (Some(_), true) => {}
    }
    let bytes = match archive.read(&member, MAX_VARIANT_JSON_BYTES) {
        Ok(bytes) => bytes,
        Err(e) => {
            v.problems.push(*e.kind);
            return;
        }
    };
    if let Some((record, record_check)) = record {
        match record.verify(&member, &bytes) {
            Ok(()) => record_check.verified.push(member.clone()),
            Err(e) => v
                .problems
                .push(verify_problem(e, &record_check.member, &member)),
        }
    }
    let metadata = match parse_variant_json(&member, &bytes) {
        Ok(metadata) => metadata,
        Err(kind) => {
            v.problems.push(kind);
            return;
        }
    };
    if let Some(label) = &label {
        if let Err(kind) = check_label(&member, label, &metadata) {
            v.problems.push(kind);
        }
    }
    v.metadata = Some(metadata);
}

/// Hashes every member and compares it with RECORD; lists RECORD rows without a member.
/// Returns the bytes inflated. Linear in the number of members: every lookup is hashed.
fn verify_every_member<R: Read + Seek>(
    archive: &mut Archive<R>,
    record: &Record,
    check: &mut RecordCheck,
    problems: &mut Vec<WheelErrorKind>,
) -> u64 {
    let record_member = check.member.clone();
    let dist_info = record_member.trim_end_matches("RECORD");
    let names: Vec<String> = archive.names().map(str::to_owned).collect();
    // Members verified already (variant.json): a set, not a scan of the list per member.
    let already: std::collections::HashSet<String> = check.verified.iter().cloned().collect();
    let mut inflated = 0;
    for name in &names {
        if name.ends_with('/') || *name == record_member || already.contains(name) {
            continue;
        }
        // Signatures of RECORD cannot hash themselves into it (binary distribution format).
        let is_signature = name
            .strip_prefix(dist_info)
            .is_some_and(|rest| rest == "RECORD.jws" || rest == "RECORD.p7s");
        let Some(row) = record.row(name) else {
            if !is_signature {
                problems.push(WheelErrorKind::NotInRecord {
                    member: name.clone(),
                    record: record_member.clone(),
                });
            }
            continue;
        };
        if !row.has_hash() {
            if !is_signature {
                problems.push(WheelErrorKind::UnhashedEntry {
                    member: name.clone(),
                    record: record_member.clone(),
                    line: row.line,
                });
            }
            continue;
        }
        match archive.verify_member(name, record, &mut inflated) {
            Ok(Ok(())) => check.verified.push(name.clone()),
            Ok(Err(e)) => problems.push(verify_problem(e, &record_member, name)),
            Err(e) => problems.push(*e.kind),
        }
    }
    let present: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    for (path, _) in record.paths() {
        if !present.contains(path) {
            problems.push(WheelErrorKind::MissingFromArchive {
                member: path.to_owned(),
                record: record_member.clone(),
            });
        }
    }
    inflated
}

/// A RECORD verification failure as a problem.
fn verify_problem(e: VerifyError, record_member: &str, member: &str) -> WheelErrorKind {
    let record = record_member.to_owned();
    let member = member.to_owned();
    match e {
        VerifyError::NotListed => WheelErrorKind::NotInRecord { member, record },
        VerifyError::Unverifiable { line, message } => WheelErrorKind::InvalidRecord {
            member: record,
            line,
            message,
        },
        VerifyError::Hash {
            algorithm,
            expected,
            actual,
        } => WheelErrorKind::HashMismatch {
            member,
            record,
            algorithm,
            expected,
            actual,
        },
        VerifyError::Size { expected, actual } => WheelErrorKind::SizeMismatch {
            member,
            record,
            expected,
            actual,
        },
    }
}

pub(crate) fn parse_variant_json(
    member: &str,
    bytes: &[u8],
) -> Result<VariantMetadata, WheelErrorKind> {
    let text = std::str::from_utf8(bytes).map_err(|_| WheelErrorKind::NotUtf8 {
        member: member.to_owned(),
    })?;
    read_json(text, SourceKind::WheelFile).map_err(|errors| WheelErrorKind::InvalidVariantJson {
        member: member.to_owned(),
        errors,
    })
}

/// `variant.json` must have exactly one variant, labelled as in the filename; `null` and "no
/// properties" go together.
pub(crate) fn check_label(
    member: &str,
    filename_label: &str,
    metadata: &VariantMetadata,
) -> Result<(), WheelErrorKind> {
    let mut variants = metadata.variants.iter();
    let (json_label, properties) = match (variants.next(), variants.next()) {
        (Some(only), None) => only,
        _ => {
            return Err(WheelErrorKind::VariantCount {
                member: member.to_owned(),
                labels: metadata.variants.keys().map(ToString::to_string).collect(),
            })
        }
    };
    if json_label.as_str() != filename_label {
        return Err(WheelErrorKind::LabelMismatch {
            member: member.to_owned(),
            filename_label: filename_label.to_owned(),
            json_label: json_label.to_string(),
        });
    }
    let has_properties = properties_of(properties).next().is_some();
    let problem = match (json_label.is_null(), has_properties) {
        (true, true) => "is the null variant but has properties",
        (false, false) => "has no properties, so it must be labelled `null`",
        _ => return Ok(()),
    };
    Err(WheelErrorKind::NullVariant {
        member: member.to_owned(),
        label: json_label.to_string(),
        problem,
    })
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
        check_label("d/variant.json", label, &metadata(variants))
            .map_err(|kind| WheelError::new(Path::new("w.whl"), kind))
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
