//! Rewriting a wheel's core metadata (`METADATA`): the `Name` and `Version` fields and the
//! `Requires-Dist` list. Only the header block changes; every other line, the description
//! after the blank line, and the line endings stay as they are.

use vari_core::filename::normalize_name;
use vari_core::markers::{requirement_applies, TargetEnvironment, VariantMarkerContext};

/// How to change the `Requires-Dist` list.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequiresDistEdit {
    /// Names whose requirements are removed (`nvidia-cublas-cu12`).
    #[serde(default)]
    pub remove: Vec<String>,
    /// Name → the requirement that replaces every requirement on it (`"cupy-cuda12x" =
    /// "cupy"`); a list with several entries on the name keeps one.
    #[serde(default)]
    pub replace: std::collections::BTreeMap<String, String>,
    /// Requirements added after the last one, such as
    /// `nvidia-cublas-cu12; "nvidia" in variant_namespaces`.
    #[serde(default)]
    pub add: Vec<String>,
}

impl RequiresDistEdit {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.remove.is_empty() && self.replace.is_empty() && self.add.is_empty()
    }

    /// Appends `other`'s changes to this one's.
    pub(crate) fn extend(&mut self, other: &RequiresDistEdit) {
        self.remove.extend(other.remove.iter().cloned());
        self.replace
            .extend(other.replace.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.add.extend(other.add.iter().cloned());
    }

    /// Checks each new requirement (name and marker, variant markers included); the error is
    /// the offending requirement and why.
    pub(crate) fn check(&self) -> Result<(), (String, String)> {
        let env = TargetEnvironment::from_platform(None, "3.12")
            .map_err(|e| (String::new(), e.to_string()))?;
        let ctx = VariantMarkerContext::non_variant();
        let names = self.remove.iter().chain(self.replace.keys());
        for text in names.chain(self.add.iter()).chain(self.replace.values()) {
            check_value(text).map_err(|m| (escaped(text), m))?;
        }
        for requirement in self.add.iter().chain(self.replace.values()) {
            if requirement_name(requirement).is_empty() {
                return Err((requirement.clone(), "no project name".to_owned()));
            }
            requirement_applies(requirement, &env, &ctx)
                .map_err(|e| (requirement.clone(), e.to_string()))?;
        }
        Ok(())
    }
}

/// Whether `value` can be written as (part of) a METADATA header field: no line break or other
/// control character but tab. Core metadata is an email-style header block, so a line break in
/// a value would start a field of the writer's choosing (`Requires-Dist: x\nName: evil`).
pub(crate) fn check_value(value: &str) -> Result<(), String> {
    match value
        .chars()
        .find(|&c| (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        None => Ok(()),
        Some(c) => Err(format!(
            "contains a line break or control character (U+{:04X}), which METADATA cannot hold \
             in a field",
            u32::from(c)
        )),
    }
}

/// Checks every line of the header block of the METADATA text `text` (up to the first empty
/// line) with [`check_value`]: the one check every METADATA vari writes passes through (repack's
/// edits, `replace_metadata`'s given text).
pub(crate) fn check_headers(text: &str) -> Result<(), String> {
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let content = content.strip_suffix('\r').unwrap_or(content);
        if content.is_empty() {
            break;
        }
        check_value(content).map_err(|m| format!("line {}: `{}` {m}", i + 1, escaped(content)))?;
    }
    Ok(())
}

/// `text` with control characters escaped, for messages.
pub(crate) fn escaped(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let chars: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            chars
        })
        .collect()
}

/// The project name a requirement starts with.
fn requirement_name(requirement: &str) -> &str {
    let requirement = requirement.trim_start();
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    &requirement[..end]
}

/// What to write into `METADATA`.
#[derive(Debug, Clone)]
pub(crate) struct MetadataEdit<'a> {
    pub(crate) name: Option<&'a str>,
    pub(crate) version: Option<&'a str>,
    pub(crate) requires_dist: &'a RequiresDistEdit,
}

/// Applies `edit` to the text of `METADATA`.
pub(crate) fn rewrite_metadata(text: &str, edit: &MetadataEdit<'_>) -> Result<String, String> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    // The headers end at the first empty line; the description follows.
    let mut header_end = text.len();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']).is_empty() {
            header_end = offset;
            break;
        }
        offset += line.len();
    }
    let (headers, body) = text.split_at(header_end);

    let mut out = String::with_capacity(text.len() + 256);
    let mut saw_name = false;
    let mut replaced: Vec<&str> = Vec::new();
    let mut after_last_requirement: Option<usize> = None;
    for line in headers.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        let ending = &line[content.len()..];
        match content.split_once(':') {
            Some((key, _)) if key.eq_ignore_ascii_case("Name") => {
                saw_name = true;
                match edit.name {
                    Some(name) => push_field(&mut out, "Name", name, ending)?,
                    None => out.push_str(line),
                }
            }
            Some((key, _)) if key.eq_ignore_ascii_case("Version") => match edit.version {
                Some(version) => push_field(&mut out, "Version", version, ending)?,
                None => out.push_str(line),
            },
            Some((key, value)) if key.eq_ignore_ascii_case("Requires-Dist") => {
                let name = normalize_name(requirement_name(value.trim()));
                let rd = edit.requires_dist;
                if rd.remove.iter().any(|r| normalize_name(r) == name) {
                    continue;
                }
                match rd.replace.iter().find(|(k, _)| normalize_name(k) == name) {
                    Some((key, _)) if replaced.contains(&key.as_str()) => continue,
                    Some((key, new)) => {
                        replaced.push(key);
                        push_field(&mut out, "Requires-Dist", new, ending)?;
                    }
                    None => out.push_str(line),
                }
                after_last_requirement = Some(out.len());
            }
            _ => out.push_str(line),
        }
    }
    if !saw_name {
        return Err("has no `Name` field".to_owned());
    }
    if !edit.requires_dist.add.is_empty() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(newline);
        }
        let mut block = String::new();
        for requirement in &edit.requires_dist.add {
            push_field(&mut block, "Requires-Dist", requirement, newline)?;
        }
        out.insert_str(after_last_requirement.unwrap_or(out.len()), &block);
    }
    out.push_str(body);
    check_headers(&out)?;
    Ok(out)
}

