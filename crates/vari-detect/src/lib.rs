//! # vari-detect
//!
//! Native providers for the wheel-variant namespaces (`spec/providers.md`): each reports the same
//! features, values and order as the reference Python plugin for the same hardware facts, without
//! running Python or third-party code.

pub mod context;
pub mod report;
pub mod sysroot;

pub use context::DetectContext;
pub use report::ProviderReport;
pub use sysroot::Sysroot;
