//! What the build-family catalog says about single pins, for resolving and listing: whether a
//! pin is a selector wheel the proxy synthesised, which index a by-index build's release is
//! listed from, and whether a lock's requirements choose through the catalog at all.

use std::collections::BTreeSet;

use vari_family::{BuildSource, Catalog, Family};

use crate::compile::Pin;

/// Whether `catalog` applies to `requirements`: one of them names a family or a build's
/// distribution. A lock whose requirements name none is made (and hashed) as without a
/// catalog, byte for byte.
pub(crate) fn engaged(catalog: &Catalog, requirements: &[String]) -> bool {
    requirements.iter().any(|text| {
        vari_select::Request::parse(text).is_ok_and(|request| {
            let name = request.name().as_str();
            catalog.family(name).is_some() || catalog.family_of_distribution(name).is_some()
        })
    })
}

/// Whether the proxy answers `family`'s page with a synthesised selector wheel (a by-name
/// family whose own name is none of its builds): the proxy's rule
/// ([`vari_proxy::serves_selector`]).
fn selector_family(family: &Family) -> bool {
    vari_proxy::serves_selector(family)
}

/// `pins` without the selector wheels the proxy synthesised: a pin of a selector family's name
/// goes when one of its builds is pinned beside it (the selector has no upstream file; the
/// build it requires is what installs). A pin of such a name without a build beside it was
/// not served as a selector and stays.
pub(crate) fn without_selectors(catalog: &Catalog, pins: Vec<Pin>) -> Vec<Pin> {
    let names: BTreeSet<String> = pins.iter().map(|p| p.name.clone()).collect();
    pins.into_iter()
        .filter(|pin| match catalog.family(&pin.name) {
            Some(family) if selector_family(family) => !family
                .builds
                .iter()
                .any(|b| names.contains(&b.distribution)),
            _ => true,
        })
        .collect()
}

/// The index or links page of the family build `name` `version` is, when the build has one of
/// its own and the version carries its local tag (`torch` `2.9.0+cu128` → PyTorch's `cu128`
/// index); `None`: listed from the lock's sources.
pub(crate) fn build_source(catalog: &Catalog, name: &str, version: &str) -> Option<BuildSource> {
    let family = catalog.family_of_distribution(name)?;
    let version: pep440_rs::Version = version.parse().ok()?;
    family
        .builds
        .iter()
        .filter(|b| b.distribution == name && b.source.is_some())
        .find(|b| b.local.is_some() && vari_family::carries_local(b, &version))
        .and_then(|b| b.source.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::tests::catalog;

    fn pin(name: &str, version: &str) -> Pin {
        Pin {
            name: name.into(),
            version: version.into(),
        }
    }

    #[test]
    fn selectors_go_when_their_build_is_pinned_beside_them() {
        let catalog = catalog();
        let kept = without_selectors(
            &catalog,
            vec![
                pin("kern", "1.0"),
                pin("kern-cu12", "1.0"),
                pin("other", "2"),
            ],
        );
        assert_eq!(kept, [pin("kern-cu12", "1.0"), pin("other", "2")]);
        // Not served as a selector (no build beside it): kept as uv pinned it.
        let kept = without_selectors(&catalog, vec![pin("kern", "1.0")]);
        assert_eq!(kept, [pin("kern", "1.0")]);
    }

    #[test]
    fn a_build_on_its_own_index_is_listed_from_there_by_its_local_tag() {
        let catalog = catalog();
        let source = build_source(&catalog, "tor", "2.9.0+cu128").unwrap();
        assert_eq!(source.url().as_str(), "https://example.org/whl/cu128");
        assert!(build_source(&catalog, "tor", "2.9.0").is_none());
        assert!(build_source(&catalog, "tor", "2.9.0+rocm6").is_none());
        assert!(build_source(&catalog, "kern-cu12", "1.0").is_none());
        assert!(build_source(&catalog, "numpy", "1.0+cu128").is_none());
    }

    #[test]
    fn the_catalog_applies_only_to_requirements_naming_a_family_or_build() {
        let catalog = catalog();
        assert!(engaged(&catalog, &["numpy".into(), "tor>=2".into()]));
        assert!(engaged(&catalog, &["kern-cu12".into()]));
        assert!(!engaged(&catalog, &["numpy".into()]));
    }
}
