//! Ahead-of-time namespaces with fixed lists (`spec/providers.md`).
//!
//! `blas_lapack` and `openmp` describe how a wheel was built, not the machine: every value is
//! supported, in the reference order. (Namespaces with static properties in a package's
//! metadata are handled by the ordering code, which reads them from the metadata.)

use std::time::Instant;

use vari_core::{FeatureName, FeatureSupport, FeatureValue};

use crate::context::DetectContext;
use crate::facts_section::{self, FactsError};
use crate::provider::{Derived, Detected, FactsInput, FactsSection, Provider, Scope};
use crate::report::ProviderReport;

/// `blas_lapack :: provider` values, most preferred first.
pub const BLAS_LAPACK_PROVIDERS: &[&str] = &["accelerate", "openblas", "mkl"];

/// `openmp :: provider` values, most preferred first.
pub const OPENMP_PROVIDERS: &[&str] = &["gnu", "intel", "llvm"];

fn provider_feature(values: &[&str]) -> Vec<FeatureSupport> {
    vec![FeatureSupport {
        // Constant names and values, checked by the unit tests.
        name: FeatureName::new("provider").expect("`provider` is a valid feature name"),
        values: values
            .iter()
            .map(|v| FeatureValue::new(*v).expect("fixed provider values are valid"))
            .collect(),
        multi_value: false,
    }]
}

fn fixed(namespace: &'static str, values: &[&str]) -> ProviderReport {
    let started = Instant::now();
    let features = provider_feature(values);
    ProviderReport::builtin(
        namespace,
        Some(features),
        "fixed list (ahead-of-time provider)".to_owned(),
        None,
        started,
    )
}

/// The `blas_lapack` namespace: `provider` = `accelerate openblas mkl`.
pub fn blas_lapack() -> ProviderReport {
    fixed("blas_lapack", BLAS_LAPACK_PROVIDERS)
}

/// Every valid `blas_lapack` value (the same list: all are always supported).
pub fn blas_lapack_all_configs() -> Vec<FeatureSupport> {
    provider_feature(BLAS_LAPACK_PROVIDERS)
}

/// The `openmp` namespace: `provider` = `gnu intel llvm`.
pub fn openmp() -> ProviderReport {
    fixed("openmp", OPENMP_PROVIDERS)
}

/// Every valid `openmp` value.
pub fn openmp_all_configs() -> Vec<FeatureSupport> {
    provider_feature(OPENMP_PROVIDERS)
}

/// An ahead-of-time provider in the [registry](crate::registry): a fixed list, every value
/// supported.
pub(crate) struct FixedList {
    namespace: &'static str,
    values: &'static [&'static str],
}

/// `blas_lapack` in the registry.
pub(crate) const BLAS_LAPACK: FixedList = FixedList {
    namespace: "blas_lapack",
    values: BLAS_LAPACK_PROVIDERS,
};

/// `openmp` in the registry.
pub(crate) const OPENMP: FixedList = FixedList {
    namespace: "openmp",
    values: OPENMP_PROVIDERS,
};

impl Provider for FixedList {
    fn namespace(&self) -> &'static str {
        self.namespace
    }

    fn detection(&self) -> &'static str {
        "Not detected: it describes how a wheel was built, so every value is supported, in the reference order (a facts profile may narrow it)."
    }

    fn scope(&self) -> Scope {
        Scope::Build
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Choice
    }

    /// `true` (every value), `false` (unsupported) or a list of known values, in the order given.
    fn facts(
        &self,
        value: &toml::Value,
        _: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        match value {
            toml::Value::Boolean(true) => Ok(Some((self.all_features(), "fixed list".to_owned()))),
            toml::Value::Boolean(false) => Ok(None),
            _ => {
                let mut chosen: Vec<String> = Vec::new();
                for (p, s) in facts_section::string_list(value, self.namespace)? {
                    if !self.values.contains(&s.as_str()) {
                        return Err(facts_section::invalid(
                            p,
                            format!("unknown value {s:?} (known: {})", self.values.join(", ")),
                        ));
                    }
                    if !chosen.contains(&s) {
                        chosen.push(s);
                    }
                }
                let mut features = self.all_features();
                for f in &mut features {
                    f.values.retain(|v| chosen.iter().any(|c| c == v.as_str()));
                    f.values
                        .sort_by_key(|v| chosen.iter().position(|c| c == v.as_str()));
                }
                Ok(Some((features, "listed values".to_owned())))
            }
        }
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        provider_feature(self.values)
    }

    fn detect(&self, _ctx: &DetectContext) -> Detected {
        fixed(self.namespace, self.values).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(r: &ProviderReport) -> Vec<String> {
        r.features.as_ref().unwrap()[0]
            .values
            .iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn fixed_lists_in_reference_order() {
        let b = blas_lapack();
        assert_eq!(b.namespace.as_str(), "blas_lapack");
        assert_eq!(values(&b), ["accelerate", "openblas", "mkl"]);
        let o = openmp();
        assert_eq!(o.namespace.as_str(), "openmp");
        assert_eq!(values(&o), ["gnu", "intel", "llvm"]);
        assert_eq!(b.features.as_ref().unwrap()[0].name.as_str(), "provider");
        assert_eq!(blas_lapack_all_configs(), b.features.unwrap());
        assert_eq!(openmp_all_configs(), o.features.unwrap());
    }
}
