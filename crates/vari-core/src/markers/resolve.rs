//! Evaluating only the variant half of a marker: every variant comparison becomes its truth for
//! one selected wheel, `and`/`or` are simplified, and what is left is printed back as a plain
//! PEP 508 marker.
//!
//! Installers that do not know variants (released pip and uv) cannot parse a marker naming
//! `variant_namespaces`; once the wheel is chosen, its variant values are fixed, so a variant-
//! aware index can hand them a marker with those comparisons already decided.

use super::context::VariantMarkerContext;
use super::parse::Expr;
use super::Marker;

/// A marker with its variant comparisons decided ([`Marker::resolve_variants`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Resolved {
    /// True whatever the environment: the requirement applies without a marker.
    Always,
    /// False whatever the environment: the requirement never applies.
    Never,
    /// What is left: a PEP 508 marker naming standard variables only, valid for any PEP 508
    /// parser (`packaging`, pip, uv).
    Marker(String),
}

/// A partly evaluated marker: constants are absorbed, so they never appear inside `And`/`Or`.
enum Residue<'a> {
    Const(bool),
    /// A standard comparison, as [`Expr::Standard`] keeps its text.
    Atom(&'a str),
    /// Two or more operands, none of them an `And`.
    And(Vec<Residue<'a>>),
    /// Two or more operands, none of them an `Or`.
    Or(Vec<Residue<'a>>),
}

impl Marker {
    /// Decides every comparison involving `variant_label`, `variant_properties`,
    /// `variant_features` or `variant_namespaces` for the wheel described by `ctx`, simplifies
    /// `and`/`or`, and returns what is left.
    ///
    /// Standard comparisons are kept in their order, each as written (one space around the
    /// operator); parentheses are printed where precedence needs them. For every environment
    /// and set of extras, the residue's value is the marker's value with `ctx`.
    ///
    /// ```
    /// use vari_core::markers::{Marker, Resolved, VariantMarkerContext};
    /// let cuda = VariantMarkerContext {
    ///     label: Some("cu128".parse().unwrap()),
    ///     properties: ["nvidia :: cuda_version_lower_bound :: 12.8".parse().unwrap()].into(),
    /// };
    /// let m = Marker::parse(
    ///     r#"platform_system == "Linux" and "nvidia :: cuda_version_lower_bound :: 12.8" in variant_properties"#,
    /// ).unwrap();
    /// assert_eq!(m.resolve_variants(&cuda), Resolved::Marker(r#"platform_system == "Linux""#.into()));
    /// assert_eq!(m.resolve_variants(&VariantMarkerContext::non_variant()), Resolved::Never);
    /// let m = Marker::parse(r#"variant_label == "cu128" or python_version < "3.10""#).unwrap();
    /// assert_eq!(m.resolve_variants(&cuda), Resolved::Always);
    /// ```
    pub fn resolve_variants(&self, ctx: &VariantMarkerContext) -> Resolved {
        match resolve(&self.expr, ctx) {
            Residue::Const(true) => Resolved::Always,
            Residue::Const(false) => Resolved::Never,
            residue => {
                let mut text = String::new();
                print(&residue, false, &mut text);
                Resolved::Marker(text)
            }
        }
    }

    /// Whether the marker names a variant variable anywhere (so that its value depends on the
    /// selected wheel).
    ///
    /// ```
    /// use vari_core::markers::Marker;
    /// assert!(Marker::parse(r#"os_name == "posix" or "amd" in variant_namespaces"#).unwrap().uses_variants());
    /// assert!(!Marker::parse(r#"os_name == "posix""#).unwrap().uses_variants());
    /// ```
    pub fn uses_variants(&self) -> bool {
        uses_variants(&self.expr)
    }
}

fn uses_variants(expr: &Expr) -> bool {
    match expr {
        Expr::Or(items) | Expr::And(items) => items.iter().any(uses_variants),
        Expr::Standard(..) | Expr::LockSet(..) => false,
        Expr::Variant(_) => true,
    }
}

fn resolve<'a>(expr: &'a Expr, ctx: &VariantMarkerContext) -> Residue<'a> {
    match expr {
        Expr::Standard(_, text) | Expr::LockSet(_, text) => Residue::Atom(text),
        Expr::Variant(test) => Residue::Const(test.evaluate(ctx)),
        Expr::And(items) => combine(items, ctx, true),
        Expr::Or(items) => combine(items, ctx, false),
    }
}

/// `and` (`conjunction`) or `or` of `items`: a constant that decides it (`false` for `and`,
/// `true` for `or`) wins, the neutral one drops out, nested operands of the same kind are
/// flattened into this one.
fn combine<'a>(items: &'a [Expr], ctx: &VariantMarkerContext, conjunction: bool) -> Residue<'a> {
    let mut kept = Vec::with_capacity(items.len());
    for item in items {
        match resolve(item, ctx) {
            Residue::Const(value) if value == conjunction => {}
            Residue::Const(value) => return Residue::Const(value),
            Residue::And(inner) if conjunction => kept.extend(inner),
            Residue::Or(inner) if !conjunction => kept.extend(inner),
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Residue::Const(conjunction),
        1 => kept.remove(0),
        _ if conjunction => Residue::And(kept),
        _ => Residue::Or(kept),
    }
}

