//! What a user may change about selection (`docs/reference/output.md`, selection options).

use std::collections::BTreeSet;

use super::pattern::Pattern;
use crate::names::{Namespace, VariantLabel};

/// User choices applied on top of the package's priorities.
///
/// None of them can select a wheel the target does not support: preferences only reorder the
/// compatible variants, the other options only narrow them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectionOptions {
    /// `--prefer`: namespaces, features and values moved to the front of their order, in the
    /// order given.
    pub prefer: Vec<Pattern>,
    /// `--forbid`: variants with any matching property are rejected.
    pub forbid: Vec<Pattern>,
    /// `--variant`: only this label may be selected.
    pub variant: Option<VariantLabel>,
    /// `--no-variants`: every variant (the null variant included) is rejected, leaving only
    /// non-variant wheels.
    pub no_variants: bool,
    /// `--enable-optional`: optional providers to turn on.
    pub enable_optional: BTreeSet<Namespace>,
}
