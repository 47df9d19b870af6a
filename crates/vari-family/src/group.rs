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

/// The CUDA major line a member's chosen build needs (`nvidia ::
/// cuda_version_lower_bound :: 12.0` → 12), if it has one.
fn chosen_cuda_major(choice: &FamilyChoice) -> Option<u64> {
    let report = choice
        .builds
        .iter()
        .find(|b| matches!(b.verdict, Verdict::Chosen))?;
    report.requires.iter().find_map(|p| {
        let value = p.strip_prefix("nvidia :: cuda_version_lower_bound :: ")?;
        value.split('.').next()?.trim().parse().ok()
    })
}

/// Whether `family`'s build `line` is of the CUDA major line `major` (one of its
/// `cuda_version_lower_bound` values starts with it).
fn line_is_major(family: &Family, line: &str, major: u64) -> bool {
    family.build(line).is_some_and(|build| {
        build.requires.iter().any(|p| {
            p.namespace.as_str() == "nvidia"
                && p.feature.as_str() == "cuda_version_lower_bound"
                && p.value.as_str().split('.').next() == Some(&major.to_string())
        })
    })
}

/// The line the requested members of group `group` take together: `Ok(None)` when there is
/// nothing to agree on, else the best line every member offers, in the first member's order
/// (the builds of one group rank alike for one target).
///
/// Members agree on build names. A member whose family shares no build name with the others'
/// but whose chosen build needs one CUDA major line (vLLM's PyPI build, its line read from its
/// requirements) *pins* the others to that line: they take their best line of that CUDA major (a
/// CUDA 12 vLLM makes torch take cu128 rather than cu130, and never its CPU build). A member with
/// neither is left out.
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
    let shares = |family: &Family| {
        members.iter().any(|(other, _)| {
            other.name != family.name
                && family
                    .builds
                    .iter()
                    .any(|b| other.builds.iter().any(|o| o.name == b.name))
        })
    };
    // Members pinning a CUDA major line, and the members that agree on names.
    let pins: Vec<(&Family, u64)> = members
        .iter()
        .filter(|(family, choice)| {
            !shares(family)
                && choice
                    .chosen
                    .as_ref()
                    .and_then(|c| family.build(&c.build))
                    .is_some_and(|b| b.line_from_requirements)
        })
        .filter_map(|(family, choice)| Some((*family, chosen_cuda_major(choice)?)))
        .collect();
    let agreeing: Vec<&(&Family, &FamilyChoice)> = members
        .iter()
        .filter(|(family, _)| match pins.is_empty() {
            true => shares(family),
            false => !pins.iter().any(|(p, _)| p.name == family.name),
        })
        .collect();
    let enough = match pins.is_empty() {
        true => agreeing.len() >= 2,
        false => !agreeing.is_empty(),
    };
    if !enough {
        return Ok(None);
    }
    let lines: Vec<Vec<String>> = agreeing
        .iter()
        .map(|(family, choice)| {
            offered_lines(choice)
                .into_iter()
                .filter(|line| {
                    pins.iter()
                        .all(|(_, major)| line_is_major(family, line, *major))
                })
                .collect()
        })
        .collect();
    let agreed = lines[0]
        .iter()
        .find(|line| lines[1..].iter().all(|other| other.contains(line)));
    match agreed {
        Some(line) => Ok(Some(line.clone())),
        None => Err(GroupConflict {
            group: group.to_owned(),
            members: pins
                .iter()
                .map(|(family, major)| {
                    (
                        family.name.clone(),
                        vec![format!("the CUDA {major} line only")],
                    )
                })
                .chain(
                    agreeing
                        .iter()
                        .map(|(family, choice)| (family.name.clone(), offered_lines(choice))),
                )
                .collect(),
        }),
    }
}
