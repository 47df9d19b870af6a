//! The wheel's `RECORD`: a CSV of `path,algorithm=digest,size` rows (PEP 376 / the binary
//! distribution format), digests in urlsafe base64 without padding.
//!
//! vari checks the format of every row (cheap) but verifies the hash of only the members it reads
//! (`variant.json`): hashing every member would mean decompressing the whole wheel.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use sha2::{Digest, Sha256, Sha384, Sha512};

/// What was verified of a wheel's `RECORD`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordCheck {
    /// RECORD's name in the archive, `{name}-{version}.dist-info/RECORD`.
    pub member: String,
    /// How many rows RECORD has. Every row was checked to have three fields: a path listed only
    /// once, an empty hash or `algorithm=digest` in urlsafe base64 (of the right length for
    /// sha256/sha384/sha512), and an empty or decimal size.
    pub entries: usize,
    /// Members whose contents were hashed and matched their RECORD row (hash, and size when
    /// listed). `variant.json` for a variant wheel; empty for a plain wheel.
    pub verified: Vec<String>,
}

/// A parsed RECORD, by path.
#[derive(Debug)]
pub(crate) struct Record {
    rows: HashMap<String, Row>,
}

#[derive(Debug)]
struct Row {
    line: u64,
    hash: Option<RecordHash>,
    size: Option<u64>,
}

#[derive(Debug)]
struct RecordHash {
    algorithm: String,
    digest: Vec<u8>,
}

/// A malformed RECORD row.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FormatError {
    pub line: u64,
    pub message: String,
}

/// Why a member does not match RECORD.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum VerifyError {
    /// The member has no row.
    NotListed,
    /// The row has no hash, or one with an algorithm vari cannot compute.
    Unverifiable { line: u64, message: String },
    /// The digest differs (both in urlsafe base64, no padding).
    Hash {
        algorithm: String,
        expected: String,
        actual: String,
    },
    /// The size differs.
    Size { expected: u64, actual: u64 },
}

/// The digest length of the algorithms vari can verify, or `None` for others.
fn digest_len(algorithm: &str) -> Option<usize> {
    match algorithm {
        "sha256" => Some(32),
        "sha384" => Some(48),
        "sha512" => Some(64),
        _ => None,
    }
}

fn compute(algorithm: &str, bytes: &[u8]) -> Option<Vec<u8>> {
    match algorithm {
        "sha256" => Some(Sha256::digest(bytes).to_vec()),
        "sha384" => Some(Sha384::digest(bytes).to_vec()),
        "sha512" => Some(Sha512::digest(bytes).to_vec()),
        _ => None,
    }
}

impl Record {
    /// Parses RECORD, checking the format of every row.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, FormatError> {
        // The csv crate handles quoting (paths with commas are quoted by Python's csv writer),
        // which a split on `,` would get wrong. `flexible` lets us report a wrong field count
        // ourselves, with the line.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut rows = HashMap::new();
        let mut record = csv::ByteRecord::new();
        loop {
            let line = reader.position().line();
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    return Err(FormatError {
                        line: e.position().map_or(line, csv::Position::line),
                        message: e.to_string(),
                    })
                }
            }
            let line = record.position().map_or(line, csv::Position::line);
            let (path, row) = parse_row(&record, line)?;
            if let Some(first) = rows.insert(path.clone(), row) {
                return Err(FormatError {
                    line,
                    message: format!("`{path}` is listed twice (first on line {})", first.line),
                });
            }
        }
        Ok(Self { rows })
    }

    /// How many rows RECORD has.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Checks `bytes` against the row of `member`.
    pub(crate) fn verify(&self, member: &str, bytes: &[u8]) -> Result<(), VerifyError> {
        let row = self.rows.get(member).ok_or(VerifyError::NotListed)?;
        let Some(hash) = &row.hash else {
            return Err(VerifyError::Unverifiable {
                line: row.line,
                message: format!("`{member}` has no hash"),
            });
        };
        let Some(actual) = compute(&hash.algorithm, bytes) else {
            return Err(VerifyError::Unverifiable {
                line: row.line,
                message: format!(
                    "`{member}` is hashed with `{}`; vari verifies sha256, sha384 and sha512",
                    hash.algorithm
                ),
            });
        };
        if actual != hash.digest {
            return Err(VerifyError::Hash {
                algorithm: hash.algorithm.clone(),
                expected: URL_SAFE_NO_PAD.encode(&hash.digest),
                actual: URL_SAFE_NO_PAD.encode(actual),
            });
        }
        // usize → u64 never truncates on supported targets (pointer width ≤ 64 bits).
        let actual_size = bytes.len() as u64;
        match row.size {
            Some(expected) if expected != actual_size => Err(VerifyError::Size {
                expected,
                actual: actual_size,
            }),
            _ => Ok(()),
        }
    }
}

fn parse_row(record: &csv::ByteRecord, line: u64) -> Result<(String, Row), FormatError> {
    let bad = |message: String| FormatError { line, message };
    if record.len() != 3 {
        return Err(bad(format!(
            "expected 3 fields (path, hash, size), found {}",
            record.len()
        )));
    }
    let field = |i: usize| {
        std::str::from_utf8(&record[i]).map_err(|_| bad("field is not valid UTF-8".to_owned()))
    };
    let (path, hash, size) = (field(0)?, field(1)?, field(2)?);
    if path.is_empty() {
        return Err(bad("empty path".to_owned()));
    }
    let hash = if hash.is_empty() {
        None
    } else {
        Some(parse_hash(hash).map_err(|message| bad(format!("`{path}`: {message}")))?)
    };
    let size = if size.is_empty() {
        None
    } else {
        // `u64::from_str` accepts a leading `+`; RECORD sizes are plain digits.
        if !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad(format!("`{path}`: size `{size}` is not a number")));
        }
        Some(
            size.parse()
                .map_err(|_| bad(format!("`{path}`: size `{size}` is too large")))?,
        )
    };
    Ok((path.to_owned(), Row { line, hash, size }))
}

