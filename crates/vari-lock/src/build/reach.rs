//! Which entries the lock's roots reach, how, and in which environments; and from that each
//! entry's `packages.marker`.
//!
//! The walk starts from the requirements of each scope (the base requirements, each extra,
//! each dependency group) and follows the `Requires-Dist` edges between locked entries. A
//! state is an entry with the extras asked of it, the scope it was reached from and whether a
//! variant-marker edge was on the way; each state carries the environments it is reached in
//! ([`EnvironmentCondition`]): the `or`, over the ways to it, of the `and` of the edges'
//! conditions. When a state's condition grows, its edges are followed again, until nothing
//! grows (conditions only grow, over finitely many comparisons, so this ends; a bound on the
//! steps guards it all the same). A state that holds in none of the targets' environments is
//! not reached: a dependency of `tomli` only Python 3.10 installs is not one of 3.12's.
//!
//! The marker: per scope, the environments' part is left out when it holds in every target's
//! environment (a lock for one Python and platform gets no environment markers, and neither
//! does a package every target installs); otherwise it is written as the condition's PEP 508
//! text, so that a target installs the package exactly when the requirements' markers ask for
//! it there.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use vari_core::markers::{EnvironmentCondition, TargetEnvironment};

use vari_core::metadata::VariantMetadata;

use super::edge::{edge_condition, holds_somewhere, parse_edge, BuildError, Edge, Scope};

/// How many times states may be taken from the queue before the walk stops refining and
/// treats every state reached so far as holding everywhere (installing more, never less).
const MAX_STEPS: usize = 200_000;

/// An entry, the extras asked of it, the scope it was reached from, and whether through a
/// variant-marker edge.
type State = (String, BTreeSet<String>, Scope, bool);

/// How one entry was reached.
#[derive(Debug, Default)]
pub(super) struct Reach {
    /// Per scope reaching it over ordinary edges only, where.
    direct: BTreeMap<Scope, EnvironmentCondition>,
    /// Per scope reaching it only through a variant-marker edge, where.
    through_variants: BTreeMap<Scope, EnvironmentCondition>,
}

impl Reach {
    /// Whether only variant-marker edges lead to it (the chosen wheel's variant markers bring
    /// it in, not `packages.marker`).
    pub(super) fn through_variants_only(&self) -> bool {
        self.direct.is_empty()
    }

    /// `packages.marker`: per scope that reaches it (ordinary edges first: through variants
    /// only when none does), the scope's test (`'socks' in extras`) and where, when that is
    /// not every one of `environments`; none when the base requirements reach it everywhere,
    /// and no extra or group where they reach it already.
    pub(super) fn marker(&self, environments: &[TargetEnvironment]) -> Option<String> {
        let scopes = self.scopes();
        let base = scopes.get(&Scope::Base);
        let mut parts = Vec::new();
        for (scope, condition) in scopes {
            // Where the base requirements install it anyway, an extra or a group adds nothing.
            let adds = match (scope, base) {
                (Scope::Base, _) | (_, None) => true,
                (_, Some(base)) => !condition.and_not(base).is_never(),
            };
            if !adds {
                continue;
            }
            match (scope, where_(condition, environments)) {
                (Scope::Base, None) => return None,
                (scope, place) => parts.extend(part(scope, place)),
            }
        }
        (!parts.is_empty()).then(|| parts.join(" or "))
    }

    /// `[packages.tool.vari] group-marker`: as [`Self::marker`], from the dependency groups'
    /// scopes alone (the project's own requirements and extras left out, as `--only-group`
    /// installs); none when no group reaches it.
    pub(super) fn group_marker(&self, environments: &[TargetEnvironment]) -> Option<String> {
        let parts: Vec<String> = self
            .scopes()
            .iter()
            .filter(|(scope, _)| matches!(scope, Scope::Group(_)))
            .filter_map(|(scope, condition)| part(scope, where_(condition, environments)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" or "))
    }

    /// The scopes that decide its markers: those reaching it over ordinary edges, else (only
    /// variant-marker edges lead to it) those reaching it through variants.
    fn scopes(&self) -> &BTreeMap<Scope, EnvironmentCondition> {
        match self.through_variants_only() {
            true => &self.through_variants,
            false => &self.direct,
        }
    }
}

/// Where `condition` holds, as marker text; none when it holds in every one of
/// `environments`.
fn where_(condition: &EnvironmentCondition, environments: &[TargetEnvironment]) -> Option<String> {
    match environments.iter().all(|env| condition.holds_in(env)) {
        true => None,
        false => condition.to_marker(),
    }
}

