//! The dependencies of a chosen wheel: its core metadata's `Requires-Dist` fields, each kept
//! when its marker holds for the target, the requested extras and the wheel's variant (PEP 825
//! variant markers). No transitive resolution: that is an installer's job.

use vari_core::markers::{
    requirement_applies_with_extras, split_requirement, MarkerError, TargetEnvironment,
    VariantMarkerContext,
};

use super::report::Dependency;

/// The values of the `Requires-Dist` fields of a core metadata text (the header block only;
/// folded continuation lines are joined).
///
/// ```
/// let fields = vari_select::requires_dist("Name: a\nRequires-Dist: b; extra == 'x'\n\nRequires-Dist: body\n");
/// assert_eq!(fields, ["b; extra == 'x'"]);
/// ```
pub fn requires_dist(metadata: &str) -> Vec<String> {
    let mut fields: Vec<String> = Vec::new();
    // Whether the field being read (and so its continuation lines) is `Requires-Dist`.
    let mut in_requires = false;
    for line in metadata.lines() {
        if line.trim().is_empty() {
            break; // the description body follows the first blank line
        }
        if line.starts_with([' ', '\t']) {
            if in_requires {
                if let Some(last) = fields.last_mut() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
            continue;
        }
        in_requires = false;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("requires-dist") {
                fields.push(value.trim().to_owned());
                in_requires = true;
            }
        }
    }
    fields
}

/// The dependencies that apply, and one message per field that could not be evaluated.
pub(crate) fn applicable(
    metadata: &str,
    env: &TargetEnvironment,
    variant: &VariantMarkerContext,
    extras: &[String],
) -> (Vec<Dependency>, Vec<MarkerError>) {
    let extras: Vec<&str> = extras.iter().map(String::as_str).collect();
    let mut applying = Vec::new();
    let mut problems = Vec::new();
    for field in requires_dist(metadata) {
        match requirement_applies_with_extras(&field, env, variant, &extras) {
            Ok(true) => {
                let (requirement, marker) = split_requirement(&field);
                applying.push(Dependency {
                    requirement: requirement.trim().to_owned(),
                    marker: marker.map(|m| m.trim().to_owned()),
                });
            }
            Ok(false) => {}
            Err(e) => problems.push(e),
        }
    }
    (applying, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    const METADATA: &str = "Metadata-Version: 2.1\nName: torch\nVersion: 2.10.0\n\
        Requires-Dist: filelock\n\
        Requires-Dist: nvidia-cublas-cu12==12.8.4.1; \"nvidia\" in variant_namespaces\n\
        Requires-Dist: nvidia-cudnn-cu12; platform_system == \"Linux\" and\n \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties\n\
        Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n\
        Requires-Dist: pywin32; sys_platform == \"win32\"\n\
        \n\
        Requires-Dist: in-the-description\n";

    fn names(deps: &[Dependency]) -> Vec<&str> {
        deps.iter().map(|d| d.requirement.as_str()).collect()
    }

    #[test]
    fn fields_stop_at_the_description_and_join_folded_lines() {
        let fields = requires_dist(METADATA);
        assert_eq!(fields.len(), 5);
        assert!(fields[2]
            .ends_with("and \"nvidia :: cuda_version_lower_bound :: 12.0\" in variant_properties"));
    }

    #[test]
    fn variant_markers_and_extras_decide() {
        let platform = vari_core::Platform {
            system: Some("Linux".into()),
            machine: Some("x86_64".into()),
            libc: None,
        };
        let env = TargetEnvironment::from_platform(Some(&platform), "3.12").unwrap();
        let cuda = VariantMarkerContext {
            label: Some("cuda12.8".parse().unwrap()),
            properties: ["nvidia :: cuda_version_lower_bound :: 12.0"
                .parse()
                .unwrap()]
            .into(),
        };
        let (deps, problems) = applicable(METADATA, &env, &cuda, &[]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            names(&deps),
            [
                "filelock",
                "nvidia-cublas-cu12==12.8.4.1",
                "nvidia-cudnn-cu12"
            ]
        );
        assert_eq!(
            deps[1].marker.as_deref(),
            Some("\"nvidia\" in variant_namespaces")
        );
        let cpu = VariantMarkerContext::non_variant();
        let (deps, _) = applicable(METADATA, &env, &cpu, &["opt-einsum".to_owned()]);
        assert_eq!(names(&deps), ["filelock", "opt-einsum>=3.3"]);
    }
}
