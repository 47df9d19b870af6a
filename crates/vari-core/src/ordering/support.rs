//! Where a namespace's supported features and values come from, and whether the namespace is
//! enabled on the target at all.

use super::options::SelectionOptions;
use super::rejection::Rejection;
use crate::markers::{TargetEnvironment, VariantMarkerContext};
use crate::metadata::{requirement_name, ProviderKind, StaticProperties, VariantMetadata};
use crate::names::{FeatureName, FeatureValue, Namespace};
use crate::profile::{NamespaceSupport, Profile};

/// The supported features of one namespace, most preferred first, from whichever source the
/// provider kind names.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SupportList<'a> {
    /// Install-time and built-in providers: what detection (or the user's profile) reported.
    Profile(&'a NamespaceSupport),
    /// Ahead-of-time providers: `static-properties`, exactly as listed.
    Static(&'a StaticProperties),
}

impl<'a> SupportList<'a> {
    /// The support list of `namespace`, ignoring `enable-if` and `optional`; `None` when the
    /// source has nothing for it.
    pub(crate) fn of(
        meta: &'a VariantMetadata,
        profile: &'a Profile,
        namespace: &str,
    ) -> Option<Self> {
        let ahead_of_time = meta
            .providers
            .get(namespace)
            .is_some_and(|p| p.kind == ProviderKind::AheadOfTime);
        if ahead_of_time {
            meta.static_properties
                .get(namespace)
                .map(SupportList::Static)
        } else {
            profile.namespace(namespace).map(SupportList::Profile)
        }
    }

    /// Supported features with their supported values, most preferred first.
    pub(crate) fn features(
        self,
    ) -> Box<dyn Iterator<Item = (&'a FeatureName, &'a [FeatureValue])> + 'a> {
        match self {
            SupportList::Profile(ns) => {
                Box::new(ns.features.iter().map(|f| (&f.name, f.values.as_slice())))
            }
            SupportList::Static(list) => Box::new(list.iter().map(|(f, v)| (f, v.as_slice()))),
        }
    }

    /// Supported values of `feature`, most preferred first; `None` if the feature is unknown.
    pub(crate) fn values(self, feature: &str) -> Option<&'a [FeatureValue]> {
        self.features()
            .find(|(name, _)| name.as_str() == feature)
            .map(|(_, values)| values)
    }
}

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
