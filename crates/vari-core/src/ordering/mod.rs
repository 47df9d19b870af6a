//! Variant ordering and selection (`spec/format.md` §6; PEP 817 and PEP 825 "Variant
//! ordering").
//!
//! [`rank`] takes a package version's combined metadata, the target's supported properties (a
//! [`Profile`](crate::Profile) for install-time and built-in providers, `static-properties` for
//! ahead-of-time ones), the target's marker environment (for providers' `enable-if`) and the
//! user's [`SelectionOptions`], and returns every variant with its verdict: selectable ones best
//! first, rejected ones with a [`Rejection`] that says why in one line.
//!
//! Orders, most preferred first:
//! - namespaces: `--prefer NS` patterns, then `default-priorities.namespace`;
//! - features of a namespace: `--prefer NS::F`, then `default-priorities.feature.NS`, then the
//!   supported features in the provider's order;
//! - values of a feature: `--prefer NS::F::V`, then `default-priorities.property.NS.F`, then the
//!   supported values in the provider's order.
//!
//! Preferences only reorder what the target supports; `--forbid`, `--variant` and
//! `--no-variants` only narrow it. No option can make an unsupported wheel selectable.

mod options;
mod pattern;
mod priorities;
mod rank;
mod rejection;
pub(crate) mod support;

pub use options::SelectionOptions;
pub use pattern::Pattern;
pub use rank::{is_null_variant, rank, rank_labels, RankedVariant, Ranking};
pub use rejection::Rejection;

#[cfg(test)]
mod tests;
