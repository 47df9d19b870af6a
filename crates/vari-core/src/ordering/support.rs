//! Whether a namespace is enabled on the target at all, and if so its support list (which
//! `crate::supported` says where to take from).

use super::options::SelectionOptions;
use super::rejection::Rejection;
use crate::markers::{TargetEnvironment, VariantMarkerContext};
use crate::metadata::{requirement_name, ProviderKind, VariantMetadata};
use crate::names::Namespace;
use crate::profile::Profile;
use crate::supported::SupportList;

/// Decides whether `namespace` is usable on the target and, if so, returns its support list.
///
/// Checked in the order a user would fix them: the optional switch, the `enable-if` marker,
/// then the supported properties themselves.
pub(crate) fn namespace_support<'a>(
    meta: &'a VariantMetadata,
    profile: &'a Profile,
    env: &TargetEnvironment,
    options: &SelectionOptions,
    namespace: &Namespace,
) -> Result<SupportList<'a>, Rejection> {
    let provider = meta.providers.get(namespace);
    if let Some(provider) = provider {
        if provider.optional && !options.enable_optional.contains(namespace) {
            return Err(Rejection::OptionalNotEnabled {
                namespace: namespace.clone(),
            });
        }
        if let Some(marker) = &provider.enable_if {
            // enable-if describes the target, never a wheel: evaluate it with no variant context.
            // It was parsed when the metadata was read.
            if !marker.evaluate(env, &VariantMarkerContext::non_variant()) {
                return Err(Rejection::NamespaceDisabled {
                    namespace: namespace.clone(),
                    marker: marker.as_str().to_owned(),
                });
            }
        }
    }
    SupportList::of(meta, profile, namespace.as_str()).ok_or_else(|| match provider {
        Some(p) if p.kind == ProviderKind::AheadOfTime => Rejection::NoStaticProperties {
            namespace: namespace.clone(),
        },
        _ => Rejection::UnsupportedNamespace {
            namespace: namespace.clone(),
            provider: provider.and_then(|p| match &p.kind {
                ProviderKind::Builtin(name) => Some(format!("the built-in `{name}`")),
                _ => p
                    .requires
                    .first()
                    .map(|r| format!("`{}`", requirement_name(r))),
            }),
        },
    })
}
