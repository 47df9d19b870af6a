//! Editing RECORD as text: rows that do not change keep their exact bytes (quoting, line
//! endings, hash spelling), so adding a row and removing it again gives back the original
//! file — which is what makes `unmake` return the plain wheel's RECORD unchanged.

use std::collections::HashMap;
use std::ops::Range;

use crate::record::{csv_field, FormatError};

/// What to do with RECORD: rows to drop, rows to replace, rows to rename, and new rows.
#[derive(Debug, Default)]
pub(crate) struct RecordEdit {
    /// Paths whose rows are removed.
    pub(crate) remove: Vec<String>,
    /// Path → the full new row (without line ending), for members whose contents changed.
    pub(crate) replace: HashMap<String, String>,
    /// Old path → new path, for renamed members (hash and size are kept).
    pub(crate) rename: HashMap<String, String>,
    /// New rows (without line ending), inserted just before the row of `insert_before`, or
    /// at the end when that row is missing.
    pub(crate) insert: Vec<String>,
    /// The row new rows go before (RECORD's own row, so that it stays last).
    pub(crate) insert_before: Option<String>,
}

impl RecordEdit {
    /// Applies the edit to RECORD's bytes.
    pub(crate) fn apply(&self, original: &[u8]) -> Result<Vec<u8>, FormatError> {
        let rows = spans(original)?;
        let mut out = Vec::with_capacity(original.len() + 256);
        let mut inserted = false;
        let newline = dominant_newline(original);
        for (path, fields, span) in &rows {
            let bytes = &original[span.clone()];
            let ending = line_ending(bytes);
            if self.insert_before.as_deref() == Some(path.as_str()) && !inserted {
                for row in &self.insert {
                    out.extend_from_slice(row.as_bytes());
                    out.extend_from_slice(newline.as_bytes());
                }
                inserted = true;
            }
            if self.remove.iter().any(|r| r == path) {
                continue;
            }
            let new_path = self.rename.get(path);
            if let Some(row) = self.replace.get(path) {
                let row = match new_path {
                    Some(new) => rename_row(row, path, new),
                    None => row.clone(),
                };
                out.extend_from_slice(row.as_bytes());
                out.extend_from_slice(ending.as_bytes());
            } else if let Some(new) = new_path {
                out.extend_from_slice(csv_field(new).as_bytes());
                out.push(b',');
                out.extend_from_slice(fields.as_bytes());
                out.extend_from_slice(ending.as_bytes());
            } else {
                out.extend_from_slice(bytes);
            }
        }
        if !inserted && !self.insert.is_empty() {
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.extend_from_slice(newline.as_bytes());
            }
            for row in &self.insert {
                out.extend_from_slice(row.as_bytes());
                out.extend_from_slice(newline.as_bytes());
            }
        }
        Ok(out)
    }
}

/// A row built for `old` (by [`crate::record::record_row`]), with its path changed to `new`.
fn rename_row(row: &str, old: &str, new: &str) -> String {
    let old_field = csv_field(old);
    match row.strip_prefix(&old_field) {
        Some(rest) => format!("{}{rest}", csv_field(new)),
        None => row.to_owned(),
    }
}

/// Each row's path, its text after the path's comma (hash and size, unparsed), and its byte
/// range in `bytes` including the line ending.
fn spans(bytes: &[u8]) -> Result<Vec<(String, String, Range<usize>)>, FormatError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut starts = Vec::new();
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                return Err(FormatError {
                    line: e.position().map_or(0, csv::Position::line),
                    message: e.to_string(),
                })
            }
        }
        let line = record.position().map_or(0, csv::Position::line);
        let mut start = record
            .position()
            .and_then(|p| usize::try_from(p.byte()).ok())
            .unwrap_or(0);
        // After a `\r\n` row the reader reports the next row at the `\n`; a row never starts
        // with a line break.
        while bytes.get(start).is_some_and(|b| matches!(b, b'\r' | b'\n')) {
            start += 1;
        }
        let path = std::str::from_utf8(&record[0])
            .map_err(|_| FormatError {
                line,
                message: "field is not valid UTF-8".to_owned(),
            })?
            .to_owned();
        let rest: Vec<&str> = (1..record.len())
            .map(|i| std::str::from_utf8(&record[i]).unwrap_or_default())
            .collect();
        starts.push((path, rest.join(","), start));
    }
    let mut rows = Vec::with_capacity(starts.len());
    for i in 0..starts.len() {
        let end = starts.get(i + 1).map_or(bytes.len(), |next| next.2);
        let (path, rest, start) = &starts[i];
        rows.push((path.clone(), rest.clone(), *start..end));
    }
    Ok(rows)
}

/// The line ending at the end of a row's bytes (empty for a last row without one).
fn line_ending(row: &[u8]) -> &'static str {
    if row.ends_with(b"\r\n") {
        "\r\n"
    } else if row.ends_with(b"\n") {
        "\n"
    } else {
        ""
    }
}

/// The line ending new rows get: the file's own (`\r\n` when its first row uses it).
fn dominant_newline(bytes: &[u8]) -> &'static str {
    match bytes.iter().position(|&b| b == b'\n') {
        Some(i) if i > 0 && bytes[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str =
        "pkg/__init__.py,sha256=abc,3\r\n\"a,b.py\",sha256=def,4\r\npkg-1.dist-info/RECORD,,\r\n";

    #[test]
    fn inserting_then_removing_gives_back_the_original_bytes() {
        let insert = RecordEdit {
            insert: vec!["pkg-1.dist-info/variant.json,sha256=xyz,10".to_owned()],
            insert_before: Some("pkg-1.dist-info/RECORD".to_owned()),
            ..RecordEdit::default()
        };
        let added = insert.apply(RECORD.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(added.clone()).unwrap(),
            "pkg/__init__.py,sha256=abc,3\r\n\"a,b.py\",sha256=def,4\r\npkg-1.dist-info/variant.json,sha256=xyz,10\r\npkg-1.dist-info/RECORD,,\r\n"
        );
        let remove = RecordEdit {
            remove: vec!["pkg-1.dist-info/variant.json".to_owned()],
            ..RecordEdit::default()
        };
        assert_eq!(remove.apply(&added).unwrap(), RECORD.as_bytes());
    }

    #[test]
    fn renames_and_replacements_keep_other_rows() {
        let edit = RecordEdit {
            rename: [
                ("a,b.py".to_owned(), "c.py".to_owned()),
                (
                    "pkg-1.dist-info/RECORD".to_owned(),
                    "new-1.dist-info/RECORD".to_owned(),
                ),
            ]
            .into_iter()
            .collect(),
            replace: [(
                "pkg/__init__.py".to_owned(),
                "pkg/__init__.py,sha256=new,5".to_owned(),
            )]
            .into_iter()
            .collect(),
            ..RecordEdit::default()
        };
        assert_eq!(
            String::from_utf8(edit.apply(RECORD.as_bytes()).unwrap()).unwrap(),
            "pkg/__init__.py,sha256=new,5\r\nc.py,sha256=def,4\r\nnew-1.dist-info/RECORD,,\r\n"
        );
    }

    #[test]
    fn rows_go_at_the_end_without_an_anchor_and_a_missing_final_newline_is_added() {
        let edit = RecordEdit {
            insert: vec!["x,sha256=1,1".to_owned()],
            insert_before: Some("missing".to_owned()),
            ..RecordEdit::default()
        };
        assert_eq!(
            edit.apply(b"a,sha256=2,2").unwrap(),
            b"a,sha256=2,2\nx,sha256=1,1\n"
        );
    }
}
