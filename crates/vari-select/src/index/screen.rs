//! The rules that set files of a version aside before any variant is looked at: source
//! distributions (only wheels are selected), `requires-python` that excludes the target's
//! Python, and yanked files (PEP 592: only when the requirement pins the version).

use std::collections::HashSet;

use pep440_rs::Version;

use super::listed_file::ListedFile;
use super::report::{candidate, CandidateFate, CandidateFile};

/// The files of one version, split into the wheels that stay in the running and the files
/// set aside with their fate.
#[derive(Debug)]
pub(crate) struct Screened<'p, F> {
    /// Wheels that may be chosen if their tags and variant fit.
    pub(crate) eligible: Vec<&'p F>,
    /// Files set aside, with why.
    pub(crate) set_aside: Vec<CandidateFile>,
}

/// Screens `files` (one version's, in source order) for a target Python `python` (`None`:
/// unknown, `requires-python` is not checked). A file name listed twice (several indexes
/// merged) counts once, the first source winning.
pub(crate) fn screen<'p, F: ListedFile>(
    files: impl Iterator<Item = &'p F>,
    python: Option<&Version>,
    pinned: bool,
) -> Screened<'p, F> {
    let mut seen = HashSet::new();
    let mut screened = Screened {
        eligible: Vec::new(),
        set_aside: Vec::new(),
    };
    for file in files {
        if !seen.insert(file.filename()) {
            continue;
        }
        match fate(file, python, pinned) {
            None => screened.eligible.push(file),
            Some(fate) => screened.set_aside.push(candidate(file, fate)),
        }
    }
    screened
}

fn fate(file: &impl ListedFile, python: Option<&Version>, pinned: bool) -> Option<CandidateFate> {
    if file.wheel().is_none() {
        return Some(CandidateFate::SdistNotConsidered);
    }
    if let (Some(requires), Some(python)) = (file.requires_python(), python) {
        if !requires.contains(python) {
            return Some(CandidateFate::RequiresPython {
                requires: requires.to_string(),
            });
        }
    }
    match file.yanked() {
        Some(reason) if !pinned => Some(CandidateFate::Yanked {
            reason: reason.map(str::to_owned),
        }),
        _ => None,
    }
}
