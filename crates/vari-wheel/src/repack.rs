//! `repack`: existing builds of one release (`torch-2.10.0+cu128`, `cupy-cuda12x`,
//! `jax-cuda12-plugin`) → variant wheels of one distribution, plus each release's combined
//! `{name}-{version}-variants.json`.
//!
//! A [`RepackConfig`] (TOML, see `examples/repack/`) says, per build, how to recognise it (local
//! version, file-name pattern or distribution name), its label and properties, which
//! properties to read from its binaries, the distribution name to publish it under, and how to
//! change its `Requires-Dist`. Every wheel is planned — matched, described, checked, and the
//! release's metadata combined — before anything is written, so a bad config or a conflict
//! between builds leaves no output. Members whose names change (the `.dist-info` and `.data`
//! directories) and files whose contents change (METADATA, RECORD) are rewritten; all other
//! members are copied raw.
//!
//! With `for = "uv"` (or [`RepackConfig::for_uv`]) the release is written so uv 0.13 installs
//! it as intended: the `[variant]` metadata through [`vari_core::uv::for_uv`] (schema 0.2 under
//! PEP 850's URL, uv's vendored providers), and each build's variant markers in
//! `Requires-Dist` decided for its own properties (uv cannot parse them).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use pep440_rs::Version;
use vari_core::filename::{normalize_name, variants_json_filename, WheelFilename};
use vari_core::metadata::{
    combine, missing_fallback_warning, read_pyproject, write_json, SchemaGeneration,
    VariantMetadata,
};
use vari_core::{FeatureRef, Namespace, Property, VariantLabel};

use crate::archive::Archive;
use crate::check::parse_filename;
pub use crate::core_metadata::RequiresDistEdit;
use crate::core_metadata::{rewrite_metadata, MetadataEdit};
use crate::error::{WheelError, WheelErrorKind};
use crate::glob;
use crate::make::{
    child_of, create_out_dir, invalid_record, open_archive, read_record_bytes, stem, wheel_output,
    write_wheel,
};
use crate::reader::SeekBufReader;
use crate::record::record_row;
use crate::record_edit::RecordEdit;
use crate::rewrite::ArchiveEdit;
use crate::valid_values::ValidValues;
use crate::variant::{describe, LabelChoice, VariantSpec};

/// The most `METADATA` may inflate to.
pub(crate) const MAX_METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// Reads what a wheel's binaries need, as properties (`nvidia :: sm_arch :: 90_real`).
/// Implemented over `vari-scan` by the caller, so that this crate does no binary analysis.
pub trait InferProperties {
    /// The properties the binaries in `wheel` need; the error says why they cannot be read.
    fn infer(&self, wheel: &Path) -> Result<Vec<Property>, String>;
}

/// Splits a fat GPU build into per-architecture-family variant wheels (`split` in a build's
/// config). Implemented over `vari-slim` by the caller, so that this crate rewrites no binaries.
pub trait SplitBuild {
    /// Writes into `out_dir` one wheel per architecture family of the variant wheel `wheel`,
    /// labelled `{prefix}_{major}x` (`cu12_8x`), and returns them; the error says why not. On
    /// error nothing of it is left in `out_dir`.
    fn split(
        &self,
        wheel: &Path,
        out_dir: &Path,
        prefix: &VariantLabel,
    ) -> Result<Vec<crate::WrittenWheel>, String>;
}

/// The only feature a build can be split by.
pub const SPLIT_FEATURE: &str = "nvidia :: sm_arch";

/// The label suffix of a split build's fat wheel. Selection breaks ties by label ascending
/// (PEP 825), and a digit sorts before `a`: on a machine a family's wheel serves, `cu12_9x` ranks
/// before `cu12_all`, so the smallest build that serves the machine is chosen, and the fat build
/// serves the rest (GPUs only its PTX can run on).
pub const SPLIT_FAT_SUFFIX: &str = "_all";

/// How a build is recognised. Every given criterion must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildMatch {
    /// The local version label, without `+` (`cu128` matches `torch-2.10.0+cu128-…`).
    pub local_version: Option<String>,
    /// A pattern on the file name (`*` any run, `?` one character).
    pub filename: Option<String>,
    /// The distribution name (compared normalised: `cupy-cuda12x` = `cupy_cuda12x`).
    pub name: Option<String>,
}

impl BuildMatch {
    fn matches(&self, file_name: &str, wheel: &WheelFilename) -> bool {
        let local = local_part(&wheel.version);
        self.local_version
            .as_deref()
            .is_none_or(|want| local.as_deref() == Some(want.trim_start_matches('+')))
            && self
                .filename
                .as_deref()
                .is_none_or(|pattern| glob::matches(pattern, file_name))
            && self
                .name
                .as_deref()
                .is_none_or(|name| normalize_name(name) == wheel.name)
    }
}

