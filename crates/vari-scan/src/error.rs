//! Why a scan failed: always the wheel, the member when one is at fault, and what is wrong.

use std::io;
use std::path::PathBuf;

use crate::fatbin::FatbinError;

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
    /// The wheel is not a zip archive this reader can read.
    #[error("not a readable zip archive: {0}")]
    Archive(String),
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
