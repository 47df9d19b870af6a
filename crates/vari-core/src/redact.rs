//! The one rule for showing text that may hold a URL with credentials: the user information
//! (`user:password@`) of every URL in it is replaced by `****`, so no password (and no token
//! used as a user name) reaches an error line, a warning or a log.
//!
//! It works on text, not on parsed URLs, because what is shown is often not vari's own: a
//! library's error message that repeats the URL it was given, a URL that does not even parse.
//!
//! ```
//! use vari_core::redact::redact_credentials;
//! assert_eq!(
//!     redact_credentials("PUT https://alice:s3cret@dav.example/site/x failed (https://alice:s3cret@dav.example/site)"),
//!     "PUT https://****@dav.example/site/x failed (https://****@dav.example/site)"
//! );
//! assert_eq!(redact_credentials("https://pypi.org/simple/"), "https://pypi.org/simple/");
//! ```

use std::borrow::Cow;

/// `text` with the user information of every `SCHEME://USERINFO@HOST…` in it replaced by
/// `****` (borrowed, unchanged, when there is none).
pub fn redact_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") || !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(found) = rest.find("://") {
        let authority_start = found + 3;
        out.push_str(&rest[..authority_start]);
        let after = &rest[authority_start..];
        // The authority ends where the path, query or fragment starts, or where the URL
        // itself ends in the surrounding text.
        let end = after
            .find(|c: char| {
                matches!(
                    c,
                    '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`' | '(' | ')' | '[' | ']'
                ) || c.is_whitespace()
                    || c.is_control()
            })
            .unwrap_or(after.len());
        // A `]` belongs to an IPv6 host: look for `@` before the first `[`.
        let authority = &after[..end];
        let userinfo_end = match authority.find('[') {
            Some(bracket) => authority[..bracket].rfind('@'),
            None => authority.rfind('@'),
        };
        match userinfo_end {
            Some(at) if at > 0 => {
                out.push_str("****");
                out.push_str(&after[at..end]);
                changed = true;
            }
            _ => out.push_str(&after[..end]),
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    match changed {
        true => Cow::Owned(out),
        false => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_url_in_the_text_loses_its_user_information() {
        let cases = [
            ("https://u:p@h/x", "https://****@h/x"),
            ("https://token@h", "https://****@h"),
            (
                "a http://u:p@h:8080/x b s3://k:s@bucket/p",
                "a http://****@h:8080/x b s3://****@bucket/p",
            ),
            ("`https://u:p%40x@h/`: bad", "`https://****@h/`: bad"),
            ("https://u:p@[::1]:80/x", "https://****@[::1]:80/x"),
            ("(https://u:p@h)", "(https://****@h)"),
            ("https://h/path@not-userinfo", "https://h/path@not-userinfo"),
            (
                "mail me at a@b, see https://h/",
                "mail me at a@b, see https://h/",
            ),
            (
                "https://u:p@h\nhttps://u:p@h",
                "https://****@h\nhttps://****@h",
            ),
            ("no url at all", "no url at all"),
            ("https://@h/", "https://@h/"),
        ];
        for (given, expected) in cases {
            assert_eq!(redact_credentials(given), expected, "{given}");
        }
    }

    #[test]
    fn text_without_credentials_is_borrowed() {
        assert!(matches!(
            redact_credentials("https://pypi.org/simple/ a@b"),
            Cow::Borrowed(_)
        ));
    }
}
