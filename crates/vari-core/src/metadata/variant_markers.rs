//! A wheel's core metadata (`METADATA`) with its variant markers decided for the selected
//! wheel, for installers that cannot parse them (released pip and uv).
//!
//! Only `Requires-Dist` fields whose marker names a variant variable change; every other byte
//! — the other fields, their folded lines, line endings, the description after the first blank
//! line — is kept. Fields are read as `vari-select`'s `Requires-Dist` reader reads them: the
//! header block ends at the first blank line, and lines starting with a space or a tab continue
//! the field above them (joined with one space).

use crate::markers::{
    mentions_variant_variable, split_requirement, Marker, MarkerError, Resolved,
    VariantMarkerContext,
};

/// The `Requires-Dist` values of `core_metadata` whose marker names a variant variable
/// (`variant_namespaces`, `variant_features`, `variant_properties`, `variant_label`), which
/// installers without variant support (released pip, uv 0.13) fail to parse.
///
/// ```
/// use vari_core::metadata::variant_marker_requirements;
/// let metadata = "Name: x\nRequires-Dist: a\nRequires-Dist: b; \"nvidia\" in variant_namespaces\n";
/// assert_eq!(variant_marker_requirements(metadata), ["b; \"nvidia\" in variant_namespaces"]);
/// ```
pub fn variant_marker_requirements(core_metadata: &str) -> Vec<String> {
    requires_dist_fields(core_metadata)
        .into_iter()
        .filter(|field| {
            split_requirement(&field.value)
                .1
                .is_some_and(mentions_variant_variable)
        })
        .map(|field| field.value)
        .collect()
}

/// `core_metadata` with each `Requires-Dist` field whose marker names a variant variable
/// rewritten for the wheel described by `ctx`: dropped when the marker is false whatever the
/// environment, its marker removed when true whatever the environment, else its marker replaced
/// by what is left ([`Marker::resolve_variants`]). A rewritten field takes one line, ending as
/// the field's last line did.
///
/// `Ok(None)` when no `Requires-Dist` field names a variant variable: the metadata can be served
/// as it is. A field that names one but whose marker cannot be parsed is an error, since
/// neither it nor its absence can be served truthfully; other unparsable markers are left alone
/// for the installer to judge.
///
/// ```
/// use vari_core::markers::VariantMarkerContext;
/// use vari_core::metadata::resolve_variant_markers;
/// let metadata = "Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n\
///     Requires-Dist: filelock\n\
///     Requires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\" and \"nvidia\" in variant_namespaces\n\
///     Requires-Dist: rocm-lib; \"amd\" in variant_namespaces\n\
///     \n\
///     Requires-Dist: text of the description\n";
/// let cuda = VariantMarkerContext {
///     label: Some("cu128".parse().unwrap()),
///     properties: ["nvidia :: cuda_version_lower_bound :: 12.8".parse().unwrap()].into(),
/// };
/// let rewritten = resolve_variant_markers(metadata, &cuda).unwrap().unwrap();
/// assert_eq!(rewritten, "Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n\
///     Requires-Dist: filelock\n\
///     Requires-Dist: nvidia-cublas-cu12==12.8.4.1; platform_system == \"Linux\"\n\
///     \n\
///     Requires-Dist: text of the description\n");
/// assert_eq!(resolve_variant_markers("Name: x\nRequires-Dist: a\n", &cuda).unwrap(), None);
/// ```
pub fn resolve_variant_markers(
    core_metadata: &str,
    ctx: &VariantMarkerContext,
) -> Result<Option<String>, MarkerError> {
    let mut out = String::with_capacity(core_metadata.len());
    let mut changed = false;
    // Where the text not yet copied to `out` starts.
    let mut copied = 0;
    for field in requires_dist_fields(core_metadata) {
        let Some(new) = rewrite(&field, ctx)? else {
            continue;
        };
        changed = true;
        out.push_str(&core_metadata[copied..field.start]);
        out.push_str(&new);
        copied = field.end;
    }
    if !changed {
        return Ok(None);
    }
    out.push_str(&core_metadata[copied..]);
    Ok(Some(out))
}

/// One `Requires-Dist` field of the header block.
pub(super) struct Field<'a> {
    /// Byte range of its lines (the first and its continuation lines, line endings included).
    start: usize,
    pub(super) end: usize,
    /// The first line up to the value: the name, the colon, the spaces after it.
    prefix: &'a str,
    /// The value, continuation lines joined with one space, trimmed.
    pub(super) value: String,
    /// The line ending of its last line (`""` at the end of a file without one).
    pub(super) ending: &'a str,
}

/// A line without its line ending, and the ending.
fn split_ending(line: &str) -> (&str, &str) {
    let content = line.strip_suffix('\n').unwrap_or(line);
    let content = content.strip_suffix('\r').unwrap_or(content);
    (content, &line[content.len()..])
}

