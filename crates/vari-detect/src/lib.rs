//! # vari-detect
//!
//! Native providers for the wheel-variant namespaces (`spec/providers.md`): each reports the same
//! features, values and order as the reference Python plugin for the same hardware facts, without
//! running Python or third-party code. What it leaves to others: choosing among variants
//! (`vari-core`, `vari-select`), finding the target Python environment (`vari-python`; detection
//! takes it as [`DetectContext::python`]), and printing.
//!
//! Every provider implements [`Provider`] and is listed once in the [`registry`], which the rest
//! iterates: [`detect()`] runs the providers (and can reuse the on-disk [`cache`]), a
//! [`snapshot`] copies the files they read, [`check_overrides`] checks the variables they read,
//! [`facts`] profiles accept their sections, and [`env_table_markdown`] renders the table of
//! environment variables in the README. [`builtin_feature_kind`] says which features are
//! single-value and which values they may take.
//!
//! A directory given as the target machine is opened with [`Sysroot::open`], which reads its
//! snapshot manifest strictly ([`SysrootError`]) and notes when it is a plain file tree.
//!
//! Driver libraries are loaded in a child process ([`child`]): a binary using this crate calls
//! [`child::run_probe_child_if_requested`] first thing in `main`.
//!
//! ## Environment variables
//!
//! The list, with what each does, is [`env_table_markdown`]'s output (the README shows it).

pub mod cache;
mod cache_layout;
pub mod child;
pub mod context;
pub mod detect;
pub mod gpu;
pub mod manifest;
mod override_error;
pub mod overrides;
mod platform;
pub mod provider;
mod ranges;
pub mod registry;
pub mod report;
pub mod sysroot;
mod sysroot_open;
mod system_file;

pub mod abi;
pub mod aot;
pub mod cpu;
pub mod facts;
mod facts_section;
pub mod snapshot;

pub use cache_layout::DetectCacheLayout;
pub use context::DetectContext;
pub use detect::{detect, DetectOptions, Detection};
pub use overrides::{check_overrides, InvalidVariable, OverrideError};
pub use platform::detect_platform;
pub use provider::Provider;
pub use registry::{builtin_feature_kind, env_table_markdown, FeatureKind};
pub use report::ProviderReport;
pub use sysroot::{Sysroot, SysrootError};
