//! What a page lists, independent of its format: the rows both renderers
//! ([`render_json`](crate::render_json), [`render_html`](crate::render_html)) write.

use std::collections::BTreeMap;

/// One file as a project page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// The name the installer sees.
    pub(crate) filename: String,
    /// Where the installer fetches it: a path on the proxy.
    pub(crate) href: String,
    /// Algorithm → hex digest; empty when no correct digest is known yet.
    pub(crate) hashes: BTreeMap<String, String>,
    /// `requires-python`, as the index gave it.
    pub(crate) requires_python: Option<String>,
    /// `Some(reason)` when yanked (the reason possibly empty).
    pub(crate) yanked: Option<Option<String>>,
    /// Its size, when known.
    pub(crate) size: Option<u64>,
    /// Its upload time, when the index said.
    pub(crate) upload_time: Option<String>,
    /// The hashes of its PEP 658 metadata when served (`Some` of an empty map: served, hash
    /// unknown).
    pub(crate) core_metadata: Option<BTreeMap<String, String>>,
}

/// The PEP 691 `api-version` of a project page: 1.1 (PEP 700: `size` of every file, and
/// `versions`) when every size is known, else 1.0.
pub(crate) fn api_version(files: &[Listed]) -> &'static str {
    match files.iter().all(|f| f.size.is_some()) {
        true => "1.1",
        false => "1.0",
    }
}

/// Percent-encodes one path segment (a file name): everything but RFC 3986's unreserved
/// characters and `+`, which wheel names of local versions hold and servers read literally.
pub(crate) fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'+') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_keep_wheel_names_readable() {
        assert_eq!(
            encode_segment("torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl"),
            "torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(encode_segment("a b/c#d"), "a%20b%2Fc%23d");
    }
}