impl fmt::Display for BuildMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(l) = &self.local_version {
            parts.push(format!("local-version = {l:?}"));
        }
        if let Some(p) = &self.filename {
            parts.push(format!("filename = {p:?}"));
        }
        if let Some(n) = &self.name {
            parts.push(format!("name = {n:?}"));
        }
        f.write_str(&parts.join(", "))
    }
}

/// One build of the release: how to recognise it and what it becomes.
#[derive(Debug, Clone, Default)]
pub struct BuildRule {
    /// How to recognise it.
    pub matches: BuildMatch,
    /// Its label.
    pub label: LabelChoice,
    /// Its properties, as given.
    pub properties: Vec<Property>,
    /// Namespaces or features (`nvidia`, `nvidia :: sm_arch`) whose properties are read from
    /// the wheel's binaries and added.
    pub infer: Vec<InferPattern>,
    /// The distribution name to publish it under, overriding the config's.
    pub name: Option<String>,
    /// Changes to its `Requires-Dist`, after the config's.
    pub requires_dist: RequiresDistEdit,
    /// Split it by `nvidia :: sm_arch` ([`SPLIT_FEATURE`]): besides the fat build, labelled
    /// `{label}_all`, one wheel per architecture family, labelled `{label}_{major}x`.
    pub split: bool,
}

/// A namespace or a feature whose inferred properties are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InferPattern {
    /// Every inferred property of the namespace.
    Namespace(Namespace),
    /// Every inferred value of the feature.
    Feature(FeatureRef),
}

impl InferPattern {
    fn keeps(&self, p: &Property) -> bool {
        match self {
            Self::Namespace(ns) => p.namespace == *ns,
            Self::Feature(f) => p.namespace == f.namespace && p.feature == f.feature,
        }
    }
}

/// A repack configuration (see `examples/repack/` for documented examples).
#[derive(Debug, Clone, Default)]
pub struct RepackConfig {
    /// The file it was read from, for messages.
    pub path: PathBuf,
    /// The distribution name every build is published under (`cupy`); by default each keeps
    /// its own.
    pub name: Option<String>,
    /// Whether the local version (`+cu128`) is dropped (default: yes; an index may not host
    /// local versions, and the label now tells the builds apart).
    pub strip_local_version: bool,
    /// The schema generation of the written metadata; by default the `[variant]` table's, else
    /// 0.1 (PEP 825).
    pub schema: Option<SchemaGeneration>,
    /// Accept properties whose values cannot be checked.
    pub skip_validation: bool,
    /// The release's priorities, providers and static properties (the `[variant]` table, as
    /// in pyproject.toml).
    pub metadata: Option<VariantMetadata>,
    /// Changes to every build's `Requires-Dist`.
    pub requires_dist: RequiresDistEdit,
    /// The builds.
    pub builds: Vec<BuildRule>,
    /// Write metadata uv 0.13 installs as intended (config `for = "uv"`, `--for uv`).
    pub for_uv: bool,
}

/// A problem in a repack configuration: the file, the key path (`build[2].properties[0]`, none
/// for the whole file) and what is wrong; the workspace's one located error.
pub type ConfigError = vari_core::Located;

