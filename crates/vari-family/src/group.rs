//! The group rule: families whose builds link against each other take one line together.
//!
//! `torch`, `torchvision`, `torchaudio` and `xformers` are built against one CUDA line each
//! (`+cu128`): a torchvision of the cu128 line with a torch of the cu130 line does not load. When
//! several members of a group are asked for together, each member's own best build is not
//! enough: they take the best line that every requested member offers (a build the target
//! supports, with a version the requirement allows), so that a torchvision that lacks the newest
//! line moves torch to the newest line both have rather than leaving them apart. When no line is
//! offered by all, that is one error naming the members and the lines each offers.
//!
//! A line is a build's name (`cu128`, `cpu`): group members agree on it. A member whose family
//! shares no build name with the other requested members' families (vLLM's PyPI build, whose line
//! is read from its requirements) is left out of the agreement rather than refused: its names say
//! nothing about the others' lines.

use serde::Serialize;

use crate::choose::{FamilyChoice, Verdict};
use crate::model::Family;

/// The requested members of one group cannot take one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupConflict {
    /// The group's name.
    pub group: String,
    /// Each requested member and the lines it offers here (builds that fit with an allowed
    /// version), best first.
    pub members: Vec<(String, Vec<String>)>,
}

impl std::fmt::Display for GroupConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.members.iter().map(|(m, _)| m.as_str()).collect();
        let offers: Vec<String> = self
            .members
            .iter()
            .map(|(member, lines)| match lines.is_empty() {
                true => format!("{member} offers none"),
                false => format!("{member} offers {}", lines.join(", ")),
            })
            .collect();
        write!(
            f,
            "{} must take one line (group {}), but no line fits all of them: {}",
            names.join(", "),
            self.group,
            offers.join("; ")
        )
    }
}

impl std::error::Error for GroupConflict {}

/// The lines a choice offers: the builds that fit with a version the requirement allows, best
/// first, each once.
pub fn offered_lines(choice: &FamilyChoice) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for report in &choice.builds {
        if matches!(report.verdict, Verdict::Chosen | Verdict::RanksBelow { .. })
            && !lines.contains(&report.build)
        {
            lines.push(report.build.clone());
        }
    }
    lines
}

/// The line the requested members of group `group` take together: `Ok(None)` when fewer than
/// two members take part (nothing to agree on), else the best line every member offers, in the
/// first member's order (the builds of one group rank alike for one target). Members are given
/// with their family; one whose family shares no build name with the others' is left out.
///
/// ```
/// use std::collections::BTreeMap;
/// use vari_family::{builtin, choose, group_line, FamilyOptions, Offer};
/// let profile = vari_core::Profile::from_json(r#"{"schema": "vari-profile/1", "namespaces": [
///   {"namespace": "nvidia", "features": [
///    {"name": "cuda_version_lower_bound", "values": ["13.0", "12.9", "12.8", "12.0", "12"]},
///    {"name": "sm_arch", "values": ["80_real"]}]}]}"#).unwrap();
/// let env = vari_core::markers::TargetEnvironment::from_platform(None, "3.12").unwrap();
/// let offers = |lines: &[&str]| -> BTreeMap<String, Vec<Offer>> {
///     lines.iter().map(|l| (l.to_string(), vec![Offer::new(format!("2.9.0+{l}").parse().unwrap())])).collect()
/// };
/// let torch = builtin().family("torch").unwrap();
/// let vision = builtin().family("torchvision").unwrap();
/// let spec = Default::default();
/// let a = choose(torch, &offers(&["cu130", "cu128", "cpu"]), &spec, &profile, &env, &FamilyOptions::default());
/// let b = choose(vision, &offers(&["cu128", "cpu"]), &spec, &profile, &env, &FamilyOptions::default());
/// assert_eq!(a.chosen.as_ref().unwrap().build, "cu130");
/// let line = group_line("pytorch", &[(torch, &a), (vision, &b)]).unwrap();
/// assert_eq!(line.as_deref(), Some("cu128"));
/// ```
pub fn group_line(
    group: &str,
    members: &[(&Family, &FamilyChoice)],
) -> Result<Option<String>, GroupConflict> {
    let taking_part: Vec<&(&Family, &FamilyChoice)> = members
        .iter()
        .filter(|(family, _)| {
            members.iter().any(|(other, _)| {
                other.name != family.name
                    && family
                        .builds
                        .iter()
                        .any(|b| other.builds.iter().any(|o| o.name == b.name))
            })
        })
        .collect();
    if taking_part.len() < 2 {
        return Ok(None);
    }
    let lines: Vec<Vec<String>> = taking_part
        .iter()
        .map(|(_, choice)| offered_lines(choice))
        .collect();
    let agreed = lines[0]
        .iter()
        .find(|line| lines[1..].iter().all(|other| other.contains(line)));
    match agreed {
        Some(line) => Ok(Some(line.clone())),
        None => Err(GroupConflict {
            group: group.to_owned(),
            members: taking_part
                .iter()
                .zip(lines)
                .map(|((family, _), lines)| (family.name.clone(), lines))
                .collect(),
        }),
    }
}
