//! End-to-end tests of the `vari` binary: one test binary, one module per command family.

mod common;

mod detect;
mod labels;
mod metadata;
mod ordering;
mod profiles;
mod rank;
mod wheel;
