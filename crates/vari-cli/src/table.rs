//! Plain-text tables for human output: aligned columns, multi-line cells, the last column wrapped
//! to the terminal width, optional styles that do not disturb alignment.

use owo_colors::{OwoColorize, Style};

/// One cell: text (may hold several lines) and how to style it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cell {
    text: String,
    style: Style,
}

impl Cell {
    /// An unstyled cell.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            style: Style::new(),
        }
    }

    /// The same cell drawn with `style` (on terminals that want colour).
    pub(crate) fn styled(mut self, style: Style) -> Self {
        self.style = style;
        self
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

/// A table with a header row.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

/// Spaces between columns.
const GAP: usize = 2;

impl Table {
    /// A table with these column headers.
    pub(crate) fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are empty.
    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// Whether the table has no rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders the table to fit `width` columns (the last column wraps at spaces).
    pub(crate) fn render(&self, width: usize) -> String {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                for line in cell.text.lines() {
                    widths[i] = widths[i].max(line.chars().count());
                }
            }
        }
        let indent: usize = widths[..columns - 1].iter().map(|w| w + GAP).sum();
        // The last column gets what is left, but never so little that it is unreadable.
        let last_width = width.saturating_sub(indent).max(24);

        let mut out = String::new();
        let header_style = Style::new().bold();
        let header_cells: Vec<Cell> = self
            .headers
            .iter()
            .map(|h| Cell::new(h.clone()).styled(header_style))
            .collect();
        render_row(&mut out, &header_cells, &widths, last_width);
        for row in &self.rows {
            render_row(&mut out, row, &widths, last_width);
        }
        out
    }
}

