//! Reading one distribution file: what its index entry needs.
//!
//! A wheel is hashed, checked by [`vari_wheel::inspect`] (filename, RECORD, label ↔
//! `variant.json`), and its `METADATA` (for PEP 658 and `Requires-Python`) and raw `variant.json`
//! (for the release's `*-variants.json`) are read. A source distribution is only hashed: its
//! `PKG-INFO` is not trustworthy core metadata before Metadata 2.2, so it gets no PEP 658 file.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use vari_core::metadata::VariantMetadata;

use crate::error::BuildError;
use crate::inputs::{Input, InputKind};

/// Files up to this size are read into memory once and parsed from there; larger ones are hashed
/// in a streaming pass and their zip directory is read from disk, so a multi-gigabyte wheel never
/// sits in memory.
const IN_MEMORY_LIMIT: u64 = 64 * 1024 * 1024;

/// The most a wheel's `METADATA` may inflate to (real ones are a few KiB; a long description
/// rarely passes 1 MiB).
const MAX_CORE_METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// What the index needs to know about one distribution file. Kept in the build state, so an
/// unchanged file is never opened again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DistFacts {
    /// Lowercase hex SHA-256 of the file.
    pub(crate) sha256: String,
    /// Its size in bytes.
    pub(crate) size: u64,
    /// `Requires-Python` from the wheel's `METADATA`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) requires_python: Option<String>,
    /// SHA-256 of the wheel's `METADATA` (published as `{file}.metadata`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) core_metadata_sha256: Option<String>,
    /// The wheel's `variant.json` as found in the wheel (already checked by `vari_wheel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) variant_json: Option<String>,
}

/// A freshly read distribution: its facts, and the `METADATA` bytes to publish.
#[derive(Debug)]
pub(crate) struct ReadDist {
    pub(crate) facts: DistFacts,
    pub(crate) core_metadata: Option<Vec<u8>>,
    /// The parsed `variant.json` of a variant wheel.
    pub(crate) variant: Option<VariantMetadata>,
}

/// Reads `input` (see the module docs). `sha256` is the file's SHA-256 when the caller verified
/// it already (a mirror hashes each file as it downloads it): the file is then not hashed again,
/// and only its zip directory and the members needed are read, from disk.
pub(crate) fn read(input: &Input, sha256: Option<String>) -> Result<ReadDist, BuildError> {
    let path = input.path.as_path();
    let io_error = |source| BuildError::Read {
        path: path.to_owned(),
        source,
    };
    if let Some(sha256) = sha256 {
        return read_with(input, sha256, input.size, || {
            vari_fs::open_input(path)
                .map(BufReader::new)
                .map_err(|e| io_error(std::io::Error::other(e.problem())))
        });
    }
    if input.size <= IN_MEMORY_LIMIT {
        let bytes = std::fs::read(path).map_err(io_error)?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let size = bytes.len() as u64;
        read_with(input, sha256, size, || Ok(Cursor::new(bytes.as_slice())))
    } else {
        let (sha256, size) = hash_file(path).map_err(io_error)?;
        read_with(input, sha256, size, || {
            File::open(path).map(BufReader::new).map_err(io_error)
        })
    }
}

/// Streams `path` through SHA-256.
pub(crate) fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    // A regular file only: a FIFO or device would never end (vari_fs::input).
    let mut file = vari_fs::open_input(path)?;
    let mut hasher = Sha256::new();
    let size = std::io::copy(&mut file, &mut hasher)?;
    Ok((hex::encode(hasher.finalize()), size))
}

/// The wheel part of [`read`], over any reader `open` gives (memory or disk).
fn read_with<R: Read + Seek>(
    input: &Input,
    sha256: String,
    size: u64,
    open: impl Fn() -> Result<R, BuildError>,
) -> Result<ReadDist, BuildError> {
    let mut facts = DistFacts {
        sha256,
        size,
        requires_python: None,
        core_metadata_sha256: None,
        variant_json: None,
    };
    if matches!(input.kind, InputKind::Sdist) {
        return Ok(ReadDist {
            facts,
            core_metadata: None,
            variant: None,
        });
    }
    let path = input.path.as_path();
    let info = vari_wheel::inspect_reader(path, open()?)?;
    let mut archive = zip::ZipArchive::new(open()?).map_err(|e| BuildError::CoreMetadata {
        path: path.to_owned(),
        member: info.dist_info.clone(),
        problem: e.to_string(),
    })?;
    let metadata_member = format!("{}/METADATA", info.dist_info);
    let core_metadata = read_member(&mut archive, path, &metadata_member)?;
    facts.requires_python = requires_python(&core_metadata);
    facts.core_metadata_sha256 = Some(hex::encode(Sha256::digest(&core_metadata)));
    if info.metadata.is_some() {
        // `inspect` has checked this member (RECORD hash, one variant, label); the raw text is
        // kept so that a rebuild combines exactly what the wheel carries.
        let member = format!("{}/variant.json", info.dist_info);
        let bytes = read_member(&mut archive, path, &member)?;
        facts.variant_json =
            Some(
                String::from_utf8(bytes).map_err(|_| BuildError::CoreMetadata {
                    path: path.to_owned(),
                    member,
                    problem: "is not UTF-8".to_owned(),
                })?,
            );
    }
    Ok(ReadDist {
        facts,
        core_metadata: Some(core_metadata),
        variant: info.metadata,
    })
}

/// The bytes of one archive member, at most [`MAX_CORE_METADATA_BYTES`].
fn read_member<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    path: &Path,
    member: &str,
) -> Result<Vec<u8>, BuildError> {
    let problem = |problem: String| BuildError::CoreMetadata {
        path: path.to_owned(),
        member: member.to_owned(),
        problem,
    };
    let entry = archive.by_name(member).map_err(|e| match e {
        zip::result::ZipError::FileNotFound => problem("missing from the wheel".to_owned()),
        other => problem(other.to_string()),
    })?;
    let mut bytes = Vec::new();
    entry
        .take(MAX_CORE_METADATA_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| problem(e.to_string()))?;
    if bytes.len() as u64 > MAX_CORE_METADATA_BYTES {
        return Err(problem(format!(
            "inflates to more than {MAX_CORE_METADATA_BYTES} bytes"
        )));
    }
    Ok(bytes)
}

/// `Requires-Python` from the header block of core metadata (RFC 822 style: headers up to the
/// first blank line, names case-insensitive).
fn requires_python(core_metadata: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(core_metadata);
    text.lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("requires-python"))
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_python_comes_from_the_headers_only() {
        let text =
            b"Metadata-Version: 2.4\nName: a\nrequires-python:  >=3.10 \n\nRequires-Python: <3\n";
        assert_eq!(requires_python(text).as_deref(), Some(">=3.10"));
        assert_eq!(requires_python(b"Name: a\n\nRequires-Python: >=3\n"), None);
        assert_eq!(requires_python(b"Requires-Python:\n"), None);
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        assert_eq!(hex::encode([0, 10, 255]), "000aff");
    }
}
