//! URL path segments: one encoder and one decoder (the `percent-encoding` crate) for every
//! link vari writes and every segment it reads back.

use std::borrow::Cow;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The same, `+` kept.
const UNRESERVED_AND_PLUS: &AsciiSet = &UNRESERVED.remove(b'+');

/// Which characters a segment keeps as they are; every other byte is written `%XX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentSet {
    /// RFC 3986's unreserved characters.
    Unreserved,
    /// Those and `+`, which wheel names of local versions (`+cu128`) hold.
    UnreservedAndPlus,
}

/// `segment` percent-encoded as one URL path segment (`/`, `#`, `?`, spaces… escaped).
///
/// ```
/// use vari_simple::{encode_segment, SegmentSet};
/// assert_eq!(encode_segment("a+b c/d", SegmentSet::Unreserved), "a%2Bb%20c%2Fd");
/// assert_eq!(encode_segment("a+b c/d", SegmentSet::UnreservedAndPlus), "a+b%20c%2Fd");
/// ```
pub fn encode_segment(segment: &str, keep: SegmentSet) -> String {
    let set = match keep {
        SegmentSet::Unreserved => UNRESERVED,
        SegmentSet::UnreservedAndPlus => UNRESERVED_AND_PLUS,
    };
    utf8_percent_encode(segment, set).to_string()
}

/// A percent-encoded segment decoded; `None` when the bytes it names are not UTF-8. A `%` not
/// followed by two hex digits is kept as it is.
pub fn decode_segment(segment: &str) -> Option<Cow<'_, str>> {
    percent_decode_str(segment).decode_utf8().ok()
}

/// A percent-encoded segment decoded, bytes that are not UTF-8 replaced (`U+FFFD`).
pub fn decode_segment_lossy(segment: &str) -> Cow<'_, str> {
    percent_decode_str(segment).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_keep_wheel_names_readable() {
        let wheel = "torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl";
        assert_eq!(encode_segment(wheel, SegmentSet::UnreservedAndPlus), wheel);
        assert_eq!(
            encode_segment(wheel, SegmentSet::Unreserved),
            "torch-2.10.0%2Bcu128-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(
            encode_segment("a b/c#d~é", SegmentSet::UnreservedAndPlus),
            "a%20b%2Fc%23d~%C3%A9"
        );
    }

    #[test]
    fn segments_are_decoded() {
        // Invalid escapes stay as they are; bytes that are not UTF-8 are replaced or refused.
        assert_eq!(decode_segment_lossy("a%2Bb%zz%4"), "a+b%zz%4");
        assert_eq!(decode_segment_lossy("%FF"), "\u{FFFD}");
        assert_eq!(decode_segment("%FF"), None);
        assert_eq!(decode_segment("user%40corp").as_deref(), Some("user@corp"));
    }
}
