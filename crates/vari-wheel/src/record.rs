//! The wheel's `RECORD`: a CSV of `path,algorithm=digest,size` rows (PEP 376 / the binary
//! distribution format), digests in urlsafe base64 without padding.
//!
//! Inspecting checks the format of every row (cheap) but verifies the hash of only the members it
//! reads (`variant.json`); validating hashes every member as it streams out of the archive.

use std::collections::HashMap;
use std::io::{self, Read};

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
    rows: Rows,
    /// Every row's digest, as written (urlsafe base64, unpadded), one after the other: checked
    /// when parsed, decoded only when a member is verified against it.
    digests: String,
}

/// Rows by path. foldhash rather than SipHash: hashing 30,000 paths with SipHash was a tenth of
/// `wheel inspect`; foldhash is seeded per process, so crafted paths cannot choose collisions.
type Rows = HashMap<String, Row, foldhash::fast::RandomState>;

#[derive(Debug)]
pub(crate) struct Row {
    /// The 1-based line of the row.
    pub(crate) line: u64,
    hash: Option<RecordHash>,
    size: Option<u64>,
}

impl Row {
    /// Whether the row lists a hash.
    pub(crate) fn has_hash(&self) -> bool {
        self.hash.is_some()
    }
}

#[derive(Debug)]
struct RecordHash {
    algorithm: Algorithm,
    /// The digest's place in [`Record::digests`].
    digest: std::ops::Range<usize>,
}

/// A RECORD hash's algorithm: the ones vari verifies without an allocation per row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Algorithm {
    Sha256,
    Sha384,
    Sha512,
    Other(String),
}

impl Algorithm {
    fn parse(name: &str) -> Self {
        match name {
            "sha256" => Self::Sha256,
            "sha384" => Self::Sha384,
            "sha512" => Self::Sha512,
            other => Self::Other(other.to_owned()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::Sha256 => "sha256",
            Self::Sha384 => "sha384",
            Self::Sha512 => "sha512",
            Self::Other(name) => name,
        }
    }

    /// The digest length of the algorithms vari can verify, or `None` for others.
    fn digest_len(&self) -> Option<usize> {
        match self {
            Self::Sha256 => Some(32),
            Self::Sha384 => Some(48),
            Self::Sha512 => Some(64),
            Self::Other(_) => None,
        }
    }
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

fn compute(algorithm: &Algorithm, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut hasher = Hasher::new(algorithm)?;
    hasher.update(bytes);
    Some(hasher.finish())
}

/// One of the digests vari can verify, fed incrementally.
enum Hasher {
    Sha256(Sha256),
    Sha384(Sha384),
    Sha512(Sha512),
}

impl Hasher {
    fn new(algorithm: &Algorithm) -> Option<Self> {
        match algorithm {
            Algorithm::Sha256 => Some(Self::Sha256(Sha256::new())),
            Algorithm::Sha384 => Some(Self::Sha384(Sha384::new())),
            Algorithm::Sha512 => Some(Self::Sha512(Sha512::new())),
            Algorithm::Other(_) => None,
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha256(h) => h.update(bytes),
            Self::Sha384(h) => h.update(bytes),
            Self::Sha512(h) => h.update(bytes),
        }
    }

    fn finish(self) -> Vec<u8> {
        match self {
            Self::Sha256(h) => h.finalize().to_vec(),
            Self::Sha384(h) => h.finalize().to_vec(),
            Self::Sha512(h) => h.finalize().to_vec(),
        }
    }
}

/// The RECORD row of a file with these contents: `path,sha256=…,size` (the path quoted when it
/// holds a comma, a quote or a line break, as Python's csv module writes it).
pub(crate) fn record_row(path: &str, bytes: &[u8]) -> String {
    let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(bytes));
    format!("{},sha256={digest},{}", csv_field(path), bytes.len())
}

/// A CSV field, quoted when needed.
pub(crate) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl Record {
    /// Parses RECORD, checking the format of every row.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Self, FormatError> {
        match Self::parse_plain(bytes) {
            Some(parsed) => parsed,
            None => Self::parse_csv(bytes),
        }
    }

