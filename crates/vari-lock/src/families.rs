//! The rules of a lock's build families (`[[tool.vari.families]]` and `[packages.tool.vari]
//! builds`), checked by the reader after parsing and by the writer before writing, so that
//! what `vari lock` writes `sync`, `export` and `mirror` read.
//!
//! What the rules protect: `sync` chooses one build per family from what the lock records and
//! installs the entries of that build only. So every reference must name a recorded build, a
//! build other than the CPU one must require something (else it would fit every machine and
//! always win), and two entries of one name (torch `+cu128` and `+cpu`) must come in with
//! disjoint builds, or one machine would be asked to install both.

use std::collections::{BTreeMap, BTreeSet};

use vari_core::VariantLabel;

use crate::limits::{check_text, MAX_ITEMS};
use crate::model::{BuildRef, Lock, LockFamily, LockedBuild};
use crate::LockError;

/// At most this many families in one lock (the catalog's own ceiling).
pub const MAX_FAMILIES: usize = 1_000;
/// At most this many builds per family (the catalog's own ceiling).
pub const MAX_BUILDS: usize = 64;
/// At most this many properties one build requires (the catalog's own ceiling).
pub const MAX_REQUIRES: usize = 128;

/// Checks the families of `lock` and every entry's `builds` against them.
pub(crate) fn check_families(lock: &Lock) -> Result<(), LockError> {
    let families = lock.vari.as_ref().map_or(&[][..], |info| &info.families);
    let targets: BTreeSet<&str> = lock
        .vari
        .iter()
        .flat_map(|info| &info.targets)
        .map(|target| target.name.as_str())
        .collect();
    if families.len() > MAX_FAMILIES {
        return Err(LockError::new(
            "tool.vari.families",
            format!("has more than {MAX_FAMILIES} entries"),
        ));
    }
    let mut seen = BTreeSet::new();
    for (i, family) in families.iter().enumerate() {
        let path = format!("tool.vari.families[{i}]");
        check_family(family, &path, &targets)?;
        if !seen.insert(family.name.as_str()) {
            return Err(LockError::new(
                format!("{path}.name"),
                format!("family {:?} is listed twice", family.name),
            ));
        }
    }
    check_references(lock, families)
}

fn check_family(
    family: &LockFamily,
    path: &str,
    targets: &BTreeSet<&str>,
) -> Result<(), LockError> {
    check_name(&family.name, &format!("{path}.name"), "family name")?;
    if let Some(group) = &family.group {
        check_name(group, &format!("{path}.group"), "group name")?;
    }
    if family.builds.is_empty() {
        return Err(LockError::new(
            format!("{path}.builds"),
            "lists no build (a family is recorded with the builds the lock holds)",
        ));
    }
    if family.builds.len() > MAX_BUILDS {
        return Err(LockError::new(
            format!("{path}.builds"),
            format!("has more than {MAX_BUILDS} entries"),
        ));
    }
    let mut names = BTreeSet::new();
    let mut null = None;
    for (j, build) in family.builds.iter().enumerate() {
        let path = format!("{path}.builds[{j}]");
        check_build(build, &path, targets)?;
        if !names.insert(build.name.as_str()) {
            return Err(LockError::new(
                format!("{path}.name"),
                format!("build {:?} is listed twice", build.name),
            ));
        }
        if build.null {
            if let Some(other) = null.replace(&build.name) {
                return Err(LockError::new(
                    format!("{path}.null"),
                    format!("a family has one null build at most ({other:?} is one already)"),
                ));
            }
        }
    }
    Ok(())
}

