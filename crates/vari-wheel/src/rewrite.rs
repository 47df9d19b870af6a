//! Writing a changed copy of a wheel without touching what does not change.
//!
//! Every member the edit leaves alone is copied raw — its compressed bytes as they are, with
//! their CRC, timestamp and permissions — in the original order; a renamed member is the same
//! raw copy under its new name. The members whose contents change (RECORD, METADATA, binaries
//! `vari wheel slim` rewrote) and the new ones (`variant.json`) are compressed into an archive
//! in a temporary file first (streamed from files for large members) and then raw-copied too, so the output is written strictly front to back: no member of a
//! multi-gigabyte wheel is decompressed or recompressed, and the output may be a pipe or a
//! device. The new members inherit the timestamp and permissions of the member they sit next
//! to, so rewriting the same wheel twice gives the same bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::Path;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::reader::COPY_BUFFER;
use crate::sink::ForwardSink;

/// What changes between the source archive and the copy.
#[derive(Debug, Default)]
pub(crate) struct ArchiveEdit {
    /// Source name → new name.
    pub(crate) rename: HashMap<String, String>,
    /// Source name → new contents (written under the new name when also renamed).
    pub(crate) replace: HashMap<String, Vec<u8>>,
    /// Source name → a file holding its new contents (large members, never held in memory).
    pub(crate) replace_from: HashMap<String, std::path::PathBuf>,
    /// Source names left out.
    pub(crate) remove: Vec<String>,
    /// New members, written just before the source member `insert_before` (or at the end).
    pub(crate) insert: Vec<(String, Vec<u8>)>,
    /// The source member new members go before.
    pub(crate) insert_before: Option<String>,
}

impl ArchiveEdit {
    /// Whether the edit gives the source member `name` new contents.
    pub(crate) fn replaces(&self, name: &str) -> bool {
        self.replace.contains_key(name) || self.replace_from.contains_key(name)
    }
}

/// Why the copy failed: reading the source (with the member at fault) or writing.
#[derive(Debug)]
pub(crate) enum RewriteError {
    /// A source member could not be read.
    Read { member: String, message: String },
    /// The output could not be written.
    Write(String),
}

/// Copies `source` to `out` with `edit` applied, and returns `out` flushed. `fresh` is the
/// archive [`compress_new_members`] made for this edit.
///
/// This is the general path, for any archive the zip crate reads; `verbatim.rs` is the fast one
/// for the usual wheel.
pub(crate) fn rewrite<R: Read + Seek, W: Write>(
    source: &mut ZipArchive<R>,
    fresh: &File,
    out: W,
    edit: &ArchiveEdit,
) -> Result<W, RewriteError> {
    let mut fresh = ZipArchive::new(fresh).map_err(|e| RewriteError::Write(e.to_string()))?;
    let mut writer = ZipWriter::new(ForwardSink::new(COPY_BUFFER, out));
    let write_err = |e: zip::result::ZipError| RewriteError::Write(e.to_string());
    let mut inserted = false;
    for index in 0..source.len() {
        let file = source.by_index_raw(index).map_err(|e| RewriteError::Read {
            member: format!("#{index}"),
            message: e.to_string(),
        })?;
        let name = file.name().to_owned();
        if !inserted && edit.insert_before.as_deref() == Some(name.as_str()) {
            drop(file);
            copy_inserted(&mut fresh, &mut writer, edit)?;
            inserted = true;
            // Reopen: the archive hands out one member at a time.
            let file = source.by_index_raw(index).map_err(|e| RewriteError::Read {
                member: name.clone(),
                message: e.to_string(),
            })?;
            copy_member(file, &name, &mut fresh, &mut writer, edit)?;
            continue;
        }
        copy_member(file, &name, &mut fresh, &mut writer, edit)?;
    }
    if !inserted {
        copy_inserted(&mut fresh, &mut writer, edit)?;
    }
    let sink = writer.finish().map_err(write_err)?;
    sink.into_inner()
        .map_err(|e| RewriteError::Write(e.to_string()))
}

/// Copies one source member as the edit says.
fn copy_member<R: Read, F: Read + Seek, W: Write>(
    file: zip::read::ZipFile<'_, R>,
    name: &str,
    fresh: &mut ZipArchive<F>,
    writer: &mut ZipWriter<ForwardSink<W>>,
    edit: &ArchiveEdit,
) -> Result<(), RewriteError> {
    if edit.remove.iter().any(|r| r == name) {
        return Ok(());
    }
    let new_name = edit.rename.get(name).map_or(name, String::as_str);
    if edit.replaces(name) {
        drop(file);
        return copy_fresh(fresh, writer, new_name);
    }
    let result = if new_name == name {
        writer.raw_copy_file(file)
    } else {
        writer.raw_copy_file_rename(file, new_name)
    };
    result.map_err(|e| match e {
        zip::result::ZipError::Io(io) => RewriteError::Write(format!("`{name}`: {io}")),
        other => RewriteError::Read {
            member: name.to_owned(),
            message: other.to_string(),
        },
    })
}

