//! Where a dependency applies, as a value that can be combined: the environment half of a
//! marker, once its variant comparisons are decided for one wheel and its `extra` comparisons
//! for the extras asked of the package.
//!
//! A lock made for several Pythons or platforms needs, per package, the environments that
//! install it: the `or`, over every way the lock's roots reach it, of the `and` of the markers
//! along the way. Those are boolean functions of PEP 508 comparisons, and simplifying them by
//! hand (`python_version < "3.11" or python_version < "3.10"`) is what `pep508_rs`'s marker
//! algebra already does well (uv builds its universal locks on it): this module only decides
//! the variant and extra comparisons, which that algebra does not know, and wraps the rest.

use pep508_rs::{ExtraName, MarkerTree, MarkerTreeKind};

use super::context::VariantMarkerContext;
use super::env::TargetEnvironment;
use super::parse::Expr;
use super::Marker;

/// The environments a dependency applies in: a PEP 508 marker naming standard variables only,
/// or always, or never. Two conditions are equal when they hold in the same environments.
///
/// ```
/// use vari_core::markers::{EnvironmentCondition, Marker, TargetEnvironment, VariantMarkerContext};
/// let tomli = Marker::parse(r#"python_version < "3.11" and extra == "toml""#).unwrap();
/// let asked = tomli.environment_condition(&VariantMarkerContext::non_variant(), &["toml"]);
/// let py310 = TargetEnvironment::from_platform(None, "3.10").unwrap();
/// let py312 = TargetEnvironment::from_platform(None, "3.12").unwrap();
/// assert!(asked.holds_in(&py310) && !asked.holds_in(&py312));
/// assert_eq!(asked.to_marker().as_deref(), Some("python_full_version < '3.11'"));
/// // Without the extra, never; `or` with itself, the same.
/// assert!(tomli.environment_condition(&VariantMarkerContext::non_variant(), &[]).is_never());
/// assert_eq!(asked.or(&asked), asked);
/// assert!(EnvironmentCondition::ALWAYS.to_marker().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EnvironmentCondition(MarkerTree);

impl EnvironmentCondition {
    /// Every environment.
    pub const ALWAYS: Self = Self(MarkerTree::TRUE);
    /// No environment.
    pub const NEVER: Self = Self(MarkerTree::FALSE);

    /// Both conditions.
    #[must_use]
    pub fn and(&self, other: &Self) -> Self {
        let mut tree = self.0.clone();
        tree.and(other.0.clone());
        Self(tree)
    }

    /// Either condition.
    #[must_use]
    pub fn or(&self, other: &Self) -> Self {
        let mut tree = self.0.clone();
        tree.or(other.0.clone());
        Self(tree)
    }

    /// This condition where `other` does not hold.
    #[must_use]
    pub fn and_not(&self, other: &Self) -> Self {
        let mut tree = self.0.clone();
        tree.and(other.0.negate());
        Self(tree)
    }

    /// Whether it holds in every environment.
    pub fn is_always(&self) -> bool {
        self.0.is_true()
    }

    /// Whether it holds in no environment.
    pub fn is_never(&self) -> bool {
        self.0.is_false()
    }

    /// Whether it holds in `env`.
    pub fn holds_in(&self, env: &TargetEnvironment) -> bool {
        self.0.evaluate(env.marker_environment(), &[])
    }

    /// The condition as PEP 508 marker text (simplified, in `pep508_rs`'s normal form: e.g.
    /// `python_version` comparisons as `python_full_version` ones); `None` when it always
    /// holds.
    pub fn to_marker(&self) -> Option<String> {
        self.0.try_to_string()
    }
}

