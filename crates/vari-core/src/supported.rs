//! Where a namespace's supported features and values come from: `static-properties` for an
//! ahead-of-time provider, the target's profile otherwise. Ordering ranks by it and the variant
//! markers expose it (`variant_properties`), so it sits below both.

use crate::metadata::{ProviderKind, StaticProperties, VariantMetadata};
use crate::names::{FeatureName, FeatureValue};
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
