//! PEP 751 lock-file markers: `packages.marker` may also name `extras` and
//! `dependency_groups`, the sets of extras and dependency groups the installer was asked for
//! (`"cuda" in extras`, `"dev" not in dependency_groups`). Names compare in their normal form.
//! Elsewhere (`Requires-Dist`, `enable-if`) these names stay unknown, as PEP 508 has them.

use super::context::VariantMarkerContext;
use super::env::TargetEnvironment;
use super::error::MarkerError;
use super::parse::parse_with;
use super::Marker;

/// The extras and dependency groups asked for, which a lock file's markers test.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockSets<'a> {
    /// The extras asked for.
    pub extras: &'a [String],
    /// The dependency groups asked for (or the lock's `default-groups` when none is).
    pub dependency_groups: &'a [String],
}

impl LockSets<'_> {
    /// Nothing asked for: every `"x" in extras` is false.
    pub const NONE: LockSets<'static> = LockSets {
        extras: &[],
        dependency_groups: &[],
    };
}

impl Marker {
    /// Parses a lock file's `packages.marker` (PEP 751): PEP 508 with `extras` and
    /// `dependency_groups` as sets.
    ///
    /// ```
    /// use vari_core::markers::{LockSets, Marker, TargetEnvironment};
    /// let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
    /// let m = Marker::parse_lock(r#"'CUDA' in extras or "dev" in dependency_groups"#).unwrap();
    /// assert!(!m.evaluate_lock(&env, &LockSets::NONE));
    /// let extras = ["cuda".to_owned()];
    /// assert!(m.evaluate_lock(&env, &LockSets { extras: &extras, dependency_groups: &[] }));
    /// assert!(Marker::parse("'x' in extras").is_err());
    /// ```
    pub fn parse_lock(text: &str) -> Result<Self, MarkerError> {
        Ok(Self {
            text: text.to_owned(),
            expr: parse_with(text, true)?,
        })
    }

    /// Evaluates a lock file's marker for the target environment and what was asked for. A
    /// lock's markers never select a wheel: variant variables see no variant.
    pub fn evaluate_lock(&self, env: &TargetEnvironment, sets: &LockSets<'_>) -> bool {
        self.expr
            .evaluate(env, &VariantMarkerContext::non_variant(), &[], sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> TargetEnvironment {
        TargetEnvironment::from_platform(None, "3.12").unwrap()
    }

    #[test]
    fn sets_are_tested_by_membership_in_normal_form() {
        let extras = ["Socks_Proxy".to_owned()];
        let groups = ["dev".to_owned()];
        let sets = LockSets {
            extras: &extras,
            dependency_groups: &groups,
        };
        for (marker, expected) in [
            ("'socks-proxy' in extras", true),
            ("'socks.proxy' in extras", true),
            ("'socks' in extras", false),
            ("'socks' not in extras", true),
            (
                "'dev' in dependency_groups and python_version >= '3.9'",
                true,
            ),
            (
                "'dev' not in dependency_groups or python_version < '3'",
                false,
            ),
            ("'test' in dependency_groups", false),
        ] {
            let m = Marker::parse_lock(marker).unwrap();
            assert_eq!(m.evaluate_lock(&env(), &sets), expected, "{marker}");
        }
    }

    #[test]
    fn only_membership_is_defined_and_only_in_locks() {
        for bad in ["extras == 'x'", "'x' == dependency_groups", "extras in 'x'"] {
            assert!(Marker::parse_lock(bad).is_err(), "{bad}");
        }
        assert!(Marker::parse("'x' in extras").is_err());
        assert!(Marker::parse("'x' in dependency_groups").is_err());
    }
}
