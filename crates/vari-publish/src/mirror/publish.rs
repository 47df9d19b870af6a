//! The one place the mirror turns its store into the site: `vari index build`'s builder, so a
//! mirror has exactly the pages of a built index (PEP 503, PEP 691, PEP 658, `*-variants.json`)
//! and its order of writing: files first, then project pages, the project list last, and the
//! files no longer published removed after that, every page written atomically. A client that
//! reads during a run never sees a page pointing at a file not yet there, and a run killed at
//! any point leaves a site that links only files it has.
//!
//! Other destinations (object stores) plug in here: the store stays local, the site is
//! published from it.

use std::path::Path;

use crate::build::{build, BuildOptions, BuildStats, NoProgress};
use crate::error::BuildError;
use crate::place::FilePlacement;
use crate::publish::Destination;

/// Publishes the distributions of `store` (and their `*-variants.json`) as the site at `dest`,
/// hard-linking the files.
pub(crate) fn publish(store: &Path, dest: &Path) -> Result<BuildStats, BuildError> {
    build(&BuildOptions {
        input: store.to_owned(),
        destination: Destination::Directory(dest.to_owned()),
        placement: FilePlacement::HardLink,
        progress: &NoProgress,
    })
}
