//! Validated names: namespaces, feature names, feature values, properties and labels
//! (`spec/format.md` §1).
//!
//! Each name is a newtype that can only be built through validation, so the rest of the crate
//! never re-checks a character class. The grammars are tiny and fixed, so they are checked by
//! hand rather than through a regex engine.
//!
//! A name holds its text in an `Arc<str>`: a large index file repeats the same few namespaces,
//! features and values thousands of times, so the reader shares one allocation per distinct
//! name, and cloning a name (into a rejection, a profile, a report) costs no allocation.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a name, property or label was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The string is empty.
    #[error("{kind} must not be empty")]
    Empty {
        /// What was being parsed (`namespace`, `feature name`, …).
        kind: &'static str,
    },
    /// The string has a character outside the allowed set.
    #[error("invalid {kind} {value:?}: only {allowed} are allowed")]
    InvalidCharacter {
        /// What was being parsed.
        kind: &'static str,
        /// The offending input.
        value: String,
        /// A human description of the allowed characters.
        allowed: &'static str,
    },
    /// A property did not have exactly three `::`-separated parts.
    #[error("invalid property {0:?}: expected `namespace :: feature :: value`")]
    PropertyShape(String),
    /// A feature reference did not have exactly two `::`-separated parts.
    #[error("invalid feature {0:?}: expected `namespace :: feature`")]
    FeatureShape(String),
}

const LOWER_DIGIT_UNDERSCORE: &str = "lowercase letters, digits and `_`";
const LOWER_DIGIT_UNDERSCORE_DOT: &str = "lowercase letters, digits, `_` and `.`";

fn is_name_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'
}

fn is_value_char(c: u8) -> bool {
    is_name_char(c) || c == b'.'
}

fn check(
    kind: &'static str,
    value: &str,
    ok: fn(u8) -> bool,
    allowed: &'static str,
) -> Result<(), NameError> {
    if value.is_empty() {
        return Err(NameError::Empty { kind });
    }
    if value.bytes().all(ok) {
        Ok(())
    } else {
        Err(NameError::InvalidCharacter {
            kind,
            value: value.to_owned(),
            allowed,
        })
    }
}

/// `a == b`, byte by byte, inline.
fn bytes_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// `a.cmp(b)` (lexicographic on bytes, as `str` orders), byte by byte, inline.
fn bytes_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $ok:expr, $allowed:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(Arc<str>);

        // Names are a few bytes long: compared with inline byte loops rather than `memcmp`
        // calls, whose overhead dominated reading and ranking large index files; equal when
        // they share their text (the reader shares it) without looking at it.
        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                Arc::ptr_eq(&self.0, &other.0) || bytes_eq(&self.0, &other.0)
            }
        }

        impl Eq for $name {}

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $name {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                bytes_cmp(&self.0, &other.0)
            }
        }

        impl std::hash::Hash for $name {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                // As `str` hashes, so that look-ups by `&str` (through `Borrow`) agree.
                self.as_str().hash(state)
            }
        }

        impl $name {
            /// Validates `value` and wraps it.
            // `AsRef<str>` rather than `Into<String>`: the text is copied once, into the
            // shared allocation, instead of into a `String` first (a large index file has
            // thousands of labels).
            pub fn new(value: impl AsRef<str>) -> Result<Self, NameError> {
                let value = value.as_ref();
                check($kind, value, $ok, $allowed)?;
                Ok(Self(Arc::from(value)))
            }

            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::new(s).map_err(serde::de::Error::custom)
            }
        }
    };
}

name_type!(
    /// A provider namespace such as `nvidia` (`^[a-z0-9_]+$`).
    Namespace,
    "namespace",
    is_name_char,
    LOWER_DIGIT_UNDERSCORE
);
name_type!(
    /// A feature name such as `sm_arch` (`^[a-z0-9_]+$`).
    FeatureName,
    "feature name",
    is_name_char,
    LOWER_DIGIT_UNDERSCORE
);
name_type!(
    /// A feature value such as `90_real` or `12.8` (`^[a-z0-9_.]+$`).
    FeatureValue,
    "feature value",
    is_value_char,
    LOWER_DIGIT_UNDERSCORE_DOT
);
name_type!(
    /// A variant label such as `cu128` or `null` (`^[0-9a-z._]+$`).
    ///
    /// Reading accepts labels of any length (newer schemas lift the cap); writers that target
    /// PEP 817 / schema 0.0.3 check [`VariantLabel::MAX_LEN_0_0_3`] themselves.
    VariantLabel,
    "variant label",
    is_value_char,
    LOWER_DIGIT_UNDERSCORE_DOT
);

impl Namespace {
    /// The namespace reserved by PEP 817 for ABI dependencies (`abi_dependency :: torch :: 2.8`):
    /// it has no provider and is not listed in `default-priorities` of the 0.0.x/0.2 drafts,
    /// and it sorts after every listed namespace.
    pub const ABI_DEPENDENCY: &'static str = "abi_dependency";

    /// Whether this is the reserved `abi_dependency` namespace.
    pub fn is_abi_dependency(&self) -> bool {
        &*self.0 == Self::ABI_DEPENDENCY
    }
}

impl VariantLabel {
    /// The label reserved for the variant with no properties.
    pub const NULL: &'static str = "null";
    /// The length cap of PEP 817 and the 0.0.3 schema.
    pub const MAX_LEN_0_0_3: usize = 16;