/// The `Requires-Dist` fields of the header block, in order.
pub(super) fn requires_dist_fields(text: &str) -> Vec<Field<'_>> {
    let mut fields: Vec<Field<'_>> = Vec::new();
    // Whether the field being read (and so its continuation lines) is `Requires-Dist`.
    let mut in_requires = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let (content, ending) = split_ending(line);
        if content.trim().is_empty() {
            break; // the description body follows the first blank line
        }
        if content.starts_with([' ', '\t']) {
            if in_requires {
                if let Some(field) = fields.last_mut() {
                    field.value.push(' ');
                    field.value.push_str(content.trim());
                    field.end = offset;
                    field.ending = ending;
                }
            }
            continue;
        }
        in_requires = false;
        if let Some((name, value)) = content.split_once(':') {
            if name.trim().eq_ignore_ascii_case("requires-dist") {
                let value_at = content.len() - value.trim_start().len();
                fields.push(Field {
                    start,
                    end: offset,
                    prefix: &content[..value_at],
                    value: value.trim().to_owned(),
                    ending,
                });
                in_requires = true;
            }
        }
    }
    fields
}

/// The field's new text, or `None` when its marker does not name a variant variable.
fn rewrite(field: &Field<'_>, ctx: &VariantMarkerContext) -> Result<Option<String>, MarkerError> {
    let (requirement, marker) = split_requirement(&field.value);
    // Joining a value that began on a continuation line leaves a space in front.
    let requirement = requirement.trim_start();
    let Some(marker) = marker else {
        return Ok(None);
    };
    let parsed = match Marker::parse(marker.trim()) {
        Ok(parsed) => parsed,
        Err(e) if mentions_variant_variable(marker) => return Err(e),
        Err(_) => return Ok(None),
    };
    if !parsed.uses_variants() {
        return Ok(None);
    }
    // A value that began on a continuation line has no space after the colon yet.
    let prefix = if field.prefix.ends_with(':') {
        format!("{} ", field.prefix)
    } else {
        field.prefix.to_owned()
    };
    Ok(match parsed.resolve_variants(ctx) {
        Resolved::Never => Some(String::new()),
        Resolved::Always => Some(format!(
            "{prefix}{}{}",
            requirement.trim_end(),
            field.ending
        )),
        Resolved::Marker(residue) => {
            // The spacing around `;` as written; a URL requirement keeps the space before it.
            let space = &marker[..marker.len() - marker.trim_start().len()];
            Some(format!(
                "{prefix}{requirement};{space}{residue}{}",
                field.ending
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuda() -> VariantMarkerContext {
        VariantMarkerContext {
            label: Some("cu128".parse().unwrap()),
            properties: ["nvidia :: cuda_version_lower_bound :: 12.8"
                .parse()
                .unwrap()]
            .into(),
        }
    }

    fn resolve(text: &str) -> Option<String> {
        resolve_variant_markers(text, &cuda()).unwrap()
    }

    #[test]
    fn crlf_and_folded_fields() {
        let text = "Name: t\r\nRequires-Dist: a; os_name == 'posix' and\r\n  'nvidia' in variant_namespaces\r\nRequires-Dist: b;\r\n\t'amd' in variant_namespaces\r\nRequires-Dist: c; os_name == 'nt' or\r\n 'x' in variant_features\r\nSummary: s\r\n\r\nbody\r\n";
        assert_eq!(
            resolve(text).unwrap(),
            "Name: t\r\nRequires-Dist: a; os_name == 'posix'\r\nRequires-Dist: c; os_name == 'nt'\r\nSummary: s\r\n\r\nbody\r\n"
        );
    }

    #[test]
    fn values_starting_on_a_continuation_line_and_urls() {
        let text = "Name: t\nRequires-Dist:\n pkg @ https://h/a;b.whl ; variant_label == 'cu128' and extra == 'x'\nRequires-Dist:  q>=1;'nvidia' in variant_namespaces";
        assert_eq!(
            resolve(text).unwrap(),
            "Name: t\nRequires-Dist: pkg @ https://h/a;b.whl ; extra == 'x'\nRequires-Dist:  q>=1"
        );
    }

    #[test]
    fn untouched_when_no_variant_marker() {
        for text in [
            "Name: t\nRequires-Dist: a; os_name == 'posix'\n",
            "Name: t\nRequires-Dist: a; unknown_var == 'x'\n",
            "Name: t\nRequires-Dist: a\n\nRequires-Dist: b; 'nvidia' in variant_namespaces\n",
            "Name: t\nSummary: x; 'nvidia' in variant_namespaces\n",
            "Name: t\nRequires-Dist: a; os_name == 'variant_label'\n",
            "",
        ] {
            assert_eq!(resolve(text), None, "{text:?}");
        }
    }

    #[test]
    fn unreadable_variant_markers_are_errors() {
        for text in [
            "Name: t\nRequires-Dist: a; 'nvidia' in variant_namespace\n",
            "Name: t\nRequires-Dist: a; variant_namespaces == 'nvidia'\n",
            "Name: t\nRequires-Dist: a; (variant_label == 'x'\n",
        ] {
            assert!(resolve_variant_markers(text, &cuda()).is_err(), "{text:?}");
        }
    }
}