    /// The common case without the csv crate's per-byte state machine: a RECORD that is valid
    /// UTF-8, quotes no field and ends lines with `\n` or `\r\n` is split on `\n` and `,`,
    /// which gives exactly the rows (and line numbers) the csv reader gives. `None` for any
    /// other RECORD, which [`Record::parse_csv`] reads.
    fn parse_plain(bytes: &[u8]) -> Option<Result<Self, FormatError>> {
        if bytes.contains(&b'"') {
            return None;
        }
        let text = std::str::from_utf8(bytes).ok()?;
        if bytes.contains(&b'\r') && !every_cr_ends_a_line(bytes) {
            return None;
        }
        let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
        let mut rows = Rows::with_capacity_and_hasher(lines, Default::default());
        let mut digests = String::with_capacity(lines * 44);
        // One vectorised pass over the separators: `str::split` costs more than the rest of
        // the parse on rows this short. Cutting at ASCII bytes keeps every piece valid UTF-8.
        let mut number = 0u64;
        let mut line_start = 0;
        let mut commas = [0usize; 2];
        let mut found = 0;
        let separators = memchr::memchr2_iter(b',', b'\n', bytes).chain([bytes.len()]);
        for at in separators {
            if bytes.get(at) == Some(&b',') {
                if let Some(slot) = commas.get_mut(found) {
                    *slot = at;
                }
                found += 1;
                continue;
            }
            number += 1;
            let line_end = if at > line_start && bytes[at - 1] == b'\r' {
                at - 1
            } else {
                at
            };
            // The csv reader skips empty lines.
            if line_end > line_start {
                if found != 2 {
                    return Some(Err(field_count(number, found + 1)));
                }
                let path = &text[line_start..commas[0]];
                let hash = &text[commas[0] + 1..commas[1]];
                let size = &text[commas[1] + 1..line_end];
                if let Err(e) = insert_row(&mut rows, &mut digests, [path, hash, size], number) {
                    return Some(Err(e));
                }
            }
            line_start = at + 1;
            found = 0;
        }
        Some(Ok(Self { rows, digests }))
    }

    /// Any RECORD, through the csv crate (quoted paths with commas, as Python's csv writer
    /// quotes them, which a split on `,` would get wrong). `flexible` lets a wrong field count
    /// be reported here, with the line.
    fn parse_csv(bytes: &[u8]) -> Result<Self, FormatError> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(bytes);
        let mut rows = Rows::default();
        let mut digests = String::new();
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
            if record.len() != 3 {
                return Err(field_count(line, record.len()));
            }
            let field = |i: usize| {
                std::str::from_utf8(&record[i]).map_err(|_| FormatError {
                    line,
                    message: "field is not valid UTF-8".to_owned(),
                })
            };
            let fields = [field(0)?, field(1)?, field(2)?];
            insert_row(&mut rows, &mut digests, fields, line)?;
        }
        Ok(Self { rows, digests })
    }

    /// How many rows RECORD has.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The row of `member`, if listed.
    pub(crate) fn row(&self, member: &str) -> Option<&Row> {
        self.rows.get(member)
    }

    /// Every listed path with its line, in line order.
    pub(crate) fn paths(&self) -> Vec<(&str, u64)> {
        let mut paths: Vec<(&str, u64)> = self
            .rows
            .iter()
            .map(|(path, row)| (path.as_str(), row.line))
            .collect();
        paths.sort_by_key(|(_, line)| *line);
        paths
    }

    /// Checks the contents read from `reader` against the row of `member`, hashing as it
    /// reads (members can be gigabytes). The outer error is the reader's.
    pub(crate) fn verify_stream(
        &self,
        member: &str,
        mut reader: impl Read,
    ) -> io::Result<Result<(), VerifyError>> {
        let row = match self.expect_hash(member) {
            Ok(row) => row,
            Err(e) => return Ok(Err(e)),
        };
        let Some(hash) = &row.hash else {
            return Ok(Err(VerifyError::NotListed));
        };
        let Some(mut hasher) = Hasher::new(&hash.algorithm) else {
            return Ok(Err(unknown_algorithm(
                member,
                row.line,
                hash.algorithm.as_str(),
            )));
        };
        let mut buf = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            hasher.update(&buf[..n]);
            size += n as u64;
        }
        Ok(self.compare(hash, row.size, hasher.finish(), size))
    }

    /// The row of `member`, which must list a hash.
    fn expect_hash(&self, member: &str) -> Result<&Row, VerifyError> {
        let row = self.rows.get(member).ok_or(VerifyError::NotListed)?;
        if row.hash.is_none() {
            return Err(VerifyError::Unverifiable {
                line: row.line,
                message: format!("`{member}` has no hash"),
            });
        }
        Ok(row)
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
            return Err(unknown_algorithm(member, row.line, hash.algorithm.as_str()));
        };
        // usize → u64 never truncates on supported targets (pointer width ≤ 64 bits).
        self.compare(hash, row.size, actual, bytes.len() as u64)
    }

    /// Compares a computed digest and size with a row's.
    fn compare(
        &self,
        hash: &RecordHash,
        expected_size: Option<u64>,
        actual: Vec<u8>,
        actual_size: u64,
    ) -> Result<(), VerifyError> {
        let expected = &self.digests[hash.digest.clone()];
        // Checked when parsed, so it decodes.
        if URL_SAFE_NO_PAD.decode(expected).ok().as_ref() != Some(&actual) {
            return Err(VerifyError::Hash {
                algorithm: hash.algorithm.as_str().to_owned(),
                expected: expected.to_owned(),
                actual: URL_SAFE_NO_PAD.encode(actual),
            });
        }
        match expected_size {
            Some(expected) if expected != actual_size => Err(VerifyError::Size {
                expected,
                actual: actual_size,
            }),
            _ => Ok(()),
        }
    }
}

