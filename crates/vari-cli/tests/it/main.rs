//! End-to-end tests of the `vari` binary: one test binary, one module per command family.

mod common;

mod cache;
mod config;
mod counting_index;
mod detect;
mod index;
mod install;
mod labels;
mod list;
mod metadata;
mod metadata_release;
mod ordering;
mod output_safety;
mod profiles;
mod rank;
mod rank_release;
mod readme_examples;
mod repack_select;
mod scan;
mod select;
mod wheel;
