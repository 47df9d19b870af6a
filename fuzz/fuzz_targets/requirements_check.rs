//! The property of the `requirements` fuzz target, also run by vari-lock's stable round-trip
//! test (`crates/vari-lock/tests/round_trip.rs`). The requirements-file writer
//! (`vari_lock::export::requirements_txt`) on arbitrary names, locations, hashes and headers:
//! never panic; whatever it writes, a reader that follows pip's rules (lines as Python's
//! `str.splitlines` ends them, `\` continuations, ` #` comments, `${VAR}` expansion, options
//! after the requirement) reads back exactly the requirements and hashes meant, nothing more.
//! Real pip checks the same on chosen inputs in vari-lock's tests.

use vari_lock::export::{requirements_txt, ExportedFile};

/// The property on one input (fields separated by U+001F, files by U+001E: the header, then
/// name, location, sha256 of each file): panics when it does not hold.
pub(crate) fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Fields separated by U+001F, files by U+001E: the header, then name, location, sha256...
    let mut records = text.split('\u{1e}');
    let header = records.next().unwrap_or_default();
    let files: Vec<ExportedFile> = records
        .map(|record| {
            let mut fields = record.split('\u{1f}');
            ExportedFile {
                name: fields.next().unwrap_or_default().to_owned(),
                location: fields.next().unwrap_or_default().to_owned(),
                sha256: fields.next().unwrap_or_default().to_owned(),
            }
        })
        .collect();
    let Ok(written) = requirements_txt(header, &files) else {
        return;
    };
    let expected: Vec<(String, Vec<String>)> = files
        .iter()
        .map(|f| {
            // A URL as the writer tells one: `http://` or `https://` (`httpsexample/…` is a
            // relative path).
            let url = f.location.starts_with("https://") || f.location.starts_with("http://");
            let requirement = match (url, plain_path(&f.location)) {
                (true, _) => format!("{} @ {}", f.name, f.location),
                (false, true) => f.location.clone(),
                // Any other absolute path: a percent-encoded file URL.
                (false, false) => format!("{} @ {}", f.name, file_url(&f.location)),
            };
            (requirement, vec![format!("sha256:{}", f.sha256)])
        })
        .collect();
    assert_eq!(read_like_pip(&written), expected, "{written:?}");
}

/// pip's `req_file` reading, as far as it decides what a line means: `preprocess` (join
/// continuations, drop comments, expand `${VAR}`), then `break_args_options`.
fn read_like_pip(text: &str) -> Vec<(String, Vec<String>)> {
    // Python's str.splitlines().
    let breaks = [
        '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
        '\u{2029}',
    ];
    let mut lines: Vec<String> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(breaks) {
            Some(at) => {
                lines.push(rest[..at].to_owned());
                let c = rest[at..].chars().next().unwrap_or('\n');
                let skip = if rest[at..].starts_with("\r\n") {
                    2
                } else {
                    c.len_utf8()
                };
                rest = &rest[at + skip..];
            }
            None => {
                lines.push(rest.to_owned());
                rest = "";
            }
        }
    }
    let is_comment = |line: &str| line.trim_start().starts_with('#');
    // join_lines: a line ending in `\` (not a comment) continues on the next.
    let mut joined: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.ends_with('\\') && !is_comment(&line) {
            current.push_str(line.trim_matches('\\'));
            continue;
        }
        if is_comment(&line) {
            current.push_str(&format!(" {line}"));
            joined.push(std::mem::take(&mut current));
            continue;
        }
        current.push_str(&line);
        joined.push(std::mem::take(&mut current));
    }
    if !current.is_empty() {
        joined.push(current);
    }
    let mut out = Vec::new();
    for line in joined {
        // ignore_comments: `(^|\s+)#.*$` removed.
        let mut cut = line.len();
        for (i, c) in line.char_indices() {
            if c == '#' && (i == 0 || line[..i].ends_with(char::is_whitespace)) {
                cut = line[..i].trim_end_matches(char::is_whitespace).len();
                break;
            }
        }
        let line = line[..cut].trim();
        if line.is_empty() {
            continue;
        }
        assert!(!line.contains("${"), "{line:?} would be expanded");
        // break_args_options: words until the first starting with `-` are the requirement.
        let words: Vec<&str> = line.split(' ').collect();
        let split = words
            .iter()
            .position(|w| w.starts_with('-') || w.starts_with("--"))
            .unwrap_or(words.len());
        let requirement = words[..split].join(" ");
        assert!(!requirement.is_empty(), "{line:?} is only options");
        let hashes = words[split..]
            .iter()
            .map(|w| {
                w.strip_prefix("--hash=")
                    .unwrap_or_else(|| panic!("{w:?} is an option other than --hash"))
                    .to_owned()
            })
            .collect();
        out.push((requirement, hashes));
    }
    out
}

/// What the writer writes bare: letters, digits and `/._+~-`, not starting with `-`.
fn plain_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('-')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._+~-".contains(c))
}

/// `file://` and the path, every byte but `[A-Za-z0-9/._~-]` percent-encoded.
fn file_url(path: &str) -> String {
    let mut url = String::from("file://");
    for byte in path.bytes() {
        match byte.is_ascii_alphanumeric() || b"/._~-".contains(&byte) {
            true => url.push(char::from(byte)),
            false => url.push_str(&format!("%{byte:02X}")),
        }
    }
    url
}
