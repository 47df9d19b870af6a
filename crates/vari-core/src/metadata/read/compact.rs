//! Removing the whitespace of JSON text before parsing it.
//!
//! Index files are written indented (4 spaces, nesting five deep), so half of a large
//! `*-variants.json` is whitespace, and `serde_json` skips whitespace a byte at a time through
//! its reader: that was a third of the time spent reading one. Copying the text without it
//! first is several times cheaper per byte, and the parse of the result is the same parse.
//!
//! The result parses exactly as the input does (same values, same keys in the same order,
//! same validity): whitespace is only removed where JSON allows it, strings are copied as
//! they are, and where removing a run would join two tokens (`1 2`, `true false`) one space is
//! kept, so an invalid document stays invalid. Positions in error messages refer to the
//! compacted text, so callers report errors from a parse of the original.
//!
//! [`CompactJson`] does the same on text that arrives in pieces, so that a reader of a file
//! need not hold the indented original at all.

/// `text` without the whitespace between its tokens.
pub(super) fn compact_json(text: &str) -> String {
    // `text` is past its byte-order mark already: a second one is not dropped.
    let mut compact = CompactJson {
        mark: MARK_DECIDED,
        ..CompactJson::with_capacity(text.len())
    };
    compact.push(text.as_bytes());
    // Only ASCII whitespace is removed, never a byte of a multi-byte character, so the result
    // of UTF-8 text is UTF-8; were it not, the original is as good an input.
    compact.into_text().unwrap_or_else(|| text.to_owned())
}

/// JSON text compacted as it arrives, in pieces of any size: a file read a block at a time
/// never has to be held whole (a large `*-variants.json` is mostly indentation, so the
/// compacted text is a fraction of it).
///
/// Pieces may split a string, an escape or a multi-byte character anywhere: the state between
/// them is whether a string is open, whether an escape is pending, and whether whitespace was
/// skipped. A byte-order mark at the very start is dropped. Read the result with
/// [`read_compact_json_lenient`](super::read_compact_json_lenient).
///
/// ```
/// use vari_core::metadata::CompactJson;
/// let mut compact = CompactJson::default();
/// for piece in ["{\n    \"a", " b\": [1, ", "2]\n}\n"] {
///     compact.push(piece.as_bytes());
/// }
/// assert_eq!(compact.as_bytes(), br#"{"a b":[1,2]}"#);
/// ```
#[derive(Debug, Default)]
pub struct CompactJson {
    out: Vec<u8>,
    /// How many bytes of a byte-order mark the text has started with, or [`MARK_DECIDED`]
    /// once the start is past (a mark dropped, or none).
    mark: usize,
    /// Inside a string: bytes are copied as they are up to its closing quote.
    in_string: bool,
    /// Inside a string, right after a backslash: the next byte is copied whatever it is.
    escaped: bool,
    /// Whitespace was skipped since the last byte written.
    skipped: bool,
}

