//! The catalog in effect: the built-in one with the user's files over it.
//!
//! A user's family replaces the built-in family of the same name whole (its builds are the
//! user's list, not a merge: a company that mirrors torch names every build it serves), and
//! adds a family otherwise; groups likewise by name. The result is checked again: each
//! distribution still belongs to one family, and every group member exists.

use vari_core::Diagnostic;

use crate::model::Catalog;
use crate::read::{check_distributions, check_groups};

/// `base` with each of `layers` over it, weakest first.
///
/// ```
/// use vari_family::{builtin, layered, read_catalog, Origin};
/// let user = read_catalog(r#"schema = "vari-families/1"
/// [[family]]
/// name = "acme-kernels"
/// [[family.build]]
/// name = "cu12"
/// distribution = "acme-kernels-cu12"
/// requires = ["nvidia :: cuda_version_lower_bound :: 12.0"]
/// "#, Origin::File("acme.toml".into())).unwrap();
/// let catalog = layered(builtin().clone(), vec![user]).unwrap();
/// assert!(catalog.family("acme-kernels").is_some() && catalog.family("cupy").is_some());
/// ```
pub fn layered(base: Catalog, layers: Vec<Catalog>) -> Result<Catalog, Diagnostic> {
    let mut merged = base;
    for layer in layers {
        for family in layer.families {
            match merged.families.iter_mut().find(|f| f.name == family.name) {
                Some(slot) => *slot = family,
                None => merged.families.push(family),
            }
        }
        for group in layer.groups {
            match merged.groups.iter_mut().find(|g| g.name == group.name) {
                Some(slot) => *slot = group,
                None => merged.groups.push(group),
            }
        }
    }
    check_distributions(&merged)?;
    check_groups(&merged)?;
    Ok(merged)
}
