//! Default variant labels (`spec/format.md` §1).
//!
//! When a builder gives no label, the label is derived from the properties alone, so that the same
//! property set always gets the same label on every machine and in every tool.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use crate::names::{Property, VariantLabel};

/// How many hex digits of the SHA-256 digest make up a default label.
const LABEL_HEX_DIGITS: usize = 8;

/// The default label of a variant with the given properties.
///
/// The label is the first 8 lowercase hex digits of SHA-256 over the properties sorted by
/// (namespace, feature, value) and deduplicated, each written as `ns :: feature :: value\n`
/// (the last line included). The empty set is the null variant, whose label is always `null`.
///
/// ```
/// use vari_core::label::default_label;
/// use vari_core::Property;
///
/// let props: Vec<Property> = ["d::e::f", "a::b::c"].iter().map(|s| s.parse().unwrap()).collect();
/// assert_eq!(default_label(&props).as_str(), "eb9a66a7");
/// assert!(default_label(&[]).is_null());
/// ```
pub fn default_label<'a>(properties: impl IntoIterator<Item = &'a Property>) -> VariantLabel {
    // A BTreeSet both sorts by Property's (namespace, feature, value) order and drops duplicates.
    let sorted: BTreeSet<&Property> = properties.into_iter().collect();
    if sorted.is_empty() {
        return VariantLabel::null();
    }
    let hex = digest_prefix(sorted);
    // Lowercase hex digits are always a valid label (`[0-9a-f]` ⊂ `[0-9a-z._]`).
    VariantLabel::new(hex).expect("lowercase hex digits form a valid label")
}

/// The first [`LABEL_HEX_DIGITS`] hex digits of the digest of `sorted`, one line per property.
fn digest_prefix<'a>(sorted: impl IntoIterator<Item = &'a Property>) -> String {
    let mut hasher = Sha256::new();
    for property in sorted {
        hasher.update(property.to_string().as_bytes());
        hasher.update(b"\n");
    }
    hex::encode(&hasher.finalize()[..LABEL_HEX_DIGITS / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(list: &[&str]) -> Vec<Property> {
        list.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[derive(serde::Deserialize)]
    struct Vectors {
        cases: Vec<Case>,
    }

    #[derive(serde::Deserialize)]
    struct Case {
        properties: Vec<String>,
        label: String,
        hash: Option<String>,
    }

    #[test]
    fn matches_every_shared_vector() {
        let text = include_str!("../../../testdata/vectors/labels.json");
        let vectors: Vectors = serde_json::from_str(text).unwrap();
        assert!(!vectors.cases.is_empty());
        for case in &vectors.cases {
            let parsed: Vec<Property> =
                case.properties.iter().map(|s| s.parse().unwrap()).collect();
            assert_eq!(
                default_label(&parsed).as_str(),
                case.label,
                "properties {:?}",
                case.properties
            );
            if let Some(hash) = &case.hash {
                assert_eq!(
                    &digest_prefix(&parsed),
                    hash,
                    "digest of {:?}",
                    case.properties
                );
            }
        }
    }

    #[test]
    fn order_and_duplicates_do_not_matter() {
        let a = props(&["a::b::c", "d::e::f"]);
        let b = props(&["d::e::f", "a::b::c", "a :: b :: c", "d::e::f"]);
        assert_eq!(default_label(&a), default_label(&b));
        assert_eq!(default_label(&a).as_str(), "eb9a66a7");
    }

    #[test]
    fn different_sets_get_different_labels() {
        assert_ne!(
            default_label(&props(&["a::b::c"])),
            default_label(&props(&["a::b::d"]))
        );
    }

    #[test]
    fn empty_set_is_null_even_though_its_digest_is_not() {
        assert!(default_label(&[]).is_null());
        assert_eq!(digest_prefix(&[]), "e3b0c442");
    }

    #[test]
    fn label_is_eight_lowercase_hex_digits() {
        let label = default_label(&props(&["x86_64::level::v3"]));
        assert_eq!(label.as_str().len(), 8);
        assert!(label
            .as_str()
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    }
}
