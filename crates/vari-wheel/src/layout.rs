//! The rules every member of a wheel must follow as stored, checked on the raw central
//! directory before any member is read, by every reader in this crate (`inspect`, `validate`,
//! `make_variant`, `unmake`, `repack`, `replace_metadata`, and so `index build`, which calls
//! `inspect`):
//!
//! - a name is a relative path that stays inside the directory an installer extracts to: UTF-8
//!   (flagged as such when not ASCII), no `..`, `.` or empty component, not absolute, no drive
//!   letter, no backslash, no control character, and no Unicode Path extra field saying
//!   otherwise;
//! - a member is a regular file or a directory: no symbolic link, device or FIFO (an installer
//!   that honours the mode would create one);
//! - every name appears once (installers disagree on which copy they take);
//! - no two members' stored data overlap, and (for readers that read every member) the members
//!   declare at most [`crate::MAX_INFLATE_RATIO`] times the archive's size: the "overlapping
//!   files" zip bomb, where thousands of entries inflate the same compressed bytes, is refused
//!   before anything is inflated, and each stored byte is inflated at most once.
//!
//! The raw central directory (`central.rs`) is the authority here rather than the zip crate,
//! which folds entries with the same name into one and so cannot see duplicates.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::central::{
    extra_blocks, u16_at, u32_at, CentralDirectory, Entry, LOCAL_FIXED, LOCAL_SIGNATURE,
    UNICODE_PATH_EXTRA, UTF8_FLAG,
};
use crate::error::{WheelError, WheelErrorKind};

/// The central directory as stored, and every rule it breaks.
pub(crate) struct Layout {
    /// The central directory.
    pub(crate) cd: CentralDirectory,
    /// Every problem, in entry order (names and types first, then duplicates, then overlaps).
    pub(crate) problems: Vec<WheelErrorKind>,
    /// Whether inflating members is bounded: no overlapping data and no declared total over
    /// the ceiling.
    pub(crate) inflate_safe: bool,
}

impl Layout {
    /// The first problem as an error naming the wheel, for readers that stop at the first.
    pub(crate) fn first_problem(mut self, path: &Path) -> Result<CentralDirectory, WheelError> {
        match self.problems.is_empty() {
            true => Ok(self.cd),
            false => Err(WheelError::new(path, self.problems.swap_remove(0))),
        }
    }
}

/// How closely member data is located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// From the central directory only (a lower bound of each member's extent): for readers
    /// that read a few members, and must stay as fast as listing the archive.
    Listing,
    /// Each member's local header is read too: its exact extent, its name there checked
    /// against the central directory's, and the declared total against the inflation ceiling.
    /// For readers that read or copy every member.
    EveryMember,
}

/// Reads the central directory of `reader` and checks it (see the module docs). `Err` only when
/// the central directory itself cannot be read.
pub(crate) fn check<R: Read + Seek>(
    path: &Path,
    reader: &mut R,
    reach: Reach,
) -> Result<Layout, WheelError> {
    let cd = match CentralDirectory::read(reader) {
        Ok(cd) => cd,
        // Not a zip at all is said as the zip crate says it; one it reads but `central.rs`
        // does not (data before the first member, a split archive) is refused here.
        Err(why) => {
            let kind = match zip::ZipArchive::new(&mut *reader) {
                Err(source) => WheelErrorKind::NotAZip { source },
                Ok(_) => WheelErrorKind::Layout {
                    reason: why.0.to_owned(),
                },
            };
            return Err(WheelError::new(path, kind));
        }
    };
    let mut problems = entry_problems(&cd);
    let mut inflate_safe = true;
    let spans = match reach {
        Reach::Listing => Ok(listing_spans(&cd)),
        Reach::EveryMember => local_spans(&cd, reader),
    };
    match spans {
        Ok(spans) => {
            let overlaps = overlaps(&cd, spans);
            inflate_safe &= overlaps.is_empty();
            problems.extend(overlaps);
        }
        Err(problem) => {
            inflate_safe = false;
            problems.push(problem);
        }
    }
    if reach == Reach::EveryMember {
        let archive = reader.seek(SeekFrom::End(0)).map_err(|e| {
            WheelError::new(
                path,
                WheelErrorKind::Layout {
                    reason: e.to_string(),
                },
            )
        })?;
        let declared = cd
            .entries
            .iter()
            .fold(0u64, |sum, e| sum.saturating_add(e.uncompressed_size));
        let ratio = crate::limits::max_inflate_ratio();
        let ceiling = inflate_ceiling(archive, ratio);
        if declared > ceiling {
            inflate_safe = false;
            problems.push(WheelErrorKind::InflationCeiling {
                declared,
                ceiling,
                ratio,
                archive,
            });
        }
    }
    Ok(Layout {
        cd,
        problems,
        inflate_safe,
    })
}

