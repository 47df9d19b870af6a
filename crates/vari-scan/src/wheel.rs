//! Streaming a wheel: every member is read in order from the archive, decompressed in memory,
//! and scanned if its first bytes are the ELF magic (the name does not matter). Nothing is
//! extracted to disk.
//!
//! Members are shared out among worker threads (one per core, each with its own handle on the
//! archive): inflating and decoding are CPU-bound, so a wheel of many libraries scans in
//! parallel. Memory use is, per worker, the largest ELF member it reads.

use std::fs::File;
use std::io::{self, Read};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use zip::ZipArchive;

use crate::elf::{scan_elf, ELF_MAGIC};
use crate::error::{ScanError, ScanProblem};
use crate::file::FileScan;

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
    let archive = open(wheel)?;
    let members = archive.len();
    let workers = thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(members)
        .max(1);
    let next = AtomicUsize::new(0);
    let first_error = AtomicUsize::new(usize::MAX);
    let mut archives = vec![archive];
    for _ in 1..workers {
        archives.push(open(wheel)?);
    }
    let outcomes: Vec<WorkerOutcome> = thread::scope(|scope| {
        let handles: Vec<_> = archives
            .into_iter()
            .map(|mut archive| {
                let (next, first_error) = (&next, &first_error);
                scope.spawn(move || work(wheel, &mut archive, next, first_error))
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

#[derive(Default)]
struct WorkerOutcome {
    files: Vec<(usize, FileScan)>,
    errors: Vec<(usize, ScanError)>,
}

fn open(wheel: &Path) -> Result<ZipArchive<File>, ScanError> {
    let fail = |problem| ScanError {
        wheel: wheel.to_owned(),
        member: None,
        problem,
    };
    let file = File::open(wheel).map_err(|e| fail(ScanProblem::Io(e)))?;
    ZipArchive::new(file).map_err(|e| fail(ScanProblem::Archive(e.to_string())))
}

/// One worker: takes member indices in increasing order until none are left or a member before
/// the next one has failed.
fn work(
    wheel: &Path,
    archive: &mut ZipArchive<File>,
    next: &AtomicUsize,
    first_error: &AtomicUsize,
) -> WorkerOutcome {
    let mut outcome = WorkerOutcome::default();
    let mut buffer = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= archive.len() || index > first_error.load(Ordering::Relaxed) {
            return outcome;
        }
        match scan_member(archive, index, &mut buffer) {
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
    buffer: &mut Vec<u8>,
) -> Result<Option<FileScan>, (Option<String>, ScanProblem)> {
    let mut member = archive
        .by_index(index)
        .map_err(|e| (None, ScanProblem::Archive(e.to_string())))?;
    if !member.is_file() {
        return Ok(None);
    }
    let name = member.name().to_owned();
    let fail = |problem| (Some(name.clone()), problem);
    let mut magic = [0u8; 4];
    if read_up_to(&mut member, &mut magic).map_err(|e| fail(e.into()))? < magic.len()
        || magic != ELF_MAGIC
    {
        return Ok(None);
    }
    let declared = member.size();
    buffer.clear();
    buffer.extend_from_slice(&magic);
    // The size comes from the archive: reserve it, but never more than what is read.
    buffer.reserve(usize::try_from(declared).unwrap_or(0).min(1 << 30));
    member
        .by_ref()
        .take(declared.saturating_sub(magic.len() as u64))
        .read_to_end(buffer)
        .map_err(|e| fail(e.into()))?;
    // One more read reaches the end of the member, where the archive's CRC-32 is checked.
    let past_end = read_up_to(&mut member, &mut [0u8; 1]).map_err(|e| fail(e.into()))?;
    if buffer.len() as u64 != declared || past_end != 0 {
        return Err(fail(ScanProblem::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the archive declares {declared} bytes, the data differs"),
        ))));
    }
    scan_elf(&name, buffer).map_err(fail)
}

/// Fills as much of `buf` as the reader has; returns how much that was.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
