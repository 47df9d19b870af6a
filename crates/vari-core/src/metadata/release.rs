//! Checks on one release's combined variant metadata, shared by every command that sees a
//! whole release (`wheel repack` writes one, `index build` publishes one).

use super::model::{properties_of, VariantMetadata, VariantProperties};
use crate::names::VariantLabel;

/// At most this many labels are named per kind of difference, so that a hostile file with a
/// million labels still yields a one-line message.
const MAX_LABELS_NAMED: usize = 5;

/// The warning for a variant release with neither a plain wheel nor a null variant, or `None`
/// when it has one of them.
///
/// An installer that does not know variants sees only labelled wheels it cannot install, and
/// fails, or falls through to an sdist on another index and tries to build it. `release` names
/// the release in the message (`fast-math 1.2.0`).
///
/// ```
/// use vari_core::metadata::{missing_fallback_warning, read_json, SourceKind};
/// let v3 = read_json(r#"{"default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"v3": {"x86_64": {"level": ["v3"]}}}}"#, SourceKind::WheelFile).unwrap();
/// let warning = missing_fallback_warning("fast-math 1.2.0", false, &v3).unwrap();
/// assert!(warning.starts_with("fast-math 1.2.0: no plain wheel and no null variant"));
/// assert!(missing_fallback_warning("fast-math 1.2.0", true, &v3).is_none());
/// ```
pub fn missing_fallback_warning(
    release: &str,
    has_plain_wheel: bool,
    combined: &VariantMetadata,
) -> Option<String> {
    if has_plain_wheel || combined.null_variant().is_some() {
        return None;
    }
    Some(format!(
        "{release}: no plain wheel and no null variant; installers that do not know variants \
         find no wheel they can install (add a plain build, or a variant with no properties)"
    ))
}

/// What differs between the metadata the wheels of a release combine to (`expected`) and a
/// `*-variants.json` found for that release (`found`), one phrase each; empty when they agree.
///
/// Compared: the schema generation, the labels and each label's properties, the default
/// priorities, the providers and the static properties. Not compared: the `$schema` URL's
/// spelling, which says nothing an installer acts on.
///
/// ```
/// use vari_core::metadata::{metadata_differences, read_json, SourceKind};
/// let read = |json| read_json(json, SourceKind::IndexFile).unwrap();
/// let wheels = read(r#"{"default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"v3": {"x86_64": {"level": ["v3"]}}, "v4": {"x86_64": {"level": ["v4"]}}}}"#);
/// let file = read(r#"{"default-priorities": {"namespace": ["x86_64"]},
///     "variants": {"v3": {"x86_64": {"level": ["v4"]}}}}"#);
/// assert_eq!(metadata_differences(&wheels, &wheels), Vec::<String>::new());
/// assert_eq!(metadata_differences(&wheels, &file), [
///     "no variant `v4`, which a wheel has",
///     "variant `v3` has x86_64 :: level :: v4 where its wheel has x86_64 :: level :: v3",
/// ]);
/// ```
pub fn metadata_differences(expected: &VariantMetadata, found: &VariantMetadata) -> Vec<String> {
    let mut out = Vec::new();
    if expected.generation != found.generation {
        out.push(format!(
            "schema {} where the wheels use {}",
            found.generation.written_version(),
            expected.generation.written_version()
        ));
    }
    let missing: Vec<&VariantLabel> = expected
        .variants
        .keys()
        .filter(|l| !found.variants.contains_key(*l))
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "no {} {}, which a wheel has",
            plural(missing.len(), "variant", "variants"),
            name_labels(&missing)
        ));
    }
    let extra: Vec<&VariantLabel> = found
        .variants
        .keys()
        .filter(|l| !expected.variants.contains_key(*l))
        .collect();
    if !extra.is_empty() {
        out.push(format!(
            "{} {} that no wheel has",
            plural(extra.len(), "variant", "variants"),
            name_labels(&extra)
        ));
    }
    let changed: Vec<(&VariantLabel, &VariantProperties, &VariantProperties)> = expected
        .variants
        .iter()
        .filter_map(|(label, want)| {
            let got = found.variants.get(label)?;
            (got != want).then_some((label, want, got))
        })
        .collect();
    for (label, want, got) in changed.iter().take(MAX_LABELS_NAMED) {
        out.push(format!(
            "variant `{label}` has {} where its wheel has {}",
            describe_properties(got),
            describe_properties(want)
        ));
    }
    if changed.len() > MAX_LABELS_NAMED {
        out.push(format!(
            "{} more variants have other properties",
            changed.len() - MAX_LABELS_NAMED
        ));
    }
    if expected.priorities != found.priorities {
        out.push("other default-priorities".to_owned());
    }
    if expected.providers != found.providers {
        out.push("other providers".to_owned());
    }
    if expected.static_properties != found.static_properties {
        out.push("other static-properties".to_owned());
    }
    out
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// `` `a`, `b` `` (and how many more past [`MAX_LABELS_NAMED`]).
fn name_labels(labels: &[&VariantLabel]) -> String {
    let mut text = labels
        .iter()
        .take(MAX_LABELS_NAMED)
        .map(|l| format!("`{l}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if labels.len() > MAX_LABELS_NAMED {
        text.push_str(&format!(" and {} more", labels.len() - MAX_LABELS_NAMED));
    }
    text
}

/// The properties of a variant, `no properties` for the null variant.
fn describe_properties(properties: &VariantProperties) -> String {
    if properties.is_empty() {
        return "no properties".to_owned();
    }
    properties_of(properties)
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{read_json, SourceKind};

    fn index(json: &str) -> VariantMetadata {
        read_json(json, SourceKind::IndexFile).unwrap()
    }

    #[test]
    fn a_null_variant_is_a_fallback() {
        let meta = index(
            r#"{"default-priorities": {"namespace": ["x86_64"]},
                "variants": {"v3": {"x86_64": {"level": ["v3"]}}, "null": {}}}"#,
        );
        assert!(missing_fallback_warning("p 1", false, &meta).is_none());
    }

    #[test]
    fn extra_labels_and_other_sections_are_named() {
        let wheels = index(
            r#"{"default-priorities": {"namespace": ["x86_64"]},
                "variants": {"v3": {"x86_64": {"level": ["v3"]}}}}"#,
        );
        let file = index(
            r#"{"default-priorities": {"namespace": ["x86_64", "aarch64"]},
                "variants": {"v3": {"x86_64": {"level": ["v3"]}}, "null": {}}}"#,
        );
        assert_eq!(
            metadata_differences(&wheels, &file),
            [
                "variant `null` that no wheel has",
                "other default-priorities"
            ]
        );
    }

    #[test]
    fn a_long_list_of_labels_is_cut_short() {
        let variants: Vec<String> = (0..40)
            .map(|i| format!(r#""l{i:02}": {{"x86_64": {{"level": ["v{i}"]}}}}"#))
            .collect();
        let wheels = index(&format!(
            r#"{{"default-priorities": {{"namespace": ["x86_64"]}}, "variants": {{{}}}}}"#,
            variants.join(",")
        ));
        let empty = index(r#"{"default-priorities": {"namespace": ["x86_64"]}, "variants": {}}"#);
        let diff = metadata_differences(&wheels, &empty);
        assert_eq!(
            diff,
            ["no variants `l00`, `l01`, `l02`, `l03`, `l04` and 35 more, which a wheel has"]
        );
    }
}
