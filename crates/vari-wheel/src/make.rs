//! `make_variant` (a plain wheel → a variant wheel) and `unmake` (back).
//!
//! Both copy every member raw — byte for byte through `verbatim.rs`, or member by member
//! through the zip crate (`rewrite.rs`) for an archive the verbatim copy does not take — and
//! change only `variant.json`, its RECORD row and the filename. The RECORD row is inserted
//! just before RECORD's own row and removed again by `unmake`, so make-then-unmake gives back
//! the plain wheel's RECORD byte for byte.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use vari_core::metadata::VariantMetadata;
use vari_core::VariantLabel;

use crate::archive::Archive;
use crate::check::{open, parse_filename};
use crate::error::{WheelError, WheelErrorKind};
use crate::layout::{self, Reach};
use crate::limits::MAX_RECORD_BYTES;
use crate::reader::{SeekBufReader, COPY_BUFFER};
use crate::record::{record_row, FormatError};
use crate::record_edit::RecordEdit;
use crate::rewrite::{compress_new_members, rewrite, ArchiveEdit, RewriteError};
use crate::valid_values::ValidValues;
use crate::variant::{describe, VariantSpec};
use crate::verbatim;

/// A wheel that vari wrote.
#[derive(Debug, Clone)]
pub struct WrittenWheel {
    /// Where it was written.
    pub path: PathBuf,
    /// Its variant label; `None` for a plain wheel.
    pub label: Option<VariantLabel>,
    /// Its `variant.json`; `None` for a plain wheel.
    pub metadata: Option<VariantMetadata>,
    /// What the chosen schema could not express and was dropped, one sentence each.
    pub warnings: Vec<String>,
    /// Its size in bytes.
    pub size: u64,
    /// The SHA-256 of its bytes (lowercase hex), computed while writing: `Some` from
    /// [`crate::replace_metadata`], whose output an index lists with its hash; `None` from the
    /// other writers, which keep to copying speed on multi-gigabyte wheels.
    pub sha256: Option<String>,
}