/// Prints a residue without constants. `and` binds tighter than `or`, so only an `or` that is
/// an operand of an `and` needs parentheses.
fn print(residue: &Residue<'_>, in_and: bool, out: &mut String) {
    match residue {
        Residue::Atom(text) => out.push_str(text),
        Residue::And(items) => join(items, " and ", true, out),
        Residue::Or(items) if in_and => {
            out.push('(');
            join(items, " or ", false, out);
            out.push(')');
        }
        Residue::Or(items) => join(items, " or ", false, out),
        // `combine` absorbs constants and `resolve_variants` returns a lone one as
        // `Always`/`Never`, so none reaches here.
        Residue::Const(_) => {}
    }
}

fn join(items: &[Residue<'_>], separator: &str, in_and: bool, out: &mut String) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        print(item, in_and, out);
    }
}

/// Whether `marker` names a variable starting with `variant_` outside quoted strings, without
/// requiring it to parse: a `Requires-Dist` marker that mentions a variant variable but cannot be
/// read must not be handed on as it is.
pub(crate) fn mentions_variant_variable(marker: &str) -> bool {
    let bytes = marker.as_bytes();
    let mut quote: Option<u8> = None;
    let mut word_start = true;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) => {
                if b == q {
                    quote = None;
                }
                word_start = true;
            }
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None => {
                let word = b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
                if word && word_start && marker[i..].starts_with("variant_") {
                    return true;
                }
                word_start = !word;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda() -> VariantMarkerContext {
        VariantMarkerContext {
            label: Some("cu128".parse().unwrap()),
            properties: [
                "nvidia :: cuda_version_lower_bound :: 12.8"
                    .parse()
                    .unwrap(),
                "nvidia :: sm_arch :: 90_real".parse().unwrap(),
            ]
            .into(),
        }
    }

    fn resolved(marker: &str, ctx: &VariantMarkerContext) -> Resolved {
        Marker::parse(marker).unwrap().resolve_variants(ctx)
    }

    fn text(marker: &str, ctx: &VariantMarkerContext) -> String {
        match resolved(marker, ctx) {
            Resolved::Marker(text) => text,
            other => panic!("{marker}: {other:?}"),
        }
    }

    #[test]
    fn constants_are_absorbed() {
        let c = cuda();
        let plain = VariantMarkerContext::non_variant();
        for (marker, ctx, expected) in [
            (r#""nvidia" in variant_namespaces"#, &c, Resolved::Always),
            (r#""nvidia" in variant_namespaces"#, &plain, Resolved::Never),
            (
                r#""nvidia" not in variant_namespaces"#,
                &plain,
                Resolved::Always,
            ),
            (
                r#"variant_label == "" or os_name == "nt""#,
                &plain,
                Resolved::Always,
            ),
            (
                r#"variant_label != "" and os_name == "nt""#,
                &plain,
                Resolved::Never,
            ),
            (
                r#"(os_name == "nt" or "cu" in variant_label) and variant_label in "cu126 cu128""#,
                &c,
                Resolved::Always,
            ),
        ] {
            assert_eq!(resolved(marker, ctx), expected, "{marker}");
        }
    }

    #[test]
    fn residues_keep_standard_comparisons_and_precedence() {
        let c = cuda();
        for (marker, expected) in [
            (
                r#"platform_system == "Linux" and "nvidia" in variant_namespaces"#,
                r#"platform_system == "Linux""#,
            ),
            (
                r#"(os_name == "a" or os_name == "b") and "nvidia" in variant_namespaces and python_version>='3.10'"#,
                r#"(os_name == "a" or os_name == "b") and python_version >= '3.10'"#,
            ),
            (
                r#"os_name == "a" or "amd" in variant_namespaces and os_name == "b""#,
                r#"os_name == "a""#,
            ),
            (
                r#"os_name == "a" or "nvidia" in variant_namespaces and os_name == "b""#,
                r#"os_name == "a" or os_name == "b""#,
            ),
            (
                r#"(os_name == "a" or "amd" in variant_namespaces) and (os_name == "b" or os_name == "c")"#,
                r#"os_name == "a" and (os_name == "b" or os_name == "c")"#,
            ),
            (
                r#"((os_name == "a" and os_name == "b") and variant_label == "cu128") or extra == "x""#,
                r#"os_name == "a" and os_name == "b" or extra == "x""#,
            ),
            (
                r#"os_name == "a" or (variant_label == "cpu" or (os_name == "b" or 'linux' not in sys_platform))"#,
                r#"os_name == "a" or os_name == "b" or 'linux' not in sys_platform"#,
            ),
        ] {
            assert_eq!(text(marker, &c), expected, "{marker}");
        }
    }

    #[test]
    fn folded_whitespace_does_not_reach_the_residue() {
        let c = cuda();
        assert_eq!(
            text(
                "python_version\n  >=   '3.10' and\n variant_label == 'cu128'",
                &c
            ),
            "python_version >= '3.10'"
        );
    }

    #[test]
    fn variant_mentions_are_found_outside_quotes_only() {
        assert!(mentions_variant_variable(r#""x" in variant_namespaces"#));
        assert!(mentions_variant_variable("variant_label=='a'"));
        assert!(mentions_variant_variable("(variant_typo == 'a'"));
        assert!(!mentions_variant_variable(r#"os_name == "variant_label""#));
        assert!(!mentions_variant_variable("my_variant_x == 'a'"));
        assert!(!mentions_variant_variable("os_name == 'a"));
    }
}
