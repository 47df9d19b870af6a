//! The in-memory lock: PEP 751's tables with PEP 825's `[packages.variants-json]` and vari's
//! own `[tool.vari]` / `[packages.tool.vari]`.
//!
//! Fields are public so the lock writer, `sync`, `export` and `mirror` build and read them
//! directly; [`crate::read_lock`] is the only way from text to a [`Lock`] and checks every
//! field, so a `Lock` read from a file holds only valid names, versions, hashes and paths.

use std::collections::BTreeMap;

use pep440_rs::Version;
use vari_core::filename::WheelFilename;
use vari_core::metadata::VariantMetadata;
use vari_core::Property;

/// The `lock-version` vari writes. Readers accept any `1.x` (PEP 751: a newer minor version
/// only adds what older readers may ignore).
pub const LOCK_VERSION: &str = "1.0";

/// A whole `pylock.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    /// `lock-version`.
    pub lock_version: String,
    /// `environments`: markers of the environments the lock was made for (PEP 508 text).
    pub environments: Vec<String>,
    /// `requires-python`.
    pub requires_python: Option<String>,
    /// `extras` the lock can install (PEP 751: named in `packages.marker` as `'x' in extras`).
    pub extras: Vec<String>,
    /// `dependency-groups` the lock can install.
    pub dependency_groups: Vec<String>,
    /// `default-groups`: the groups installed when none is asked for.
    pub default_groups: Vec<String>,
    /// `created-by`.
    pub created_by: String,
    /// `[[packages]]`, in the order written (vari writes them sorted by name, then version).
    pub packages: Vec<Package>,
    /// `[tool.vari]`, when vari wrote the lock.
    pub vari: Option<LockInfo>,
    /// Every other `[tool.*]` table, kept as read so rewriting a lock preserves it.
    pub other_tools: BTreeMap<String, toml::Value>,
}

/// One `[[packages]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// `name`, normalised (PEP 503: lowercase, runs of `-_.` as one `-`).
    pub name: String,
    /// `version` (absent for a directory or VCS source whose version is not fixed).
    pub version: Option<Version>,
    /// `marker`: when the package is installed (PEP 508, with PEP 751's `extras` and
    /// `dependency_groups`). Never a variant marker (PEP 825: those only gate the
    /// dependencies of a selected wheel).
    pub marker: Option<String>,
    /// `requires-python`.
    pub requires_python: Option<String>,
    /// `dependencies`: the entries of other packages this one depends on.
    pub dependencies: Vec<DependencyRef>,
    /// `index`: the simple-index URL the files came from.
    pub index: Option<String>,
    /// `sdist`.
    pub sdist: Option<Artifact>,
    /// `wheels`: every listed wheel, variant wheels included.
    pub wheels: Vec<Artifact>,
    /// `[packages.variants-json]`: the release's combined variant metadata, narrowed to the
    /// labels of the listed wheels.
    pub variants_json: Option<VariantMetadata>,
    /// `[packages.tool.vari]`.
    pub vari: Option<PackageInfo>,
    /// Keys vari does not model (`vcs`, `directory`, `archive`, `attestation-identities`,
    /// other tools' tables…), kept as read. A source other than `sdist`/`wheels` makes
    /// the entry one vari can carry but not install.
    pub other: BTreeMap<String, toml::Value>,
}

/// One item of `packages.dependencies`: enough to identify another entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DependencyRef {
    /// The other entry's `name` (normalised).
    pub name: String,
    /// Its `version`, when several entries share the name.
    pub version: Option<String>,
}

/// A file entry: `packages.sdist` or one of `packages.wheels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// `name`: the file name (PEP 751: optional when the URL or path ends with it).
    pub name: Option<String>,
    /// `url`.
    pub url: Option<String>,
    /// `path`: relative to the lock file's directory (vari refuses absolute paths and `..`).
    pub path: Option<String>,
    /// `size` in bytes.
    pub size: Option<u64>,
    /// `upload-time`, as written (an RFC 3339 date-time).
    pub upload_time: Option<String>,
    /// `hashes`: algorithm → lowercase hex digest. Never empty in a lock read by vari.
    pub hashes: BTreeMap<String, String>,
}

