//! What a union proxy ([`ProxySettings::union`](crate::ProxySettings::union)) tells its
//! caller about each page: what every target is shown of each version, for verifying a
//! resolution made over the union target by target.

/// What one target of a union is shown of one version of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnionShown {
    /// No file: the version is for other hardware (or tags) only.
    Nothing,
    /// Files as the upstream lists them, no variant wheel among them: what every target sees.
    AsUpstream,
    /// A variant wheel (or, beside another target's variant wheel, a plain one): the
    /// `Requires-Dist` entries of its METADATA, variant markers evaluated for its variant.
    Requires(Vec<String>),
}

/// What each target of a union is shown of one version of a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnionVersion {
    /// The version.
    pub version: String,
    /// Per target, in the order [`ProxySettings::union`](crate::ProxySettings::union) gives them.
    pub shown: Vec<UnionShown>,
}