fn render_row(out: &mut String, cells: &[Cell], widths: &[usize], last_width: usize) {
    let columns = widths.len();
    let empty = Cell::default();
    let lines: Vec<Vec<String>> = (0..columns)
        .map(|i| {
            let cell = cells.get(i).unwrap_or(&empty);
            let mut lines: Vec<String> = cell.text.lines().map(str::to_owned).collect();
            if i == columns - 1 {
                lines = lines.iter().flat_map(|l| wrap(l, last_width)).collect();
            }
            lines
        })
        .collect();
    let height = lines.iter().map(Vec::len).max().unwrap_or(0).max(1);
    for line_index in 0..height {
        let mut line = String::new();
        for (i, column) in lines.iter().enumerate() {
            let text = column.get(line_index).map(String::as_str).unwrap_or("");
            let style = cells.get(i).map(|c| c.style).unwrap_or_default();
            line.push_str(&text.style(style).to_string());
            if i + 1 < columns {
                let pad = widths[i] - text.chars().count() + GAP;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// Splits `line` at spaces into pieces of at most `width` characters (a longer word stays whole).
/// Continuation lines are indented by two spaces so they read as part of the same item.
pub(crate) fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        // A line holding only the continuation indent takes the next word whatever its length.
        let fresh = current.trim().is_empty();
        let needed = current.chars().count() + usize::from(!fresh) + word.chars().count();
        if !fresh && needed > width {
            pieces.push(std::mem::take(&mut current));
            current.push_str("  ");
        } else if !fresh {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces
}

/// `1 variant`, `2 variants`: a count with its noun agreeing.
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Values of one feature shown before the list is abbreviated (the column wraps, so a dozen
/// fit).
const VALUES_SHOWN: usize = 10;

/// Properties grouped per feature, one line each: `ns :: feature :: v1 v2 …`, or
/// `(no properties)`.
pub(crate) fn properties_text(properties: &vari_core::metadata::VariantProperties) -> String {
    if properties.is_empty() {
        return "(no properties)".to_owned();
    }
    let mut lines = Vec::new();
    for (ns, features) in properties {
        for (feature, values) in features {
            // A value set has no order of its own (it is stored in text order): show it in
            // number order, so that `50_real` comes before `100_real`.
            let mut values: Vec<&str> =
                values.iter().map(vari_core::FeatureValue::as_str).collect();
            values.sort_by(|a, b| natural_cmp(a, b));
            lines.push(format!(
                "{ns} :: {feature} :: {}",
                abbreviate(&values, VALUES_SHOWN)
            ));
        }
    }
    lines.join("\n")
}

/// Compares value texts for display, runs of digits by their number (`9 < 50 < 100`, so
/// `50_real < 100_real` and `12.9 < 12.10`), the rest as text; equal numbers with different
/// leading zeros, then everything else, fall back to plain text order, so the order is total.
///
/// For display only: selection never uses it (priorities come from providers and metadata).
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (n, rest_x) = split_digits(x);
                let (m, rest_y) = split_digits(y);
                // Compared as digit strings (no overflow): longer without leading zeros is larger.
                let (n, m) = (trim_zeros(n), trim_zeros(m));
                let by_number = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
                if by_number != Ordering::Equal {
                    return by_number;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The leading run of ASCII digits of `s`, and the rest.
fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

/// `digits` without leading zeros.
fn trim_zeros(digits: &[u8]) -> &[u8] {
    let start = digits
        .iter()
        .position(|&b| b != b'0')
        .unwrap_or(digits.len());
    &digits[start..]
}

/// Abbreviates a long list of values: up to `keep` leading values, `…`, the last value and the
/// count (`12.8 12.7 … 11 (32 values)`).
pub(crate) fn abbreviate<S: AsRef<str>>(values: &[S], keep: usize) -> String {
    if values.len() <= keep + 2 {
        return values
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(" ");
    }
    let head: Vec<&str> = values[..keep].iter().map(AsRef::as_ref).collect();
    // `values.len() > keep + 2`, so there is a last element.
    let last = values[values.len() - 1].as_ref();
    format!("{} … {last} ({} values)", head.join(" "), values.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_noun() {
        assert_eq!(count(1, "variant"), "1 variant");
        assert_eq!(count(0, "variant"), "0 variants");
        assert_eq!(count(2, "problem"), "2 problems");
    }

    #[test]
    fn columns_align_and_last_column_wraps() {
        let mut t = Table::new(&["a", "bb", "c"]);
        t.row(vec![
            "x".into(),
            "long cell".into(),
            "one two three four".into(),
        ]);
        t.row(vec!["yy".into(), "z".into()]);
        let rendered = t.render(24);
        // The header is bold on terminals; compare the plain text.
        let text = anstream::adapter::strip_str(&rendered).to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a   bb         c");
        // The last column has 24 - 15 = 9 < 24 columns, so the floor of 24 applies: no wrap.
        assert_eq!(lines[1], "x   long cell  one two three four");
        assert_eq!(lines[2], "yy  z");
        let wide = Table::new(&["k", "v"]);
        let mut narrow = wide.clone();
        narrow.row(vec![
            "key".into(),
            "a b c d e f g h i j k l m n o p q r s t u v w x y z".into(),
        ]);
        let text = anstream::adapter::strip_str(&narrow.render(30)).to_string();
        let lines: Vec<&str> = text.lines().collect();
        // 30 - 5 = 25 columns for the values, continuation lines indented under the column.
        assert_eq!(lines[1], "key  a b c d e f g h i j k l m");
        assert_eq!(lines[2], "       n o p q r s t u v w x y");
        assert_eq!(lines[3], "       z");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_indents_continuations() {
        assert_eq!(wrap("aa bb cc dd", 5), ["aa bb", "  cc", "  dd"]);
        assert_eq!(wrap("short", 10), ["short"]);
        assert_eq!(
            wrap("averyveryverylongword x", 5),
            ["averyveryverylongword", "  x"]
        );
    }

    #[test]
    fn values_are_shown_in_number_order() {
        let mut v = vec![
            "100_real",
            "50_real",
            "90_real",
            "120_real",
            "9_real",
            "100_virtual",
            "12.10",
            "12.9",
            "a",
            "007",
            "7",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "007",
                "7",
                "9_real",
                "12.9",
                "12.10",
                "50_real",
                "90_real",
                "100_real",
                "100_virtual",
                "120_real",
                "a"
            ]
        );
        // Digit runs longer than any integer type compare without overflow.
        let big = "1".repeat(60);
        assert_eq!(natural_cmp(&big, "2"), std::cmp::Ordering::Greater);
    }

    #[test]
    fn abbreviate_keeps_short_lists() {
        assert_eq!(abbreviate(&["a", "b", "c"], 2), "a b c");
        assert_eq!(abbreviate(&["a", "b", "c", "d"], 2), "a b c d");
        assert_eq!(
            abbreviate(&["a", "b", "c", "d", "e"], 2),
            "a b … e (5 values)"
        );
    }
}