/// Writes the variant wheel of the plain wheel `wheel` into `out_dir`: `variant.json` added to
/// its `.dist-info`, RECORD updated, the label appended to the filename. Every other member is
/// copied raw, in order; the output appears only once complete.
///
/// Properties are checked against `valid` (and the metadata's static properties) unless
/// `spec.skip_validation` is set.
///
/// ```no_run
/// use vari_wheel::{make_variant, LabelChoice, ValidValues, VariantSpec};
/// let spec = VariantSpec {
///     properties: vec!["x86_64 :: level :: v3".parse().unwrap()],
///     label: LabelChoice::Default,
///     ..VariantSpec::default()
/// };
/// let made = make_variant("dist/pkg-1.0-py3-none-any.whl".as_ref(), "out".as_ref(), &spec, &ValidValues::default())?;
/// println!("{}", made.path.display());
/// # Ok::<(), vari_wheel::WheelError>(())
/// ```
pub fn make_variant(
    wheel: &Path,
    out_dir: &Path,
    spec: &VariantSpec,
    valid: &ValidValues,
) -> Result<WrittenWheel, WheelError> {
    let fail = |kind| WheelError::new(wheel, kind);
    let filename = parse_filename(wheel)?;
    if let Some(label) = &filename.label {
        return Err(fail(WheelErrorKind::AlreadyVariant {
            label: label.to_string(),
        }));
    }
    let described = describe(spec, valid).map_err(fail)?;
    let mut archive = open_archive(wheel)?;
    let dist_info = archive.dist_info(&filename)?;
    let variant_member = format!("{dist_info}/variant.json");
    if archive.contains(&variant_member) {
        return Err(fail(WheelErrorKind::VariantJsonWithoutLabel {
            member: variant_member,
        }));
    }
    let (record_member, record) = read_record_bytes(&mut archive, wheel, &dist_info)?;
    let bytes = described.text.into_bytes();
    let new_record = RecordEdit {
        insert: vec![record_row(&variant_member, &bytes)],
        insert_before: Some(record_member.clone()),
        ..RecordEdit::default()
    }
    .apply(&record)
    .map_err(|e| fail(invalid_record(&record_member, e)))?;
    let edit = ArchiveEdit {
        replace: [(record_member.clone(), new_record)].into_iter().collect(),
        insert: vec![(variant_member, bytes)],
        insert_before: Some(record_member),
        ..ArchiveEdit::default()
    };
    let name = format!("{}-{}.whl", stem(wheel), described.label);
    let output = wheel_output(wheel, out_dir, &name)?;
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

/// Writes the plain wheel of the variant wheel `wheel` into `out_dir`: `variant.json` and its
/// RECORD row removed, the label dropped from the filename, every other member copied raw.
pub fn unmake(wheel: &Path, out_dir: &Path) -> Result<WrittenWheel, WheelError> {
    let fail = |kind| WheelError::new(wheel, kind);
    let filename = parse_filename(wheel)?;
    let Some(label) = &filename.label else {
        return Err(fail(WheelErrorKind::NotVariant));
    };
    let mut archive = open_archive(wheel)?;
    let dist_info = archive.dist_info(&filename)?;
    let variant_member = format!("{dist_info}/variant.json");
    if !archive.contains(&variant_member) {
        return Err(fail(WheelErrorKind::LabelWithoutVariantJson {
            label: label.to_string(),
            member: variant_member,
        }));
    }
    let (record_member, record) = read_record_bytes(&mut archive, wheel, &dist_info)?;
    let new_record = RecordEdit {
        remove: vec![variant_member.clone()],
        ..RecordEdit::default()
    }
    .apply(&record)
    .map_err(|e| fail(invalid_record(&record_member, e)))?;
    let edit = ArchiveEdit {
        replace: [(record_member, new_record)].into_iter().collect(),
        remove: vec![variant_member],
        ..ArchiveEdit::default()
    };
    let stem = stem(wheel);
    let plain = stem
        .strip_suffix(label.as_str())
        .and_then(|s| s.strip_suffix('-'))
        .unwrap_or(&stem);
    let output = wheel_output(wheel, out_dir, &format!("{plain}.whl"))?;
    create_out_dir(wheel, out_dir)?;
    let (size, sha256) = write_wheel(wheel, &output, &mut archive, &edit, false)?;
    Ok(WrittenWheel {
        path: output,
        label: None,
        metadata: None,
        warnings: Vec::new(),
        size,
        sha256,
    })
}

/// Where the wheel `file_name`, derived from `wheel` (and a config), is written in `out_dir`:
/// only a valid wheel filename (PEP 427, with a label of the label grammar) that is one path
/// component names a path, so nothing derived from input can lead outside `out_dir`.
pub(crate) fn wheel_output(
    wheel: &Path,
    out_dir: &Path,
    file_name: &str,
) -> Result<PathBuf, WheelError> {
    let refuse = |message: String| {
        WheelError::new(
            wheel,
            WheelErrorKind::Write {
                output: out_dir.join(crate::core_metadata::escaped(file_name)),
                message,
            },
        )
    };
    vari_core::filename::WheelFilename::parse(file_name)
        .map_err(|e| refuse(format!("not a valid wheel filename: {e}")))?;
    child_of(out_dir, file_name)
        .ok_or_else(|| refuse("not a file name in the output directory".to_owned()))
}

/// `out_dir/file_name` when `file_name` is exactly one normal path component (no separator,
/// no `..`, not absolute), so the result is a direct child of `out_dir`.
pub(crate) fn child_of(out_dir: &Path, file_name: &str) -> Option<PathBuf> {
    let mut components = Path::new(file_name).components();
    match (components.next(), components.next()) {
        (Some(std::path::Component::Normal(name)), None) if name == file_name => {
            Some(out_dir.join(name))
        }
        _ => None,
    }
}

/// Creates the output directory when missing (as pip and build do).
pub(crate) fn create_out_dir(wheel: &Path, out_dir: &Path) -> Result<(), WheelError> {
    std::fs::create_dir_all(out_dir).map_err(|e| {
        WheelError::new(
            wheel,
            WheelErrorKind::Write {
                output: out_dir.to_owned(),
                message: format!("cannot create the output directory: {e}"),
            },
        )
    })
}

/// The wheel's file name without `.whl` (as spelled, not normalised).
pub(crate) fn stem(wheel: &Path) -> String {
    let name = wheel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".whl").unwrap_or(&name).to_owned()
}

/// Opens a wheel for copying (a large buffer: members are read front to back), after
/// checking its layout (`layout.rs`): the first problem is the error.
pub(crate) fn open_archive(
    wheel: &Path,
) -> Result<Archive<SeekBufReader<std::fs::File>>, WheelError> {
    let file = open(wheel)?;
    let mut reader = SeekBufReader::with_capacity(COPY_BUFFER, file);
    layout::check(wheel, &mut reader, Reach::EveryMember)?.first_problem(wheel)?;
    Archive::open(wheel, reader)
}

