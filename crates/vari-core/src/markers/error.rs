//! The one error type of marker parsing, requirement splitting and environment building.

/// Why a marker, a `Requires-Dist` entry or a target environment value was rejected.
///
/// Every variant carries the offending text, so a message can be shown without the input at hand.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkerError {
    /// The boolean structure (parentheses, `and`/`or`, quoting, operators) is malformed.
    #[error("invalid marker `{marker}`: {message} (at column {column})")]
    Syntax {
        /// The whole marker text.
        marker: String,
        /// 1-based character column of the problem.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// A standard PEP 508 comparison was rejected by the PEP 508 parser.
    #[error("invalid marker `{atom}` in `{marker}`: {message}")]
    Standard {
        /// The whole marker text.
        marker: String,
        /// The comparison that failed, e.g. `python_version >= 3`.
        atom: String,
        /// The PEP 508 parser's explanation.
        message: String,
    },
    /// A comparison naming a variant marker (`variant_label`, `variant_properties`, …) is used in
    /// a way the standard does not allow.
    #[error("invalid variant marker `{atom}` in `{marker}`: {message}")]
    Variant {
        /// The whole marker text.
        marker: String,
        /// The offending comparison.
        atom: String,
        /// What is wrong and how to write it instead.
        message: String,
    },
    /// A `Requires-Dist` entry does not start with a valid project name.
    #[error("invalid requirement `{requirement}`: {message}")]
    Requirement {
        /// The whole requirement text.
        requirement: String,
        /// What is wrong.
        message: String,
    },
    /// Parentheses are nested deeper than [`MAX_MARKER_DEPTH`](super::MAX_MARKER_DEPTH):
    /// refused before parsing, whose recursion could otherwise exhaust the stack.
    #[error(
        "invalid marker `{marker}` ({length} characters): parentheses nested {depth} deep, more \
         than the limit of {limit}"
    )]
    TooDeep {
        /// The start of the marker (it can be very long).
        marker: String,
        /// The marker's length in characters.
        length: usize,
        /// How deep its parentheses nest.
        depth: usize,
        /// The limit, [`MAX_MARKER_DEPTH`](super::MAX_MARKER_DEPTH).
        limit: usize,
    },
    /// A value given for the target environment is invalid (e.g. a Python version that is not a
    /// PEP 440 version).
    #[error("invalid target environment value {value:?} for `{field}`: {message}")]
    Environment {
        /// The marker variable, e.g. `python_version`.
        field: String,
        /// The rejected value.
        value: String,
        /// What is wrong.
        message: String,
    },
}
