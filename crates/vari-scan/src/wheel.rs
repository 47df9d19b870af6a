//! Streaming a wheel: every member is read in order from the archive, decompressed in memory,
//! and scanned if its first bytes are the ELF magic (the name does not matter). Nothing is
//! extracted to disk.
//!
//! Members are shared out among worker threads (one per core, each with its own handle on the
//! archive): inflating and decoding are CPU-bound, so a wheel of many libraries scans in
//! parallel. Memory use is, per worker, the largest ELF member it reads (its buffer is kept for
//! all the members it reads: see `member`, which also bounds what a member may decompress to).

use std::fs::File;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use zip::ZipArchive;

use crate::elf::scan_elf;
use crate::error::{ScanError, ScanProblem};
use crate::file::FileScan;
use crate::member::{MemberError, MemberReader};

/// What the binaries of one wheel need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelScan {
    /// The wheel.
    pub wheel: PathBuf,
    /// Its ELF files, in archive order.
    pub files: Vec<FileScan>,
}

/// Scans every ELF file in a wheel (any zip archive) without extracting or loading it.
///
/// ```no_run
/// let scan = vari_scan::scan_wheel("dist/pkg-1.0-cp312-cp312-manylinux_2_28_x86_64.whl")?;
/// for property in scan.properties() {
///     println!("{property}");
/// }
/// # Ok::<(), vari_scan::ScanError>(())
/// ```
pub fn scan_wheel(wheel: impl AsRef<Path>) -> Result<WheelScan, ScanError> {
    let wheel = wheel.as_ref();
    check_layout(wheel)?;
    let (archive, archive_len) = open(wheel)?;
    let members = archive.len();
    let workers = thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(members)
        .max(1);
    let next = AtomicUsize::new(0);
    let first_error = AtomicUsize::new(usize::MAX);
    let mut archives = vec![archive];
    for _ in 1..workers {
        archives.push(open(wheel)?.0);
    }
    let outcomes: Vec<WorkerOutcome> = thread::scope(|scope| {
        let handles: Vec<_> = archives
            .into_iter()
            .map(|mut archive| {
                let (next, first_error) = (&next, &first_error);
                scope.spawn(move || work(wheel, archive_len, &mut archive, next, first_error))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });

    let mut files = Vec::new();
    let mut errors = Vec::new();
    for outcome in outcomes {
        files.extend(outcome.files);
        errors.extend(outcome.errors);
    }
    // Every member before the first failing one was scanned, so the error reported is the same
    // whatever the threads' timing.
    if let Some((_, error)) = errors.into_iter().min_by_key(|(index, _)| *index) {
        return Err(error);
    }
    files.sort_by_key(|(index, _)| *index);
    Ok(WheelScan {
        wheel: wheel.to_owned(),
        files: files.into_iter().map(|(_, f)| f).collect(),
    })
}

/// Reads every ELF member of a wheel in archive order, with the bounds and checks of
/// [`scan_wheel`] (declared sizes against the inflate limits, the CRC-32, the exact size), and
/// hands each to `visit` with its name; stops at the first error, `visit`'s included.
///
/// The bytes are lent from a buffer reused for the next member: what `visit` keeps, it copies.
pub fn read_elf_members(
    wheel: impl AsRef<Path>,
    mut visit: impl FnMut(&str, &[u8]) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
    let wheel = wheel.as_ref();
    check_layout(wheel)?;
    let (mut archive, archive_len) = open(wheel)?;
    let mut reader = MemberReader::new(archive_len);
    for index in 0..archive.len() {
        match reader.read_elf(&mut archive, index) {
            Ok(Some((name, bytes))) => visit(&name, bytes)?,
            Ok(None) => {}
            Err((member, problem)) => {
                return Err(ScanError {
                    wheel: wheel.to_owned(),
                    member,
                    problem,
                })
            }
        }
    }
    Ok(())
}

#[derive(Default)]
struct WorkerOutcome {
    files: Vec<(usize, FileScan)>,
    errors: Vec<(usize, ScanError)>,
}

/// The member rules every wheel reader applies (`vari_wheel::check_members`): what
/// `vari wheel validate` refuses, scanning refuses, before any member is read.
fn check_layout(wheel: &Path) -> Result<(), ScanError> {
    let fail = |problem| ScanError {
        wheel: wheel.to_owned(),
        member: None,
        problem,
    };
    vari_wheel::check_members(wheel).map_err(|e| match *e.kind {
        vari_wheel::WheelErrorKind::Open { source } => fail(ScanProblem::Io(source)),
        vari_wheel::WheelErrorKind::NotAZip { source } => {
            fail(ScanProblem::Archive(source.to_string()))
        }
        kind => fail(ScanProblem::Layout(kind.to_string())),
    })
}

/// The archive, and the file's length.
fn open(wheel: &Path) -> Result<(ZipArchive<File>, u64), ScanError> {
    let fail = |problem| ScanError {
        wheel: wheel.to_owned(),
        member: None,
        problem,
    };
    let file = File::open(wheel).map_err(|e| fail(ScanProblem::Io(e)))?;
    let len = file.metadata().map_err(|e| fail(ScanProblem::Io(e)))?.len();
    let archive = ZipArchive::new(file).map_err(|e| fail(ScanProblem::Archive(e.to_string())))?;
    Ok((archive, len))
}

/// One worker: takes member indices in increasing order until none are left or a member before
/// the next one has failed.
fn work(
    wheel: &Path,
    archive_len: u64,
    archive: &mut ZipArchive<File>,
    next: &AtomicUsize,
    first_error: &AtomicUsize,
) -> WorkerOutcome {
    let mut outcome = WorkerOutcome::default();
    let mut reader = MemberReader::new(archive_len);
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= archive.len() || index > first_error.load(Ordering::Relaxed) {
            return outcome;
        }
        match scan_member(archive, index, &mut reader) {
            Ok(Some(file)) => outcome.files.push((index, file)),
            Ok(None) => {}
            Err((member, problem)) => {
                first_error.fetch_min(index, Ordering::Relaxed);
                let error = ScanError {
                    wheel: wheel.to_owned(),
                    member,
                    problem,
                };
                outcome.errors.push((index, error));
            }
        }
    }
}

/// Reads member `index`; scans it if it is ELF. The error names the member when it is known.
fn scan_member(
    archive: &mut ZipArchive<File>,
    index: usize,
    reader: &mut MemberReader,
) -> Result<Option<FileScan>, MemberError> {
    match reader.read_elf(archive, index)? {
        Some((name, bytes)) => scan_elf(&name, bytes).map_err(|problem| (Some(name), problem)),
        None => Ok(None),
    }
}
