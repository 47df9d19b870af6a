//! # vari-core
//!
//! The wheel-variant format (PEP 817, PEP 825) as pure functions and types: no file, network or
//! process I/O happens here, so every rule can be tested and fuzzed in isolation and reused by the
//! detection, index, install and CLI crates.
//!
//! Where a rule lives:
//! - [`names`]: namespaces, features, values, properties, labels (`format.md` §1).
//! - [`metadata`]: reading, validating, writing and combining `variants.json` /
//!   `variant.json` / pyproject `[variant]` (§3–5).
//! - [`label`]: default variant labels (§1).
//! - [`filename`]: wheel filenames with variant labels, `variants.json` names (§2).
//! - [`project`]: project names — PEP 508 validity, PEP 503 normal form.
//! - [`profile`]: the `vari-profile/1` document — a target's supported properties.
//! - [`class`]: machine classes — the class-name grammar and `[NAME=]PROFILE`.
//! - [`ordering`]: ranking variants for a target, with user preferences (§6).
//! - [`markers`]: the target marker environment and variant environment markers (§7).
//! - [`uv`]: what uv 0.13 makes of a release's metadata, and metadata it installs as intended.
//! - [`check_toml_depth`]: the nesting limit every TOML input is checked against.
//! - [`Diagnostic`]: the one problem report (key path + message) every reader returns.
//! - [`Located`]: the one located error (file, key path, line, message) every front-end prints.

pub mod class;
mod depth;
mod diagnostic;
pub mod filename;
pub mod label;
mod located;
pub mod markers;
pub mod metadata;
mod name_hash;
pub mod names;
pub mod ordering;
pub mod profile;
pub mod project;
pub mod redact;
pub mod sm_arch;
mod supported;
pub mod uv;

pub use depth::{check_toml_depth, TooDeep, MAX_DOCUMENT_DEPTH};
pub use diagnostic::{strip_bom, Diagnostic};
pub use located::{io_message, Located};
pub use names::{
    FeatureName, FeatureRef, FeatureValue, NameError, Namespace, Property, VariantLabel,
};
pub use profile::{FeatureSupport, NamespaceSupport, Platform, Profile, PLATFORM_KEYS};