impl Artifact {
    /// The file name: `name`, else the last segment of `url` or `path` (percent-decoded).
    pub fn file_name(&self) -> Option<String> {
        if let Some(name) = &self.name {
            return Some(name.clone());
        }
        if let Some(url) = &self.url {
            let parsed = url::Url::parse(url).ok()?;
            let last = parsed.path_segments()?.next_back()?;
            let decoded = percent_decode(last)?;
            return (!decoded.is_empty()).then_some(decoded);
        }
        let path = self.path.as_deref()?;
        let last = path.rsplit('/').next()?;
        (!last.is_empty()).then(|| last.to_owned())
    }

    /// The SHA-256 digest, lowercase hex, when listed.
    pub fn sha256(&self) -> Option<&str> {
        self.hashes.get("sha256").map(String::as_str)
    }

    /// The parsed wheel file name, for a wheel entry.
    pub fn wheel_filename(&self) -> Option<WheelFilename> {
        WheelFilename::parse(&self.file_name()?).ok()
    }
}

/// `[tool.vari]`: what PEP 751 cannot say about how the lock was made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockInfo {
    /// `inputs-hash`: `sha256:<hex>` of the normalised inputs (requirements, files read,
    /// targets, index options), for `vari lock --check`.
    pub inputs_hash: Option<String>,
    /// `requirements`: the top-level requirements as given (PEP 508 text).
    pub requirements: Vec<String>,
    /// `targets`: the machine classes the lock serves, in the order given.
    pub targets: Vec<LockTarget>,
    /// `indexes`: the index URLs the lock was resolved against, in priority order.
    pub indexes: Vec<String>,
    /// `find-links`: the flat sources (`--find-links`) the lock was resolved against, in the
    /// order given: an http(s) page's URL, a directory under the lock's directory relative to
    /// it (`/`-separated), another directory as an absolute path.
    pub find_links: Vec<String>,
    /// `pre`: pre-releases were allowed (`--pre`); written only when true.
    pub pre: bool,
    /// `group-markers`: every entry's [`PackageInfo::group_marker`] is recorded (absent: no
    /// dependency group needs the entry on its own), so that an install can leave the
    /// project's own requirements out (`--only-group`). Written, when true, by vari for a lock
    /// with dependency groups; a lock without it cannot be installed that way.
    pub group_markers: bool,
    /// `[[tool.vari.families]]`: the build families (issue 35's catalog: per-CUDA indexes,
    /// `-cu12` names, `[cuda12]` extras) the lock chose through, with the builds it locked,
    /// so that `sync` chooses a build per machine without the catalog. Sorted by name when
    /// written; empty for a lock made without families (nothing is written).
    pub families: Vec<LockFamily>,
}

/// One `[[tool.vari.families]]` entry: a family and the builds the lock holds for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockFamily {
    /// `name`: the family (PEP 503 normal form).
    pub name: String,
    /// `group`: the catalog's group the family belongs to (PEP 503 normal form); the members
    /// of one group take one build name together (torch, torchvision and torchaudio from one
    /// CUDA line).
    pub group: Option<String>,
    /// `[[tool.vari.families.builds]]`: the builds locked, best first (the catalog's order),
    /// which is the order `sync` tries them in.
    pub builds: Vec<LockedBuild>,
}

impl LockFamily {
    /// The build named `name`, if the lock holds it.
    pub fn build(&self, name: &str) -> Option<&LockedBuild> {
        self.builds.iter().find(|b| b.name == name)
    }
}

/// One `[[tool.vari.families.builds]]` entry: a build the lock holds, with what a machine
/// must support to install it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockedBuild {
    /// `name`: the catalog's build name (`cu128`, `cpu`): a variant label (PEP 817).
    pub name: String,
    /// `distribution`: what it installs as (PEP 503 normal form): `torch`, `cupy-cuda12x`.
    pub distribution: String,
    /// `extra`: the extra that selects it (`cuda12` for `jax[cuda12]`), normalised.
    pub extra: Option<String>,
    /// `requires`: the properties the machine must support, resolved when the lock was made
    /// (a CUDA line read from the build's own requirements is written here too). For each
    /// feature, one of the listed values suffices, as in the catalog.
    pub requires: Vec<Property>,
    /// `null`: the CPU build, which fits every machine (requires nothing).
    pub null: bool,
    /// `classes`: the lock's targets whose resolution chose this build (informative: `sync`
    /// chooses by `requires`, not by class).
    pub classes: Vec<String>,
}