/// One scope's part of a marker: its test and where (the base requirements' part is only
/// where; none when they reach it everywhere).
fn part(scope: &Scope, place: Option<String>) -> Option<String> {
    match scope {
        Scope::Base => place,
        Scope::Extra(name) => Some(with_place(format!("'{name}' in extras"), place)),
        Scope::Group(name) => Some(with_place(format!("'{name}' in dependency_groups"), place)),
    }
}

/// `test and place`, the place in parentheses when it is an `or`.
fn with_place(test: String, place: Option<String>) -> String {
    match place {
        None => test,
        Some(place) if place.contains(" or ") => format!("{test} and ({place})"),
        Some(place) => format!("{test} and {place}"),
    }
}

/// The walk's result.
pub(super) struct Walk {
    /// Per entry reached, how.
    pub(super) reached: BTreeMap<String, Reach>,
    /// Per entry, the names of the entries its taken edges lead to.
    pub(super) used: BTreeMap<String, BTreeSet<String>>,
}

impl Walk {
    /// Walks from `roots` (each scope's requirements) over `edges` (per locked entry, its
    /// parsed `Requires-Dist`; `locked`: per locked entry, its kept variants), judged in
    /// `environments` (the targets', never empty but for a lock with none).
    pub(super) fn run(
        roots: &[(Scope, &[String])],
        locked: &BTreeMap<&str, Option<&VariantMetadata>>,
        edges: &BTreeMap<&str, Vec<Edge>>,
        environments: &[TargetEnvironment],
    ) -> Result<Self, BuildError> {
        let mut walk = Conditions {
            locked,
            environments,
            of: BTreeMap::new(),
            queue: VecDeque::new(),
            queued: BTreeSet::new(),
        };
        for (scope, requirements) in roots {
            for requirement in requirements.iter() {
                let edge = parse_edge(requirement, "requirements")?;
                let condition = edge_condition(&edge, &BTreeSet::new(), None);
                walk.offer((edge.name, edge.extras, scope.clone(), false), condition);
            }
        }
        let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut steps = 0;
        while let Some(state) = walk.queue.pop_front() {
            walk.queued.remove(&state);
            steps += 1;
            if steps > MAX_STEPS {
                // Not settled: hostile or absurd metadata. Holding everywhere installs more.
                for condition in walk.of.values_mut() {
                    *condition = EnvironmentCondition::ALWAYS;
                }
                break;
            }
            let condition = walk.of[&state].clone();
            let (name, extras, scope, through) = &state;
            let variants = locked.get(name.as_str()).copied().flatten();
            for edge in edges.get(name.as_str()).into_iter().flatten() {
                if !locked.contains_key(edge.name.as_str()) {
                    continue;
                }
                let taken = condition.and(&edge_condition(edge, extras, variants));
                if !holds_somewhere(&taken, environments) {
                    continue;
                }
                used.entry(name.clone())
                    .or_default()
                    .insert(edge.name.clone());
                let child = (
                    edge.name.clone(),
                    edge.extras.clone(),
                    scope.clone(),
                    *through || edge.variant,
                );
                walk.offer(child, taken);
            }
        }
        let mut reached: BTreeMap<String, Reach> = BTreeMap::new();
        for ((name, _, scope, through), condition) in walk.of {
            let reach = reached.entry(name).or_default();
            let by_scope = match through {
                false => &mut reach.direct,
                true => &mut reach.through_variants,
            };
            let joined = match by_scope.get(&scope) {
                Some(known) => known.or(&condition),
                None => condition,
            };
            by_scope.insert(scope, joined);
        }
        Ok(Self { reached, used })
    }
}

/// Each state's condition so far, and the states whose edges are to be followed again.
struct Conditions<'a> {
    locked: &'a BTreeMap<&'a str, Option<&'a VariantMetadata>>,
    environments: &'a [TargetEnvironment],
    of: BTreeMap<State, EnvironmentCondition>,
    queue: VecDeque<State>,
    queued: BTreeSet<State>,
}

impl Conditions<'_> {
    /// `state` is reached where `condition` holds: when that widens what is known of it (and
    /// it is a locked entry reached in some target's environment), its edges are followed
    /// (again).
    fn offer(&mut self, state: State, condition: EnvironmentCondition) {
        if !self.locked.contains_key(state.0.as_str())
            || !holds_somewhere(&condition, self.environments)
        {
            return;
        }
        let grown = match self.of.get(&state) {
            Some(known) => {
                let grown = known.or(&condition);
                if grown == *known {
                    return;
                }
                grown
            }
            None => condition,
        };
        self.of.insert(state.clone(), grown);
        if self.queued.insert(state.clone()) {
            self.queue.push_back(state);
        }
    }
}
