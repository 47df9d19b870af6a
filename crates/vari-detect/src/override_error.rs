//! Why a variable detection reads cannot be used: a value a provider's check refuses, or a
//! variable set without the one it needs. Providers report these; [`crate::overrides`] checks
//! every variable up front with them.

/// A variable with a value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {variable}={value:?}: {expected}")]
pub struct InvalidVariable {
    /// The variable name.
    pub variable: &'static str,
    /// The value found.
    pub value: String,
    /// What was expected instead.
    pub expected: String,
}

impl InvalidVariable {
    pub(crate) fn new(variable: &'static str, value: &str, expected: impl Into<String>) -> Self {
        Self {
            variable,
            value: value.to_owned(),
            expected: expected.into(),
        }
    }
}

/// The first variable whose value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// A value that does not parse or is out of range.
    #[error(transparent)]
    Invalid(#[from] InvalidVariable),
    /// A variable that only works together with another one, which is not set.
    #[error("{set} is set but {missing} is not: {why}")]
    Missing {
        /// The variable that is set.
        set: &'static str,
        /// The variable it needs.
        missing: &'static str,
        /// Why the first alone cannot be used.
        why: String,
    },
}