impl Marker {
    /// Where the dependency this marker guards applies for the wheel `ctx` describes with
    /// `extras` asked of its package: variant and `extra` comparisons decided, the standard
    /// ones kept. PEP 751's `extras` and `dependency_groups` (lock-file markers only) are left
    /// as holding: they say what was asked for, not where.
    pub fn environment_condition(
        &self,
        ctx: &VariantMarkerContext,
        extras: &[&str],
    ) -> EnvironmentCondition {
        let extras: Vec<ExtraName> = extras
            .iter()
            .filter_map(|e| e.parse::<ExtraName>().ok())
            .collect();
        EnvironmentCondition(condition(&self.expr, ctx, &extras))
    }
}

fn condition(expr: &Expr, ctx: &VariantMarkerContext, extras: &[ExtraName]) -> MarkerTree {
    match expr {
        Expr::Or(items) => items.iter().fold(MarkerTree::FALSE, |mut tree, item| {
            tree.or(condition(item, ctx, extras));
            tree
        }),
        Expr::And(items) => items.iter().fold(MarkerTree::TRUE, |mut tree, item| {
            tree.and(condition(item, ctx, extras));
            tree
        }),
        // Each standard atom is one comparison (the parser splits at `and`/`or`), so an atom
        // whose root is an `extra` test tests nothing else, and its value for the asked
        // extras is its whole value.
        Expr::Standard(tree, _) => match tree.kind() {
            MarkerTreeKind::Extra(_) => constant(tree.evaluate_extras(extras)),
            _ => tree.clone(),
        },
        Expr::Variant(test) => constant(test.evaluate(ctx)),
        Expr::LockSet(..) => MarkerTree::TRUE,
    }
}

fn constant(value: bool) -> MarkerTree {
    match value {
        true => MarkerTree::TRUE,
        false => MarkerTree::FALSE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(version: &str) -> TargetEnvironment {
        TargetEnvironment::from_platform(None, version).unwrap()
    }

    fn cond(marker: &str, ctx: &VariantMarkerContext, extras: &[&str]) -> EnvironmentCondition {
        Marker::parse(marker)
            .unwrap()
            .environment_condition(ctx, extras)
    }

    #[test]
    fn variant_and_extra_comparisons_are_decided_and_the_rest_kept() {
        let cuda = VariantMarkerContext {
            label: Some("cu128".parse().unwrap()),
            properties: ["nvidia :: cuda_version_lower_bound :: 12.8"
                .parse()
                .unwrap()]
            .into(),
        };
        let plain = VariantMarkerContext::non_variant();
        let marker = r#"python_version < "3.12" and "nvidia" in variant_namespaces"#;
        assert!(cond(marker, &plain, &[]).is_never());
        let gpu = cond(marker, &cuda, &[]);
        assert!(gpu.holds_in(&env("3.11")) && !gpu.holds_in(&env("3.12")));
        // `extra != "x"` holds when x is not asked for; an `or` with it then always holds.
        assert!(cond(r#"extra != "x" or os_name == "nt""#, &plain, &[]).is_always());
        let asked = cond(r#"extra != "x" or os_name == "nt""#, &plain, &["x"]);
        assert_eq!(asked.to_marker().as_deref(), Some("os_name == 'nt'"));
    }

    #[test]
    fn combining_simplifies() {
        let plain = VariantMarkerContext::non_variant();
        let below_311 = cond(r#"python_version < "3.11""#, &plain, &[]);
        let below_310 = cond(r#"python_version < "3.10""#, &plain, &[]);
        assert_eq!(below_311.or(&below_310), below_311);
        assert_eq!(below_311.and(&below_310), below_310);
        let at_least_311 = cond(r#"python_version >= "3.11""#, &plain, &[]);
        assert!(below_311.or(&at_least_311).is_always());
        assert!(below_311.and(&at_least_311).is_never());
        assert!(below_310.and_not(&below_311).is_never());
        assert_eq!(
            below_311.and_not(&below_310).to_marker().as_deref(),
            Some("python_full_version == '3.10.*'")
        );
        assert!(EnvironmentCondition::NEVER.is_never());
        assert!(EnvironmentCondition::ALWAYS.holds_in(&env("3.12")));
    }
}