fn check_build(build: &LockedBuild, path: &str, targets: &BTreeSet<&str>) -> Result<(), LockError> {
    let at = |key: &str| format!("{path}.{key}");
    check_text(&build.name).map_err(|m| LockError::new(at("name"), m))?;
    let label = build.name.parse::<VariantLabel>().map_err(|err| {
        LockError::new(
            at("name"),
            format!("{:?} is not a build name: {err}", build.name),
        )
    })?;
    if label.as_str().len() > VariantLabel::MAX_LEN_0_0_3 {
        return Err(LockError::new(
            at("name"),
            format!(
                "{:?} is longer than {} characters",
                build.name,
                VariantLabel::MAX_LEN_0_0_3
            ),
        ));
    }
    check_name(&build.distribution, &at("distribution"), "project name")?;
    if let Some(extra) = &build.extra {
        check_name(extra, &at("extra"), "extra name")?;
    }
    if build.requires.len() > MAX_REQUIRES {
        return Err(LockError::new(
            at("requires"),
            format!("has more than {MAX_REQUIRES} items"),
        ));
    }
    for (k, property) in build.requires.iter().enumerate() {
        if build.requires[..k].contains(property) {
            return Err(LockError::new(
                format!("{path}.requires[{k}]"),
                format!("\"{property}\" is listed twice"),
            ));
        }
    }
    match (build.null, build.requires.is_empty()) {
        (true, false) => {
            return Err(LockError::new(
                at("requires"),
                "the null (CPU) build requires nothing",
            ))
        }
        (false, true) => {
            return Err(LockError::new(
                at("requires"),
                "is empty: a build other than the null (CPU) one requires something, or it \
                 would fit every machine",
            ))
        }
        _ => {}
    }
    if build.classes.len() > MAX_ITEMS {
        return Err(LockError::new(
            at("classes"),
            format!("has more than {MAX_ITEMS} items"),
        ));
    }
    for (k, class) in build.classes.iter().enumerate() {
        let key = format!("{path}.classes[{k}]");
        check_text(class).map_err(|m| LockError::new(&key, m))?;
        if !targets.contains(class.as_str()) {
            return Err(LockError::new(
                key,
                format!("{class:?} is not one of the lock's targets (tool.vari.targets)"),
            ));
        }
    }
    Ok(())
}

/// Every entry's `builds` names recorded builds, each once; entries of one name that any
/// build brings in all carry `builds`, pairwise disjoint.
fn check_references(lock: &Lock, families: &[LockFamily]) -> Result<(), LockError> {
    // name → (index, its builds) of the entries seen so far.
    let mut by_name: BTreeMap<&str, Vec<(usize, &[BuildRef])>> = BTreeMap::new();
    for (i, package) in lock.packages.iter().enumerate() {
        let refs = package
            .vari
            .as_ref()
            .map_or(&[][..], |info| info.builds.as_slice());
        let path = format!("packages[{i}].tool.vari.builds");
        if refs.len() > MAX_ITEMS {
            return Err(LockError::new(
                path,
                format!("has more than {MAX_ITEMS} items"),
            ));
        }
        for (j, reference) in refs.iter().enumerate() {
            let key = format!("{path}[{j}]");
            check_text(&reference.family).map_err(|m| LockError::new(&key, m))?;
            check_text(&reference.build).map_err(|m| LockError::new(&key, m))?;
            let Some(family) = families.iter().find(|f| f.name == reference.family) else {
                return Err(LockError::new(
                    key,
                    format!("family {:?} is not in tool.vari.families", reference.family),
                ));
            };
            if family.build(&reference.build).is_none() {
                return Err(LockError::new(
                    key,
                    format!(
                        "family {:?} has no locked build {:?}",
                        reference.family, reference.build
                    ),
                ));
            }
            if refs[..j].contains(reference) {
                return Err(LockError::new(
                    key,
                    format!(
                        "{{ family = {:?}, build = {:?} }} is listed twice",
                        reference.family, reference.build
                    ),
                ));
            }
        }
        by_name
            .entry(package.name.as_str())
            .or_default()
            .push((i, refs));
    }
    for (name, entries) in by_name {
        if entries.len() < 2 || entries.iter().all(|(_, refs)| refs.is_empty()) {
            continue;
        }
        for (a, (i, first)) in entries.iter().enumerate() {
            for (j, second) in &entries[a + 1..] {
                if first.is_empty() || second.is_empty() {
                    let bare = if first.is_empty() { i } else { j };
                    return Err(LockError::new(
                        format!("packages[{bare}].tool.vari.builds"),
                        format!(
                            "is missing: packages[{i}] and packages[{j}] are both {name}, and \
                             one comes in with a family's build, so each must say which builds \
                             bring it in"
                        ),
                    ));
                }
                if let Some(shared) = first.iter().find(|r| second.contains(r)) {
                    return Err(LockError::new(
                        format!("packages[{j}].tool.vari.builds"),
                        format!(
                            "packages[{i}] and packages[{j}] are both {name} and both come in \
                             with build {} of {}; entries of one name need disjoint builds",
                            shared.build, shared.family
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A name in PEP 503 normal form (a family, a group, a distribution, an extra).
fn check_name(text: &str, path: &str, what: &str) -> Result<(), LockError> {
    check_text(text).map_err(|m| LockError::new(path, m))?;
    if !vari_core::project::is_valid(text) {
        return Err(LockError::new(
            path,
            format!("{text:?} is not a valid {what}"),
        ));
    }
    if vari_core::project::normalize(text) != text {
        return Err(LockError::new(
            path,
            format!(
                "{text:?} is not in normal form (write {:?})",
                vari_core::project::normalize(text)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