/// Every name, type and duplicate problem of the entries (see the module docs).
fn entry_problems(cd: &CentralDirectory) -> Vec<WheelErrorKind> {
    let mut problems = Vec::new();
    for entry in &cd.entries {
        if let Some(problem) = entry_problem(cd, entry) {
            problems.push(WheelErrorKind::UnsafeMember {
                member: shown(cd.name(entry)),
                problem,
            });
        }
    }
    problems.extend(duplicates(cd));
    problems
}

/// The checks [`check`] makes at [`Reach::Listing`], for a central directory read on its own.
pub(crate) fn listing_problems(cd: &CentralDirectory) -> Vec<WheelErrorKind> {
    let mut problems = entry_problems(cd);
    problems.extend(overlaps(cd, listing_spans(cd)));
    problems
}

/// The most bytes the members of an archive of `archive` bytes may inflate to in all, `ratio`
/// times its size but at least [`crate::limits::MIN_INFLATE_CEILING`].
pub(crate) fn inflate_ceiling(archive: u64, ratio: u64) -> u64 {
    archive
        .saturating_mul(ratio)
        .max(crate::limits::MIN_INFLATE_CEILING)
}

/// A name for messages: lossy UTF-8, control characters escaped.
fn shown(name: &[u8]) -> String {
    String::from_utf8_lossy(name)
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// What is wrong with one entry's name or type, if anything.
fn entry_problem(cd: &CentralDirectory, entry: &Entry) -> Option<String> {
    let fixed = cd.fixed(entry);
    let name = cd.name(entry);
    let utf8_flag = u16_at(&fixed, 8) & UTF8_FLAG != 0;
    if let Some(problem) = name_problem(name, utf8_flag) {
        return Some(problem.to_owned());
    }
    // The Info-ZIP Unicode Path field (version, CRC-32 of the stored name, the name) replaces
    // the stored name for readers that honour it (the zip crate) and not for others (Python's
    // zipfile): two readers would see two names.
    let unicode_path = extra_blocks(cd.extra(entry))
        .find(|&(id, _, _)| id == UNICODE_PATH_EXTRA)
        .map(|(_, _, data)| data.get(5..).unwrap_or_default());
    if let Some(other) = unicode_path.filter(|other| *other != name) {
        return Some(format!(
            "has a Unicode Path extra field naming it `{}`",
            shown(other)
        ));
    }
    // The high byte of "version made by" is the host system; 3 is Unix, whose file type and
    // permissions are the upper 16 bits of the external attributes.
    const UNIX: u8 = 3;
    if fixed[5] == UNIX {
        let mode = u32_at(&fixed, 38) >> 16;
        match mode & 0o170_000 {
            // No type bits (only permissions), a regular file, a directory.
            0 | 0o100_000 | 0o040_000 => {}
            0o120_000 => return Some("is a symbolic link".to_owned()),
            _ => return Some(format!("is not a regular file (unix mode 0o{mode:o})")),
        }
    }
    None
}

/// What is wrong with a member name as a path inside the install directory, if anything.
pub(crate) fn name_problem(name: &[u8], utf8_flag: bool) -> Option<&'static str> {
    let Ok(text) = std::str::from_utf8(name) else {
        return Some("has a name that is not UTF-8");
    };
    if !text.is_ascii() && !utf8_flag {
        return Some("has a non-ASCII name not flagged as UTF-8 (readers decode it differently)");
    }
    if text.is_empty() {
        return Some("has an empty name");
    }
    if text.chars().any(char::is_control) {
        return Some("has a control character in its name");
    }
    if text.contains('\\') {
        return Some("contains a backslash (a path separator on Windows)");
    }
    if text.starts_with('/') {
        return Some("is an absolute path");
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Some("starts with a drive letter");
    }
    // A directory entry ends with one `/`.
    let path = text.strip_suffix('/').unwrap_or(text);
    for component in path.split('/') {
        match component {
            ".." => return Some("leads out of the install directory (`..`)"),
            "." | "" => return Some("has an empty or `.` path component"),
            _ => {}
        }
    }
    None
}

/// Every name that several entries have, once each, in order of first appearance.
fn duplicates(cd: &CentralDirectory) -> Vec<WheelErrorKind> {
    let mut counts: HashMap<&[u8], (usize, usize)> = HashMap::with_capacity(cd.entries.len());
    for (i, entry) in cd.entries.iter().enumerate() {
        counts.entry(cd.name(entry)).or_insert((i, 0)).1 += 1;
    }
    let mut repeated: Vec<(usize, &[u8], usize)> = counts
        .into_iter()
        .filter(|(_, (_, count))| *count > 1)
        .map(|(name, (first, count))| (first, name, count))
        .collect();
    repeated.sort_unstable();
    repeated
        .into_iter()
        .map(|(_, name, count)| WheelErrorKind::DuplicateMember {
            member: shown(name),
            count,
        })
        .collect()
}

/// Where one member's stored bytes lie: `start..end` in the archive, and its entry's index.
struct Span {
    start: u64,
    end: u64,
    index: usize,
}