impl CompactJson {
    /// An empty document with room for `capacity` bytes of compacted text.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            out: Vec::with_capacity(capacity),
            ..Self::default()
        }
    }

    /// Appends the next piece of the text.
    pub fn push(&mut self, bytes: &[u8]) {
        let bytes = self.past_mark(bytes);
        self.compact(bytes);
    }

    /// `bytes` after the part of a leading byte-order mark they hold (pieces may split it).
    fn past_mark<'b>(&mut self, mut bytes: &'b [u8]) -> &'b [u8] {
        while let (Some(&expected), Some(&b)) = (BYTE_ORDER_MARK.get(self.mark), bytes.first()) {
            if b != expected {
                // Not a mark after all: the bytes taken for one are text.
                let taken = &BYTE_ORDER_MARK[..self.mark];
                self.mark = MARK_DECIDED;
                self.compact(taken);
                break;
            }
            self.mark += 1;
            bytes = &bytes[1..];
        }
        bytes
    }

    /// Appends `bytes`, past the start of the text, without their whitespace.
    fn compact(&mut self, bytes: &[u8]) {
        /// Eight spaces, the unit indentation is skipped in.
        const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
        let n = bytes.len();
        let mut i = 0;
        if self.in_string {
            i = self.string_rest(bytes, 0);
        }
        while i < n {
            let b = bytes[i];
            if is_whitespace(b) {
                i += 1;
                // Indentation comes in long runs of spaces: eight bytes at a time, up to the
                // first that is not a space (the lowest non-zero byte of the XOR, little-endian).
                while let Some(Ok(eight)) = bytes.get(i..i + 8).map(<[u8; 8]>::try_from) {
                    let others = u64::from_le_bytes(eight) ^ SPACES;
                    if others != 0 {
                        i += (others.trailing_zeros() / 8) as usize;
                        break;
                    }
                    i += 8;
                }
                while i < n && is_whitespace(bytes[i]) {
                    i += 1;
                }
                self.skipped = true;
                continue;
            }
            if self.skipped {
                // Keep one space where removing the run would join two tokens.
                if self.out.last().is_some_and(|&last| ends_token(last)) && ends_token(b) {
                    self.out.push(b' ');
                }
                self.skipped = false;
            }
            if b == b'"' {
                self.out.push(b);
                self.in_string = true;
                i = self.string_rest(bytes, i + 1);
            } else {
                self.out.push(b);
                i += 1;
            }
        }
    }

    /// Copies the open string from `bytes[i..]` through its closing quote, or to the end of the
    /// piece if it does not close there; returns where copying stopped.
    fn string_rest(&mut self, bytes: &[u8], mut i: usize) -> usize {
        let n = bytes.len();
        let start = i;
        if self.escaped && i < n {
            i += 1;
            self.escaped = false;
        }
        while i < n {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    self.in_string = false;
                    break;
                }
                // The escaped character is ASCII in valid JSON; in invalid JSON it may start
                // a multi-byte character, whose other bytes are never `"` or `\`.
                b'\\' if i + 1 < n => i += 2,
                b'\\' => {
                    i += 1;
                    self.escaped = true;
                }
                _ => i += 1,
            }
        }
        self.out.extend_from_slice(&bytes[start..i]);
        i
    }

    /// The compacted text so far (the start of a byte-order mark is held back until the
    /// next byte shows whether it is one).
    pub fn as_bytes(&self) -> &[u8] {
        &self.out
    }

    /// The compacted text, if it is UTF-8 (it is when the text pushed was).
    pub(super) fn into_text(mut self) -> Option<String> {
        if self.mark < MARK_DECIDED {
            // The text ended inside what could have been a mark: those bytes are the text.
            let taken = &BYTE_ORDER_MARK[..self.mark];
            self.mark = MARK_DECIDED;
            self.compact(taken);
        }
        String::from_utf8(self.out).ok()
    }
}

/// UTF-8's byte-order mark, which a JSON reader may ignore at the start of a text (RFC 8259).
const BYTE_ORDER_MARK: &[u8] = "\u{feff}".as_bytes();

/// [`CompactJson::mark`] once the start of the text is past.
const MARK_DECIDED: usize = BYTE_ORDER_MARK.len();

