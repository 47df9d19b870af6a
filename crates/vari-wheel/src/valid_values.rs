//! The valid values that properties written into a wheel are checked against.
//!
//! This crate knows no provider: the caller fills [`ValidValues`] with every valid value of
//! the namespaces it knows (each built-in provider's "all configs", `spec/providers.md`). This
//! is the seam where the detect crate's provider registry plugs in: one
//! [`ValidValues::insert`] per provider. Namespaces whose metadata carries static properties
//! are checked against those instead; any other namespace is unknown, and its properties are
//! refused unless validation is skipped.

use std::collections::BTreeMap;

use vari_core::metadata::{StaticProperties, VariantProperties};
use vari_core::{FeatureSupport, Namespace, NamespaceSupport};

/// Every valid feature and value of the namespaces a caller knows (see the module docs).
///
/// ```
/// use vari_core::{FeatureSupport, Namespace};
/// let mut valid = vari_wheel::ValidValues::default();
/// valid.insert(
///     Namespace::new("x86_64").unwrap(),
///     vec![FeatureSupport {
///         name: "level".parse().unwrap(),
///         values: ["v4", "v3", "v2", "v1"].iter().map(|v| v.parse().unwrap()).collect(),
///         multi_value: false,
///     }],
/// );
/// assert!(valid.features(&Namespace::new("x86_64").unwrap()).is_some());
/// ```
#[derive(Debug, Clone, Default)]
pub struct ValidValues {
    namespaces: BTreeMap<Namespace, Vec<FeatureSupport>>,
}

impl ValidValues {
    /// Sets the valid features and values of `namespace`.
    pub fn insert(&mut self, namespace: Namespace, features: Vec<FeatureSupport>) {
        self.namespaces.insert(namespace, features);
    }

    /// The valid features of `namespace`, or `None` when it is not known.
    pub fn features(&self, namespace: &Namespace) -> Option<&[FeatureSupport]> {
        self.namespaces.get(namespace).map(Vec::as_slice)
    }

    /// Every problem with `properties`, one sentence each, naming the property.
    ///
    /// `statics` (the metadata's static properties) take precedence over the known
    /// namespaces. With `skip_unknown`, values are not checked at all (the grammar was checked
    /// when the properties were parsed); a single-value feature with several values is
    /// refused either way, as PEP 817 forbids such a variant.
    pub(crate) fn problems(
        &self,
        properties: &VariantProperties,
        statics: &BTreeMap<Namespace, StaticProperties>,
        skip_unknown: bool,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        for (ns, features) in properties.iter() {
            let known: Option<Vec<Known<'_>>> = match (statics.get(ns), self.features(ns)) {
                (Some(statics), _) => Some(
                    statics
                        .iter()
                        .map(|(name, values)| Known {
                            name: name.as_str(),
                            values: values.iter().map(|v| v.as_str()).collect(),
                            multi_value: true,
                        })
                        .collect(),
                ),
                (None, Some(features)) => Some(
                    features
                        .iter()
                        .map(|f| Known {
                            name: f.name.as_str(),
                            values: f.values.iter().map(|v| v.as_str()).collect(),
                            multi_value: f.multi_value,
                        })
                        .collect(),
                ),
                (None, None) => None,
            };
            let Some(known) = known else {
                if !skip_unknown && !ns.is_abi_dependency() {
                    problems.push(format!(
                        "`{ns}`: no built-in provider knows this namespace and the metadata \
                         gives no static properties for it, so its values cannot be checked \
                         (skip validation to accept it)"
                    ));
                }
                continue;
            };
            for (feature, values) in features.iter() {
                let Some(spec) = known.iter().find(|k| k.name == feature.as_str()) else {
                    if !skip_unknown {
                        let names: Vec<&str> = known.iter().map(|k| k.name).collect();
                        problems.push(format!(
                            "`{ns} :: {feature}`: `{ns}` has no feature `{feature}` (it has: {})",
                            names.join(", ")
                        ));
                    }
                    continue;
                };
                if !spec.multi_value && values.len() > 1 {
                    let list: Vec<&str> = values.iter().map(|v| v.as_str()).collect();
                    problems.push(format!(
                        "`{ns} :: {feature}`: a single-value feature, given {} values ({})",
                        values.len(),
                        list.join(", ")
                    ));
                }
                if skip_unknown {
                    continue;
                }
                for value in values.iter() {
                    if !spec.values.contains(&value.as_str()) {
                        problems.push(format!(
                            "`{ns} :: {feature} :: {value}`: not a valid value (valid: {})",
                            abbreviate(&spec.values)
                        ));
                    }
                }
            }
        }
        problems
    }
}

