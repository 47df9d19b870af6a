//! Which kind of file a metadata document comes from, and where its top-level sections are:
//! what the section readers (`providers.rs`, `static_props.rs`, …) and the document reader
//! (`mod.rs`) all consult, so it sits below them.

use crate::metadata::tree::Node;

/// Which kind of file a document comes from; each has slightly different rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// An index-level `{name}-{version}-variants.json`: any number of variants.
    IndexFile,
    /// A wheel's `*.dist-info/variant.json`: exactly one variant.
    WheelFile,
    /// The `[variant]` table of `pyproject.toml`: no `variants`; build-time plugins allowed.
    Pyproject,
}

/// Document position of each top-level section, so problems found by cross-checks sort
/// where their key path points. Absent sections sort last.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sections {
    pub(super) default_priorities: usize,
    pub(super) providers: usize,
    pub(super) static_properties: usize,
    pub(super) variants: usize,
}

impl Sections {
    pub(super) fn of(root: &[(&str, &Node)]) -> Self {
        let at = |key: &str| {
            root.iter()
                .position(|(k, _)| *k == key)
                .unwrap_or(usize::MAX)
        };
        Self {
            default_priorities: at("default-priorities"),
            providers: at("providers"),
            static_properties: at("static-properties"),
            variants: at("variants"),
        }
    }
}
