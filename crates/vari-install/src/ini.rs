//! The INI dialect pip's configuration files are written in (Python's `configparser` as pip
//! uses it): `[section]` headers, `key = value` or `key: value`, indented continuation lines,
//! whole-line `#` and `;` comments, keys case-insensitive, a repeated section or key an error.

/// One `key = value` of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IniEntry {
    pub(crate) section: String,
    /// Lower-cased, as `configparser` stores it.
    pub(crate) key: String,
    /// Continuation lines joined with `\n`, trimmed.
    pub(crate) value: String,
    /// 1-based line of the key.
    pub(crate) line: usize,
}

/// Why a file cannot be read as INI: the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IniError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

/// Every entry of `text`, in file order.
pub(crate) fn parse(text: &str) -> Result<Vec<IniEntry>, IniError> {
    let mut entries: Vec<IniEntry> = Vec::new();
    let mut section: Option<String> = None;
    let mut sections_seen: Vec<String> = Vec::new();
    // The indentation of the key whose value may continue on the next lines.
    let mut open_value: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let stripped = raw.trim();
        if stripped.starts_with('#') || stripped.starts_with(';') {
            continue;
        }
        if stripped.is_empty() {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if let (Some(key_indent), Some(last)) = (open_value, entries.last_mut()) {
            if indent > key_indent {
                if !last.value.is_empty() {
                    last.value.push('\n');
                }
                last.value.push_str(stripped);
                continue;
            }
        }
        open_value = None;
        if let Some(header) = stripped
            .strip_prefix('[')
            .and_then(|rest| rest.rfind(']').map(|end| &rest[..end]))
            .filter(|h| !h.is_empty())
        {
            if sections_seen.iter().any(|s| s == header) {
                return Err(IniError {
                    line,
                    message: format!("section [{header}] appears twice"),
                });
            }
            sections_seen.push(header.to_owned());
            section = Some(header.to_owned());
            continue;
        }
        let Some(current) = &section else {
            return Err(IniError {
                line,
                message: "a key before the first [section]".to_owned(),
            });
        };
        let Some(split) = stripped.find(['=', ':']) else {
            return Err(IniError {
                line,
                message: format!("expected `key = value`, found `{stripped}`"),
            });
        };
        let key = stripped[..split].trim().to_lowercase();
        if key.is_empty() {
            return Err(IniError {
                line,
                message: "a value without a key".to_owned(),
            });
        }
        if entries
            .iter()
            .any(|e| e.section == *current && e.key == key)
        {
            return Err(IniError {
                line,
                message: format!("`{key}` appears twice in [{current}]"),
            });
        }
        entries.push(IniEntry {
            section: current.clone(),
            key,
            value: stripped[split + 1..].trim().to_owned(),
            line,
        });
        open_value = Some(indent);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String, String)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|e| (e.section, e.key, e.value))
            .collect()
    }

    #[test]
    fn reads_what_configparser_reads() {
        let text = "# pip.conf\n[global]\nIndex-URL = https://a.example/simple\n\
                    extra-index-url =\n    https://b.example/simple\n    https://c.example/simple\n\
                    ; a comment\n[install]\nfind-links: /wheels\nno-index=true\n";
        assert_eq!(
            pairs(text),
            vec![
                (
                    "global".into(),
                    "index-url".into(),
                    "https://a.example/simple".into()
                ),
                (
                    "global".into(),
                    "extra-index-url".into(),
                    "https://b.example/simple\nhttps://c.example/simple".into()
                ),
                ("install".into(), "find-links".into(), "/wheels".into()),
                ("install".into(), "no-index".into(), "true".into()),
            ]
        );
    }

    #[test]
    fn the_first_delimiter_splits_so_urls_survive() {
        // `=` and `:` both delimit; the first one wins, as in configparser.
        assert_eq!(
            pairs("[global]\nindex-url=https://x.example:8443/simple\n")[0].2,
            "https://x.example:8443/simple"
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("index-url = x\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("[global]\nno delimiter here\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("[global]\na = 1\nA = 2\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("twice")), (3, true));
        let e = parse("[global]\n[global]\n").unwrap_err();
        assert_eq!(e.line, 2);
    }
}
