//! One `Requires-Dist` entry (or top-level requirement) as an edge of the lock's graph, and
//! where it applies: what the walk ([`super::reach`]) and the variant requirements
//! ([`super::variant_requirements`]) both judge by.

use std::collections::BTreeSet;

use vari_core::markers::{
    split_requirement, EnvironmentCondition, Marker, TargetEnvironment, VariantMarkerContext,
};
use vari_core::metadata::{parse_requirement, properties_of, VariantMetadata};
use vari_core::project::normalize;

/// A `Requires-Dist` entry or a requirement vari cannot read, or releases that do not make a
/// lock (two entries of one name no family build tells apart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    /// The release it belongs to (`requirements` for a top-level one).
    pub package: String,
    /// The entry; empty when the error is about the releases, not one entry.
    pub requirement: String,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.requirement.is_empty() {
            true => write!(f, "{}: {}", self.package, self.message),
            false => write!(
                f,
                "{}: cannot read the requirement `{}`: {}",
                self.package, self.requirement, self.message
            ),
        }
    }
}

impl std::error::Error for BuildError {}

/// Where a walk started: the requirements always installed, an extra or a group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Scope {
    Base,
    Extra(String),
    Group(String),
}

/// One entry of `Requires-Dist`, parsed.
pub(super) struct Edge {
    pub(super) name: String,
    pub(super) extras: BTreeSet<String>,
    pub(super) marker: Option<Marker>,
    pub(super) variant: bool,
}

pub(super) fn parse_edge(entry: &str, package: &str) -> Result<Edge, BuildError> {
    let failed = |message: String| BuildError {
        package: package.to_owned(),
        requirement: entry.to_owned(),
        message,
    };
    let (requirement, marker) = split_requirement(entry);
    let parsed = parse_requirement(requirement.trim()).map_err(failed)?;
    let marker = match marker.map(str::trim).filter(|m| !m.is_empty()) {
        Some(text) => Some(Marker::parse(text).map_err(|e| failed(e.to_string()))?),
        None => None,
    };
    Ok(Edge {
        name: normalize(parsed.name.as_ref()),
        extras: parsed.extras.iter().map(|e| e.to_string()).collect(),
        variant: marker.as_ref().is_some_and(Marker::uses_variants),
        marker,
    })
}

/// Where `edge` applies with `extras` asked of its package: its marker with those extras and,
/// for a variant-marker edge, one of the release's kept variants (`variants`) decided.
pub(super) fn edge_condition(
    edge: &Edge,
    extras: &BTreeSet<String>,
    variants: Option<&VariantMetadata>,
) -> EnvironmentCondition {
    let Some(marker) = &edge.marker else {
        return EnvironmentCondition::ALWAYS;
    };
    let extras: Vec<&str> = extras.iter().map(String::as_str).collect();
    let contexts: Vec<VariantMarkerContext> = match (edge.variant, variants) {
        (false, _) => vec![VariantMarkerContext::non_variant()],
        (true, None) => Vec::new(),
        (true, Some(meta)) => meta
            .variants
            .iter()
            .map(|(label, properties)| VariantMarkerContext {
                label: Some(label.clone()),
                properties: properties_of(properties).collect(),
            })
            .collect(),
    };
    contexts
        .iter()
        .fold(EnvironmentCondition::NEVER, |condition, ctx| {
            condition.or(&marker.environment_condition(ctx, &extras))
        })
}

/// The environments the lock is judged in: the targets', or with none described a default
/// one (so that markers are judged on extras and variants alone).
pub(super) fn judged_in(environments: &[TargetEnvironment]) -> Vec<TargetEnvironment> {
    match environments.is_empty() {
        false => environments.to_vec(),
        true => TargetEnvironment::from_platform(None, "3.12")
            .map(|env| vec![env])
            .unwrap_or_default(),
    }
}

/// Whether `condition` holds in one of `environments` (with none, whether it can hold at all).
pub(super) fn holds_somewhere(
    condition: &EnvironmentCondition,
    environments: &[TargetEnvironment],
) -> bool {
    match environments.is_empty() {
        true => !condition.is_never(),
        false => environments.iter().any(|env| condition.holds_in(env)),
    }
}
