//! Which generation a document is: from its `$schema` URL, else from the keys it uses.

use super::issues::get;
use crate::metadata::model::SchemaGeneration;
use crate::metadata::tree::Node;

/// Infers the generation of a document without a versioned `$schema`, from the keys present
/// (first match wins):
///
/// 1. any provider with `plugin-use` ⇒ 0.0.2;
/// 2. any provider with `builtin`, `build-requires`, `static-properties` or `feature-order`
///    ⇒ 0.2;
/// 3. any provider with `install-time`, a top-level `static-properties`, or
///    `default-priorities.feature` / `.property` ⇒ 0.0.3;
/// 4. a `providers` table otherwise ⇒ 0.0.3 (providers with only `requires`, `enable-if`,
///    `optional`, `plugin-api` fit 0.0.3 and 0.2 alike; 0.0.3 is what such files in the
///    wild — torch 2.8 — were written against);
/// 5. only `default-priorities.namespace` and `variants` ⇒ 0.1.
pub(super) fn infer_generation(root: &[(&str, &Node)]) -> SchemaGeneration {
    let providers: Vec<&[(std::borrow::Cow<'_, str>, Node<'_>)]> = match get(root, "providers") {
        Some(Node::Object(entries)) => entries
            .iter()
            .filter_map(|(_, table)| match table {
                Node::Object(t) => Some(t.as_slice()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let any_provider_has = |keys: &[&str]| {
        providers
            .iter()
            .any(|t| t.iter().any(|(k, _)| keys.contains(&k.as_ref())))
    };
    if any_provider_has(&["plugin-use"]) {
        return SchemaGeneration::V0_0_2;
    }
    if any_provider_has(&[
        "builtin",
        "build-requires",
        "static-properties",
        "feature-order",
    ]) {
        return SchemaGeneration::V0_2;
    }
    let priorities_0_0_x = match get(root, "default-priorities") {
        Some(Node::Object(entries)) => entries
            .iter()
            .any(|(k, _)| k == "feature" || k == "property"),
        _ => false,
    };
    if any_provider_has(&["install-time"])
        || get(root, "static-properties").is_some()
        || priorities_0_0_x
        || get(root, "providers").is_some()
    {
        return SchemaGeneration::V0_0_3;
    }
    SchemaGeneration::V0_1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::tree::parse_json;

    fn infer(json: &str) -> SchemaGeneration {
        let Node::Object(entries) = parse_json(json).unwrap() else {
            panic!("not an object")
        };
        let root: Vec<(&str, &Node)> = entries.iter().map(|(k, v)| (k.as_ref(), v)).collect();
        infer_generation(&root)
    }

    #[test]
    fn inference_follows_the_documented_precedence() {
        use SchemaGeneration::*;
        assert_eq!(
            infer(r#"{"providers": {"a": {"plugin-use": "none"}}}"#),
            V0_0_2
        );
        assert_eq!(
            infer(r#"{"providers": {"a": {"plugin-use": "all", "builtin": "x"}}}"#),
            V0_0_2
        );
        for key in [
            "builtin",
            "build-requires",
            "static-properties",
            "feature-order",
        ] {
            let json = format!(r#"{{"providers": {{"a": {{"{key}": 1}}}}}}"#);
            assert_eq!(infer(&json), V0_2, "{key}");
        }
        assert_eq!(
            infer(r#"{"providers": {"a": {"install-time": false}}}"#),
            V0_0_3
        );
        assert_eq!(infer(r#"{"static-properties": {}}"#), V0_0_3);
        assert_eq!(infer(r#"{"default-priorities": {"feature": {}}}"#), V0_0_3);
        assert_eq!(infer(r#"{"default-priorities": {"property": {}}}"#), V0_0_3);
        assert_eq!(
            infer(r#"{"providers": {"a": {"requires": ["x"]}}}"#),
            V0_0_3
        );
        assert_eq!(
            infer(r#"{"default-priorities": {"namespace": ["a"]}, "variants": {}}"#),
            V0_1
        );
        assert_eq!(infer("{}"), V0_1);
    }
}
