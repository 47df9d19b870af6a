//! Which dependency groups of a lock to install, from the options uv names them with:
//! `--group NAME` (these instead of the lock's `default-groups`), `--no-default-groups`
//! (none of the defaults), `--no-group NAME` (not this one, whatever else says so). Every name
//! must be a group the lock offers.

use super::closure::check_offered;
use super::PlanError;
use crate::model::Lock;

/// The group options as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupChoice<'a> {
    /// `--group`: these groups instead of the lock's `default-groups`.
    pub groups: &'a [String],
    /// `--no-default-groups`: leave out the lock's `default-groups`.
    pub no_default_groups: bool,
    /// `--no-group`: leave these out (it wins over `--group` and the defaults).
    pub no_groups: &'a [String],
}

/// The groups to install (for [`PlanRequest::groups`](super::PlanRequest::groups)), in the
/// lock's spelling; an error naming a group the lock does not offer.
pub fn chosen_groups(lock: &Lock, choice: &GroupChoice<'_>) -> Result<Vec<String>, PlanError> {
    check_offered("dependency group", choice.groups, &lock.dependency_groups)?;
    check_offered(
        "dependency group",
        choice.no_groups,
        &lock.dependency_groups,
    )?;
    let normal = |n: &str| vari_core::project::normalize(n);
    let base: &[String] = match (choice.groups.is_empty(), choice.no_default_groups) {
        (false, _) => choice.groups,
        (true, true) => &[],
        (true, false) => &lock.default_groups,
    };
    let mut chosen: Vec<String> = Vec::new();
    for name in base {
        let left_out = choice.no_groups.iter().any(|n| normal(n) == normal(name));
        if !left_out && !chosen.iter().any(|c| normal(c) == normal(name)) {
            chosen.push(name.clone());
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            lock_version: crate::LOCK_VERSION.to_owned(),
            environments: Vec::new(),
            requires_python: None,
            extras: Vec::new(),
            dependency_groups: names(&["dev", "docs", "gpu"]),
            default_groups: names(&["dev", "docs"]),
            created_by: "tests".to_owned(),
            packages: Vec::new(),
            vari: None,
            other_tools: Default::default(),
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn defaults_can_be_left_out_whole_or_one_by_one() {
        let lock = lock();
        let chosen = |choice: GroupChoice<'_>| chosen_groups(&lock, &choice).unwrap();
        assert_eq!(chosen(GroupChoice::default()), ["dev", "docs"]);
        assert!(chosen(GroupChoice {
            no_default_groups: true,
            ..GroupChoice::default()
        })
        .is_empty());
        let dev = names(&["dev"]);
        assert_eq!(
            chosen(GroupChoice {
                no_groups: &dev,
                ..GroupChoice::default()
            }),
            ["docs"]
        );
        let gpu = names(&["gpu", "dev"]);
        assert_eq!(
            chosen(GroupChoice {
                groups: &gpu,
                no_groups: &dev,
                ..GroupChoice::default()
            }),
            ["gpu"]
        );
    }

    #[test]
    fn a_group_the_lock_does_not_offer_is_an_error() {
        let lock = lock();
        let test = names(&["test"]);
        let err = chosen_groups(
            &lock,
            &GroupChoice {
                no_groups: &test,
                ..GroupChoice::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("no dependency group `test`"), "{err}");
    }
}
