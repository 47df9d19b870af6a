//! The nesting limit of the TOML documents vari reads (profiles, `vari.toml`, repack configs,
//! `pyproject.toml`, `uv.toml`), checked on the text before any parser sees it.
//!
//! The `toml` parser limits the nesting of arrays and inline tables (to 80), but not what dotted
//! keys and table headers add on top: a 12 KB document of inline tables with dotted keys inside
//! each other (`a = {b.b.b…b = {b.b.b…b = …}}`) nests thousands of tables deep, and building
//! or dropping them overflowed an 8 MiB stack. JSON needs no such check: `serde_json` stops at
//! 128 levels (its `unbounded_depth` feature is not enabled anywhere in the workspace).

/// The deepest nesting accepted in a TOML document: table headers, dotted keys, arrays and inline
/// tables together. Real documents nest fewer than ten levels.
pub const MAX_DOCUMENT_DEPTH: usize = 64;

/// A document nested deeper than [`MAX_DOCUMENT_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "nested {depth} levels deep, more than the limit of {limit} (first exceeded on line {line})"
)]
pub struct TooDeep {
    /// How deep the document nests (an upper bound: a dot in a number counts as a level).
    pub depth: usize,
    /// The 1-based line where the nesting first goes beyond the limit.
    pub line: usize,
    /// The limit, [`MAX_DOCUMENT_DEPTH`].
    pub limit: usize,
}

/// Refuses a TOML document nested deeper than [`MAX_DOCUMENT_DEPTH`]. Every reader of a TOML
/// input calls this before parsing it.
///
/// The count never falls below what the parser builds: each table header counts its keys, each
/// dotted key its parts, each array and inline table one level, added up as they nest. Text in
/// strings and comments counts nothing. A document the parser would reject anyway may count
/// wrongly; the parser then rejects it.
///
/// ```
/// use vari_core::check_toml_depth;
/// assert!(check_toml_depth("[tool.vari]\nindex-url = \"https://x\"\n").is_ok());
/// let deep = format!("a = {}1{}", "[".repeat(100), "]".repeat(100));
/// assert_eq!(check_toml_depth(&deep).unwrap_err().depth, 100);
/// ```
pub fn check_toml_depth(text: &str) -> Result<(), TooDeep> {
    let mut scan = Scan::default();
    scan.run(text.as_bytes());
    match scan.first_exceeded {
        None => Ok(()),
        Some(line) => Err(TooDeep {
            depth: scan.deepest,
            line,
            limit: MAX_DOCUMENT_DEPTH,
        }),
    }
}

#[derive(Default)]
struct Scan {
    /// The depth of the keys of the current table (set by the last table header).
    table: usize,
    /// The open arrays and inline tables: the level and the dots counted before each opened.
    open: Vec<(usize, usize)>,
    /// The level of the current container's contents (`table` at the top level).
    base: usize,
    /// Dots in the current key (or value) of the current level.
    dots: usize,
    /// Inside a table header (`[a.b]`, `[[a.b]]`): whether it is an array of tables.
    header: Option<bool>,
    /// Only blanks so far on this line, at the top level.
    line_start: bool,
    line: usize,
    deepest: usize,
    first_exceeded: Option<usize>,
}

impl Scan {
    fn reach(&mut self, depth: usize) {
        self.deepest = self.deepest.max(depth);
        if depth > MAX_DOCUMENT_DEPTH && self.first_exceeded.is_none() {
            self.first_exceeded = Some(self.line);
        }
    }

    fn run(&mut self, bytes: &[u8]) {
        self.line = 1;
        self.line_start = true;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            match b {
                b'\n' => {
                    self.line += 1;
                    if self.open.is_empty() {
                        self.dots = 0;
                        self.line_start = true;
                    }
                    continue;
                }
                b' ' | b'\t' | b'\r' => continue,
                b'#' => {
                    while i < bytes.len() && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'"' | b'\'' => i = self.skip_string(bytes, i, b),
                b'[' if self.line_start && self.open.is_empty() && self.header.is_none() => {
                    let array = bytes.get(i) == Some(&b'[');
                    if array {
                        i += 1;
                    }
                    self.header = Some(array);
                    self.dots = 0;
                }
                b']' if self.header.is_some() && self.open.is_empty() => {
                    let array = self.header.take() == Some(true);
                    if array && bytes.get(i) == Some(&b']') {
                        i += 1;
                    }
                    self.table = 1 + self.dots + usize::from(array);
                    self.base = self.table;
                    self.dots = 0;
                    self.reach(self.table);
                }
                b'[' | b'{' => {
                    self.open.push((self.base, self.dots));
                    self.base += self.dots + 1;
                    self.dots = 0;
                    self.reach(self.base);
                }
                b']' | b'}' => {
                    if let Some((base, dots)) = self.open.pop() {
                        self.base = base;
                        self.dots = dots;
                    }
                }
                b'.' => {
                    self.dots += 1;
                    self.reach(self.base + self.dots);
                }
                b',' => self.dots = 0,
                _ => {}
            }
            self.line_start = false;
        }
    }

