//! What one provider found: its supported features, where the facts came from, or why the
//! namespace is absent.

use std::time::Duration;

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
    /// The profile entry for a present namespace.
    pub fn support(&self) -> Option<NamespaceSupport> {
        self.features.as_ref().map(|features| NamespaceSupport {
            namespace: self.namespace.clone(),
            source: Some(self.source.clone()),
            features: features.clone(),
        })
    }
}
