//! Whole-output checks: a command's human output compared with the text a test expects, after
//! filters replace what changes from run to run (temporary paths, ports, durations, vari's
//! version) with placeholders. Where wording matters, a test states all of it, so a changed,
//! added or dropped line fails the test instead of slipping past a substring check.

use std::path::Path;

use regex::Regex;

/// The replacements applied to an output before it is compared, in order.
#[derive(Debug, Clone)]
pub struct Filters {
    replacements: Vec<(Regex, String)>,
}

impl Default for Filters {
    fn default() -> Self {
        Self::new()
    }
}

impl Filters {
    /// The filters every output gets: ports on 127.0.0.1 become `[PORT]`, durations
    /// (`12ms`, `1.5 s`, `250µs`) become `[DURATION]`, SHA-256 digests (64 hex digits, which
    /// change whenever a fixture's bytes do) become `[SHA256]`, and `vari X.Y.Z` of this
    /// workspace becomes `vari [VERSION]`.
    pub fn new() -> Self {
        Self {
            replacements: Vec::new(),
        }
        .regex(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]")
        .regex(r"\b\d+(\.\d+)? ?(ns|µs|us|ms|s)\b", "[DURATION]")
        .regex(r"\b[0-9a-f]{64}\b", "[SHA256]")
        .literal(
            &format!("vari {}", env!("CARGO_PKG_VERSION")),
            "vari [VERSION]",
        )
    }

    /// Replaces `path` (as given, and canonicalised where that differs) with `placeholder`.
    /// Add the longest paths first: a path inside another is replaced by the first that
    /// matches.
    pub fn path(self, path: &Path, placeholder: &str) -> Self {
        let given = path.to_string_lossy().into_owned();
        let with_given = self.literal(&given, placeholder);
        match std::fs::canonicalize(path) {
            Ok(real) if real != path => with_given.literal(&real.to_string_lossy(), placeholder),
            _ => with_given,
        }
    }

    /// Replaces every occurrence of `text` with `placeholder`.
    pub fn literal(self, text: &str, placeholder: &str) -> Self {
        self.regex(&regex::escape(text), placeholder)
    }

    /// Replaces every match of `pattern` with `replacement` (`$1` names a group).
    pub fn regex(mut self, pattern: &str, replacement: &str) -> Self {
        let regex = Regex::new(pattern).unwrap_or_else(|e| panic!("filter {pattern:?}: {e}"));
        self.replacements.push((regex, replacement.to_owned()));
        self
    }

    /// `text` with every filter applied.
    pub fn apply(&self, text: &str) -> String {
        self.replacements
            .iter()
            .fold(text.to_owned(), |text, (regex, replacement)| {
                regex.replace_all(&text, replacement.as_str()).into_owned()
            })
    }
}

/// Asserts that `actual`, filtered, is exactly `expected`; on a difference, shows both whole
/// and names the first line that differs.
#[track_caller]
pub fn assert_output(actual: &str, expected: &str, filters: &Filters) {
    let filtered = filters.apply(actual);
    if filtered == expected {
        return;
    }
    let (ours, theirs): (Vec<&str>, Vec<&str>) =
        (filtered.lines().collect(), expected.lines().collect());
    let first = (0..ours.len().max(theirs.len()))
        .find(|&i| ours.get(i) != theirs.get(i))
        .unwrap_or(ours.len());
    panic!(
        "the output differs from the expected text at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
         --- expected\n{expected}\n--- actual (filtered)\n{filtered}\n--- end",
        first + 1,
        theirs.get(first),
        ours.get(first),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_replace_ports_durations_versions_and_paths() {
        let filters = Filters::new().path(Path::new("/tmp/x1"), "[TMP]");
        let text = format!(
            "vari {} served http://127.0.0.1:40123/simple/ from /tmp/x1/a in 12ms (1.5 s) {}\n",
            env!("CARGO_PKG_VERSION"),
            "ab".repeat(32)
        );
        assert_eq!(
            filters.apply(&text),
            "vari [VERSION] served http://127.0.0.1:[PORT]/simple/ from [TMP]/a in [DURATION] ([DURATION]) [SHA256]\n"
        );
    }

    #[test]
    fn words_are_not_durations() {
        assert_eq!(
            Filters::new().apply("cuda12.8 is 2 sets, v3s\n"),
            "cuda12.8 is 2 sets, v3s\n"
        );
    }

    #[test]
    #[should_panic(expected = "at line 2")]
    fn a_changed_line_fails() {
        assert_output("one\ntwo\n", "one\nthree\n", &Filters::new());
    }

    #[test]
    #[should_panic(expected = "at line 2")]
    fn a_dropped_line_fails() {
        assert_output("one\n", "one\ntwo\n", &Filters::new());
    }
}
