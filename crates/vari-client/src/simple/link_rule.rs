//! Where a link may lead: the one rule every page's links pass before anything is fetched.
//!
//! A file listed by a remote page (http or https) is fetched over http or https only: a remote
//! index must not make vari read the local disk (`file:///etc/passwd` as a wheel's URL, or a
//! relative link resolved against `<base href="file:///">`). `file:` links are honoured only on
//! pages the user named as local paths or `file:` URLs (a local index or find-links page).
//! Other schemes (`ftp:`, `data:`, `javascript:`…) are never fetched.
//!
//! Redirects cannot break the rule: the page URL judged is the one after redirects, and the
//! HTTP client follows redirects to http and https only.

use url::Url;

/// Why a link on `page` may not be followed, or `None` when it may.
pub(crate) fn refusal(page: &Url, link: &Url) -> Option<&'static str> {
    match (link.scheme(), page.scheme()) {
        ("http" | "https", _) => None,
        ("file", "file") => None,
        ("file", _) => Some("a remote page may not link local files (only http and https)"),
        _ => Some("only http, https (and file, on local pages) links are fetched"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> Url {
        Url::parse(u).unwrap()
    }

    #[test]
    fn remote_pages_link_http_only() {
        let remote = url("https://example.com/simple/foo/");
        let local = url("file:///srv/index/foo/");
        assert_eq!(refusal(&remote, &url("http://cdn/foo.whl")), None);
        assert_eq!(refusal(&local, &url("https://cdn/foo.whl")), None);
        assert_eq!(refusal(&local, &url("file:///srv/foo.whl")), None);
        for bad in [
            "file:///etc/passwd",
            "ftp://example.com/foo.whl",
            "data:text/plain,foo",
            "javascript:alert(1)",
        ] {
            assert!(refusal(&remote, &url(bad)).is_some(), "{bad}");
        }
        assert!(refusal(&local, &url("ftp://example.com/foo.whl")).is_some());
    }
}