impl FromIterator<NamespaceSupport> for ValidValues {
    fn from_iter<I: IntoIterator<Item = NamespaceSupport>>(iter: I) -> Self {
        Self {
            namespaces: iter
                .into_iter()
                .map(|ns| (ns.namespace, ns.features))
                .collect(),
        }
    }
}

/// One feature's valid values, from whichever source knows them.
struct Known<'a> {
    name: &'a str,
    values: Vec<&'a str>,
    multi_value: bool,
}

/// The first few values and how many more, so a message stays one readable line.
fn abbreviate(values: &[&str]) -> String {
    const SHOWN: usize = 8;
    if values.len() <= SHOWN {
        values.join(", ")
    } else {
        format!(
            "{}, … ({} values)",
            values[..SHOWN].join(", "),
            values.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use vari_core::Property;

    use super::*;

    fn valid() -> ValidValues {
        let mut v = ValidValues::default();
        v.insert(
            "nvidia".parse().unwrap(),
            vec![
                FeatureSupport {
                    name: "sm_arch".parse().unwrap(),
                    values: ["90_real", "80_real"]
                        .iter()
                        .map(|s| s.parse().unwrap())
                        .collect(),
                    multi_value: true,
                },
                FeatureSupport {
                    name: "cuda_version_lower_bound".parse().unwrap(),
                    values: ["12.8", "12.0"]
                        .iter()
                        .map(|s| s.parse().unwrap())
                        .collect(),
                    multi_value: false,
                },
            ],
        );
        v
    }

    fn props(list: &[&str]) -> VariantProperties {
        let mut out = VariantProperties::new();
        for p in list {
            let p: Property = p.parse().unwrap();
            out.get_or_insert_with(p.namespace, Default::default)
                .get_or_insert_with(p.feature, Default::default)
                .insert(p.value);
        }
        out
    }

    #[test]
    fn known_values_pass_and_others_are_named() {
        let statics = BTreeMap::new();
        assert!(valid()
            .problems(
                &props(&[
                    "nvidia :: sm_arch :: 90_real",
                    "nvidia :: sm_arch :: 80_real"
                ]),
                &statics,
                false
            )
            .is_empty());
        let problems = valid().problems(
            &props(&[
                "nvidia :: sm_arch :: 91_real",
                "nvidia :: nope :: 1",
                "acme :: f :: v",
                "nvidia :: cuda_version_lower_bound :: 12.0",
                "nvidia :: cuda_version_lower_bound :: 12.8",
            ]),
            &statics,
            false,
        );
        let text = problems.join("\n");
        assert!(text.contains("`acme`: no built-in provider"), "{text}");
        assert!(
            text.contains("`nvidia :: nope`: `nvidia` has no feature"),
            "{text}"
        );
        assert!(
            text.contains(
                "`nvidia :: sm_arch :: 91_real`: not a valid value (valid: 90_real, 80_real)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "`nvidia :: cuda_version_lower_bound`: a single-value feature, given 2 values"
            ),
            "{text}"
        );
        assert_eq!(problems.len(), 4, "{text}");
    }

    #[test]
    fn skipping_accepts_unknown_values_but_not_several_values_of_a_single_value_feature() {
        let statics = BTreeMap::new();
        let problems = valid().problems(
            &props(&[
                "acme :: f :: v",
                "nvidia :: sm_arch :: 130_real",
                "nvidia :: cuda_version_lower_bound :: 12.0",
                "nvidia :: cuda_version_lower_bound :: 13.0",
            ]),
            &statics,
            true,
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("single-value"));
    }

    #[test]
    fn static_properties_of_the_metadata_come_first() {
        let statics: BTreeMap<Namespace, StaticProperties> = [(
            "priority".parse().unwrap(),
            vec![(
                "order".parse().unwrap(),
                vec!["1".parse().unwrap(), "2".parse().unwrap()],
            )],
        )]
        .into_iter()
        .collect();
        let v = ValidValues::default();
        assert!(v
            .problems(&props(&["priority :: order :: 2"]), &statics, false)
            .is_empty());
        assert_eq!(
            v.problems(&props(&["priority :: order :: 3"]), &statics, false),
            ["`priority :: order :: 3`: not a valid value (valid: 1, 2)"]
        );
    }
}
