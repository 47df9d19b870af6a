//! The reference pages generated from the code (issue 31): each module renders one Markdown
//! page of `docs/reference/` from the definitions it documents (the command-line grammar, the
//! settings, the variables, the limits, the providers), so the pages cannot drift from the code
//! without a test noticing (`crates/vari-cli/tests/docs/reference.rs`). `vari generate-reference`
//! writes them.

pub(crate) mod commands;
pub(crate) mod environment;
pub(crate) mod json;
pub(crate) mod limits;
pub(crate) mod profiles;
pub(crate) mod providers;
pub(crate) mod settings;
