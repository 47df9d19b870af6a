//! The user's selection options that match nothing: a typo (`--forbid nvida`) would otherwise
//! pass silently and select what the user meant to exclude.

use vari_core::metadata::property_refs;
use vari_core::ordering::{Pattern, SelectionOptions};
use vari_core::{FeatureName, FeatureValue, Namespace};

use crate::release::Release;
use crate::target::Target;

/// A selection option that has no effect on this release and target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnusedOption {
    /// A `prefer` pattern that matches no property of the release or the target.
    Prefer(Pattern),
    /// A `forbid` pattern that matches no property of the release or the target.
    Forbid(Pattern),
    /// An optional namespace to enable that the release has no provider for.
    EnableOptional(Namespace),
}

/// Every option of `options` that matches nothing in `release` or `target`, in the order
/// prefer, forbid, enable-optional.
pub fn unused_options(
    release: &Release,
    target: &Target,
    options: &SelectionOptions,
) -> Vec<UnusedOption> {
    let in_release = |pattern: &Pattern| {
        release
            .metadata
            .variants
            .values()
            .flat_map(property_refs)
            .any(|(ns, f, v)| covers(pattern, ns, f, v))
    };
    let in_target = |pattern: &Pattern| {
        target.hardware.profile.namespaces.iter().any(|ns| {
            ns.features.iter().any(|f| {
                f.values
                    .iter()
                    .any(|v| covers(pattern, &ns.namespace, &f.name, v))
            })
        })
    };
    let unused = |pattern: &&Pattern| !in_release(pattern) && !in_target(pattern);
    let mut found: Vec<UnusedOption> = Vec::new();
    found.extend(
        options
            .prefer
            .iter()
            .filter(unused)
            .cloned()
            .map(UnusedOption::Prefer),
    );
    found.extend(
        options
            .forbid
            .iter()
            .filter(unused)
            .cloned()
            .map(UnusedOption::Forbid),
    );
    found.extend(
        options
            .enable_optional
            .iter()
            .filter(|ns| !release.metadata.providers.contains_key(*ns))
            .cloned()
            .map(UnusedOption::EnableOptional),
    );
    found
}

/// Whether `pattern` covers the property `ns :: f :: v` (given as borrowed parts, so a large
/// release is searched without building a `Property` per value).
fn covers(pattern: &Pattern, ns: &Namespace, f: &FeatureName, v: &FeatureValue) -> bool {
    match pattern {
        Pattern::Namespace(n) => n == ns,
        Pattern::Feature(r) => r.namespace == *ns && r.feature == *f,
        Pattern::Property(p) => p.namespace == *ns && p.feature == *f && p.value == *v,
    }
}