    /// The `null` label.
    pub fn null() -> Self {
        Self(Arc::from(Self::NULL))
    }

    /// Whether this is the reserved `null` label.
    pub fn is_null(&self) -> bool {
        &*self.0 == Self::NULL
    }
}

/// Splits `s` on `::`, trimming whitespace around each part.
fn split_parts(s: &str) -> impl Iterator<Item = &str> {
    s.split("::").map(str::trim)
}

/// One variant property, `namespace :: feature :: value`.
///
/// Ordering is by (namespace, feature, value), which is the order the default label hashes them in.
///
/// ```
/// use vari_core::Property;
/// let p: Property = "nvidia::sm_arch :: 90_real".parse().unwrap();
/// assert_eq!(p.to_string(), "nvidia :: sm_arch :: 90_real");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Property {
    /// The provider namespace.
    pub namespace: Namespace,
    /// The feature within the namespace.
    pub feature: FeatureName,
    /// The value of the feature.
    pub value: FeatureValue,
}

impl Property {
    /// Builds a property from already validated parts.
    pub fn new(namespace: Namespace, feature: FeatureName, value: FeatureValue) -> Self {
        Self {
            namespace,
            feature,
            value,
        }
    }
}

impl FromStr for Property {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = split_parts(s);
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(ns), Some(f), Some(v), None) => Ok(Self {
                namespace: ns.parse()?,
                feature: f.parse()?,
                value: v.parse()?,
            }),
            _ => Err(NameError::PropertyShape(s.to_owned())),
        }
    }
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} :: {} :: {}",
            self.namespace, self.feature, self.value
        )
    }
}

impl Serialize for Property {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Property {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A feature reference, `namespace :: feature` (used by `variant_features` markers and by
/// `--prefer`/`--forbid`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeatureRef {
    /// The provider namespace.
    pub namespace: Namespace,
    /// The feature within the namespace.
    pub feature: FeatureName,
}

impl FromStr for FeatureRef {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = split_parts(s);
        match (parts.next(), parts.next(), parts.next()) {
            (Some(ns), Some(f), None) => Ok(Self {
                namespace: ns.parse()?,
                feature: f.parse()?,
            }),
            _ => Err(NameError::FeatureShape(s.to_owned())),
        }
    }
}

impl fmt::Display for FeatureRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} :: {}", self.namespace, self.feature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_as_their_text_does() {
        let texts = [
            "", "a", "ab", "abc", "b", "a_b", "a.b", "12.8", "12.10", "9",
        ];
        for a in texts.iter().filter(|t| !t.is_empty()) {
            for b in texts.iter().filter(|t| !t.is_empty()) {
                let (x, y) = (
                    FeatureValue::new(*a).unwrap(),
                    FeatureValue::new(*b).unwrap(),
                );
                assert_eq!(x.cmp(&y), a.cmp(b), "{a} {b}");
                assert_eq!(x == y, a == b, "{a} {b}");
                assert_eq!(bytes_cmp(a, b), a.cmp(b));
            }
        }
        assert_eq!(bytes_cmp("", "a"), std::cmp::Ordering::Less);
        let shared = Namespace::new("nvidia").unwrap();
        assert_eq!(shared.clone(), shared);
    }

    #[test]
    fn property_parses_with_any_whitespace() {
        for s in ["a::b::c", "a :: b :: c", "  a::  b\t::c  ", "a ::b:: c"] {
            let p: Property = s.parse().unwrap();
            assert_eq!(p.to_string(), "a :: b :: c", "{s}");
        }
    }

    #[test]
    fn property_rejects_bad_shapes_and_characters() {
        for s in [
            "a::b",
            "a::b::c::d",
            "",
            "A::b::c",
            "a::b-c::d",
            "a::b::c d",
            "a::b::",
        ] {
            assert!(s.parse::<Property>().is_err(), "{s:?} should fail");
        }
        // Values may contain dots, names may not.
        assert!("a::b::1.2".parse::<Property>().is_ok());
        assert!("a.x::b::1".parse::<Property>().is_err());
    }

    #[test]
    fn property_orders_by_namespace_feature_value() {
        let mut v: Vec<Property> = ["b::a::a", "a::b::c", "a::b::b", "a::a::z"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        v.sort();
        let s: Vec<String> = v.iter().map(ToString::to_string).collect();
        assert_eq!(
            s,
            ["a :: a :: z", "a :: b :: b", "a :: b :: c", "b :: a :: a"]
        );
    }

    #[test]
    fn labels() {
        assert!(VariantLabel::new("cu128").is_ok());
        assert!(VariantLabel::new("cuda12.8").is_ok());
        assert!(VariantLabel::new("a_very_long_label_beyond_sixteen").is_ok());
        assert!(VariantLabel::new("CU128").is_err());
        assert!(VariantLabel::new("cu-128").is_err());
        assert!(VariantLabel::new("").is_err());
        assert!(VariantLabel::null().is_null());
    }

    #[test]
    fn feature_ref() {
        let f: FeatureRef = "nvidia :: sm_arch".parse().unwrap();
        assert_eq!(f.to_string(), "nvidia :: sm_arch");
        assert!("nvidia".parse::<FeatureRef>().is_err());
    }
}
