//! The catalog shipped with vari: `catalog/families.toml` in this crate, read once.

use std::sync::OnceLock;

use crate::model::{Catalog, Origin};
use crate::read::read_catalog;

/// The text of the built-in catalog.
pub const BUILTIN_TEXT: &str = include_str!("../catalog/families.toml");

/// The built-in catalog, read on first use.
///
/// Its text is part of the binary and checked by this crate's tests (it reads, every group
/// member exists, every property names a feature a built-in provider detects); should it ever
/// fail to read, the catalog is empty rather than the process stopping.
pub fn builtin() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| read_catalog(BUILTIN_TEXT, Origin::BuiltIn).unwrap_or_default())
}