/// Writes the field `key: value` and the line ending: the one way this writer adds a field,
/// so every value it writes is checked ([`check_value`]).
fn push_field(out: &mut String, key: &str, value: &str, ending: &str) -> Result<(), String> {
    check_value(value).map_err(|m| format!("`{key}: {}` {m}", escaped(value)))?;
    out.push_str(key);
    out.push_str(": ");
    out.push_str(value);
    out.push_str(ending);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const METADATA: &str = "Metadata-Version: 2.1\nName: cupy-cuda12x\nVersion: 13.4.0+cu12\nRequires-Dist: numpy<2.5,>=1.22\nRequires-Dist: fastrlock>=0.5\nRequires-Dist: cupy-cuda12x-extra; extra == \"x\"\n\nCuPy description\nName: not a header\n";

    fn edit<'a>(requires: &'a RequiresDistEdit) -> MetadataEdit<'a> {
        MetadataEdit {
            name: Some("cupy"),
            version: Some("13.4.0"),
            requires_dist: requires,
        }
    }

    #[test]
    fn renames_and_edits_requirements_in_the_headers_only() {
        let requires = RequiresDistEdit {
            remove: vec!["FastRLock".to_owned()],
            replace: [(
                "cupy_cuda12x_extra".to_owned(),
                "cupy-extra; extra == \"x\"".to_owned(),
            )]
            .into_iter()
            .collect(),
            add: vec!["nvidia-cublas-cu12; \"nvidia\" in variant_namespaces".to_owned()],
        };
        let out = rewrite_metadata(METADATA, &edit(&requires)).unwrap();
        assert_eq!(
            out,
            "Metadata-Version: 2.1\nName: cupy\nVersion: 13.4.0\nRequires-Dist: numpy<2.5,>=1.22\nRequires-Dist: cupy-extra; extra == \"x\"\nRequires-Dist: nvidia-cublas-cu12; \"nvidia\" in variant_namespaces\n\nCuPy description\nName: not a header\n"
        );
        requires.check().unwrap();
    }

    #[test]
    fn added_requirements_go_at_the_end_of_the_headers_without_any() {
        let requires = RequiresDistEdit {
            add: vec!["a".to_owned(), "b".to_owned()],
            ..RequiresDistEdit::default()
        };
        let out = rewrite_metadata("Name: x\r\nVersion: 1\r\n", &edit(&requires)).unwrap();
        assert_eq!(
            out,
            "Name: cupy\r\nVersion: 13.4.0\r\nRequires-Dist: a\r\nRequires-Dist: b\r\n"
        );
        let out = rewrite_metadata("Name: x\nVersion: 1\n\nbody\n", &edit(&requires)).unwrap();
        assert_eq!(
            out,
            "Name: cupy\nVersion: 13.4.0\nRequires-Dist: a\nRequires-Dist: b\n\nbody\n"
        );
    }

    #[test]
    fn bad_requirements_and_missing_name_are_errors() {
        let bad = RequiresDistEdit {
            add: vec!["x; nonsense_marker == '1'".to_owned()],
            ..RequiresDistEdit::default()
        };
        assert!(bad.check().is_err());
        assert!(rewrite_metadata("Version: 1\n", &edit(&RequiresDistEdit::default())).is_err());
    }

    #[test]
    fn line_breaks_cannot_reach_the_headers() {
        for injected in [
            "x\nName: evil",
            "x\rName: evil",
            "x\u{2028}y",
            "x\0",
            "x\u{1b}[31m",
        ] {
            let add = RequiresDistEdit {
                add: vec![injected.to_owned()],
                ..RequiresDistEdit::default()
            };
            let (_, message) = add.check().unwrap_err();
            assert!(
                message.contains("control character"),
                "{injected:?}: {message}"
            );
            // The writer refuses it too, whatever checked (or did not check) the edit.
            assert!(
                rewrite_metadata("Name: a\n", &edit(&add)).is_err(),
                "{injected:?}"
            );
            let name = MetadataEdit {
                name: Some(injected),
                version: None,
                requires_dist: &RequiresDistEdit::default(),
            };
            assert!(
                rewrite_metadata("Name: a\n", &name).is_err(),
                "{injected:?}"
            );
        }
        let remove = RequiresDistEdit {
            remove: vec!["a\nb".to_owned()],
            ..RequiresDistEdit::default()
        };
        assert!(remove.check().is_err());
        // Tabs and the description's own lines are fine.
        assert!(check_headers("Name: a\nSummary: a\tb\n\nbody \u{1b} \r here\n").is_ok());
        let e = check_headers("Name: a\r\nSummary: x\ry\r\n").unwrap_err();
        assert!(e.starts_with("line 2: `Summary: x\\ry`"), "{e}");
    }
}