    /// Skips the string whose opening `quote` is just before `i` (basic or literal, one line or
    /// multi-line); returns the index after it, counting its lines.
    fn skip_string(&mut self, bytes: &[u8], mut i: usize, quote: u8) -> usize {
        let escapes = quote == b'"';
        let multi = bytes.get(i) == Some(&quote) && bytes.get(i + 1) == Some(&quote);
        if multi {
            i += 2;
        } else if bytes.get(i) == Some(&quote) {
            return i + 1; // an empty string
        }
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            match b {
                b'\\' if escapes => {
                    if bytes.get(i) == Some(&b'\n') {
                        self.line += 1;
                    }
                    i += 1;
                }
                b'\n' if multi => self.line += 1,
                // A one-line string does not go on past its line: the parser rejects it.
                b'\n' => {
                    self.line += 1;
                    if self.open.is_empty() {
                        self.dots = 0;
                        self.line_start = true;
                    }
                    return i;
                }
                _ if b == quote => {
                    if !multi {
                        return i;
                    }
                    if bytes.get(i) == Some(&quote) && bytes.get(i + 1) == Some(&quote) {
                        // Up to two more quotes belong to the string (`""""" ` ends in `""`).
                        i += 2;
                        while bytes.get(i) == Some(&quote) {
                            i += 1;
                        }
                        return i;
                    }
                }
                _ => {}
            }
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        let mut scan = Scan::default();
        scan.run(text.as_bytes());
        scan.deepest
    }

    #[test]
    fn real_documents_are_shallow() {
        let pyproject = "[project]\nname = \"x\"\nversion = \"1.0\"\n\
            dependencies = [\"a>=1.5\", \"b[c]\"]\n\n\
            [tool.uv.sources]\ntorch = [{ index = \"pytorch-cu128\", marker = \"sys_platform == 'linux'\" }]\n\
            [[tool.uv.index]]\nname = \"pytorch\"\nurl = \"https://download.pytorch.org/whl/cu128\"\n\
            [variant.default-priorities]\nnamespace = [\"nvidia\"]\n\
            [variant.providers.nvidia]\nrequires = [\"nvidia-variant-provider>=0.0.1,<1.0.0\"]\n\
            x.y.z = 1.5 # a comment [[[[ {{{{ ....\n\
            s = \"\"\"multi\n[[[[\nline\"\"\"\nt = '''a.b.c\n[[[['''\n";
        assert!(depth(pyproject) <= 6, "{}", depth(pyproject));
        assert_eq!(check_toml_depth(pyproject), Ok(()));
    }

    #[test]
    fn headers_dotted_keys_arrays_and_inline_tables_add_up() {
        assert_eq!(depth("a = 1"), 0);
        assert_eq!(depth("[a.b.c]\nx = 1"), 3);
        assert_eq!(depth("[[a.b]]\nx = 1"), 3);
        assert_eq!(depth("[a]\nb.c.d = 1"), 3);
        assert_eq!(depth("[a]\nb.c = {d.e = [[1]]}"), 6);
        // Strings, quoted keys and comments count nothing.
        assert_eq!(depth("\"a.b.c\" = \"[{.\" # [[[\n'x.y' = '''[[\n]]'''"), 0);
        // A closing bracket brings the count back down.
        assert_eq!(depth("a = [[1], [2], [3]]\nb = {c = {d = 1}}"), 2);
    }

    #[test]
    fn what_overflowed_the_stack_is_refused_naming_the_depth_and_line() {
        // Inline tables of dotted keys inside each other: 78 tables of 78 parts, 12 KB.
        let key = ["b"; 78].join(".");
        let mut text = format!("[{}]\n{key} = ", ["a"; 10].join("."));
        for _ in 0..78 {
            text.push_str(&format!("{{{key} = "));
        }
        text.push('1');
        text.push_str(&"}".repeat(78));
        let e = check_toml_depth(&text).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.depth > 6000, "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "nested {} levels deep, more than the limit of 64 (first exceeded on line 2)",
                e.depth
            )
        );
        // 100,000 opening brackets: a linear scan, no recursion.
        let e = check_toml_depth(&format!("x = {}", "[".repeat(100_000))).unwrap_err();
        assert_eq!((e.depth, e.line), (100_000, 1));
        let at_limit = format!("x = {}1{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(check_toml_depth(&at_limit), Ok(()));
    }
}
