//! Why a variant cannot be selected, worded for the person reading `vari rank`.

use std::fmt;

use super::pattern::Pattern;
use crate::names::{FeatureRef, FeatureValue, Namespace, VariantLabel};

/// How many values a message lists before abbreviating.
const SHOWN_VALUES: usize = 6;

/// `a, b, c, … (+4 more)`, or `nothing` for an empty list, written straight into the
/// formatter: a large release has hundreds of rejections, each listing values twice.
struct List<'a>(&'a [FeatureValue]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("nothing");
        }
        for (i, value) in self.0.iter().take(SHOWN_VALUES).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(value.as_str())?;
        }
        if self.0.len() > SHOWN_VALUES {
            write!(f, ", … (+{} more)", self.0.len() - SHOWN_VALUES)?;
        }
        Ok(())
    }
}

/// Why a variant was not selectable. `Display` gives a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The wheel needs one of `declared` for a feature, and the target supports none of them.
    #[error("{}", UnsupportedValue { feature, declared, supported })]
    UnsupportedValue {
        /// The feature.
        feature: FeatureRef,
        /// The values the wheel declares (any one would do).
        declared: Vec<FeatureValue>,
        /// The values the target supports, most preferred first (empty: the feature is unknown
        /// to the target).
        supported: Vec<FeatureValue>,
    },
    /// The target has no support for the namespace: the profile does not list it.
    #[error(
        "namespace `{namespace}` is not supported by the target: the profile has no `{namespace}` \
         entry{}",
        provider.as_ref().map(|p| format!(" (its provider is {p}; was it detected?)")).unwrap_or_default()
    )]
    UnsupportedNamespace {
        /// The namespace.
        namespace: Namespace,
        /// The provider's first requirement or built-in name, when the metadata gives one.
        provider: Option<String>,
    },
    /// An ahead-of-time namespace without static properties: nothing of it can be supported.
    #[error(
        "namespace `{namespace}` is ahead-of-time but the metadata lists no static properties for it"
    )]
    NoStaticProperties {
        /// The namespace.
        namespace: Namespace,
    },
    /// The provider's `enable-if` marker is false on the target.
    #[error("namespace `{namespace}` is disabled on the target: its enable-if marker `{marker}` is false")]
    NamespaceDisabled {
        /// The namespace.
        namespace: Namespace,
        /// The marker as written in the metadata.
        marker: String,
    },
    /// The provider is optional and was not enabled.
    #[error("namespace `{namespace}` comes from an optional provider that is off")]
    OptionalNotEnabled {
        /// The namespace.
        namespace: Namespace,
    },
    /// The namespace is missing from `default-priorities.namespace`, so the metadata is invalid
    /// and the variant cannot be ordered.
    #[error(
        "invalid metadata: namespace `{namespace}` is not listed in default-priorities.namespace"
    )]
    NamespaceNotPrioritized {
        /// The namespace.
        namespace: Namespace,
    },
    /// The user forbade one of its properties.
    #[error("forbidden by the user's `{pattern}`")]
    Forbidden {
        /// The first matching `--forbid` pattern.
        pattern: Pattern,
    },
    /// The user asked for another label.
    #[error("not the requested variant (`{requested}`)")]
    NotRequested {
        /// The label asked for.
        requested: VariantLabel,
    },
    /// The user disabled variant wheels.
    #[error("variant wheels are disabled")]
    VariantsDisabled,
}

/// The message of [`Rejection::UnsupportedValue`].
struct UnsupportedValue<'a> {
    feature: &'a FeatureRef,
    declared: &'a [FeatureValue],
    supported: &'a [FeatureValue],
}

impl fmt::Display for UnsupportedValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let UnsupportedValue {
            feature,
            declared,
            supported,
        } = self;
        if supported.is_empty() {
            write!(
                f,
                "the target does not support `{feature}` at all (the wheel needs one of: {})",
                List(declared)
            )
        } else {
            write!(
                f,
                "no supported value for `{feature}`: the wheel has {}; the target supports {}",
                List(declared),
                List(supported)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(v: &[&str]) -> Vec<FeatureValue> {
        v.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn messages_name_what_to_do() {
        let r = Rejection::UnsupportedValue {
            feature: "nvidia :: sm_arch".parse().unwrap(),
            declared: values(&["90_real", "100_real"]),
            supported: values(&["86_real", "80_real"]),
        };
        assert_eq!(
            r.to_string(),
            "no supported value for `nvidia :: sm_arch`: the wheel has 90_real, 100_real; the \
             target supports 86_real, 80_real"
        );
        let r = Rejection::UnsupportedValue {
            feature: "x86_64 :: level".parse().unwrap(),
            declared: values(&["v4"]),
            supported: vec![],
        };
        assert!(r
            .to_string()
            .contains("does not support `x86_64 :: level` at all"));
        let r = Rejection::OptionalNotEnabled {
            namespace: "abi".parse().unwrap(),
        };
        assert!(r.to_string().contains("optional provider that is off"));
        // Library messages name no command-line flag: front-ends add their own hints.
        assert!(!r.to_string().contains("--"));
        let r = Rejection::UnsupportedNamespace {
            namespace: "nvidia".parse().unwrap(),
            provider: Some("nvidia-variant-provider".into()),
        };
        assert!(r.to_string().contains("nvidia-variant-provider"), "{r}");
        let r = Rejection::Forbidden {
            pattern: "nvidia::sm_arch".parse().unwrap(),
        };
        assert_eq!(r.to_string(), "forbidden by the user's `nvidia :: sm_arch`");
    }

    #[test]
    fn long_lists_are_abbreviated() {
        let many: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let shown = List(&values(&many)).to_string();
        assert_eq!(shown, "v0, v1, v2, v3, v4, v5, … (+4 more)");
        assert_eq!(List(&values(&["a"])).to_string(), "a");
        assert_eq!(List(&[]).to_string(), "nothing");
    }
}
