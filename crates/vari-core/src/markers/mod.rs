//! Environment markers with the four variant variables (`spec/format.md` §7, PEP 817/825
//! "Variant environment markers").
//!
//! - `variant_label`: the selected wheel's label, `""` for a non-variant wheel; compared with
//!   `==`, `!=` (and `===`), or used with `in`/`not in` as a string.
//! - `variant_properties` (`ns :: f :: v`), `variant_features` (`ns :: f`) and
//!   `variant_namespaces` (`ns`): sets, tested with `"…" in VAR` / `"…" not in VAR`; whitespace
//!   around `::` is insignificant.
//!
//! Standard PEP 508 comparisons are evaluated by `pep508_rs` against a [`TargetEnvironment`];
//! variant comparisons against a [`VariantMarkerContext`]. Variant markers only gate the
//! dependencies of an already selected wheel — they never take part in selection.
//!
//! ```
//! use vari_core::markers::{evaluate_marker, TargetEnvironment, VariantMarkerContext};
//! let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
//! let ctx = VariantMarkerContext {
//!     label: Some("cu128".parse().unwrap()),
//!     properties: ["nvidia :: cuda_version_lower_bound :: 12.8".parse().unwrap()].into(),
//! };
//! let marker = r#"python_version >= "3.10" and "nvidia" in variant_namespaces"#;
//! assert!(evaluate_marker(marker, &env, &ctx).unwrap());
//! assert!(!evaluate_marker(r#"variant_label == "cpu""#, &env, &ctx).unwrap());
//! ```

mod condition;
mod context;
mod depth;
mod env;
mod error;
mod eval;
mod lock;
mod parse;
mod resolve;

use std::str::FromStr;

use pep508_rs::{ExtraName, PackageName};

pub use crate::metadata::requirement::split_requirement;
use crate::metadata::requirement_name;

pub use condition::EnvironmentCondition;
pub use context::VariantMarkerContext;
pub use depth::MAX_MARKER_DEPTH;
pub use env::{TargetEnvironment, MARKER_NAMES};
pub use error::MarkerError;
pub use lock::LockSets;
pub use resolve::Resolved;

pub(crate) use depth::check_marker_depth;
pub(crate) use resolve::mentions_variant_variable;

/// A parsed marker, for evaluating one marker many times (e.g. an `enable-if` against several
/// targets). Parsing checks everything, so evaluation cannot fail.
///
/// Two markers are equal when their text is (the text determines the parse). `Display` gives
/// the text as written.
#[derive(Debug, Clone)]
pub struct Marker {
    text: String,
    expr: parse::Expr,
}

impl Marker {
    /// Parses a marker expression (the part after `;` of a requirement).
    pub fn parse(text: &str) -> Result<Self, MarkerError> {
        Ok(Self {
            text: text.to_owned(),
            expr: parse::parse(text)?,
        })
    }

    /// The marker as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Evaluates the marker with no extras requested (so `extra == "…"` is false).
    pub fn evaluate(&self, env: &TargetEnvironment, ctx: &VariantMarkerContext) -> bool {
        self.expr.evaluate(env, ctx, &[], &LockSets::NONE)
    }

    /// Evaluates the marker with `extras` requested. Names that are not valid extra names are
    /// ignored: no marker can name them.
    pub fn evaluate_with_extras(
        &self,
        env: &TargetEnvironment,
        ctx: &VariantMarkerContext,
        extras: &[&str],
    ) -> bool {
        let extras: Vec<ExtraName> = extras
            .iter()
            .filter_map(|e| ExtraName::from_str(e).ok())
            .collect();
        self.expr.evaluate(env, ctx, &extras, &LockSets::NONE)
    }
}

