//! Parsing a JSON metadata document: a tree of every section but `variants`, which is
//! streamed straight into the model as it is parsed (see `variants.rs`).
//!
//! Streaming needs the rules `variants` is read under (the generation, the known namespaces),
//! which come from the other sections. Every writer in the wild (vari, variantlib, PyTorch's
//! indexes) puts `variants` last, so the rules are taken from the keys before it; if the
//! whole document then gives other rules, the caller parses again with [`Mode::Raw`], which
//! keeps `variants` as raw text to stream once the rules are known.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::issues::{unique_entries, Issues};
use super::variants::{Streamed, VariantRules, VariantsSeed};
use crate::metadata::tree::{Key, Node, NodeVisitor};

/// Computes the rules `variants` is read under from the root's entries so far.
pub(super) type RulesOf<'r> = &'r dyn Fn(&[(&str, &Node)]) -> Option<VariantRules>;

/// How the root's `variants` is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Into the model, under the rules of the keys before it ([`Node::Streamed`]).
    Stream,
    /// Kept as raw text ([`Node::RawJson`]).
    Raw,
}

/// Parses a JSON document; in [`Mode::Stream`], also returns `variants` as read (when the
/// root is an object with `variants` and the keys before it give rules to read it by).
///
/// `rules_of` computes the rules from the root's entries so far (`None`: the document cannot
/// be read at all, so `variants` need not be).
pub(super) fn parse_root<'de>(
    text: &'de str,
    mode: Mode,
    rules_of: RulesOf<'_>,
) -> Result<(Node<'de>, Option<Streamed>), serde_json::Error> {
    let mut streamed = None;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let root = (&mut deserializer).deserialize_any(RootVisitor {
        mode,
        rules_of,
        streamed: &mut streamed,
    })?;
    deserializer.end()?;
    Ok((root, streamed))
}

struct RootVisitor<'v, 'r> {
    mode: Mode,
    rules_of: RulesOf<'r>,
    streamed: &'v mut Option<Streamed>,
}

impl<'de> RootVisitor<'_, '_> {
    /// The value of the root's (first) `variants` key.
    fn variants<A: MapAccess<'de>>(
        &mut self,
        entries: &[(Cow<'de, str>, Node<'de>)],
        map: &mut A,
    ) -> Result<Node<'de>, A::Error> {
        let seen_before = entries.iter().any(|(k, _)| k == "variants");
        if seen_before {
            // A repeat: reported as a duplicate key, never read.
            map.next_value::<IgnoredAny>()?;
            return Ok(Node::Null);
        }
        let rules = match self.mode {
            Mode::Stream => {
                let mut scratch = Issues::default();
                (self.rules_of)(&unique_entries(entries, "", &mut scratch))
            }
            Mode::Raw => None,
        };
        let Some(rules) = rules else {
            let raw: &'de serde_json::value::RawValue = map.next_value()?;
            return Ok(Node::RawJson(raw.get()));
        };
        let mut issues = Issues::default();
        let read = map.next_value_seed(VariantsSeed {
            path: "variants",
            rules: &rules,
            issues: &mut issues,
        })?;
        *self.streamed = Some(Streamed {
            rules,
            read,
            issues,
        });
        Ok(Node::Streamed)
    }
}

impl<'de> Visitor<'de> for RootVisitor<'_, '_> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_f64(v)
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_borrowed_str(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_str(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Node<'de>, E> {
        NodeVisitor::new().visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Node<'de>, A::Error> {
        NodeVisitor::new().visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let value = if key == "variants" {
                self.variants(&entries, &mut map)?
            } else {
                map.next_value_seed(NodeSeed)?
            };
            entries.push((key, value));
        }
        Ok(Node::Object(entries))
    }
}

/// Any other value, as a tree.
struct NodeSeed;

impl<'de> DeserializeSeed<'de> for NodeSeed {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        d.deserialize_any(NodeVisitor::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::model::SchemaGeneration;

    fn rules(_: &[(&str, &Node)]) -> Option<VariantRules> {
        Some(VariantRules {
            generation: SchemaGeneration::V0_1,
            known_namespaces: None,
        })
    }

    #[test]
    fn variants_are_streamed_or_kept_raw() {
        let text = r#"{"x": {"variants": []}, "variants": {"a": {"n": {"f": ["1"]}}}}"#;
        let (root, streamed) = parse_root(text, Mode::Stream, &rules).unwrap();
        let Node::Object(entries) = root else {
            panic!()
        };
        assert_eq!(entries[1].1, Node::Streamed);
        // Only the root's `variants`.
        let Node::Object(inner) = &entries[0].1 else {
            panic!()
        };
        assert_eq!(inner[0].1, Node::Array(vec![]));
        let read = streamed.unwrap().read.unwrap();
        assert_eq!(read.entries, 1);
        assert_eq!(read.variants.keys().next().unwrap().as_str(), "a");

        let (root, streamed) = parse_root(text, Mode::Raw, &rules).unwrap();
        let Node::Object(entries) = root else {
            panic!()
        };
        assert_eq!(entries[1].1, Node::RawJson(r#"{"a": {"n": {"f": ["1"]}}}"#));
        assert!(streamed.is_none());
        for (raw, kind) in [("[1]", "a list"), (" \"s\"", "a string"), ("null", "null")] {
            assert_eq!(Node::RawJson(raw).kind(), kind);
        }
    }

    #[test]
    fn trailing_text_is_an_error() {
        assert!(parse_root("{} x", Mode::Stream, &rules).is_err());
        assert!(parse_root("{", Mode::Stream, &rules).is_err());
    }
}
