//! Evaluating a parsed marker. Parsing checked every comparison, so this cannot fail.

use pep508_rs::ExtraName;

use super::context::VariantMarkerContext;
use super::env::TargetEnvironment;
use super::lock::LockSets;
use super::parse::{Expr, LockSet, VariantTest, VariantVar};

/// Normalises a `::`-separated literal so that whitespace around `::` does not matter:
/// `"a::b :: c"` → `"a :: b :: c"`.
pub(crate) fn normalize_separators(literal: &str) -> String {
    literal
        .split("::")
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" :: ")
}

impl Expr {
    /// Evaluates the marker; `extras` are the extras requested for the distribution, `sets`
    /// PEP 751's `extras` and `dependency_groups` (a lock file's marker only).
    pub(crate) fn evaluate(
        &self,
        env: &TargetEnvironment,
        ctx: &VariantMarkerContext,
        extras: &[ExtraName],
        sets: &LockSets<'_>,
    ) -> bool {
        match self {
            Expr::Or(items) => items.iter().any(|e| e.evaluate(env, ctx, extras, sets)),
            Expr::And(items) => items.iter().all(|e| e.evaluate(env, ctx, extras, sets)),
            Expr::Standard(tree, _) => tree.evaluate(env.marker_environment(), extras),
            Expr::Variant(test) => test.evaluate(ctx),
            Expr::LockSet(test, _) => {
                let names = match test.set {
                    LockSet::Extras => sets.extras,
                    LockSet::DependencyGroups => sets.dependency_groups,
                };
                let member = names
                    .iter()
                    .any(|n| crate::project::normalize(n) == test.name);
                member != test.negate
            }
        }
    }
}

impl VariantTest {
    pub(super) fn evaluate(&self, ctx: &VariantMarkerContext) -> bool {
        // A non-variant wheel has the empty label (PEP 817/825).
        let label = ctx.label.as_ref().map_or("", |l| l.as_str());
        let (result, negate) = match self {
            VariantTest::LabelEquals { literal, negate } => (label == literal, *negate),
            VariantTest::LiteralInLabel { literal, negate } => {
                (label.contains(literal.as_str()), *negate)
            }
            VariantTest::LabelInLiteral { literal, negate } => (literal.contains(label), *negate),
            VariantTest::Member {
                var,
                literal,
                negate,
            } => (member(ctx, *var, literal), *negate),
        };
        result != negate
    }
}

/// Whether `literal` (whitespace around `::` ignored) is in the set named by `var`.
fn member(ctx: &VariantMarkerContext, var: VariantVar, literal: &str) -> bool {
    let wanted = normalize_separators(literal);
    let mut parts = wanted.split(" :: ");
    let (ns, feature, value) = (parts.next(), parts.next(), parts.next());
    if parts.next().is_some() {
        return false;
    }
    // Comparing against the context's parts avoids building the three sets for every test.
    ctx.properties.iter().any(|p| match var {
        VariantVar::Namespaces => feature.is_none() && ns == Some(p.namespace.as_str()),
        VariantVar::Features => {
            value.is_none()
                && ns == Some(p.namespace.as_str())
                && feature == Some(p.feature.as_str())
        }
        VariantVar::Properties => {
            ns == Some(p.namespace.as_str())
                && feature == Some(p.feature.as_str())
                && value == Some(p.value.as_str())
        }
        VariantVar::Label => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_normalise() {
        assert_eq!(normalize_separators("a::b::c"), "a :: b :: c");
        assert_eq!(normalize_separators(" a ::b\t:: c "), "a :: b :: c");
        assert_eq!(normalize_separators("a"), "a");
    }
}
