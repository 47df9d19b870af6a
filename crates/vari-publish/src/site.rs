//! The site's layout and what its pages say, independent of how they are rendered.
//!
//! ```text
//! SITE/
//!   simple/index.html, simple/index.json              the project list (PEP 503, PEP 691)
//!   simple/{project}/index.html, …/index.json         one page per project
//!   files/{file}                                      wheels and sdists (unless --base-url)
//!   files/{wheel}.metadata                            the wheel's METADATA (PEP 658 / 714)
//!   files/{name}-{version}-variants.json              per release with variant wheels (PEP 825)
//!   .vari-index-state.json                            the build state (not linked)
//! ```
//!
//! Project pages link files relatively (`../../files/…`), so the site works under any URL prefix.

/// The directory of the simple pages.
pub(crate) const SIMPLE_DIR: &str = "simple";
/// The directory of the files.
pub(crate) const FILES_DIR: &str = "files";
/// The PEP 691 / PEP 700 API version the pages declare (1.1 adds `versions` and `size`).
pub(crate) const API_VERSION: &str = "1.1";

/// A project's page.
#[derive(Debug, Clone)]
pub(crate) struct ProjectPage {
    /// The PEP 503 normalised name.
    pub(crate) name: String,
    /// Every version with a file, in ascending PEP 440 order.
    pub(crate) versions: Vec<String>,
    /// The links, in a stable order (by version, then file name).
    pub(crate) files: Vec<FileLink>,
}

/// One link on a project page.
#[derive(Debug, Clone)]
pub(crate) struct FileLink {
    /// The file name shown as the link text.
    pub(crate) filename: String,
    /// The URL, relative to the project page or absolute.
    pub(crate) url: String,
    /// Lowercase hex SHA-256.
    pub(crate) sha256: String,
    /// Size in bytes.
    pub(crate) size: u64,
    /// `Requires-Python` of the distribution.
    pub(crate) requires_python: Option<String>,
    /// SHA-256 of the `{url}.metadata` file, when there is one.
    pub(crate) core_metadata_sha256: Option<String>,
}

/// The path of a site file relative to the site root, `/`-separated.
pub(crate) fn files_path(filename: &str) -> String {
    format!("{FILES_DIR}/{filename}")
}

/// The URL, relative to a project page, of a file under `files/`.
pub(crate) fn relative_file_url(filename: &str) -> String {
    format!("../../{FILES_DIR}/{}", percent_encode(filename))
}

/// `{base}/{filename}`, for files hosted elsewhere.
pub(crate) fn external_file_url(base: &str, filename: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        percent_encode(filename)
    )
}

/// Percent-encodes everything but RFC 3986 unreserved characters. File names are ASCII letters,
/// digits, `.`, `_`, `-` except for local versions (`+cu128`), whose `+` some servers and object
/// stores read as a space; encoding it is what PyPI does. (Too small a need for a dependency.)
pub(crate) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
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
    fn urls_encode_what_is_not_unreserved() {
        assert_eq!(
            relative_file_url("torch-2.8.0+cu128-cp312-cp312-linux_x86_64.whl"),
            "../../files/torch-2.8.0%2Bcu128-cp312-cp312-linux_x86_64.whl"
        );
        assert_eq!(
            external_file_url("https://h/w/", "a b.whl"),
            "https://h/w/a%20b.whl"
        );
    }
}
