//! Why a CPU description could not be turned into supported features: what the archspec
//! catalogue's lookups and the CPU providers' facts report.

/// Why a CPU description could not be turned into supported features.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuError {
    /// The name is not a microarchitecture of that family in the archspec data.
    #[error("unknown {family} microarchitecture {name:?}; known names: {known}")]
    UnknownMicroarchitecture {
        /// `x86_64` or `aarch64`.
        family: &'static str,
        /// The name given.
        name: String,
        /// Every known name of the family, comma-separated.
        known: String,
    },
    /// An x86-64 level outside 1–4.
    #[error("unknown x86-64 level {0}: levels are 1, 2, 3 and 4")]
    UnknownLevel(u32),
}
