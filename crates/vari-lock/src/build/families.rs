//! Build families in a lock being built: a requirement on a family's name reaches the builds
//! the lock holds for it (a by-name family's own name is no entry of the lock; a by-extra
//! build's dependencies come with its extra).

use super::edge::{parse_edge, BuildError};

/// A family the lock chose through, with the builds it locked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyInput {
    /// The family (PEP 503 normal form).
    pub name: String,
    /// The catalog's group it belongs to, if any.
    pub group: Option<String>,
    /// The builds locked, best first (the catalog's order).
    pub builds: Vec<FamilyBuildInput>,
}

/// One build locked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FamilyBuildInput {
    /// The catalog's build name.
    pub name: String,
    /// What it installs as (PEP 503 normal form).
    pub distribution: String,
    /// The extra that selects it, for builds by extra.
    pub extra: Option<String>,
    /// The properties a machine must support (`namespace :: feature :: value`), resolved.
    pub requires: Vec<String>,
    /// Whether it is the CPU (null) build.
    pub null: bool,
    /// The targets that took it.
    pub classes: Vec<String>,
}

impl FamilyBuildInput {
    /// The requirement that installs this build (`jax[cuda12]`, `cupy-cuda12x`).
    fn requirement(&self) -> String {
        match &self.extra {
            Some(extra) => format!("{}[{extra}]", self.distribution),
            None => self.distribution.clone(),
        }
    }
}

/// `requirements` with, after each one on a family's name, the requirement of each of the
/// family's locked builds under the same marker: the walk then reaches each build's entries
/// (a by-name family's own name is no entry of the lock, and a by-extra build's dependencies
/// come with its extra).
pub(super) fn with_builds(
    requirements: &[String],
    families: &[FamilyInput],
) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    for requirement in requirements {
        out.push(requirement.clone());
        let edge = parse_edge(requirement, "requirements")?;
        let Some(family) = families.iter().find(|f| f.name == edge.name) else {
            continue;
        };
        let marker = vari_core::markers::split_requirement(requirement).1;
        for build in &family.builds {
            let text = match marker {
                Some(marker) => format!("{} ; {}", build.requirement(), marker.trim()),
                None => build.requirement(),
            };
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(name: &str, distribution: &str, classes: &[&str]) -> FamilyBuildInput {
        FamilyBuildInput {
            name: name.into(),
            distribution: distribution.into(),
            classes: classes.iter().map(|c| c.to_string()).collect(),
            ..FamilyBuildInput::default()
        }
    }

    fn families() -> Vec<FamilyInput> {
        vec![
            FamilyInput {
                name: "cupy".into(),
                group: None,
                builds: vec![
                    build("cuda13x", "cupy-cuda13x", &["h100"]),
                    build("cuda12x", "cupy-cuda12x", &["a100"]),
                ],
            },
            FamilyInput {
                name: "torch".into(),
                group: Some("pytorch".into()),
                builds: vec![
                    build("cu130", "torch", &["h100"]),
                    build("cu128", "torch", &["a100"]),
                    build("cpu", "torch", &["cpu"]),
                ],
            },
        ]
    }

    #[test]
    fn a_requirement_on_a_family_reaches_its_builds_under_its_marker() {
        let got = with_builds(
            &["cupy>=13 ; sys_platform == 'linux'".into(), "numpy".into()],
            &families(),
        )
        .unwrap();
        assert_eq!(
            got,
            [
                "cupy>=13 ; sys_platform == 'linux'",
                "cupy-cuda13x ; sys_platform == 'linux'",
                "cupy-cuda12x ; sys_platform == 'linux'",
                "numpy"
            ]
        );
    }
}
