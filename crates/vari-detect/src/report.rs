//! What one provider found: its supported features, where the facts came from, or why the
//! namespace is absent.

use std::time::{Duration, Instant};

use vari_core::{FeatureSupport, Namespace, NamespaceSupport};

/// The outcome of running one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderReport {
    /// The namespace the provider answers for.
    pub namespace: Namespace,
    /// Supported features, most preferred first; `None` when the namespace is absent.
    pub features: Option<Vec<FeatureSupport>>,
    /// Where the facts came from (`NVML 570.86.15`, `/proc/cpuinfo: haswell`, an override variable).
    pub source: String,
    /// Why the namespace is absent or degraded (no driver, library missing, timed out, …).
    pub note: Option<String>,
    /// How long the provider took.
    pub elapsed: Duration,
}

impl ProviderReport {
    /// A built-in provider's report, timed from `started`. `namespace` is one of the built-in
    /// providers' constant names, which the registry's tests check are valid.
    pub(crate) fn builtin(
        namespace: &'static str,
        features: Option<Vec<FeatureSupport>>,
        source: String,
        note: Option<String>,
        started: Instant,
    ) -> Self {
        Self {
            namespace: Namespace::new(namespace).expect("built-in namespaces are valid"),
            features,
            source,
            note,
            elapsed: started.elapsed(),
        }
    }

    /// The profile entry for a present namespace.
    pub fn support(&self) -> Option<NamespaceSupport> {
        self.features.as_ref().map(|features| NamespaceSupport {
            namespace: self.namespace.clone(),
            source: Some(self.source.clone()),
            features: features.clone(),
        })
    }
}
