//! `--prefer` / `--forbid` patterns: a namespace, a feature or a property.

use std::fmt;
use std::str::FromStr;

use crate::names::{FeatureRef, NameError, Namespace, Property};

/// A namespace (`nvidia`), feature (`nvidia :: sm_arch`) or property
/// (`nvidia :: sm_arch :: 90_real`) named by the user to prefer or forbid.
///
/// ```
/// use vari_core::ordering::Pattern;
/// let p: Pattern = "nvidia::sm_arch".parse().unwrap();
/// assert_eq!(p.to_string(), "nvidia :: sm_arch");
/// assert!(p.matches(&"nvidia :: sm_arch :: 90_real".parse().unwrap()));
/// assert!(!p.matches(&"nvidia :: cuda :: 12".parse().unwrap()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    /// Every property of a namespace.
    Namespace(Namespace),
    /// Every value of one feature.
    Feature(FeatureRef),
    /// One property.
    Property(Property),
}

impl Pattern {
    /// The namespace the pattern is about.
    pub fn namespace(&self) -> &Namespace {
        match self {
            Pattern::Namespace(ns) => ns,
            Pattern::Feature(f) => &f.namespace,
            Pattern::Property(p) => &p.namespace,
        }
    }

    /// Whether `property` falls under the pattern.
    pub fn matches(&self, property: &Property) -> bool {
        match self {
            Pattern::Namespace(ns) => property.namespace == *ns,
            Pattern::Feature(f) => {
                property.namespace == f.namespace && property.feature == f.feature
            }
            Pattern::Property(p) => property == p,
        }
    }
}

impl FromStr for Pattern {
    type Err = NameError;

    /// Parses `NS`, `NS::FEATURE` or `NS::FEATURE::VALUE`; whitespace around `::` is ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split("::").count() {
            1 => Ok(Pattern::Namespace(s.trim().parse()?)),
            2 => Ok(Pattern::Feature(s.parse()?)),
            3 => Ok(Pattern::Property(s.parse()?)),
            _ => Err(NameError::PropertyShape(s.to_owned())),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Namespace(ns) => ns.fmt(f),
            Pattern::Feature(feature) => feature.fmt(f),
            Pattern::Property(p) => p.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(s: &str) -> Property {
        s.parse().unwrap()
    }

    #[test]
    fn parses_three_shapes_with_any_whitespace() {
        let cases = [
            ("nvidia", "nvidia"),
            (" nvidia ", "nvidia"),
            ("nvidia::sm_arch", "nvidia :: sm_arch"),
            ("nvidia ::  sm_arch", "nvidia :: sm_arch"),
            ("nvidia::sm_arch::90_real", "nvidia :: sm_arch :: 90_real"),
            ("x86_64 :: level::v3", "x86_64 :: level :: v3"),
        ];
        for (input, shown) in cases {
            let p: Pattern = input.parse().unwrap();
            assert_eq!(p.to_string(), shown, "{input}");
            assert_eq!(p.to_string().parse::<Pattern>().unwrap(), p);
        }
        assert!(matches!("a".parse(), Ok(Pattern::Namespace(_))));
        assert!(matches!("a::b".parse(), Ok(Pattern::Feature(_))));
        assert!(matches!("a::b::c".parse(), Ok(Pattern::Property(_))));
    }

    #[test]
    fn rejects_bad_patterns() {
        for bad in ["", "Nvidia", "a::b::c::d", "a::", "::b", "a::b::c d", "a b"] {
            assert!(bad.parse::<Pattern>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn matching() {
        let p = prop("nvidia :: sm_arch :: 90_real");
        assert!("nvidia".parse::<Pattern>().unwrap().matches(&p));
        assert!(!"amd".parse::<Pattern>().unwrap().matches(&p));
        assert!("nvidia::sm_arch".parse::<Pattern>().unwrap().matches(&p));
        assert!(!"nvidia::cuda".parse::<Pattern>().unwrap().matches(&p));
        assert!(!"amd::sm_arch".parse::<Pattern>().unwrap().matches(&p));
        assert!("nvidia::sm_arch::90_real"
            .parse::<Pattern>()
            .unwrap()
            .matches(&p));
        assert!(!"nvidia::sm_arch::80_real"
            .parse::<Pattern>()
            .unwrap()
            .matches(&p));
        assert_eq!(
            "a::b::c".parse::<Pattern>().unwrap().namespace().as_str(),
            "a"
        );
    }
}
