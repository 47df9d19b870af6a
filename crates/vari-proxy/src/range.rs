//! HTTP `Range` requests (RFC 9110 §14) for files of known length: installers read a wheel's
//! tail and its METADATA member this way.

/// What a `Range` header asks of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ranged {
    /// No usable range (absent, malformed, several ranges, another unit): the whole file, 200.
    Whole,
    /// Bytes `start..=end`: 206.
    Part {
        /// The first byte.
        start: u64,
        /// The last byte (inclusive).
        end: u64,
    },
    /// A range that starts past the end: 416.
    Unsatisfiable,
}

/// Reads `header` for a file of `len` bytes.
pub(crate) fn ranged(header: Option<&str>, len: u64) -> Ranged {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Ranged::Whole;
    };
    // Several ranges would need a multipart answer; a server may answer them whole.
    if spec.contains(',') {
        return Ranged::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Ranged::Whole;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        return match last.parse::<u64>() {
            Ok(0) => Ranged::Unsatisfiable,
            Ok(_) if len == 0 => Ranged::Unsatisfiable,
            Ok(n) => Ranged::Part {
                start: len.saturating_sub(n),
                end: len - 1,
            },
            Err(_) => Ranged::Whole,
        };
    }
    let Ok(start) = first.parse::<u64>() else {
        return Ranged::Whole;
    };
    let end = match last {
        "" => None,
        text => match text.parse::<u64>() {
            Ok(end) if end >= start => Some(end),
            _ => return Ranged::Whole,
        },
    };
    if start >= len {
        return Ranged::Unsatisfiable;
    }
    Ranged::Part {
        start,
        end: end.map_or(len - 1, |end| end.min(len - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms() {
        assert_eq!(
            ranged(Some("bytes=2-5"), 10),
            Ranged::Part { start: 2, end: 5 }
        );
        assert_eq!(
            ranged(Some("bytes=7-"), 10),
            Ranged::Part { start: 7, end: 9 }
        );
        assert_eq!(
            ranged(Some("bytes=-3"), 10),
            Ranged::Part { start: 7, end: 9 }
        );
        assert_eq!(
            ranged(Some("bytes=-30"), 10),
            Ranged::Part { start: 0, end: 9 }
        );
        assert_eq!(
            ranged(Some("bytes=5-100"), 10),
            Ranged::Part { start: 5, end: 9 }
        );
    }

    #[test]
    fn unsatisfiable_and_ignored() {
        assert_eq!(ranged(Some("bytes=10-"), 10), Ranged::Unsatisfiable);
        assert_eq!(ranged(Some("bytes=-0"), 10), Ranged::Unsatisfiable);
        assert_eq!(ranged(Some("bytes=0-"), 0), Ranged::Unsatisfiable);
        for ignored in [
            None,
            Some("bytes=5-2"),
            Some("bytes=a-b"),
            Some("items=1-2"),
            Some("bytes=0-1,4-5"),
            Some("bytes=3"),
        ] {
            assert_eq!(ranged(ignored, 10), Ranged::Whole, "{ignored:?}");
        }
    }
}
