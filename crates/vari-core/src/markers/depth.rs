//! The nesting limit of markers: parentheses are counted before any parser recurses into them.
//!
//! Both marker parsers in the workspace (this crate's, and `pep508_rs`'s, which every requirement
//! and every standard comparison goes through) recurse once per open parenthesis, so a marker of
//! 60,000 nested parentheses in a wheel's `Requires-Dist` would overflow the stack. Real markers
//! nest fewer than five levels; the limit leaves far more room than any of them needs.

use super::error::MarkerError;

/// The deepest parenthesis nesting accepted in a marker. Real markers use fewer than five levels.
pub const MAX_MARKER_DEPTH: usize = 64;

/// How much of an overlong marker an error message quotes.
const EXCERPT_CHARS: usize = 40;

/// The deepest nesting of parentheses in `marker`, outside quoted strings.
///
/// Strings are read as both parsers read them: a quote opens a string that the next quote of the
/// same kind closes (PEP 508 strings have no escapes). A `)` without its `(` counts as nothing,
/// as a parser stops there. So the result is never below the depth either parser reaches.
pub(crate) fn marker_depth(marker: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0;
    let mut quote: Option<u8> = None;
    for &b in marker.as_bytes() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'(') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (None, b')') => depth = depth.saturating_sub(1),
            (None, _) => {}
        }
    }
    deepest
}

/// Refuses a marker nested deeper than [`MAX_MARKER_DEPTH`], before any parser sees it.
pub(crate) fn check_marker_depth(marker: &str) -> Result<(), MarkerError> {
    let depth = marker_depth(marker);
    if depth <= MAX_MARKER_DEPTH {
        return Ok(());
    }
    Err(MarkerError::TooDeep {
        marker: excerpt(marker),
        length: marker.chars().count(),
        depth,
        limit: MAX_MARKER_DEPTH,
    })
}

/// The start of `text`, marked as cut when it is longer: an error line stays one line.
fn excerpt(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_parentheses_outside_quotes() {
        assert_eq!(marker_depth("os_name == 'a'"), 0);
        assert_eq!(marker_depth("(a == 'b') and ((c == 'd'))"), 2);
        assert_eq!(marker_depth("a == '((((' and (b == \")))((\")"), 1);
        assert_eq!(marker_depth("))) ((x"), 2);
        // An unterminated string hides nothing from the parsers: they stop at it.
        assert_eq!(marker_depth("(('x"), 2);
    }

    #[test]
    fn the_limit_is_inclusive_and_the_error_names_the_depth() {
        let at_limit = format!("{}os_name == 'a'{}", "(".repeat(64), ")".repeat(64));
        assert_eq!(check_marker_depth(&at_limit), Ok(()));
        let over = format!("{}os_name == 'a'{}", "(".repeat(65), ")".repeat(65));
        let e = check_marker_depth(&over).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "invalid marker `{}…` ({} characters): parentheses nested 65 deep, more than \
                 the limit of 64",
                "(".repeat(40),
                over.len()
            )
        );
    }
}
