//! Which dependency groups of a lock to install, from the options as uv's `sync` and
//! `export` name them: `--group NAME` (this group too, besides the lock's `default-groups`),
//! `--all-groups` (every group), `--no-default-groups` (none of the defaults), `--no-group
//! NAME` (not this one, whatever else says so), `--only-group NAME` (only these groups: the
//! project's own requirements left out, and the defaults). Every name must be a group the
//! lock offers; `--only-group` with `--group` or `--all-groups` is refused, as uv refuses it.

use vari_lock::Lock;

use super::closure::check_offered;
use super::PlanError;

/// The group options as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupChoice<'a> {
    /// `--group`: these groups too, besides the lock's `default-groups`.
    pub groups: &'a [String],
    /// `--all-groups`: every group the lock offers.
    pub all_groups: bool,
    /// `--no-default-groups`: leave out the lock's `default-groups`.
    pub no_default_groups: bool,
    /// `--no-group`: leave these out (it wins over every other option).
    pub no_groups: &'a [String],
    /// `--only-group`: only these groups, without the project's own requirements (the
    /// defaults left out too); not with `groups` or `all_groups`.
    pub only_groups: &'a [String],
}

/// The groups chosen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChosenGroups {
    /// The groups to install (for [`PlanRequest::groups`](super::PlanRequest::groups)), in
    /// the lock's spelling and order.
    pub groups: Vec<String>,
    /// Only these groups: the project's own requirements are left out (for
    /// [`PlanRequest::only_groups`](super::PlanRequest::only_groups)).
    pub only: bool,
}

/// The groups to install; an error naming a group the lock does not offer, or the options
/// that cannot go together.
pub fn chosen_groups(lock: &Lock, choice: &GroupChoice<'_>) -> Result<ChosenGroups, PlanError> {
    let only = !choice.only_groups.is_empty();
    if only && !choice.groups.is_empty() {
        return Err(PlanError::Conflicting {
            option: "--only-group",
            with: "--group",
        });
    }
    if only && choice.all_groups {
        return Err(PlanError::Conflicting {
            option: "--only-group",
            with: "--all-groups",
        });
    }
    let offered = &lock.dependency_groups;
    for asked in [choice.groups, choice.no_groups, choice.only_groups] {
        check_offered("dependency group", asked, offered)?;
    }
    let normal = |n: &str| vari_core::project::normalize(n);
    let named = |list: &[String], name: &str| list.iter().any(|n| normal(n) == normal(name));
    // The defaults the lock does not offer by name too (PEP 751's synthetic groups).
    let defaults_unlisted = lock.default_groups.iter().filter(|d| !named(offered, d));
    let groups = offered
        .iter()
        .chain(defaults_unlisted)
        .filter(|name| match only {
            true => named(choice.only_groups, name),
            false => {
                choice.all_groups
                    || named(choice.groups, name)
                    || (!choice.no_default_groups && named(&lock.default_groups, name))
            }
        })
        .filter(|name| !named(choice.no_groups, name))
        .cloned()
        .collect();
    Ok(ChosenGroups { groups, only })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            lock_version: vari_lock::LOCK_VERSION.to_owned(),
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

    fn chosen(lock: &Lock, choice: GroupChoice<'_>) -> (Vec<String>, bool) {
        let chosen = chosen_groups(lock, &choice).unwrap();
        (chosen.groups, chosen.only)
    }

    #[test]
    fn defaults_can_be_left_out_whole_or_one_by_one() {
        let lock = lock();
        let chosen = |choice: GroupChoice<'_>| chosen(&lock, choice).0;
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
        // `--group` adds to the defaults (uv's `sync` and `export`); `--no-group` wins.
        let gpu = names(&["gpu", "dev"]);
        assert_eq!(
            chosen(GroupChoice {
                groups: &gpu,
                no_groups: &dev,
                ..GroupChoice::default()
            }),
            ["docs", "gpu"]
        );
        assert_eq!(
            chosen(GroupChoice {
                groups: &names(&["GPU"]),
                no_default_groups: true,
                ..GroupChoice::default()
            }),
            ["gpu"]
        );
        assert_eq!(
            chosen(GroupChoice {
                all_groups: true,
                no_groups: &dev,
                ..GroupChoice::default()
            }),
            ["docs", "gpu"]
        );
    }

    #[test]
    fn only_groups_leave_the_project_and_the_defaults_out() {
        let lock = lock();
        let gpu = names(&["gpu"]);
        let only = |only_groups: &[String], no_groups: &[String]| {
            chosen(
                &lock,
                GroupChoice {
                    only_groups,
                    no_groups,
                    ..GroupChoice::default()
                },
            )
        };
        assert_eq!(only(&gpu, &[]), (gpu.clone(), true));
        assert_eq!(
            only(&names(&["gpu", "dev"]), &[]),
            (names(&["dev", "gpu"]), true)
        );
        // `--no-group` wins here too: nothing from the groups, and still not the project.
        assert_eq!(only(&gpu, &gpu), (Vec::new(), true));
        assert!(!chosen(&lock, GroupChoice::default()).1);
    }

    #[test]
    fn only_group_with_group_or_all_groups_is_refused() {
        let lock = lock();
        let dev = names(&["dev"]);
        for (choice, with) in [
            (
                GroupChoice {
                    only_groups: &dev,
                    groups: &dev,
                    ..GroupChoice::default()
                },
                "--group",
            ),
            (
                GroupChoice {
                    only_groups: &dev,
                    all_groups: true,
                    ..GroupChoice::default()
                },
                "--all-groups",
            ),
        ] {
            let err = chosen_groups(&lock, &choice).unwrap_err().to_string();
            assert_eq!(err, format!("`--only-group` cannot be used with `{with}`"));
        }
    }

    #[test]
    fn a_synthetic_default_group_is_installed_by_default() {
        // PEP 751: `default-groups` names groups not listed in `dependency-groups`.
        let lock = Lock {
            dependency_groups: names(&["dev"]),
            default_groups: names(&["default"]),
            ..lock()
        };
        assert_eq!(chosen(&lock, GroupChoice::default()).0, ["default"]);
        let dev = names(&["dev"]);
        assert_eq!(
            chosen(
                &lock,
                GroupChoice {
                    groups: &dev,
                    ..GroupChoice::default()
                }
            )
            .0,
            ["dev", "default"]
        );
        assert_eq!(
            chosen(
                &lock,
                GroupChoice {
                    only_groups: &dev,
                    ..GroupChoice::default()
                }
            )
            .0,
            ["dev"]
        );
    }

    #[test]
    fn a_group_the_lock_does_not_offer_is_an_error() {
        let lock = lock();
        let test = names(&["test"]);
        for choice in [
            GroupChoice {
                no_groups: &test,
                ..GroupChoice::default()
            },
            GroupChoice {
                only_groups: &test,
                ..GroupChoice::default()
            },
        ] {
            let err = chosen_groups(&lock, &choice).unwrap_err().to_string();
            assert!(err.contains("no dependency group `test`"), "{err}");
        }
    }
}