fn parse_hash(hash: &str) -> Result<RecordHash, String> {
    let Some((algorithm, encoded)) = hash.split_once('=') else {
        return Err(format!("hash `{hash}` is not `algorithm=digest`"));
    };
    if algorithm.is_empty() || encoded.is_empty() {
        return Err(format!("hash `{hash}` is not `algorithm=digest`"));
    }
    // The spec says no padding; tolerate it, as some writers add it and the digest is the same.
    let digest = URL_SAFE_NO_PAD
        .decode(encoded.trim_end_matches('='))
        .map_err(|e| format!("hash `{hash}` is not urlsafe base64: {e}"))?;
    if let Some(expected) = digest_len(algorithm) {
        if digest.len() != expected {
            return Err(format!(
                "hash `{hash}` has {} bytes, {algorithm} has {expected}",
                digest.len()
            ));
        }
    }
    Ok(RecordHash {
        algorithm: algorithm.to_owned(),
        digest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_SHA256: &str = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU";

    fn record(text: &str) -> Record {
        Record::parse(text.as_bytes()).unwrap()
    }

    fn format_error(text: &str) -> FormatError {
        Record::parse(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn parses_a_real_record() {
        let r = record(&format!(
            "test_package.py,sha256={EMPTY_SHA256},0\n\
             test_package-0.dist-info/WHEEL,sha256=G2gURzTEtmeR8nrdXUJfNiB3VYVxigPQ-bEQujpNiNs,82\n\
             test_package-0.dist-info/RECORD,,\n"
        ));
        assert_eq!(r.len(), 3);
        assert_eq!(r.verify("test_package.py", b""), Ok(()));
    }

    #[test]
    fn quoted_paths_with_commas() {
        let r = record(&format!("\"a,b.py\",sha256={EMPTY_SHA256},0\n"));
        assert_eq!(r.verify("a,b.py", b""), Ok(()));
    }

    #[test]
    fn crlf_line_endings() {
        let r = record(&format!("a.py,sha256={EMPTY_SHA256},0\r\nRECORD,,\r\n"));
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn hash_mismatch_and_size_mismatch() {
        let r = record(&format!(
            "a.py,sha256={EMPTY_SHA256},0\nb.py,sha256={EMPTY_SHA256},5\n"
        ));
        match r.verify("a.py", b"x") {
            Err(VerifyError::Hash {
                algorithm,
                expected,
                actual,
            }) => {
                assert_eq!(algorithm, "sha256");
                assert_eq!(expected, EMPTY_SHA256);
                assert_eq!(actual, URL_SAFE_NO_PAD.encode(Sha256::digest(b"x")));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            r.verify("b.py", b""),
            Err(VerifyError::Size {
                expected: 5,
                actual: 0
            })
        );
        assert_eq!(r.verify("c.py", b""), Err(VerifyError::NotListed));
    }

    #[test]
    fn other_sha2_algorithms_verify() {
        let d384 = URL_SAFE_NO_PAD.encode(Sha384::digest(b"hi"));
        let d512 = URL_SAFE_NO_PAD.encode(Sha512::digest(b"hi"));
        let r = record(&format!("a,sha384={d384},2\nb,sha512={d512},\n"));
        assert_eq!(r.verify("a", b"hi"), Ok(()));
        assert_eq!(r.verify("b", b"hi"), Ok(()));
    }

    #[test]
    fn padded_digest_is_tolerated() {
        let r = record(&format!("a,sha256={EMPTY_SHA256}=,0\n"));
        assert_eq!(r.verify("a", b""), Ok(()));
    }

    #[test]
    fn unverifiable_rows() {
        let r = record("a,,\nb,md5=1B2M2Y8AsgTpgAmY7PhCfg,0\n");
        assert!(matches!(
            r.verify("a", b""),
            Err(VerifyError::Unverifiable { line: 1, ref message }) if message.contains("no hash")
        ));
        assert!(matches!(
            r.verify("b", b""),
            Err(VerifyError::Unverifiable { line: 2, ref message }) if message.contains("md5")
        ));
    }

    #[test]
    fn format_errors_name_the_line() {
        let cases = [
            ("a,sha256=x\n", 1, "expected 3 fields"),
            ("ok,,\na,b,c,d\n", 2, "found 4"),
            (",,\n", 1, "empty path"),
            ("a,sha256,0\n", 1, "algorithm=digest"),
            ("a,=abc,0\n", 1, "algorithm=digest"),
            ("a,sha256=!!!,0\n", 1, "urlsafe base64"),
            ("a,sha256=AAAA,0\n", 1, "has 3 bytes, sha256 has 32"),
            ("a,,12a\n", 1, "not a number"),
            ("a,,+1\n", 1, "not a number"),
            ("a,,99999999999999999999999\n", 1, "too large"),
            ("a,,\nb,,\na,,\n", 3, "listed twice (first on line 1)"),
        ];
        for (text, line, needle) in cases {
            let e = format_error(text);
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.message.contains(needle), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn non_utf8_and_empty() {
        let e = Record::parse(b"a\xff,,\n").unwrap_err();
        assert!(e.message.contains("UTF-8"));
        assert_eq!(Record::parse(b"").unwrap().len(), 0);
    }
}