/// One item of `[packages.tool.vari] builds`: a family's build that brings the entry in.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BuildRef {
    /// `family`: a family of `[[tool.vari.families]]`.
    pub family: String,
    /// `build`: one of that family's locked builds.
    pub build: String,
}

/// One entry of `[[tool.vari.targets]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockTarget {
    /// `name`: a short name (from the profile's file name unless given).
    pub name: String,
    /// `profile`: the profile, facts file or snapshot it was read from, as given.
    pub profile: Option<String>,
    /// `profile-hash`: `sha256:<hex>` of that file's bytes, so `--check` notices a change.
    pub profile_hash: Option<String>,
    /// `python-version`.
    pub python_version: Option<String>,
    /// `python-platform`.
    pub python_platform: Option<String>,
}

/// `[packages.tool.vari]`: what a variant brings in, which PEP 751 has no field for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageInfo {
    /// `variant-dependencies`: the release's `Requires-Dist` entries that use variant markers
    /// (PEP 508 text, as in the wheel's METADATA). Evaluated against the wheel `sync` selects
    /// for this entry; each names another entry of the lock.
    pub variant_dependencies: Vec<String>,
    /// `through-variants`: the entry is needed only because a selected variant's
    /// `variant-dependencies` (directly or through other such entries' `dependencies`) ask
    /// for it, so `sync` installs it only then.
    pub through_variants: bool,
    /// `targets`: the names of the targets whose resolution included this entry.
    pub targets: Vec<String>,
    /// `group-marker`: when the dependency groups alone need this entry, the project's own
    /// requirements and extras left out (`--only-group`): a PEP 751 marker as
    /// `packages.marker` is, evaluated the same way (its `'dev' in dependency_groups` tests
    /// and environment markers). `None`: no group needs it on its own. PEP 751's `marker`
    /// cannot say this: an entry the project needs everywhere has none, whether a group needs
    /// it too or not. Meaningful only in a lock whose [`LockInfo::group_markers`] is true.
    pub group_marker: Option<String>,
    /// `builds`: the family builds that bring this entry in (`torch 2.9.0+cu128` and the
    /// CUDA 12 libraries only the cu128 build needs); `sync` installs it only where one of
    /// them is chosen. Empty: as any entry (wherever its marker holds). Two entries of one
    /// name may both be in a lock when their `builds` are disjoint (torch `+cu128` and
    /// `+cpu`).
    pub builds: Vec<BuildRef>,
}

impl PackageInfo {
    /// Whether the entry comes in with `build` of `family`.
    pub fn brought_by(&self, family: &str, build: &str) -> bool {
        self.builds
            .iter()
            .any(|b| b.family == family && b.build == build)
    }
}

/// Decodes `%XX` escapes; `None` when the result is not UTF-8 or an escape is malformed.
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: Option<&str>, url: Option<&str>, path: Option<&str>) -> Artifact {
        Artifact {
            name: name.map(str::to_owned),
            url: url.map(str::to_owned),
            path: path.map(str::to_owned),
            size: None,
            upload_time: None,
            hashes: BTreeMap::new(),
        }
    }

    #[test]
    fn file_name_comes_from_name_then_url_then_path() {
        assert_eq!(
            artifact(Some("a-1-py3-none-any.whl"), Some("https://x/b.whl"), None).file_name(),
            Some("a-1-py3-none-any.whl".into())
        );
        assert_eq!(
            artifact(
                None,
                Some("https://x/f/a%2B1-1-py3-none-any.whl?x=1#h"),
                None
            )
            .file_name(),
            Some("a+1-1-py3-none-any.whl".into())
        );
        assert_eq!(
            artifact(None, None, Some("wheels/a-1-py3-none-any.whl")).file_name(),
            Some("a-1-py3-none-any.whl".into())
        );
        assert_eq!(artifact(None, Some("https://x/"), None).file_name(), None);
        assert_eq!(
            artifact(None, Some("https://x/%zz"), None).file_name(),
            None
        );
    }
}
