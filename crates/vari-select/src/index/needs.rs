//! What the variants of a release need that the target does not offer, per namespace: the
//! data behind "cupy 13.6.0 has builds only for NVIDIA GPUs (cu11, cu12, cu13); this machine
//! has no NVIDIA driver" and "needs namespace `ascend`, which no built-in provider detects".

use vari_core::ordering::Rejection;
use vari_core::Namespace;

use super::report::{LabelVerdict, NamespaceNeed};
use crate::choice::VariantRejection;
use crate::target::Target;

/// The namespace a rejection is about; `None` for the user's own options (`forbid`,
/// `variant`, no variants), which no hardware would change.
fn namespace_of(rejection: &Rejection) -> Option<&Namespace> {
    match rejection {
        Rejection::UnsupportedValue { feature, .. } => Some(&feature.namespace),
        Rejection::UnsupportedNamespace { namespace, .. }
        | Rejection::NoStaticProperties { namespace }
        | Rejection::NamespaceDisabled { namespace, .. }
        | Rejection::OptionalNotEnabled { namespace }
        | Rejection::NamespaceNotPrioritized { namespace } => Some(namespace),
        Rejection::Forbidden { .. }
        | Rejection::NotRequested { .. }
        | Rejection::VariantsDisabled => None,
    }
}

/// The namespaces the rejected variants need, in the built-in providers' order (unknown
/// namespaces last, by name), each with the labels that need it.
pub(crate) fn needs(variants: &[LabelVerdict], target: &Target) -> Vec<NamespaceNeed> {
    let mut needs: Vec<NamespaceNeed> = Vec::new();
    for verdict in variants {
        let Some(VariantRejection::Ranking(rejection)) = &verdict.rejection else {
            continue;
        };
        let Some(namespace) = namespace_of(rejection) else {
            continue;
        };
        match needs.iter_mut().find(|n| &n.namespace == namespace) {
            Some(need) => need.labels.push(verdict.label.clone()),
            None => needs.push(NamespaceNeed {
                namespace: namespace.clone(),
                labels: vec![verdict.label.clone()],
                rejection: rejection.clone(),
                builtin_provider: vari_detect::registry::provider(namespace.as_str()).is_some(),
                absent_reason: target.hardware.absent_reason(namespace).map(str::to_owned),
            }),
        }
    }
    needs.sort_by(|a, b| {
        let place = |n: &NamespaceNeed| vari_detect::registry::position(n.namespace.as_str());
        place(a)
            .cmp(&place(b))
            .then_with(|| a.namespace.cmp(&b.namespace))
    });
    needs
}
