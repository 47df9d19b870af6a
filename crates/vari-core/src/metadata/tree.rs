//! A JSON/TOML document tree that keeps keys in document order and keeps duplicate keys.
//!
//! `serde_json::Value` silently keeps the last of two equal keys, which would hide a duplicated
//! variant label (two different property sets under one label). Parsing into this tree instead
//! lets the validator report every duplicate, and walk the document in order so errors come
//! out in document order.
//!
//! The top-level `variants` of a JSON metadata document is the exception: it is most of an
//! index file, so `read/root.rs` streams it straight into the model ([`Node::Streamed`] marks
//! where it was) or keeps it as raw text ([`Node::RawJson`]) to stream later.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One value of a parsed document. Strings borrow from the JSON text when they have no
/// escapes (the common case), which keeps reading large index files cheap.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    /// JSON `null` (TOML has none).
    Null,
    /// A boolean.
    Bool(bool),
    /// Any number (its value never matters to variant metadata, only its type).
    Number,
    /// A string.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// An object / table: entries in document order, duplicates included.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    /// A value left unparsed, as its JSON text (only the root's `variants`).
    RawJson(&'a str),
    /// A value read into the model while parsing, kept beside the tree (only the root's
    /// `variants`).
    Streamed,
}

impl Node<'_> {
    /// What the value is, for "expected …, found …" messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "a list",
            Node::Object(_) | Node::Streamed => "an object",
            Node::RawJson(text) => match text.trim_start().as_bytes().first() {
                Some(b'{') => "an object",
                Some(b'[') => "a list",
                Some(b'"') => "a string",
                Some(b't' | b'f') => "a boolean",
                Some(b'n') => "null",
                _ => "a number",
            },
        }
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor(PhantomData))
    }
}

/// An object key, borrowed when possible (serde's `Cow<str>` always copies).
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Builds a [`Node`] from any value.
pub(crate) struct NodeVisitor<'de>(PhantomData<&'de ()>);

impl NodeVisitor<'_> {
    /// The visitor.
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'de> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON or TOML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Node<'de>, E> {
        Ok(Node::Number)
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        // Most arrays of an index file hold one feature value: give those an exact-size
        // allocation rather than the four slots a growing `Vec` starts with.
        let Some(first) = seq.next_element()? else {
            return Ok(Node::Array(Vec::new()));
        };
        let Some(second) = seq.next_element()? else {
            return Ok(Node::Array(vec![first]));
        };
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0) + 2);
        items.extend([first, second]);
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((Key(key), value)) = map.next_entry::<Key<'de>, Node<'de>>()? {
            entries.push((key, value));
        }
        Ok(Node::Object(entries))
    }
}

/// Parses JSON text into a tree, keeping duplicate keys (no special case for `variants`:
/// metadata documents are parsed by `read/root.rs`).
#[cfg(test)]
pub(crate) fn parse_json(text: &str) -> Result<Node<'_>, serde_json::Error> {
    serde_json::from_str(text)
}

/// Parses TOML text into a tree (TOML itself forbids duplicate keys).
pub(crate) fn parse_toml(text: &str) -> Result<Node<'static>, toml::de::Error> {
    // TOML strings are never borrowed from the input, so every string is owned.
    let owned: OwnedNode = toml::from_str(text)?;
    Ok(owned.0)
}

/// A tree with owned strings, for deserializers that cannot lend their input.
struct OwnedNode(Node<'static>);

impl<'de> Deserialize<'de> for OwnedNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Node::deserialize(d).map(|n| OwnedNode(n.into_owned()))
    }
}

impl Node<'_> {
    /// The same tree with every string owned.
    fn into_owned(self) -> Node<'static> {
        match self {
            Node::Null => Node::Null,
            Node::Bool(b) => Node::Bool(b),
            Node::Number => Node::Number,
            Node::String(s) => Node::String(Cow::Owned(s.into_owned())),
            Node::Array(items) => Node::Array(items.into_iter().map(Node::into_owned).collect()),
            Node::Object(entries) => Node::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
            // Only JSON metadata roots hold these, and they are never made owned.
            Node::RawJson(_) | Node::Streamed => Node::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_order_and_duplicates() {
        let n = parse_json(r#"{"b": 1, "a": [true, null, "x"], "b": {}}"#).unwrap();
        let Node::Object(entries) = n else { panic!() };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert!(
            matches!(entries[0].0, Cow::Borrowed(_)),
            "keys borrow from the text"
        );
        assert_eq!(
            entries[1].1,
            Node::Array(vec![Node::Bool(true), Node::Null, Node::String("x".into())])
        );
        assert_eq!(entries[2].1.kind(), "an object");
    }

    #[test]
    fn toml_keeps_document_order() {
        let n = parse_toml("z = 1\n[b]\nx = [\"1\"]\n[a]\n").unwrap();
        let Node::Object(entries) = n else { panic!() };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["z", "b", "a"]);
    }

    #[test]
    fn invalid_text_is_an_error() {
        assert!(parse_json("{").is_err());
        assert!(parse_toml("a = ").is_err());
        assert!(parse_toml("a = 1\na = 2").is_err());
    }
}