/// Each member's extent as far as the central directory tells: the local header's fixed part
/// and the compressed data (its name and extra field can only make it longer).
fn listing_spans(cd: &CentralDirectory) -> Vec<Span> {
    cd.entries
        .iter()
        .enumerate()
        .map(|(index, e)| Span {
            start: e.local_offset,
            end: e
                .local_offset
                .saturating_add(LOCAL_FIXED as u64)
                .saturating_add(e.compressed_size),
            index,
        })
        .collect()
}

/// Each member's exact extent, from its local header, whose name must be the central
/// directory's. Entries are visited in archive order, so a buffered reader reads each region
/// once.
fn local_spans<R: Read + Seek>(
    cd: &CentralDirectory,
    reader: &mut R,
) -> Result<Vec<Span>, WheelErrorKind> {
    let mut order: Vec<usize> = (0..cd.entries.len()).collect();
    order.sort_unstable_by_key(|&i| cd.entries[i].local_offset);
    let mut spans = Vec::with_capacity(order.len());
    let mut local_name = Vec::new();
    for index in order {
        let entry = &cd.entries[index];
        let name = cd.name(entry);
        let bad = |problem: &str| WheelErrorKind::UnsafeMember {
            member: shown(name),
            problem: problem.to_owned(),
        };
        let mut fixed = [0u8; LOCAL_FIXED];
        reader
            .seek(SeekFrom::Start(entry.local_offset))
            .and_then(|_| reader.read_exact(&mut fixed))
            .map_err(|_| bad("has no local header where the central directory says"))?;
        if u32_at(&fixed, 0) != LOCAL_SIGNATURE {
            return Err(bad("has no local header where the central directory says"));
        }
        let name_len = usize::from(u16_at(&fixed, 26));
        let extra_len = u64::from(u16_at(&fixed, 28));
        local_name.resize(name_len, 0);
        reader
            .read_exact(&mut local_name)
            .map_err(|_| bad("has a truncated local header"))?;
        if local_name != name {
            return Err(bad(&format!(
                "is named `{}` in its local header (readers that stream the archive see that name)",
                shown(&local_name)
            )));
        }
        let start = entry.local_offset;
        let end = start
            .saturating_add((LOCAL_FIXED + name_len) as u64)
            .saturating_add(extra_len)
            .saturating_add(entry.compressed_size);
        spans.push(Span { start, end, index });
    }
    Ok(spans)
}

/// Every member whose data starts inside another's or runs into the central directory.
fn overlaps(cd: &CentralDirectory, mut spans: Vec<Span>) -> Vec<WheelErrorKind> {
    spans.sort_unstable_by_key(|s| (s.start, s.end));
    let mut problems = Vec::new();
    // The member reaching furthest so far: any later start before its end overlaps it.
    let mut furthest: Option<&Span> = None;
    for span in &spans {
        let member = || shown(cd.name(&cd.entries[span.index]));
        if let Some(before) = furthest.filter(|f| span.start < f.end) {
            problems.push(WheelErrorKind::OverlappingMembers {
                member: member(),
                other: shown(cd.name(&cd.entries[before.index])),
            });
        }
        if span.end > cd.offset {
            problems.push(WheelErrorKind::UnsafeMember {
                member: member(),
                problem: "has data running into the central directory".to_owned(),
            });
        }
        if furthest.is_none_or(|f| span.end > f.end) {
            furthest = Some(span);
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_leave_the_install_directory_are_refused() {
        for bad in [
            &b"../x"[..],
            b"a/../../x",
            b"..",
            b"/etc/passwd",
            b"C:\\x",
            b"C:/x",
            b"c:x",
            b"a\\b",
            b"a//b",
            b"./a",
            b"a/./b",
            b"",
            b"a\nb",
            b"a\0b",
            b"\xff.py",
        ] {
            assert!(name_problem(bad, true).is_some(), "{bad:?}");
        }
        for good in [
            &b"pkg/__init__.py"[..],
            b"pkg/",
            b"pkg-1.0.dist-info/RECORD",
            b"a..b/c..d",
            b"...",
            b"pkg/caf\xc3\xa9.py",
        ] {
            assert_eq!(name_problem(good, true), None, "{good:?}");
        }
        assert!(name_problem(b"caf\xc3\xa9", false).is_some());
    }

    #[test]
    fn shown_names_escape_control_characters() {
        assert_eq!(shown(b"a\nb\x1b[31m"), "a\\nb\\u{1b}[31m");
    }

    #[test]
    fn the_ceiling_has_a_floor() {
        let ratio = crate::limits::MAX_INFLATE_RATIO;
        assert_eq!(
            inflate_ceiling(1, ratio),
            crate::limits::MIN_INFLATE_CEILING
        );
        assert_eq!(inflate_ceiling(1 << 40, ratio), (1u64 << 40) * ratio);
        assert_eq!(inflate_ceiling(1 << 40, 2000), (1u64 << 40) * 2000);
        assert_eq!(inflate_ceiling(u64::MAX, ratio), u64::MAX);
    }
}