fn copy_inserted<F: Read + Seek, W: Write>(
    fresh: &mut ZipArchive<F>,
    writer: &mut ZipWriter<ForwardSink<W>>,
    edit: &ArchiveEdit,
) -> Result<(), RewriteError> {
    for (name, _) in &edit.insert {
        copy_fresh(fresh, writer, name)?;
    }
    Ok(())
}

fn copy_fresh<F: Read + Seek, W: Write>(
    fresh: &mut ZipArchive<F>,
    writer: &mut ZipWriter<ForwardSink<W>>,
    name: &str,
) -> Result<(), RewriteError> {
    let internal = |message: String| RewriteError::Write(format!("`{name}`: {message}"));
    let file = fresh.by_name(name).map_err(|e| internal(e.to_string()))?;
    writer
        .raw_copy_file(file)
        .map_err(|e| internal(e.to_string()))
}

/// Compresses the replaced and inserted members into an archive in a temporary file in `dir`
/// (removed when the file is closed), each under its final name, with the timestamp and
/// permissions of the member it replaces (or, for a new member, of the member it is inserted
/// before). Members given as files are streamed: memory holds a buffer, not the member.
pub(crate) fn compress_new_members<R: Read + Seek>(
    source: &mut ZipArchive<R>,
    edit: &ArchiveEdit,
    dir: &Path,
) -> Result<File, RewriteError> {
    // Where the output goes, else (a device, a directory this process cannot write) the
    // system's temporary directory.
    let temp = tempfile::tempfile_in(dir)
        .or_else(|_| tempfile::tempfile())
        .map_err(|e| RewriteError::Write(format!("{}: {e}", dir.display())))?;
    let mut writer = ZipWriter::new(BufWriter::with_capacity(COPY_BUFFER, temp));
    let internal = |e: zip::result::ZipError| RewriteError::Write(e.to_string());
    // The same edit gives the same bytes, whatever the maps' order.
    let mut names: Vec<&String> = edit
        .replace
        .keys()
        .chain(edit.replace_from.keys())
        .collect();
    names.sort();
    for name in names {
        let options = options_like(source, name)?;
        let final_name = edit.rename.get(name).map_or(name.as_str(), String::as_str);
        writer.start_file(final_name, options).map_err(internal)?;
        let written = match (edit.replace.get(name), edit.replace_from.get(name)) {
            (Some(bytes), _) => writer.write_all(bytes),
            (None, Some(path)) => File::open(path)
                .and_then(|mut file| std::io::copy(&mut file, &mut writer).map(|_| ())),
            (None, None) => Ok(()),
        };
        written.map_err(|e| RewriteError::Write(format!("`{name}`: {e}")))?;
    }
    let neighbour = edit.insert_before.as_deref();
    for (name, contents) in &edit.insert {
        let options = match neighbour {
            Some(n) if source.index_for_name(n).is_some() => options_like(source, n)?,
            _ => SimpleFileOptions::default().compression_method(CompressionMethod::Deflated),
        };
        writer
            .start_file(name.as_str(), options)
            .map_err(internal)?;
        writer
            .write_all(contents)
            .map_err(|e| RewriteError::Write(e.to_string()))?;
    }
    let buffered = writer.finish().map_err(internal)?;
    let mut file = buffered
        .into_inner()
        .map_err(|e| RewriteError::Write(e.into_error().to_string()))?;
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| RewriteError::Write(e.to_string()))?;
    Ok(file)
}

/// Deflate, with the timestamp and permissions of the source member `name`.
fn options_like<R: Read + Seek>(
    source: &mut ZipArchive<R>,
    name: &str,
) -> Result<SimpleFileOptions, RewriteError> {
    let file = source.by_name(name).map_err(|e| RewriteError::Read {
        member: name.to_owned(),
        message: e.to_string(),
    })?;
    let mut options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    if let Some(time) = file.last_modified() {
        options = options.last_modified_time(time);
    }
    if let Some(mode) = file.unix_mode() {
        options = options.unix_permissions(mode & 0o7777);
    }
    Ok(options)
}
