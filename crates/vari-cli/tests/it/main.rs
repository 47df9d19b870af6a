//! End-to-end tests of the `vari` binary: one test binary, one module per command family.

mod common;

mod cache;
mod classes;
mod config;
mod counting_index;
mod detect;
mod environment_rule;
mod export;
mod families;
mod families_pypi;
mod fs_guard;
mod groups;
mod hostile_index;
mod hostile_wheels;
mod index;
mod install;
mod interrupted;
mod labels;
mod list;
mod lock;
mod lock_sync;
mod metadata;
mod metadata_release;
mod mirror;
mod mirror_destinations;
mod mirror_slim;
mod nesting;
mod ordering;
mod output_safety;
mod profile_platform;
mod profiles;
mod proxy_classes;
mod proxy_log;
mod proxy_server;
mod published_sites;
mod rank;
mod rank_release;
mod readme_examples;
mod reference;
mod repack_select;
mod scan;
mod scan_limits;
mod select;
mod uv_parity;
// Packaging is tested for the platform the release scripts are run on here.
#[cfg(all(target_os = "linux", target_arch = "x86_64", target_env = "gnu"))]
mod ship;
mod slim;
mod slim_nvcc;
mod sync;
mod wheel;