/// JSON's insignificant whitespace.
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// Whether `b` can be part of a bare token (a number, `true`, `false`, `null`, or any invalid
/// run of characters): two such bytes must stay apart.
fn ends_token(b: u8) -> bool {
    !matches!(b, b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_parse(text: &str) {
        let compact = compact_json(text);
        let original: Result<serde_json::Value, _> = serde_json::from_str(text);
        let again: Result<serde_json::Value, _> = serde_json::from_str(&compact);
        match (original, again) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?} -> {compact:?}"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{text:?} -> {compact:?}: {a:?} vs {b:?}"),
        }
    }

    #[test]
    fn whitespace_goes_and_strings_stay() {
        assert_eq!(
            compact_json("{\n    \"a b\": [ 1 , \"x\\\" y\" ],\t\"c\" : null }\r\n"),
            r#"{"a b":[1,"x\" y"],"c":null}"#
        );
        assert_eq!(compact_json("  "), "");
        // Runs of every length around the eight-byte steps.
        for n in 0..20 {
            let pad = " ".repeat(n);
            let text = format!("[{pad}1,{pad}\n{pad}\"a {pad}\"{pad}]{pad}");
            assert_eq!(compact_json(&text), format!("[1,\"a {pad}\"]"), "{n}");
        }
        assert_eq!(compact_json(""), "");
    }

    #[test]
    fn tokens_are_never_joined() {
        assert_eq!(compact_json("[1 2]"), "[1 2]");
        assert_eq!(compact_json("[true\n  false]"), "[true false]");
        for text in [
            "[1 2]",
            "[tr ue]",
            "{\"a\" \"b\"}",
            "[\"a\" 1]",
            "[-\n1]",
            "[1.\n5]",
            "{\"a\":1}\n x",
            "\"unterminated \\",
            "\"é\\\u{e9}\"",
            "[\"\\u00e9 \\\\ \"  ,  2 ]",
            "{\"k\":\"v\" ,\"k\":\"w\"}",
        ] {
            same_parse(text);
        }
    }
    #[test]
    fn random_documents_parse_the_same() {
        // Documents drawn from JSON's pieces, whitespace, escapes and stray bytes: valid ones
        // must give the same value, invalid ones must stay invalid.
        #[rustfmt::skip]
        const PIECES: [&str; 22] = [
            "{", "}", "[", "]", ",", ":", "\"k\"", "\"a b\"", "\"\\\"\"", "\"\\\\\"", "1", "-2.5e3",
            "true", "null", " ", "\n    ", "\t", "\r\n", "\"\\u00e9\"", "é", "\"", "\\",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |bound: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % bound
        };
        for _ in 0..5_000 {
            let len = next(12);
            let text: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
            same_parse(&text);
            same_parse(&format!("[{text}]"));
            // Pushed in pieces cut anywhere (inside strings, escapes and characters too), the
            // text compacts to the same bytes.
            let bytes = text.as_bytes();
            let mut pieces = CompactJson {
                mark: MARK_DECIDED,
                ..CompactJson::default()
            };
            let mut at = 0;
            while at < bytes.len() {
                let end = (at + 1 + next(4)).min(bytes.len());
                pieces.push(&bytes[at..end]);
                at = end;
            }
            assert_eq!(
                pieces.as_bytes(),
                compact_json(&text).as_bytes(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn pieces_of_one_byte_compact_as_the_whole() {
        let text = "\u{feff}{\n  \"a \\\" b\" : [ \"\\\\\", \"é\" ],\n  \"n\": 1 }\n";
        let mut whole = CompactJson::default();
        whole.push(text.as_bytes());
        let mut bytes = CompactJson::default();
        for b in text.as_bytes() {
            bytes.push(std::slice::from_ref(b));
        }
        assert_eq!(bytes.as_bytes(), whole.as_bytes());
        assert_eq!(
            whole.as_bytes(),
            r#"{"a \" b":["\\","é"],"n":1}"#.as_bytes()
        );
    }

    #[test]
    fn only_a_leading_byte_order_mark_is_dropped() {
        let mut one = CompactJson::default();
        one.push("\u{feff}[1]".as_bytes());
        assert_eq!(one.as_bytes(), b"[1]");
        let mut two = CompactJson::default();
        two.push("\u{feff}\u{feff}[1]".as_bytes());
        assert_eq!(two.as_bytes(), "\u{feff}[1]".as_bytes());
        // compact_json is given text whose mark is gone: it drops none.
        assert_eq!(compact_json("\u{feff}[1]"), "\u{feff}[1]");
        // The start of a mark that is not one is text, wherever the text ends.
        for text in [&b"\xef\xbb["[..], b"\xef", b"\xef\xbb", b"\xef ["] {
            let mut compact = CompactJson::default();
            for b in text {
                compact.push(std::slice::from_ref(b));
            }
            let compacted = compact.into_text();
            assert!(compacted.is_none(), "{text:?}: {compacted:?}");
        }
        let mut partial = CompactJson::default();
        partial.push(b"\xef\xbb");
        partial.push(b"\xbf[ 1 ]");
        assert_eq!(partial.into_text().as_deref(), Some("[1]"));
    }
}
