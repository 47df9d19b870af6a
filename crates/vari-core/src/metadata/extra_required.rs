//! A wheel's core metadata (`METADATA`) with one of its extras made part of its plain
//! dependencies: what a build family chosen by extra (`jax[cuda12]`) is served as when the
//! installer asks for the plain name (`jax`).
//!
//! Every `Requires-Dist` field that applies with the extra where it would not without it gains a
//! copy without the extra's condition; the fields themselves and every other byte are kept, so
//! asking for the extra explicitly still works and nothing the wheel required before is lost.

use crate::markers::{split_requirement, Marker, VariantMarkerContext};

use super::variant_markers::requires_dist_fields;

/// `core_metadata` with the requirements behind `extra` required without it: for each
/// `Requires-Dist` field whose marker holds with `extra` asked for in environments where it
/// does not hold without it, one more `Requires-Dist` field with the marker of those
/// environments (none when that is every environment), added after the header's last
/// `Requires-Dist` field, ending as it does.
///
/// `None` when no field depends on `extra` (the wheel has no such extra, or it requires
/// nothing). Markers that cannot be parsed are left for the installer to judge, as they are;
/// variant comparisons are decided for a non-variant wheel (a family's builds are not variant
/// wheels).
///
/// ```
/// use vari_core::metadata::require_extra;
/// let metadata = "Name: jax\nVersion: 0.7.2\nRequires-Dist: jaxlib<=0.7.2\n\
///     Requires-Dist: jax-cuda12-plugin==0.7.2; extra == \"cuda12\"\n\
///     Requires-Dist: jax-cuda13-plugin==0.7.2; extra == \"cuda13\"\n\
///     Requires-Dist: nvidia-nccl-cu12; sys_platform == \"linux\" and extra == \"cuda12\"\n\
///     \nDescription\n";
/// let served = require_extra(metadata, "cuda12").unwrap();
/// assert!(served.ends_with(
///     "Requires-Dist: nvidia-nccl-cu12; sys_platform == \"linux\" and extra == \"cuda12\"\n\
///      Requires-Dist: jax-cuda12-plugin==0.7.2\n\
///      Requires-Dist: nvidia-nccl-cu12; sys_platform == 'linux'\n\
///      \nDescription\n"));
/// assert_eq!(require_extra(metadata, "tpu"), None);
/// ```
pub fn require_extra(core_metadata: &str, extra: &str) -> Option<String> {
    let fields = requires_dist_fields(core_metadata);
    let last = fields.last()?;
    let non_variant = VariantMarkerContext::non_variant();
    let mut added = String::new();
    for field in &fields {
        let (requirement, marker) = split_requirement(&field.value);
        let Some(marker) = marker else {
            continue;
        };
        let Ok(parsed) = Marker::parse(marker.trim()) else {
            continue;
        };
        let with = parsed.environment_condition(&non_variant, &[extra]);
        let without = parsed.environment_condition(&non_variant, &[]);
        let only_with = with.and_not(&without);
        if only_with.is_never() {
            continue;
        }
        let requirement = requirement.trim();
        // A URL requirement needs a space before its marker's `;` (PEP 508).
        let separator = match requirement.contains('@') {
            true => " ; ",
            false => "; ",
        };
        added.push_str("Requires-Dist: ");
        added.push_str(requirement);
        if let Some(marker) = only_with.to_marker() {
            added.push_str(separator);
            added.push_str(&marker);
        }
        added.push_str(match last.ending {
            "" => "\n",
            ending => ending,
        });
    }
    if added.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(core_metadata.len() + added.len());
    out.push_str(&core_metadata[..last.end]);
    if last.ending.is_empty() {
        out.push('\n');
        // The added fields end with a line ending; the file did not.
        added.truncate(added.trim_end_matches('\n').len());
    }
    out.push_str(&added);
    out.push_str(&core_metadata[last.end..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_folded_fields_and_urls_keep_their_form() {
        let text = "Name: t\r\nRequires-Dist: a; extra ==\r\n 'gpu'\r\nRequires-Dist: b @ https://h/b;1.whl ; extra == 'gpu' or os_name == 'nt'\r\nSummary: s\r\n\r\nbody\r\n";
        assert_eq!(
            require_extra(text, "gpu").unwrap(),
            "Name: t\r\nRequires-Dist: a; extra ==\r\n 'gpu'\r\nRequires-Dist: b @ https://h/b;1.whl ; extra == 'gpu' or os_name == 'nt'\r\nRequires-Dist: a\r\nRequires-Dist: b @ https://h/b;1.whl ; os_name != 'nt'\r\nSummary: s\r\n\r\nbody\r\n"
        );
    }

    #[test]
    fn a_file_without_a_final_line_ending_gains_one_between_fields_only() {
        assert_eq!(
            require_extra("Name: t\nRequires-Dist: a; extra == 'gpu'", "gpu").unwrap(),
            "Name: t\nRequires-Dist: a; extra == 'gpu'\nRequires-Dist: a"
        );
    }

    #[test]
    fn nothing_to_add_is_none() {
        for text in [
            "Name: t\n",
            "Name: t\nRequires-Dist: a\nRequires-Dist: b; extra == 'cpu'\n",
            "Name: t\nRequires-Dist: a; (extra == 'gpu'\n",
            "Name: t\n\nRequires-Dist: a; extra == 'gpu'\n",
            // Required as much without the extra.
            "Name: t\nRequires-Dist: a; extra != 'x'\n",
        ] {
            assert_eq!(require_extra(text, "gpu"), None, "{text:?}");
        }
    }
}
