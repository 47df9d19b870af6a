//! The catalog shipped with vari: `catalog/families.toml` in this crate, read once.

use std::collections::HashSet;
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

/// Whether the built-in catalog may name `name` (any spelling) as a family or as a build's
/// distribution, without reading the catalog: reading it (40 KB of TOML, every property parsed
/// and checked) costs a selecting command 2–3 ms, which a command whose requests it does not
/// name need not pay. Every family name and distribution in the catalog's text is a quoted
/// string, so a name that is no quoted string of it is in no family (this crate's tests check
/// it); a `true` may still be another key's value.
pub fn builtin_may_name(name: &str) -> bool {
    static QUOTED: OnceLock<HashSet<String>> = OnceLock::new();
    QUOTED
        .get_or_init(|| {
            // The text between the quotes of each line's strings (comments included: a
            // superset is harmless).
            BUILTIN_TEXT
                .lines()
                .flat_map(|line| line.split('"').skip(1).step_by(2))
                .map(vari_core::project::normalize)
                .collect()
        })
        .contains(&vari_core::project::normalize(name))
}
