//! Which build of each family a lock records ([`vari_lock::LockFamily`]) the target takes, from
//! what the lock says alone (no catalog at sync time): the builds' recorded `requires` judged
//! by the family choice's own ranking ([`vari_family::rank_builds`]: the target's supported
//! properties, the user's `prefer`/`forbid`, the null build last; ties in the recorded order),
//! and for the families of one group, the best build name every member locked that fits
//! ([`vari_family::group_line`]). Only the entries of the builds taken are installed.

use vari_family::{
    group_line, offered_lines, rank_builds, Build, Family, FamilyChoice, FamilyOptions, Origin,
    SameName,
};
use vari_lock::{Lock, LockFamily};

use super::{PlanError, PlanRequest};

/// One family's build taken for the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildTaken {
    /// The family.
    pub family: String,
    /// The build taken (`cu128`, `cpu`).
    pub build: String,
    /// What it installs as.
    pub distribution: String,
    /// Whether it is the family's null (CPU) build.
    pub null: bool,
    /// Why this build rather than its own best: the group whose line it takes with the other
    /// members, when that line is not the family's own best.
    pub group: Option<String>,
    /// Every locked build's verdict for the target (the family choice's report).
    pub report: FamilyChoice,
}

impl BuildTaken {
    /// Why it was taken, in words: `the best locked build that fits this machine`.
    pub fn reason(&self) -> String {
        let own_best = self.report.chosen.as_ref().map(|c| c.build.as_str());
        match (&self.group, own_best) {
            (Some(group), Some(best)) if best != self.build => format!(
                "the line group {group} takes together (this family's own best locked build \
                 is {best})"
            ),
            _ if self.null && self.report.builds.len() > 1 => {
                "the null (CPU) build: no other locked build fits this machine".to_owned()
            }
            _ if self.null => "the null (CPU) build, the only one locked".to_owned(),
            _ => "the best locked build that fits this machine".to_owned(),
        }
    }

    /// One line per other locked build: why it was not taken.
    pub fn explanation(&self) -> Vec<String> {
        self.report
            .explanation()
            .into_iter()
            .filter(|line| !line.starts_with(&format!("{} (", self.build)))
            .collect()
    }
}

/// The build each family of `lock` takes on the request's target, in the lock's order of
/// families; an error naming the family when none of its locked builds fits, or the group
/// whose members cannot take one line.
pub(super) fn take_builds(
    lock: &Lock,
    request: &PlanRequest<'_>,
) -> Result<Vec<BuildTaken>, PlanError> {
    let families = lock.vari.as_ref().map_or(&[][..], |info| &info.families);
    let options = FamilyOptions {
        selection: request.options.clone(),
        ..FamilyOptions::default()
    };
    let ranked: Vec<(Family, FamilyChoice)> = families
        .iter()
        .map(|locked| {
            let family = as_family(locked);
            let choice = rank_builds(
                &family,
                &request.target.hardware.profile,
                &request.target.markers,
                &options,
            );
            (family, choice)
        })
        .collect();
    let mut taken = Vec::with_capacity(families.len());
    for (at, (locked, (family, choice))) in families.iter().zip(&ranked).enumerate() {
        let Some(own) = &choice.chosen else {
            return Err(PlanError::NoBuildFits {
                family: family.name.clone(),
                why: choice.why_nothing(),
            });
        };
        let mut build = own.build.clone();
        let mut by_group = None;
        if let Some(group) = &locked.group {
            let members: Vec<(&Family, &FamilyChoice)> = families
                .iter()
                .zip(&ranked)
                .filter(|(other, _)| other.group.as_ref() == Some(group))
                .map(|(_, (family, choice))| (family, choice))
                .collect();
            let line =
                group_line(group, &members).map_err(|conflict| PlanError::GroupConflict {
                    message: conflict.to_string(),
                })?;
            if let Some(line) = line.filter(|line| offered_lines(choice).contains(line)) {
                build = line;
                by_group = Some(group.clone());
            }
        }
        let Some(recorded) = locked.build(&build) else {
            return Err(PlanError::Invalid {
                path: format!("tool.vari.families[{at}]"),
                message: format!("build {build:?} is not recorded"),
            });
        };
        taken.push(BuildTaken {
            family: family.name.clone(),
            build: recorded.name.clone(),
            distribution: recorded.distribution.clone(),
            null: recorded.null,
            group: by_group,
            report: choice.clone(),
        });
    }
    Ok(taken)
}

/// The locked family as the family choice knows one: its builds with the properties the lock
/// recorded (a line once read from a build's requirements is among them), in the recorded
/// order, its namespaces in the order the builds first use them (as a catalog's default).
fn as_family(locked: &LockFamily) -> Family {
    let mut namespaces = Vec::new();
    for property in locked.builds.iter().flat_map(|b| &b.requires) {
        if !namespaces.contains(&property.namespace) {
            namespaces.push(property.namespace.clone());
        }
    }
    Family {
        name: locked.name.clone(),
        summary: None,
        docs: Vec::new(),
        same_name: SameName::Absent,
        namespaces,
        builds: locked
            .builds
            .iter()
            .map(|b| Build {
                name: b.name.clone(),
                distribution: b.distribution.clone(),
                source: None,
                local: None,
                extra: b.extra.clone(),
                requires: b.requires.clone(),
                null: b.null,
                line_from_requirements: false,
            })
            .collect(),
        origin: Origin::File("pylock.toml".to_owned()),
    }
}

#[cfg(test)]
mod tests;
