//! The one interface every built-in provider implements.
//!
//! A provider answers for one namespace. Besides detecting, it says what the rest of the crate
//! needs to know about it, so that no other module keeps its own list: the environment variables
//! it reads ([`EnvVar`]), the cheap evidence that invalidates a cached answer, the files a
//! snapshot copies for it ([`SnapshotFile`]), the shape of its section in a facts profile
//! ([`FactsSection`]) and how facts become supported features, and its features with their
//! valid values. [`crate::registry`] holds the providers in namespace order; detection, the
//! cache, snapshots, the override check, facts profiles and the README's variable table iterate
//! it.

use std::collections::BTreeMap;
use std::path::Path;

use vari_core::FeatureSupport;

use crate::context::DetectContext;
use crate::facts_section::FactsError;
use crate::override_error::OverrideError;
use crate::report::ProviderReport;

/// What a provider's answer describes, which decides whether it may be cached and snapshotted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The machine's hardware and drivers: cached, and copied into snapshots.
    Machine,
    /// How wheels are built (fixed lists): cached with the rest, nothing to snapshot.
    Build,
    /// The target Python environment, which changes with every install: never cached, never
    /// part of a snapshot.
    PythonEnvironment,
}

/// The part an environment variable plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarRole {
    /// A reference provider's override: replaces what detection would find. Set here, it wins
    /// over what a snapshot recorded on its node.
    Override,
    /// Changes where a provider looks or what the platform reports (`ROCM_PATH`, …): a snapshot
    /// records the node's value and applies it when read.
    Location,
    /// One of vari's own settings (which GPU counts, which library to load, how long to wait):
    /// part of the cache fingerprint, not of a snapshot.
    Setting,
    /// Where vari keeps things, or its own plumbing: changes no result.
    Plumbing,
}

impl VarRole {
    /// Whether a change of the variable makes a cached detection stale.
    pub fn in_fingerprint(self) -> bool {
        self != VarRole::Plumbing
    }

    /// Whether a snapshot records the node's value of the variable.
    pub fn in_snapshot(self) -> bool {
        matches!(self, VarRole::Override | VarRole::Location)
    }
}

/// Checks a variable's (non-empty) value: `Err` says what was expected instead.
pub type ValueCheck = fn(&str) -> Result<(), String>;

/// An environment variable a provider (or detection as a whole) reads.
#[derive(Debug, Clone, Copy)]
pub struct EnvVar {
    /// The variable's name.
    pub name: &'static str,
    /// What it does, in one line (the README's variable table shows it).
    pub description: &'static str,
    /// Its part in detection.
    pub role: VarRole,
    /// Checks a (non-empty) value.
    pub check: Option<ValueCheck>,
}

impl EnvVar {
    /// A variable whose every value is acceptable.
    pub const fn new(name: &'static str, role: VarRole, description: &'static str) -> Self {
        Self {
            name,
            description,
            role,
            check: None,
        }
    }

    /// The same variable with a value check.
    pub const fn checked(self, check: ValueCheck) -> Self {
        Self {
            check: Some(check),
            ..self
        }
    }
}

/// A host path a snapshot takes for a provider (`*` at the end of a component matches names
/// starting with what precedes it, as in `/dev/nvidia*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotFile {
    /// A file whose content is read: copied.
    Copy(String),
    /// A device node or driver directory whose existence is the evidence: recorded as an empty
    /// file (or directory) at the same place.
    Marker(String),
}

impl SnapshotFile {
    /// The path or pattern.
    pub fn pattern(&self) -> &str {
        match self {
            SnapshotFile::Copy(p) | SnapshotFile::Marker(p) => p,
        }
    }
}

/// Cheap facts whose change means a cached answer is stale (file contents, directory listings),
/// keyed by a name unique across providers.
pub type Evidence = BTreeMap<String, String>;

/// The shape of a provider's entry in a facts profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactsSection {
    /// A table `[namespace]` with these keys.
    Table(&'static [&'static str]),
    /// A table whose keys are package names (`[abi_dependency]`).
    Packages,
    /// A value `namespace = true | false | [values…]` choosing among fixed values.
    Choice,
}

/// Inputs a facts section may need besides its own value.
#[derive(Debug, Clone, Copy)]
pub struct FactsInput<'a> {
    /// The directory relative paths (`cpuinfo = "…"`) are resolved against.
    pub base_dir: &'a Path,
}

/// What a facts section derives: the supported features and a short source label.
pub type Derived = (Vec<FeatureSupport>, String);

/// A provider's detection result.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The report.
    pub report: ProviderReport,
    /// Whether the failure behind an absent or degraded answer may go away by itself (a driver
    /// library that hung or crashed): such answers are not cached.
    pub transient: bool,
}

impl From<ProviderReport> for Detected {
    fn from(report: ProviderReport) -> Self {
        Self {
            report,
            transient: false,
        }
    }
}

/// A built-in provider.
pub trait Provider: Send + Sync {
    /// The namespace it answers for.
    fn namespace(&self) -> &'static str;

    /// What hardware its namespace stands for, in a user's words (`NVIDIA GPUs`), for messages
    /// that say what a variant is built for; `None` when it stands for none (the ahead-of-time
    /// lists, `abi_dependency`). Front-ends ask the [registry](crate::registry::hardware_name)
    /// rather than spell these names themselves.
    fn hardware(&self) -> Option<&'static str> {
        None
    }

    /// How it finds its answer, in a sentence or two (the providers reference shows it).
    fn detection(&self) -> &'static str;

    /// What its answer describes.
    fn scope(&self) -> Scope {
        Scope::Machine
    }

    /// The environment variables it reads.
    fn variables(&self) -> &'static [EnvVar] {
        &[]
    }

    /// Checks combinations of its variables that no single value check can (each variable's own
    /// check has already passed).
    fn check_combination(&self, _ctx: &DetectContext) -> Result<(), OverrideError> {
        Ok(())
    }

    /// Adds the evidence that its cached answer is still valid.
    fn evidence(&self, _ctx: &DetectContext, _evidence: &mut Evidence) {}

    /// The host paths a snapshot copies for it.
    fn snapshot_files(&self, _ctx: &DetectContext) -> Vec<SnapshotFile> {
        Vec::new()
    }

    /// Whether its answer comes from driver libraries a file tree cannot reproduce, so a snapshot
    /// records the answer the node gave.
    fn records_answer(&self) -> bool {
        false
    }

    /// The shape of its facts-profile entry.
    fn facts_section(&self) -> FactsSection;

    /// Turns its facts-profile entry into supported features; `None` removes the namespace
    /// (`blas_lapack = false`).
    fn facts(
        &self,
        value: &toml::Value,
        input: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError>;

    /// Every feature with every valid value, most preferred first (the reference plugin's
    /// `get_all_configs`); empty when the features are open (`abi_dependency`'s are package
    /// names).
    fn all_features(&self) -> Vec<FeatureSupport>;

    /// Whether a feature this provider does not list may still be one of its features (with its
    /// values open), and if so whether it is multi-value: `abi_dependency`'s features are
    /// package names, each single-value.
    fn open_features(&self) -> Option<bool> {
        None
    }

    /// Detects the namespace on the context's machine (or snapshot).
    fn detect(&self, ctx: &DetectContext) -> Detected;
}