/// Why a repack failed.
#[derive(Debug, thiserror::Error)]
pub enum RepackError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A wheel could not be read, described or written.
    #[error(transparent)]
    Wheel(#[from] WheelError),
    /// The builds of one release cannot be combined into one `*-variants.json`.
    #[error("{file}: {message}")]
    Combine {
        /// The `*-variants.json` that would have been written.
        file: String,
        /// The conflict, naming both wheels.
        message: String,
    },
    /// The combined metadata could not be written.
    #[error("{}: {message}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// What [`repack`] wrote.
#[derive(Debug, Clone)]
pub struct RepackOutput {
    /// The variant wheels, in input order.
    pub wheels: Vec<crate::WrittenWheel>,
    /// Each release's combined `{name}-{version}-variants.json`.
    pub variants_json: Vec<PathBuf>,
    /// What the chosen schema could not express, one sentence each (deduplicated).
    pub warnings: Vec<String>,
}

/// The TOML form of the configuration (kebab-case keys, unknown keys refused).
mod file {
    use serde::Deserialize;

    use super::RequiresDistEdit;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub(super) struct Config {
        pub(super) name: Option<String>,
        pub(super) strip_local_version: Option<bool>,
        pub(super) schema: Option<String>,
        #[serde(default)]
        pub(super) skip_validation: bool,
        pub(super) variant: Option<toml::Value>,
        #[serde(default)]
        pub(super) requires_dist: RequiresDistEdit,
        #[serde(default)]
        pub(super) build: Vec<Build>,
        /// `"uv"`: write metadata uv 0.13 installs as intended.
        #[serde(rename = "for")]
        pub(super) for_installer: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub(super) struct Build {
        #[serde(rename = "match")]
        pub(super) matches: Match,
        pub(super) label: Option<String>,
        #[serde(default)]
        pub(super) properties: Vec<String>,
        #[serde(default)]
        pub(super) infer: Vec<String>,
        pub(super) split: Option<String>,
        pub(super) name: Option<String>,
        #[serde(default)]
        pub(super) requires_dist: RequiresDistEdit,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub(super) struct Match {
        pub(super) local_version: Option<String>,
        pub(super) filename: Option<String>,
        pub(super) name: Option<String>,
    }
}

impl RepackConfig {
    /// Reads (within the configuration-file ceiling: the path is the user's, its content is
    /// not trusted to be small or regular) and checks a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = vari_fs::input::read_input_to_string(path, vari_fs::input::InputKind::Config)
            .map_err(|e| ConfigError::new(path, e.problem()))?;
        Self::parse(path, &text)
    }

    /// Parses and checks the text of a configuration; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let err = |key: String, message: String| ConfigError::at(path, key, message);
        vari_core::check_toml_depth(text)
            .map_err(|e| err(String::new(), format!("not valid TOML: {e}")))?;
        let raw: file::Config = toml::from_str(text).map_err(|e| {
            let message = e.message().to_owned();
            let key = e
                .span()
                .map(|span| {
                    let line = text[..span.start].matches('\n').count() + 1;
                    format!("line {line}")
                })
                .unwrap_or_default();
            err(key, message)
        })?;
        let metadata = match raw.variant {
            None => None,
            Some(_) => Some(read_pyproject(text).map_err(|errors| {
                let first = errors.into_iter().next();
                match first {
                    Some(e) => err(e.path, e.message),
                    None => err("variant".to_owned(), "invalid".to_owned()),
                }
            })?),
        };
        let schema = raw
            .schema
            .as_deref()
            .map(SchemaGeneration::from_str)
            .transpose()
            .map_err(|e| err("schema".to_owned(), e.to_string()))?;
        if let Some(name) = &raw.name {
            check_project_name(name).map_err(|m| err("name".to_owned(), m))?;
        }
        raw.requires_dist
            .check()
            .map_err(|(r, m)| err("requires-dist".to_owned(), format!("`{r}`: {m}")))?;
        if raw.build.is_empty() {
            return Err(err(String::new(), "no [[build]] entries".to_owned()));
        }
        let mut builds = Vec::with_capacity(raw.build.len());
        for (i, b) in raw.build.into_iter().enumerate() {
            let key = |k: &str| format!("build[{i}].{k}");
            let matches = BuildMatch {
                local_version: b.matches.local_version,
                filename: b.matches.filename,
                name: b.matches.name,
            };
            if matches == BuildMatch::default() {
                return Err(err(
                    key("match"),
                    "give at least one of local-version, filename, name".to_owned(),
                ));
            }
            let label = match b.label.as_deref() {
                None => LabelChoice::Default,
                Some("null") => LabelChoice::Null,
                Some(l) => LabelChoice::Given(
                    VariantLabel::new(l).map_err(|e| err(key("label"), e.to_string()))?,
                ),
            };
            let properties = b
                .properties
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    p.parse::<Property>()
                        .map_err(|e| err(key(&format!("properties[{j}]")), e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let infer = b
                .infer
                .iter()
                .enumerate()
                .map(|(j, p)| parse_infer(p).map_err(|m| err(key(&format!("infer[{j}]")), m)))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(name) = &b.name {
                check_project_name(name).map_err(|m| err(key("name"), m))?;
            }
            let split = match b.split.as_deref() {
                None => false,
                Some(feature) => {
                    let same = feature.parse::<FeatureRef>().ok()
                        == SPLIT_FEATURE.parse::<FeatureRef>().ok();
                    if !same {
                        return Err(err(
                            key("split"),
                            format!("only `{SPLIT_FEATURE}` can be split, not `{feature}`"),
                        ));
                    }
                    split_label(&label).map_err(|m| err(key("label"), m))?;
                    true
                }
            };
            b.requires_dist
                .check()
                .map_err(|(r, m)| err(key("requires-dist"), format!("`{r}`: {m}")))?;
            builds.push(BuildRule {
                matches,
                label,
                properties,
                infer,
                name: b.name,
                requires_dist: b.requires_dist,
                split,
            });
        }
        let for_uv = match raw.for_installer.as_deref() {
            None => false,
            Some("uv") => true,
            Some(other) => {
                return Err(err(
                    "for".to_owned(),
                    format!("unknown installer {other:?} (expected \"uv\")"),
                ))
            }
        };
        if for_uv && schema.is_some_and(|s| s != SchemaGeneration::V0_2) {
            return Err(err(
                "schema".to_owned(),
                "for = \"uv\" writes schema 0.2.x (PEP 850); drop schema or give 0.2".to_owned(),
            ));
        }
        Ok(Self {
            path: path.to_owned(),
            name: raw.name,
            strip_local_version: raw.strip_local_version.unwrap_or(true),
            schema,
            skip_validation: raw.skip_validation,
            metadata,
            requires_dist: raw.requires_dist,
            builds,
            for_uv,
        })
    }
}

/// A distribution name from a config or a wheel must be a valid project name (PEP 508) before
/// it names the `.dist-info` directory, the output wheel and the `*-variants.json`.
fn check_project_name(name: &str) -> Result<(), String> {
    if vari_core::project::is_valid(name) {
        return Ok(());
    }
    Err(format!(
        "`{}` is not a valid project name (PEP 508: ASCII letters, digits, `-`, `_` and `.`, \
         starting and ending with a letter or digit)",
        crate::core_metadata::escaped(name)
    ))
}

fn parse_infer(text: &str) -> Result<InferPattern, String> {
    if text.contains("::") {
        text.parse::<FeatureRef>()
            .map(InferPattern::Feature)
            .map_err(|e| e.to_string())
    } else {
        Namespace::new(text.trim())
            .map(InferPattern::Namespace)
            .map_err(|e| e.to_string())
    }
}

/// The label prefix of a split build (its given label) and its fat wheel's label
/// (`{label}_all`): both must fit the 16-character label cap with the longest family suffix.
fn split_label(label: &LabelChoice) -> Result<(VariantLabel, VariantLabel), String> {
    let LabelChoice::Given(prefix) = label else {
        return Err(
            "a split build needs a label: its wheels are labelled `{label}_all` and \
             `{label}_{major}x`"
                .to_owned(),
        );
    };
    let longest = format!("{prefix}_100x");
    VariantLabel::new(&longest)
        .map_err(|e| format!("`{prefix}` is too long to label a split build (`{longest}`: {e})"))?;
    let fat =
        VariantLabel::new(format!("{prefix}{SPLIT_FAT_SUFFIX}")).map_err(|e| e.to_string())?;
    Ok((prefix.clone(), fat))
}

/// The local version label of `version` (`cu128`), if any.
fn local_part(version: &Version) -> Option<String> {
    version
        .to_string()
        .split_once('+')
        .map(|(_, local)| local.to_owned())
}

/// Everything decided about one wheel before writing.
struct Plan {
    wheel: PathBuf,
    output: PathBuf,
    release: (String, Version),
    label: VariantLabel,
    metadata: VariantMetadata,
    variant_json: String,
    edit: ArchiveEdit,
    warnings: Vec<String>,
    /// For a split build, the label prefix of its family wheels.
    split: Option<VariantLabel>,
}

/// Repacks `wheels` as `config` says into `out_dir` (see the module docs).
///
/// `valid` holds the known properties' valid values; `infer` reads properties from binaries,
/// and is needed only when a build asks for inference.
pub fn repack(
    config: &RepackConfig,
    wheels: &[PathBuf],
    out_dir: &Path,
    valid: &ValidValues,
    infer: Option<&dyn InferProperties>,
) -> Result<RepackOutput, RepackError> {
    repack_with(config, wheels, out_dir, valid, infer, None)
}

/// [`repack`], with a splitter for the builds whose config says `split` (needed only then).
///
/// A split build's fat wheel is written first, then split; the release's `*-variants.json`
/// lists every wheel. When splitting fails, every wheel this call wrote is removed.
pub fn repack_with(
    config: &RepackConfig,
    wheels: &[PathBuf],
    out_dir: &Path,
    valid: &ValidValues,
    infer: Option<&dyn InferProperties>,
    splitter: Option<&dyn SplitBuild>,
) -> Result<RepackOutput, RepackError> {
    let (uv_config, uv_warnings) = for_uv_config(config);
    let config = uv_config.as_ref().unwrap_or(config);
    let plans = wheels
        .iter()
        .map(|w| plan(config, w, out_dir, valid, infer))
        .collect::<Result<Vec<_>, _>>()?;
    check_distinct_outputs(&plans)?;

    // Combine per release before writing anything: a conflict leaves no output.
    let mut releases: BTreeMap<(String, String), Vec<&Plan>> = BTreeMap::new();
    for p in &plans {
        releases
            .entry((p.release.0.clone(), p.release.1.to_string()))
            .or_default()
            .push(p);
    }
    let mut indexes = Vec::new();
    let mut release_warnings = Vec::new();
    for ((name, _), members) in &releases {
        let version = &members[0].release.1;
        let file = variants_json_filename(name, version);
        let names: Vec<String> = members
            .iter()
            .map(|p| {
                p.output
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let (path, text, combined) = release_index(
            out_dir,
            &file,
            names
                .iter()
                .map(String::as_str)
                .zip(members.iter().map(|p| &p.metadata)),
        )?;
        indexes.push((path, text));
        // Every wheel repack writes is labelled, so only a null variant can be the fallback.
        release_warnings.extend(missing_fallback_warning(
            &format!("{name} {version}"),
            false,
            &combined,
        ));
    }
    if let Some(first) = plans.first() {
        create_out_dir(&first.wheel, out_dir)?;
    }

    let mut output = RepackOutput {
        wheels: Vec::with_capacity(plans.len()),
        variants_json: Vec::new(),
        warnings: Vec::new(),
    };
    let mut splits: Vec<(usize, (String, Version), Vec<crate::WrittenWheel>)> = Vec::new();
    for p in plans {
        let mut archive = open_archive(&p.wheel)?;
        let (size, sha256) = match write_wheel(&p.wheel, &p.output, &mut archive, &p.edit, false) {
            Ok(written) => written,
            Err(e) => {
                remove_written(&output.wheels, &splits);
                return Err(e.into());
            }
        };
        if let Some(prefix) = &p.split {
            let fail = |message: String| {
                RepackError::Wheel(WheelError::new(
                    &p.wheel,
                    WheelErrorKind::Write {
                        output: p.output.clone(),
                        message: format!("cannot split by {SPLIT_FEATURE}: {message}"),
                    },
                ))
            };
            let result = match splitter {
                Some(splitter) => splitter.split(&p.output, out_dir, prefix),
                None => Err("no splitter is available".to_owned()),
            };
            match result {
                Ok(written) => splits.push((output.wheels.len(), p.release.clone(), written)),
                Err(message) => {
                    let _ = std::fs::remove_file(&p.output);
                    remove_written(&output.wheels, &splits);
                    return Err(fail(message));
                }
            }
        }
        for w in &p.warnings {
            if !output.warnings.contains(w) {
                output.warnings.push(w.clone());
            }
        }
        drop(p.variant_json);
        output.wheels.push(crate::WrittenWheel {
            path: p.output,
            label: Some(p.label),
            metadata: Some(p.metadata),
            warnings: p.warnings,
            size,
            sha256,
        });
    }
    // The split wheels join their release's `*-variants.json`, each after its fat build.
    if !splits.is_empty() {
        match combine_with_splits(out_dir, &output.wheels, &splits) {
            Ok(combined) => {
                for (path, text) in combined {
                    match indexes.iter_mut().find(|(p, _)| *p == path) {
                        Some(index) => index.1 = text,
                        None => indexes.push((path, text)),
                    }
                }
            }
            Err(e) => {
                remove_written(&output.wheels, &splits);
                return Err(e);
            }
        }
        let mut wheels = Vec::new();
        let mut at = 0;
        for (after, _, written) in splits {
            wheels.extend(output.wheels.drain(..after - at));
            at = after;
            wheels.extend(written);
        }
        wheels.append(&mut output.wheels);
        output.wheels = wheels;
    }
    for (path, text) in indexes {
        vari_fs::write_atomic(&path, text.as_bytes()).map_err(|e| RepackError::Write {
            path: path.clone(),
            message: e.kind.to_string(),
        })?;
        output.variants_json.push(path);
    }
    output.warnings.extend(release_warnings);
    output.warnings.extend(uv_warnings);
    Ok(output)
}

/// Removes what a failed repack wrote (best effort: the error that matters is the caller's).
fn remove_written(
    wheels: &[crate::WrittenWheel],
    splits: &[(usize, (String, Version), Vec<crate::WrittenWheel>)],
) {
    for w in wheels.iter().chain(splits.iter().flat_map(|s| &s.2)) {
        let _ = std::fs::remove_file(&w.path);
    }
}

/// Each release's `*-variants.json` again, with the split wheels: (path, text).
fn combine_with_splits(
    out_dir: &Path,
    wheels: &[crate::WrittenWheel],
    splits: &[(usize, (String, Version), Vec<crate::WrittenWheel>)],
) -> Result<Vec<(PathBuf, String)>, RepackError> {
    let mut releases: BTreeMap<(String, String), Vec<&crate::WrittenWheel>> = BTreeMap::new();
    for w in wheels.iter().chain(splits.iter().flat_map(|s| &s.2)) {
        let Some(name) = w.path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let Ok(parsed) = WheelFilename::parse(&name) else {
            continue;
        };
        releases
            .entry((parsed.name.clone(), parsed.version.to_string()))
            .or_default()
            .push(w);
    }
    let mut out = Vec::new();
    for ((name, version), members) in releases {
        // Only the releases a split build belongs to change.
        if !splits
            .iter()
            .any(|s| normalize_name(&s.1 .0) == name && s.1 .1.to_string() == version)
        {
            continue;
        }
        let version = Version::from_str(&version).map_err(|e| RepackError::Write {
            path: out_dir.to_owned(),
            message: e.to_string(),
        })?;
        let file = variants_json_filename(&name, &version);
        let names: Vec<String> = members
            .iter()
            .map(|w| {
                w.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let metadata: Vec<&VariantMetadata> =
            members.iter().filter_map(|w| w.metadata.as_ref()).collect();
        let (path, text, _) = release_index(
            out_dir,
            &file,
            names.iter().map(String::as_str).zip(metadata),
        )?;
        out.push((path, text));
    }
    Ok(out)
}

/// Two inputs that would be written to the same file are an error naming both.
fn check_distinct_outputs(plans: &[Plan]) -> Result<(), RepackError> {
    let mut seen: BTreeMap<&Path, &Path> = BTreeMap::new();
    for p in plans {
        if let Some(first) = seen.insert(&p.output, &p.wheel) {
            return Err(RepackError::Wheel(WheelError::new(
                &p.wheel,
                WheelErrorKind::Write {
                    output: p.output.clone(),
                    message: format!("{} is written there too", first.display()),
                },
            )));
        }
    }
    Ok(())
}

/// Matches, reads, describes and checks one wheel.
fn plan(
    config: &RepackConfig,
    wheel: &Path,
    out_dir: &Path,
    valid: &ValidValues,
    infer: Option<&dyn InferProperties>,
) -> Result<Plan, RepackError> {
    let fail = |kind| RepackError::Wheel(WheelError::new(wheel, kind));
    let filename = parse_filename(wheel)?;
    if let Some(label) = &filename.label {
        return Err(fail(WheelErrorKind::AlreadyVariant {
            label: label.to_string(),
        }));
    }
    let file_name = wheel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rule = match_rule(config, wheel, &file_name, &filename)?;

    let mut archive = open_archive(wheel)?;
    let old_dist_info = archive.dist_info(&filename)?;
    let metadata_member = format!("{old_dist_info}/METADATA");
    let metadata_text = read_text(&mut archive, wheel, &metadata_member)?;
    let (record_member, record) = read_record_bytes(&mut archive, wheel, &old_dist_info)?;

    // Name and version. The name is checked whatever gave it: a config built in code skips
    // `RepackConfig::parse`, and METADATA's `Name` comes from the wheel.
    let (display_name, from_config) = match (&rule.name, &config.name) {
        (Some(name), _) | (None, Some(name)) => (name.clone(), true),
        (None, None) => (
            field(&metadata_text, "Name").unwrap_or(filename.name.clone()),
            false,
        ),
    };
    if let Err(message) = check_project_name(&display_name) {
        return Err(match from_config {
            true => RepackError::Config(ConfigError::at(&config.path, "name", message)),
            false => fail(WheelErrorKind::InvalidCoreMetadata {
                member: metadata_member.clone(),
                message: format!("`Name`: {message}"),
            }),
        });
    }
    let version = if config.strip_local_version {
        let public = filename.version.to_string();
        let public = public.split_once('+').map_or(public.as_str(), |(p, _)| p);
        Version::from_str(public).map_err(|e| {
            fail(WheelErrorKind::InvalidCoreMetadata {
                member: metadata_member.clone(),
                message: e.to_string(),
            })
        })?
    } else {
        filename.version.clone()
    };
    let escaped = normalize_name(&display_name);
    let old_stem = old_dist_info
        .strip_suffix(".dist-info")
        .unwrap_or(&old_dist_info)
        .to_owned();
    let new_stem = format!("{escaped}-{version}");
    let new_dist_info = format!("{new_stem}.dist-info");

    // The variant.
    let mut properties = rule.properties.clone();
    if !rule.infer.is_empty() {
        let Some(infer) = infer else {
            return Err(fail(WheelErrorKind::Infer {
                message: "no binary scanner is available to read the wheel's properties".to_owned(),
            }));
        };
        let found = infer
            .infer(wheel)
            .map_err(|message| fail(WheelErrorKind::Infer { message }))?;
        let kept: Vec<Property> = found
            .into_iter()
            .filter(|p| rule.infer.iter().any(|pat| pat.keeps(p)))
            .collect();
        if kept.is_empty() {
            return Err(fail(WheelErrorKind::Infer {
                message: "the binaries need none of the properties the config asks to infer"
                    .to_owned(),
            }));
        }
        for p in kept {
            if !properties.contains(&p) {
                properties.push(p);
            }
        }
    }
    let (label, split) = if rule.split {
        let (prefix, fat) = split_label(&rule.label).map_err(|message| {
            RepackError::Config(ConfigError::at(&config.path, "build.label", message))
        })?;
        (LabelChoice::Given(fat), Some(prefix))
    } else {
        (rule.label.clone(), None)
    };
    let spec = VariantSpec {
        properties,
        label,
        metadata: config.metadata.clone(),
        schema: config.schema,
        skip_validation: config.skip_validation,
    };
    let described = describe(&spec, valid).map_err(fail)?;

    // METADATA.
    let mut requires = config.requires_dist.clone();
    requires.extend(&rule.requires_dist);
    let version_text = version.to_string();
    let new_metadata = rewrite_metadata(
        &metadata_text,
        &MetadataEdit {
            name: Some(&display_name),
            version: Some(&version_text),
            requires_dist: &requires,
        },
    )
    .and_then(|text| match config.for_uv {
        true => resolve_markers_for(
            text,
            &described.label,
            described.metadata.variants.get(&described.label),
        ),
        false => Ok(text),
    })
    .map_err(|message| {
        fail(WheelErrorKind::InvalidCoreMetadata {
            member: metadata_member.clone(),
            message,
        })
    })?;

    // Renames: the .dist-info and .data directories.
    let mut rename = std::collections::HashMap::new();
    if old_stem != new_stem {
        let prefixes = [
            (
                format!("{old_stem}.dist-info/"),
                format!("{new_stem}.dist-info/"),
            ),
            (format!("{old_stem}.data/"), format!("{new_stem}.data/")),
        ];
        for name in archive.names() {
            for (old, new) in &prefixes {
                if let Some(rest) = name.strip_prefix(old.as_str()) {
                    rename.insert(name.to_owned(), format!("{new}{rest}"));
                }
            }
        }
    }

    // RECORD.
    let variant_member = format!("{new_dist_info}/variant.json");
    let variant_bytes = described.text.clone().into_bytes();
    let new_record = RecordEdit {
        replace: [(
            metadata_member.clone(),
            record_row(&metadata_member, new_metadata.as_bytes()),
        )]
        .into_iter()
        .collect(),
        rename: rename.clone(),
        insert: vec![record_row(&variant_member, &variant_bytes)],
        insert_before: Some(record_member.clone()),
        ..RecordEdit::default()
    }
    .apply(&record)
    .map_err(|e| fail(invalid_record(&record_member, e)))?;

    let edit = ArchiveEdit {
        rename,
        replace: [
            (metadata_member, new_metadata.into_bytes()),
            (record_member.clone(), new_record),
        ]
        .into_iter()
        .collect(),
        remove: Vec::new(),
        insert: vec![(variant_member, variant_bytes)],
        insert_before: Some(record_member),
        ..ArchiveEdit::default()
    };

    // The filename: new name and version, the original tags, the label.
    let old = stem(wheel);
    let tags: Vec<&str> = old.split('-').skip(2).collect();
    let output = wheel_output(
        wheel,
        out_dir,
        &format!("{new_stem}-{}-{}.whl", tags.join("-"), described.label),
    )?;
    Ok(Plan {
        wheel: wheel.to_owned(),
        output,
        release: (escaped, version),
        label: described.label,
        metadata: described.metadata,
        variant_json: described.text,
        edit,
        warnings: described.warnings,
        split,
    })
}

/// With [`RepackConfig::for_uv`]: the config whose metadata uv 0.13 installs as intended, and
/// what could not be expressed for uv; `None` (no change) otherwise.
fn for_uv_config(config: &RepackConfig) -> (Option<RepackConfig>, Vec<String>) {
    if !config.for_uv {
        return (None, Vec::new());
    }
    let Some(metadata) = &config.metadata else {
        return (
            None,
            vec![
                "for uv: the config has no [variant] table, so the metadata has no providers \
                  and uv installs only the null variant"
                    .to_owned(),
            ],
        );
    };
    let (converted, warnings) = vari_core::uv::for_uv(metadata);
    let mut out = config.clone();
    out.metadata = Some(converted);
    out.schema = Some(SchemaGeneration::V0_2);
    (Some(out), warnings)
}

/// `metadata` with its variant markers decided for the build described by `variant` (for
/// installers that cannot parse them); unchanged when it has none.
fn resolve_markers_for(
    metadata: String,
    label: &VariantLabel,
    variant: Option<&vari_core::metadata::VariantProperties>,
) -> Result<String, String> {
    let ctx = vari_core::markers::VariantMarkerContext {
        label: Some(label.clone()),
        properties: variant
            .map(|v| vari_core::metadata::properties_of(v).collect())
            .unwrap_or_default(),
    };
    match vari_core::metadata::resolve_variant_markers(&metadata, &ctx) {
        Ok(Some(resolved)) => Ok(resolved),
        Ok(None) => Ok(metadata),
        Err(e) => Err(format!("a variant marker cannot be decided: {e}")),
    }
}

/// The one rule matching the wheel.
fn match_rule<'a>(
    config: &'a RepackConfig,
    wheel: &Path,
    file_name: &str,
    filename: &WheelFilename,
) -> Result<&'a BuildRule, RepackError> {
    let matching: Vec<(usize, &BuildRule)> = config
        .builds
        .iter()
        .enumerate()
        .filter(|(_, b)| b.matches.matches(file_name, filename))
        .collect();
    let config_error =
        |message: String| RepackError::Config(ConfigError::at(&config.path, "build", message));
    match matching.as_slice() {
        [(_, rule)] => Ok(rule),
        [] => Err(config_error(format!(
            "no [[build]] matches {}",
            wheel.display()
        ))),
        many => Err(config_error(format!(
            "{} matches several builds: {}",
            wheel.display(),
            many.iter()
                .map(|(i, b)| format!("build[{i}] ({})", b.matches))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// A member as UTF-8 text.
fn read_text(
    archive: &mut Archive<SeekBufReader<std::fs::File>>,
    wheel: &Path,
    member: &str,
) -> Result<String, WheelError> {
    let bytes = archive.read(member, MAX_METADATA_BYTES)?;
    String::from_utf8(bytes).map_err(|_| {
        WheelError::new(
            wheel,
            WheelErrorKind::NotUtf8 {
                member: member.to_owned(),
            },
        )
    })
}

/// The value of a core-metadata header field.
fn field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(key).then(|| v.trim().to_owned())
        })
}

/// A release's `*-variants.json`: its wheels' metadata combined, written in the combined
/// generation, and where it goes in `out_dir` (the name and version were checked, so `file` is
/// one file name; it is checked all the same). Returns the path, the text and the combined
/// metadata.
fn release_index<'a>(
    out_dir: &Path,
    file: &str,
    wheels: impl Iterator<Item = (&'a str, &'a VariantMetadata)>,
) -> Result<(PathBuf, String, VariantMetadata), RepackError> {
    let combine_error = |message: String| RepackError::Combine {
        file: file.to_owned(),
        message,
    };
    let combined = combine(wheels).map_err(|e| combine_error(e.to_string()))?;
    let written =
        write_json(&combined, combined.generation).map_err(|e| combine_error(e.to_string()))?;
    let path = child_of(out_dir, file).ok_or_else(|| RepackError::Write {
        path: out_dir.join(file),
        message: "not a file name in the output directory".to_owned(),
    })?;
    Ok((path, written.text, combined))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_that_is_no_regular_file_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let e = RepackConfig::load(dir.path()).unwrap_err();
        assert_eq!(e.path, dir.path());
        assert!(e.message.contains("not a regular file"), "{e}");
        let missing = dir.path().join("missing.toml");
        let e = RepackConfig::load(&missing).unwrap_err();
        assert!(!e.message.contains("missing.toml"), "the path once: {e}");
    }

    #[test]
    fn config_errors_name_the_key() {
        let p = Path::new("c.toml");
        let e = RepackConfig::parse(p, "[[build]]\nmatch = {}\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("build[0].match"));
        let e = RepackConfig::parse(
            p,
            "[[build]]\nmatch = { name = \"x\" }\nproperties = [\"nope\"]\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("build[0].properties[0]"));
        let e =
            RepackConfig::parse(p, "bogus = 1\n[[build]]\nmatch = { name = \"x\" }\n").unwrap_err();
        assert!(e.message.contains("bogus"), "{e}");
        let e = RepackConfig::parse(p, "name = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("no [[build]]"), "{e}");
        let e = RepackConfig::parse(
            p,
            "[[build]]\nmatch = { name = \"x\" }\nrequires-dist = { add = [\"y; bogus_var == '1'\"] }\n",
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("build[0].requires-dist"));
    }

    #[test]
    fn matching_by_local_version_filename_and_name() {
        let w = WheelFilename::parse("torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl").unwrap();
        let n = "torch-2.10.0+cu128-cp312-cp312-linux_x86_64.whl";
        let m = |l: Option<&str>, f: Option<&str>, name: Option<&str>| BuildMatch {
            local_version: l.map(str::to_owned),
            filename: f.map(str::to_owned),
            name: name.map(str::to_owned),
        };
        assert!(m(Some("cu128"), None, None).matches(n, &w));
        assert!(m(Some("+cu128"), None, Some("Torch")).matches(n, &w));
        assert!(!m(Some("cu126"), None, None).matches(n, &w));
        assert!(m(None, Some("torch-*+cu12?-*"), None).matches(n, &w));
        assert!(!m(Some("cu128"), None, Some("jax")).matches(n, &w));
    }
}
