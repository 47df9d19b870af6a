//! The zip side of a wheel: the central directory, the `.dist-info` directory, and reading single
//! members with a size cap.

use std::collections::BTreeSet;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use vari_core::filename::{normalize_name, WheelFilename};
use zip::ZipArchive;

use crate::error::{WheelError, WheelErrorKind};
use crate::record::{Record, VerifyError};

/// An open wheel archive. Only the central directory is read up front.
pub(crate) struct Archive<R> {
    zip: ZipArchive<R>,
    path: PathBuf,
}

impl<R: Read + Seek> Archive<R> {
    /// Reads the central directory.
    pub(crate) fn open(path: &Path, reader: R) -> Result<Self, WheelError> {
        let zip = ZipArchive::new(reader)
            .map_err(|source| WheelError::new(path, WheelErrorKind::NotAZip { source }))?;
        Ok(Self {
            zip,
            path: path.to_owned(),
        })
    }

    /// The zip archive, for copying members.
    pub(crate) fn zip_mut(&mut self) -> &mut ZipArchive<R> {
        &mut self.zip
    }

    /// Member names in central-directory order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.zip.file_names()
    }

    /// Whether the archive has a member with exactly this name.
    pub(crate) fn contains(&self, member: &str) -> bool {
        self.zip.index_for_name(member).is_some()
    }

    /// The wheel's `.dist-info` directory: a top-level `*.dist-info` directory holding `WHEEL` or
    /// `METADATA` whose name and version match the filename's (names compared after wheel-name
    /// normalisation, so case and `-_.` runs do not matter; versions compared as PEP 440).
    pub(crate) fn dist_info(&self, filename: &WheelFilename) -> Result<String, WheelError> {
        let candidates: BTreeSet<&str> = self
            .zip
            .file_names()
            .filter_map(|name| {
                let (dir, rest) = name.split_once('/')?;
                let is_core_file = rest == "WHEEL" || rest == "METADATA";
                (dir.ends_with(".dist-info") && is_core_file).then_some(dir)
            })
            .collect();
        let matching: Vec<&str> = candidates
            .iter()
            .copied()
            .filter(|dir| matches_filename(dir, filename))
            .collect();
        match matching.as_slice() {
            [one] => Ok((*one).to_owned()),
            [] => Err(WheelError::new(
                &self.path,
                WheelErrorKind::NoDistInfo {
                    expected: format!("{}-{}.dist-info", filename.name, filename.version),
                    found: candidates.iter().map(|d| (*d).to_owned()).collect(),
                },
            )),
            many => Err(WheelError::new(
                &self.path,
                WheelErrorKind::AmbiguousDistInfo {
                    dirs: many.iter().map(|d| (*d).to_owned()).collect(),
                },
            )),
        }
    }

    /// Streams one member through its RECORD row's hash. The outer error is a member that
    /// cannot be read (corrupt data, bad CRC); the inner one a mismatch with RECORD.
    pub(crate) fn verify_member(
        &mut self,
        member: &str,
        record: &Record,
    ) -> Result<Result<(), VerifyError>, WheelError> {
        let path = &self.path;
        let unreadable = |message: String| {
            WheelError::new(
                path,
                WheelErrorKind::Member {
                    member: member.to_owned(),
                    message,
                },
            )
        };
        let file = self
            .zip
            .by_name(member)
            .map_err(|e| unreadable(e.to_string()))?;
        record
            .verify_stream(member, file)
            .map_err(|e| unreadable(e.to_string()))
    }

    /// Reads one member, refusing more than `limit` bytes whatever its header claims (a zip
    /// bomb can declare a small size and inflate to gigabytes).
    pub(crate) fn read(&mut self, member: &str, limit: u64) -> Result<Vec<u8>, WheelError> {
        let path = &self.path;
        let mut file = self.zip.by_name(member).map_err(|e| {
            WheelError::new(
                path,
                WheelErrorKind::Member {
                    member: member.to_owned(),
                    message: e.to_string(),
                },
            )
        })?;
        let too_large = |size| {
            WheelError::new(
                path,
                WheelErrorKind::MemberTooLarge {
                    member: member.to_owned(),
                    size,
                    limit,
                },
            )
        };
        if file.size() > limit {
            return Err(too_large(file.size()));
        }
        // The header's size is under the cap (checked above); growing from empty would copy
        // a large RECORD several times.
        let mut bytes =
            Vec::with_capacity(usize::try_from(file.size()).unwrap_or(0).saturating_add(1));
        // Read one byte past the cap to tell "exactly at the cap" from "over it".
        file.by_ref()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| {
                WheelError::new(
                    path,
                    WheelErrorKind::Member {
                        member: member.to_owned(),
                        message: e.to_string(),
                    },
                )
            })?;
        // usize → u64 never truncates on supported targets.
        let read = bytes.len() as u64;
        if read > limit {
            return Err(too_large(read));
        }
        Ok(bytes)
    }
}

/// Whether `dir` (`{name}-{version}.dist-info`) names the same distribution and version as the
/// wheel filename.
fn matches_filename(dir: &str, filename: &WheelFilename) -> bool {
    let Some(stem) = dir.strip_suffix(".dist-info") else {
        return false;
    };
    // Normalised versions never contain `-`, so the last `-` separates name from version even
    // when a tool wrote the name unescaped (`foo-bar-1.0.dist-info`).
    let Some((name, version)) = stem.rsplit_once('-') else {
        return false;
    };
    normalize_name(name) == filename.name
        && pep440_rs::Version::from_str(version).is_ok_and(|v| v == filename.version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(name: &str) -> WheelFilename {
        WheelFilename::parse(name).unwrap()
    }

    #[test]
    fn dist_info_names_match_after_normalisation() {
        let w = wheel("Foo.Bar-1.0-py3-none-any.whl");
        for dir in [
            "foo_bar-1.0.dist-info",
            "Foo.Bar-1.0.dist-info",
            "foo-bar-1.0.dist-info",
            "FOO_BAR-1.0.0.dist-info",
        ] {
            assert!(matches_filename(dir, &w), "{dir}");
        }
        for dir in [
            "foo_bar-1.1.dist-info",
            "foo_baz-1.0.dist-info",
            "foo_bar.dist-info",
            "foo_bar-1.0.data",
            "foo_bar-x.dist-info",
        ] {
            assert!(!matches_filename(dir, &w), "{dir}");
        }
    }
}