impl PartialEq for Marker {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Marker {}

impl std::hash::Hash for Marker {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl std::fmt::Display for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Marker {
    type Err = MarkerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// Parses and evaluates `marker` against the target environment and the selected wheel.
pub fn evaluate_marker(
    marker: &str,
    env: &TargetEnvironment,
    ctx: &VariantMarkerContext,
) -> Result<bool, MarkerError> {
    Ok(Marker::parse(marker)?.evaluate(env, ctx))
}

/// Whether the dependency `requires_dist` (`name[extras] (spec) ; marker`) applies to the target
/// with the selected wheel: true without a marker, else the marker's value (no extras requested).
///
/// Only the project name of the requirement part is checked; the marker is checked fully.
///
/// ```
/// use vari_core::markers::{requirement_applies, TargetEnvironment, VariantMarkerContext};
/// let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
/// let ctx = VariantMarkerContext::non_variant();
/// assert!(requirement_applies("numpy>=2", &env, &ctx).unwrap());
/// assert!(!requirement_applies(r#"nvidia-cublas-cu12; "nvidia" in variant_namespaces"#, &env, &ctx).unwrap());
/// ```
pub fn requirement_applies(
    requires_dist: &str,
    env: &TargetEnvironment,
    ctx: &VariantMarkerContext,
) -> Result<bool, MarkerError> {
    requirement_applies_with_extras(requires_dist, env, ctx, &[])
}

/// Like [`requirement_applies`], with `extras` of the distribution requested.
pub fn requirement_applies_with_extras(
    requires_dist: &str,
    env: &TargetEnvironment,
    ctx: &VariantMarkerContext,
    extras: &[&str],
) -> Result<bool, MarkerError> {
    let (requirement, marker) = split_requirement(requires_dist);
    let name = requirement_name(requirement);
    let invalid = |message: String| MarkerError::Requirement {
        requirement: requires_dist.to_owned(),
        message,
    };
    if name.is_empty() {
        return Err(invalid("expected a project name".to_owned()));
    }
    PackageName::from_str(name).map_err(|e| invalid(e.to_string()))?;
    match marker {
        None => Ok(true),
        Some(marker) => Ok(Marker::parse(marker.trim())?.evaluate_with_extras(env, ctx, extras)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Platform;

    fn env() -> TargetEnvironment {
        let platform = Platform {
            system: Some("Linux".into()),
            machine: Some("x86_64".into()),
            libc: None,
        };
        TargetEnvironment::from_platform(Some(&platform), "3.12.3").unwrap()
    }

    fn ctx(label: &str, properties: &[&str]) -> VariantMarkerContext {
        VariantMarkerContext {
            label: Some(label.parse().unwrap()),
            properties: properties.iter().map(|p| p.parse().unwrap()).collect(),
        }
    }

    fn gpu() -> VariantMarkerContext {
        ctx(
            "cu128",
            &[
                "nvidia :: sm_arch :: 90_real",
                "nvidia :: sm_arch :: 80_real",
                "nvidia :: cuda_version_lower_bound :: 12.8",
                "x86_64 :: level :: v3",
            ],
        )
    }

    fn eval(marker: &str, ctx: &VariantMarkerContext) -> bool {
        evaluate_marker(marker, &env(), ctx).unwrap_or_else(|e| panic!("{marker}: {e}"))
    }

    #[test]
    fn label_forms() {
        let c = gpu();
        assert!(eval(r#"variant_label == "cu128""#, &c));
        assert!(eval(r#""cu128" == variant_label"#, &c));
        assert!(eval(r#"variant_label === 'cu128'"#, &c));
        assert!(!eval(r#"variant_label != "cu128""#, &c));
        assert!(eval(r#"variant_label != "null""#, &c));
        assert!(eval(r#""cu" in variant_label"#, &c));
        assert!(!eval(r#""rocm" in variant_label"#, &c));
        assert!(eval(r#""rocm" not in variant_label"#, &c));
        assert!(eval(r#"variant_label in "cu126 cu128""#, &c));
        assert!(eval(r#"variant_label not in "cpu rocm""#, &c));
    }

    #[test]
    fn set_forms_ignore_whitespace_around_separators() {
        let c = gpu();
        for (marker, expected) in [
            (r#""nvidia" in variant_namespaces"#, true),
            (r#"" nvidia " in variant_namespaces"#, true),
            (r#""amd" in variant_namespaces"#, false),
            (r#""amd" not in variant_namespaces"#, true),
            (r#""nvidia" not in variant_namespaces"#, false),
            (r#""nvidia :: sm_arch" in variant_features"#, true),
            (r#""nvidia::sm_arch" in variant_features"#, true),
            (
                r#""nvidia :: sm_arch :: 90_real" in variant_features"#,
                false,
            ),
            (r#""nvidia :: level" in variant_features"#, false),
            (
                r#""nvidia :: sm_arch :: 90_real" in variant_properties"#,
                true,
            ),
            (r#""nvidia::sm_arch::90_real" in variant_properties"#, true),
            (
                r#""nvidia ::sm_arch::  80_real" in variant_properties"#,
                true,
            ),
            (
                r#""nvidia :: sm_arch :: 120_real" in variant_properties"#,
                false,
            ),
            (
                r#""nvidia :: sm_arch :: 120_real" not in variant_properties"#,
                true,
            ),
            (r#""nvidia :: sm_arch" in variant_properties"#, false),
            (r#""nvidia" in variant_features"#, false),
            (
                r#""x86_64 :: level :: v3 :: x" in variant_properties"#,
                false,
            ),
        ] {
            assert_eq!(eval(marker, &c), expected, "{marker}");
        }
    }

    #[test]
    fn non_variant_and_null_wheels() {
        let plain = VariantMarkerContext::non_variant();
        assert!(eval(r#"variant_label == """#, &plain));
        assert!(eval(r#"variant_label != "null""#, &plain));
        assert!(!eval(r#""nvidia" in variant_namespaces"#, &plain));
        assert!(eval(r#""nvidia" not in variant_namespaces"#, &plain));
        let null = ctx("null", &[]);
        assert!(!eval(r#"variant_label != "null""#, &null));
        assert!(!eval(r#"variant_label == """#, &null));
        assert!(!eval(r#""x" in variant_properties"#, &null));
    }

    #[test]
    fn mixed_standard_and_variant_atoms_with_nesting() {
        let c = gpu();
        for (marker, expected) in [
            (
                r#"python_version >= "3.10" and "nvidia" in variant_namespaces"#,
                true,
            ),
            (
                r#"python_version < "3.10" and "nvidia" in variant_namespaces"#,
                false,
            ),
            (
                r#"python_version < "3.10" or "nvidia" in variant_namespaces"#,
                true,
            ),
            (
                r#""3.10" <= python_version and sys_platform == "linux""#,
                true,
            ),
            (
                r#"(sys_platform == "win32" or ("nvidia :: sm_arch" in variant_features and platform_machine == "x86_64")) and variant_label != "null""#,
                true,
            ),
            (
                r#"((sys_platform == "win32") or ("amd" in variant_namespaces)) and python_version > "3""#,
                false,
            ),
            (
                r#"os_name == "posix" and (variant_label == "cpu" or variant_label == "cu128")"#,
                true,
            ),
            (
                r#"platform_machine == "aarch64" or "x86_64 :: level :: v3" in variant_properties"#,
                true,
            ),
            (
                r#"implementation_name == "cpython" and python_full_version == "3.12.3""#,
                true,
            ),
            (r#"'linux' in sys_platform"#, true),
        ] {
            assert_eq!(eval(marker, &c), expected, "{marker}");
        }
    }

    #[test]
    fn extras_are_false_unless_requested() {
        let c = gpu();
        let m = Marker::parse(r#"extra == "cuda" and "nvidia" in variant_namespaces"#).unwrap();
        assert!(!m.evaluate(&env(), &c));
        assert!(m.evaluate_with_extras(&env(), &c, &["cuda"]));
        assert!(m.evaluate_with_extras(&env(), &c, &["not valid!", "cuda"]));
        assert_eq!(
            m.as_str(),
            r#"extra == "cuda" and "nvidia" in variant_namespaces"#
        );
    }

    #[test]
    fn bad_markers_are_typed_errors() {
        let e = env();
        let c = gpu();
        for (marker, check) in [
            (r#"variant_label == "x" and"#, "Syntax"),
            (r#"("nvidia" in variant_namespaces"#, "Syntax"),
            (r#""nvidia" in variant_namespace"#, "Syntax"),
            (
                r#"python_version >= "3.10" and platform == "x""#,
                "Standard",
            ),
            (r#"variant_namespaces == "nvidia""#, "Variant"),
        ] {
            let err = evaluate_marker(marker, &e, &c).unwrap_err();
            let kind = match err {
                MarkerError::Syntax { .. } => "Syntax",
                MarkerError::Standard { .. } => "Standard",
                MarkerError::Variant { .. } => "Variant",
                _ => "other",
            };
            assert_eq!(kind, check, "{marker}");
        }
    }

    #[test]
    fn requirements_split_at_the_marker() {
        let e = env();
        let c = gpu();
        let applies =
            |r: &str| requirement_applies(r, &e, &c).unwrap_or_else(|err| panic!("{r}: {err}"));
        assert!(applies("numpy"));
        assert!(applies(
            "numpy[extra1,extra2] (>=1.0,<3) ; python_version >= '3.9'"
        ));
        assert!(applies(
            r#"nvidia-cublas-cu12>=12;"nvidia" in variant_namespaces"#
        ));
        assert!(!applies(r#"rocm-lib ; "amd" in variant_namespaces"#));
        assert!(applies(
            r#"pkg @ https://example.com/a;b.whl ; variant_label == "cu128""#
        ));
        assert!(!applies(
            r#"pkg @ https://example.com/a;b.whl ; variant_label == "cpu""#
        ));
        assert!(applies("pkg @ https://example.com/a;b.whl"));
        for bad in ["; os_name == 'posix'", "-bad-", "numpy ; variant_label =="] {
            assert!(requirement_applies(bad, &e, &c).is_err(), "{bad}");
        }
        assert!(matches!(
            requirement_applies("; os_name == 'posix'", &e, &c),
            Err(MarkerError::Requirement { .. })
        ));
    }

    #[test]
    fn deep_nesting_is_a_typed_error_at_every_entry_point() {
        // 60,000 levels overflowed the stack of both parsers (the test thread's 2 MiB in a few
        // thousand). Variant and standard comparisons take different paths: both are checked.
        let (e, c) = (env(), gpu());
        for atom in [r#"os_name == "posix""#, r#""nvidia" in variant_namespaces"#] {
            let marker = format!("{}{atom}{}", "(".repeat(60_000), ")".repeat(60_000));
            let too_deep = |error: MarkerError| {
                assert!(
                    matches!(
                        error,
                        MarkerError::TooDeep {
                            depth: 60_000,
                            limit: 64,
                            ..
                        }
                    ),
                    "{error:?}"
                )
            };
            too_deep(Marker::parse(&marker).unwrap_err());
            too_deep(evaluate_marker(&marker, &e, &c).unwrap_err());
            too_deep(requirement_applies(&format!("a; {marker}"), &e, &c).unwrap_err());
            let message =
                crate::metadata::parse_requirement(&format!("a>=1; {marker}")).unwrap_err();
            assert!(message.contains("nested 60000 deep"), "{message}");
            // Whatever `pep508_rs` takes for the start of the marker.
            let message =
                crate::metadata::parse_requirement(&format!("a @ https://h/x.whl;{marker}"))
                    .unwrap_err();
            assert!(message.contains("nested 60000 deep"), "{message}");
            let metadata = format!("Name: a\nRequires-Dist: b; {marker}\n");
            if mentions_variant_variable(&marker) {
                too_deep(crate::metadata::resolve_variant_markers(&metadata, &c).unwrap_err());
            } else {
                assert_eq!(
                    crate::metadata::resolve_variant_markers(&metadata, &c),
                    Ok(None)
                );
            }
        }
        let nested = |n| format!("{}os_name == 'a'{}", "(".repeat(n), ")".repeat(n));
        assert!(Marker::parse(&nested(MAX_MARKER_DEPTH)).is_ok());
        assert!(Marker::parse(&nested(MAX_MARKER_DEPTH + 1)).is_err());
    }

    #[test]
    fn split_requirement_cases() {
        assert_eq!(split_requirement("a"), ("a", None));
        assert_eq!(split_requirement("a;b"), ("a", Some("b")));
        assert_eq!(split_requirement("a @ u;v"), ("a @ u;v", None));
        assert_eq!(split_requirement("a @ u;v ;m"), ("a @ u;v ", Some("m")));
    }
}