fn unknown_algorithm(member: &str, line: u64, algorithm: &str) -> VerifyError {
    VerifyError::Unverifiable {
        line,
        message: format!(
            "`{member}` is hashed with `{algorithm}`; vari verifies sha256, sha384 and sha512"
        ),
    }
}

/// Whether every `\r` in `bytes` is followed by `\n` (a lone `\r` ends a row for the csv
/// reader, which the plain parser does not do).
fn every_cr_ends_a_line(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .enumerate()
        .all(|(i, &b)| b != b'\r' || bytes.get(i + 1) == Some(&b'\n'))
}

/// The urlsafe-base64 alphabet's values; 0xFF for other bytes.
const URLSAFE_VALUES: [u8; 256] = {
    let mut values = [0xFF; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut i = 0;
    while i < alphabet.len() {
        values[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    values
};

/// The length `encoded` (unpadded urlsafe base64) decodes to, when the base64 crate would
/// decode it: every letter in the alphabet, a possible length, and zero bits left over in the
/// last letter. Checking without decoding keeps the parse of a 30,000-row RECORD cheap; the
/// crate decodes the few digests that are compared, and explains the ones this rejects.
fn urlsafe_len(encoded: &[u8]) -> Option<usize> {
    let invalid = encoded
        .iter()
        .fold(0u8, |seen, &c| seen | URLSAFE_VALUES[usize::from(c)]);
    if invalid & 0xC0 != 0 {
        return None;
    }
    let leftover_mask = match encoded.len() % 4 {
        0 => 0,
        2 => 0x0F,
        3 => 0x03,
        _ => return None,
    };
    let last = encoded
        .last()
        .map_or(0, |&c| URLSAFE_VALUES[usize::from(c)]);
    (last & leftover_mask == 0).then_some(encoded.len() * 3 / 4)
}

fn field_count(line: u64, found: usize) -> FormatError {
    FormatError {
        line,
        message: format!("expected 3 fields (path, hash, size), found {found}"),
    }
}

/// Checks one row's fields and adds it, refusing a path listed twice.
fn insert_row(
    rows: &mut Rows,
    digests: &mut String,
    [path, hash, size]: [&str; 3],
    line: u64,
) -> Result<(), FormatError> {
    let row = parse_row(path, hash, size, line, digests)?;
    match rows.entry(path.to_owned()) {
        std::collections::hash_map::Entry::Occupied(first) => Err(FormatError {
            line,
            message: format!(
                "`{path}` is listed twice (first on line {})",
                first.get().line
            ),
        }),
        std::collections::hash_map::Entry::Vacant(slot) => {
            slot.insert(row);
            Ok(())
        }
    }
}

fn parse_row(
    path: &str,
    hash: &str,
    size: &str,
    line: u64,
    digests: &mut String,
) -> Result<Row, FormatError> {
    let bad = |message: String| FormatError { line, message };
    if path.is_empty() {
        return Err(bad("empty path".to_owned()));
    }
    let hash = if hash.is_empty() {
        None
    } else {
        Some(parse_hash(hash, digests).map_err(|message| bad(format!("`{path}`: {message}")))?)
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
    Ok(Row { line, hash, size })
}

fn parse_hash(hash: &str, digests: &mut String) -> Result<RecordHash, String> {
    // Byte searches: `split_once` and `trim_end_matches` with a `char` cost more than the
    // decoding.
    let equals = hash.bytes().position(|b| b == b'=');
    let Some((algorithm, encoded)) = equals.map(|at| (&hash[..at], &hash[at + 1..])) else {
        return Err(format!("hash `{hash}` is not `algorithm=digest`"));
    };
    if algorithm.is_empty() || encoded.is_empty() {
        return Err(format!("hash `{hash}` is not `algorithm=digest`"));
    }
    // The spec says no padding; tolerate it, as some writers add it and the digest is the same.
    let unpadded = encoded
        .bytes()
        .rposition(|b| b != b'=')
        .map_or(0, |at| at + 1);
    let encoded = &encoded[..unpadded];
    let Some(found) = urlsafe_len(encoded.as_bytes()) else {
        let e = URL_SAFE_NO_PAD.decode(encoded).err();
        let why = e.map_or_else(|| "invalid".to_owned(), |e| e.to_string());
        return Err(format!("hash `{hash}` is not urlsafe base64: {why}"));
    };
    let algorithm = Algorithm::parse(algorithm);
    if let Some(expected) = algorithm.digest_len() {
        if found != expected {
            return Err(format!(
                "hash `{hash}` has {found} bytes, {} has {expected}",
                algorithm.as_str()
            ));
        }
    }
    let start = digests.len();
    digests.push_str(encoded);
    let digest = start..digests.len();
    Ok(RecordHash { algorithm, digest })
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

    /// The plain parser gives what the csv reader gives (rows, lines, errors) on every input
    /// it accepts, and declines the ones it cannot split on `,` and `\n`.
    #[test]
    fn plain_parser_agrees_with_the_csv_reader() {
        let summary = |r: Result<Record, FormatError>| match r {
            Ok(record) => Ok(record
                .paths()
                .into_iter()
                .map(|(p, line)| (p.to_owned(), line))
                .collect::<Vec<_>>()),
            Err(e) => Err(e),
        };
        let inputs = [
            format!("a,sha256={EMPTY_SHA256},0\nb,,\n"),
            "a,,\nb,,,\n".to_owned(),
            "a,,\nb\n".to_owned(),
            "a,,\n,,\n".to_owned(),
            "a,,\nb,sha256=AAAA,0\n".to_owned(),
            "a,,\nb,,\na,,\n".to_owned(),
            "a,,x\n".to_owned(),
            "a,md5=1B2M2Y8AsgTpgAmY7PhCfg,0\n".to_owned(),
            " a ,,\n".to_owned(),
        ];
        for text in &inputs {
            let plain = Record::parse_plain(text.as_bytes()).expect("plain input");
            let csv = Record::parse_csv(text.as_bytes());
            assert_eq!(summary(plain), summary(csv), "{text:?}");
        }
        // The csv reader miscounts lines after blank lines and `\r\n` (it puts `b` below on
        // line 1); the plain parser gives the real lines, and the same rows.
        let blank = "\n\na,,\n\n\nb,,1\n\n";
        let plain = summary(Record::parse_plain(blank.as_bytes()).expect("plain input")).unwrap();
        assert_eq!(plain, [("a".into(), 3), ("b".into(), 6)]);
        let crlf = format!("a,sha256={EMPTY_SHA256},0\r\n\r\nb,,\r\nc,,");
        let plain = summary(Record::parse_plain(crlf.as_bytes()).expect("plain input")).unwrap();
        assert_eq!(plain, [("a".into(), 1), ("b".into(), 3), ("c".into(), 4)]);
        let mut csv = summary(Record::parse_csv(crlf.as_bytes())).unwrap();
        csv.sort();
        assert_eq!(
            csv.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        for declined in [&b"\"a,b\",,\n"[..], b"a,,\rb,,\n", b"a\xff,,\n"] {
            assert!(Record::parse_plain(declined).is_none(), "{declined:?}");
        }
    }

    #[test]
    fn the_digest_check_agrees_with_the_base64_crate() {
        let digests: Vec<Vec<u8>> = (0..70u8)
            .map(|n| (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect())
            .collect();
        for digest in &digests {
            let encoded = URL_SAFE_NO_PAD.encode(digest);
            assert_eq!(
                urlsafe_len(encoded.as_bytes()),
                Some(digest.len()),
                "{encoded}"
            );
        }
        // Rejected as the crate rejects them: a bad letter, a bad length, stray trailing bits.
        for bad in ["ab+c", "abcde", "AB", "ABC", "ab.d", "ab/c", "abc\u{e9}"] {
            assert!(urlsafe_len(bad.as_bytes()).is_none(), "{bad}");
            assert!(URL_SAFE_NO_PAD.decode(bad).is_err(), "{bad}");
        }
        // Zero leftover bits are canonical.
        assert_eq!(urlsafe_len(b"AA"), Some(1));
        assert_eq!(urlsafe_len(b"AAA"), Some(2));
        assert_eq!(urlsafe_len(b""), Some(0));
    }

    #[test]
    fn non_utf8_and_empty() {
        let e = Record::parse(b"a\xff,,\n").unwrap_err();
        assert!(e.message.contains("UTF-8"));
        assert_eq!(Record::parse(b"").unwrap().len(), 0);
    }
}
