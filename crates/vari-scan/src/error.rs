//! Why a scan failed: always the wheel, the member when one is at fault, and what is wrong.

use std::io;
use std::path::PathBuf;

use crate::fatbin::FatbinError;
use crate::limits::{INFLATE_FLOOR, MAX_INFLATE_RATIO, MAX_MEMBER_SIZE};

/// A wheel that could not be scanned. Displays as `<wheel>: <member>: <problem>`.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}{problem}", .wheel.display(), member_prefix(.member))]
pub struct ScanError {
    /// The wheel.
    pub wheel: PathBuf,
    /// The archive member at fault, when the problem is inside one.
    pub member: Option<String>,
    /// What is wrong.
    #[source]
    pub problem: ScanProblem,
}

fn member_prefix(member: &Option<String>) -> String {
    member
        .as_ref()
        .map(|m| format!("{m}: "))
        .unwrap_or_default()
}

/// What went wrong while scanning.
#[derive(Debug, thiserror::Error)]
pub enum ScanProblem {
    /// The wheel or a member could not be read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The wheel's members break a rule every wheel reader applies (an unsafe name, a link, a
    /// duplicate, overlapping data: `vari_wheel::check_members`), which `vari wheel validate`
    /// refuses too.
    #[error("{0}")]
    Layout(String),
    /// The wheel is not a zip archive this reader can read.
    #[error("not a readable zip archive: {0}")]
    Archive(String),
    /// An ELF member declares more decompressed bytes than a member may have: more than
    /// 100 times its compressed size beyond 8 MiB (a zip bomb), or more than 16 GiB.
    #[error(
        "the archive declares {declared} bytes, more than the {limit} this member may \
         decompress to ({} times its compressed size, at least {} MiB, at most {} GiB)",
        MAX_INFLATE_RATIO,
        INFLATE_FLOOR >> 20,
        MAX_MEMBER_SIZE >> 30
    )]
    TooLarge {
        /// The decompressed size the archive declares.
        declared: u64,
        /// The most this member may decompress to.
        limit: u64,
    },
    /// A member starts like an ELF file but is not a readable one.
    #[error("not a readable ELF file: {0}")]
    Elf(String),
    /// A fat-binary section is malformed.
    #[error("section {section}: {source}")]
    Fatbin {
        /// The section's name.
        section: String,
        /// What is wrong in it.
        source: FatbinError,
    },
}
