//! The plan of an opened lock for the extras and dependency groups a command asks for, as uv's
//! `sync` and `export` name them: what `vari sync`, `vari install -r` and `vari export` plan.

use vari_core::ordering::SelectionOptions;
use vari_lock::LockFile;

use super::closure::plan;
use super::groups::{chosen_groups, GroupChoice};
use super::{Plan, PlanError, PlanRequest};
use crate::target::Target;

/// The extras and groups asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockChoice<'a> {
    /// `--extra`: these extras.
    pub extras: &'a [String],
    /// `--all-extras`: every extra the lock offers (`extras` then unused).
    pub all_extras: bool,
    /// The group options.
    pub groups: GroupChoice<'a>,
}

/// Plans the lock `file` for `target`: its extras and groups chosen by `choice`, its `path`
/// entries under its directory.
pub fn plan_chosen(
    file: &LockFile,
    choice: &LockChoice<'_>,
    target: &Target,
    options: &SelectionOptions,
) -> Result<Plan, PlanError> {
    let lock = file.lock();
    let extras = match choice.all_extras {
        true => &lock.extras[..],
        false => choice.extras,
    };
    let groups = chosen_groups(lock, &choice.groups)?;
    plan(
        lock,
        &PlanRequest {
            target,
            options,
            extras,
            groups: Some(&groups.groups),
            only_groups: groups.only,
            lock_dir: file.dir_url(),
        },
    )
}