/// RECORD's name and bytes.
pub(crate) fn read_record_bytes<R: Read + Seek>(
    archive: &mut Archive<R>,
    wheel: &Path,
    dist_info: &str,
) -> Result<(String, Vec<u8>), WheelError> {
    let member = format!("{dist_info}/RECORD");
    if !archive.contains(&member) {
        return Err(WheelError::new(
            wheel,
            WheelErrorKind::MissingRecord { member },
        ));
    }
    let bytes = archive.read(&member, MAX_RECORD_BYTES)?;
    Ok((member, bytes))
}

pub(crate) fn invalid_record(member: &str, e: FormatError) -> WheelErrorKind {
    WheelErrorKind::InvalidRecord {
        member: member.to_owned(),
        line: e.line,
        message: e.message,
    }
}

/// Writes the edited copy of `archive` to `output` atomically: nothing appears at `output`
/// unless the whole wheel was written. Returns the output's size and, when `hash` is set, its
/// SHA-256 (hex).
pub(crate) fn write_wheel<R: Read + Seek>(
    wheel: &Path,
    output: &Path,
    archive: &mut Archive<R>,
    edit: &ArchiveEdit,
    hash: bool,
) -> Result<(u64, Option<String>), WheelError> {
    let write_error = |message: String| {
        WheelError::new(
            wheel,
            WheelErrorKind::Write {
                output: output.to_owned(),
                message,
            },
        )
    };
    let rewrite_error = |e| match e {
        RewriteError::Read { member, message } => {
            WheelError::new(wheel, WheelErrorKind::Member { member, message })
        }
        RewriteError::Write(message) => write_error(message),
    };
    // `open_archive` opens through the zip crate, so this is always there.
    let missing = || write_error("internal error: the wheel was opened for listing".to_owned());
    let zip = archive.zip_mut().ok_or_else(missing)?;
    // Beside the output: the new members may be large (rewritten binaries), and a temporary
    // directory may be in memory.
    let scratch = match output.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let fresh = compress_new_members(zip, edit, scratch).map_err(rewrite_error)?;
    let input = open(wheel)?;
    // Planned before the output exists: an archive the verbatim copy does not take goes
    // through the zip crate instead.
    let verbatim = verbatim::plan(&input, &fresh, edit);
    let file = vari_fs::AtomicFile::create(output).map_err(|e| write_error(e.kind.to_string()))?;
    // Without a hash to compute, the unchanged bytes need not pass through this process: the
    // kernel copies them file to file.
    if let (Ok(plan), false) = (&verbatim, hash) {
        let size = plan
            .write_file(&input, &fresh, file.as_file())
            .map_err(rewrite_error)?;
        file.commit().map_err(|e| write_error(e.kind.to_string()))?;
        return Ok((size, None));
    }
    let file = Tally {
        inner: file,
        size: 0,
        hasher: hash.then(Sha256::new),
    };
    let file = match verbatim {
        Ok(plan) => plan.write(&input, &fresh, file),
        Err(_) => rewrite(zip, &fresh, file, edit),
    }
    .map_err(rewrite_error)?;
    let sha256 = file.hasher.map(|h| format!("{:x}", h.finalize()));
    file.inner
        .commit()
        .map_err(|e| write_error(e.kind.to_string()))?;
    Ok((file.size, sha256))
}

/// The output on its way: counts the bytes written and, when asked, hashes them, so that
/// the written wheel need not be read again.
struct Tally<W> {
    inner: W,
    size: u64,
    hasher: Option<Sha256>,
}

impl<W: Write> Write for Tally<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.size += n as u64;
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_direct_children_named_as_wheels() {
        let out = Path::new("out");
        let wheel = Path::new("in/demo-1.0-py3-none-any.whl");
        assert_eq!(
            wheel_output(wheel, out, "demo-1.0-py3-none-any-v3.whl").unwrap(),
            out.join("demo-1.0-py3-none-any-v3.whl")
        );
        for bad in [
            "../demo-1.0-py3-none-any.whl",
            "/abs/demo-1.0-py3-none-any.whl",
            "a/b-1.0-py3-none-any.whl",
            "x\ny-1.0-py3-none-any.whl",
            "<script>-1.0-py3-none-any.whl",
            "demo-1.0-py3-none-any.tar.gz",
        ] {
            let e = wheel_output(wheel, out, bad).unwrap_err();
            assert!(
                matches!(*e.kind, WheelErrorKind::Write { .. }),
                "{bad}: {e}"
            );
        }
        for bad in ["..", ".", "a/b", "/x", "", "a/"] {
            assert_eq!(child_of(out, bad), None, "{bad}");
        }
        assert_eq!(child_of(out, "x.json"), Some(out.join("x.json")));
    }
}
