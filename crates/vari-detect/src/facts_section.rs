//! Reading one section of a facts profile: the error every step reports and the typed
//! accessors each provider's [`Provider::facts`](crate::provider::Provider::facts) reads its
//! section with. The profile as a whole is built in [`crate::facts`], above the providers.

use toml::{Table, Value};
use vari_core::Diagnostic;

/// Why a facts profile was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsError {
    /// Not valid TOML.
    #[error("not valid TOML: {0}")]
    Syntax(String),
    /// A key is unknown, has the wrong type or an invalid value.
    #[error("{path}: {message}")]
    Invalid {
        /// Key path, e.g. `nvidia.compute_capability[1]`.
        path: String,
        /// What is wrong there.
        message: String,
    },
}

impl FactsError {
    /// The problem as a [`Diagnostic`] (key path and message).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            FactsError::Syntax(message) => {
                Diagnostic::document(format!("not valid TOML: {message}"))
            }
            FactsError::Invalid { path, message } => Diagnostic::new(path.clone(), message.clone()),
        }
    }
}

pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> FactsError {
    FactsError::Invalid {
        path: path.into(),
        message: message.into(),
    }
}

pub(crate) fn as_table<'a>(value: &'a Value, path: &str) -> Result<&'a Table, FactsError> {
    value.as_table().ok_or_else(|| {
        invalid(
            path,
            format!("expected a table, found {}", value.type_str()),
        )
    })
}

pub(crate) fn as_str<'a>(value: &'a Value, path: &str) -> Result<&'a str, FactsError> {
    value.as_str().ok_or_else(|| {
        invalid(
            path,
            format!("expected a string, found {}", value.type_str()),
        )
    })
}

/// A string or a list of strings, each with its key path.
pub(crate) fn string_list(value: &Value, path: &str) -> Result<Vec<(String, String)>, FactsError> {
    match value {
        Value::String(s) => Ok(vec![(path.to_owned(), s.clone())]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let p = format!("{path}[{i}]");
                as_str(v, &p).map(|s| (p.clone(), s.to_owned()))
            })
            .collect(),
        other => Err(invalid(
            path,
            format!(
                "expected a string or a list of strings, found {}",
                other.type_str()
            ),
        )),
    }
}
