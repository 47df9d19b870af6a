//! The distributions installed in an environment, with the variant each one is.
//!
//! An installed variant wheel keeps its `*.dist-info/variant.json` (PEP 825: "tools that are
//! not directly concerned with variants need only … preserve the contents of said directory";
//! pip and uv do). That file lists exactly one variant, keyed by the label the wheel's filename
//! carried, so the label and properties of an installed distribution are that one entry. The
//! filename itself is gone after installation (and a wheel served by `vari proxy` is renamed
//! without its label), so `variant.json` is the only record. `.egg-info` distributions and
//! `.dist-info` directories without `variant.json` are plain distributions.
//!
//! Which distributions are installed, and their names and versions, come from
//! `vari_python::environment::installed_distributions`, the same reader the `abi_dependency`
//! provider uses: one answer to "what is installed here".

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use vari_core::metadata::{read_json_lenient, SourceKind, VariantProperties};
use vari_core::{Diagnostic, Property, VariantLabel};
use vari_python::environment::installed_distributions;

/// The name of the variant metadata file in a `.dist-info` directory.
pub const VARIANT_JSON: &str = "variant.json";

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledDistribution {
    /// The name as its metadata writes it (`Name:`).
    pub name: String,
    /// The version as its metadata writes it (`Version:`).
    pub version: String,
    /// The variant it is; `None` for a plain distribution (or one whose `variant.json` could not
    /// be read: see [`Installed::problems`]).
    pub variant: Option<InstalledVariant>,
    /// Its `.dist-info` (or `.egg-info`) directory.
    pub metadata_dir: PathBuf,
}

impl InstalledDistribution {
    /// The name normalised as PEP 503 does (lowercase, runs of `-`, `_`, `.` → `-`): the name
    /// pip lists sort by and installers compare.
    pub fn normalized_name(&self) -> String {
        vari_core::project::normalize(&self.name)
    }
}

/// The variant of an installed distribution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledVariant {
    /// The label (`null` for the null variant).
    pub label: VariantLabel,
    /// Its properties, namespace → feature → values (empty for the null variant).
    pub properties: VariantProperties,
}

impl InstalledVariant {
    /// The properties, one by one, in (namespace, feature, value) order.
    pub fn property_list(&self) -> Vec<Property> {
        vari_core::metadata::properties_of(&self.properties).collect()
    }
}

/// An installed `variant.json` that could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct VariantJsonProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong in it, with its key path.
    pub problem: Diagnostic,
}

/// What [`list_installed`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Installed {
    /// The distributions, sorted by normalised name; a name installed in several of the
    /// directories appears once, as found in the first (the one Python imports).
    pub distributions: Vec<InstalledDistribution>,
    /// The `variant.json` files that could not be read; their distributions are listed without
    /// a variant.
    pub problems: Vec<VariantJsonProblem>,
}

/// Lists the distributions installed in `site_packages` (in `sys.path` order, as
/// `vari_python::TargetPython::site_packages` gives them) with their variants. Directories
/// that do not exist are skipped; nothing is run.
pub fn list_installed(site_packages: &[PathBuf]) -> Installed {
    let mut installed = Installed::default();
    let mut seen = BTreeSet::new();
    for dist in installed_distributions(site_packages) {
        if !seen.insert(vari_core::project::normalize(&dist.name)) {
            tracing::debug!(path = %dist.path.display(), "shadowed by an earlier distribution of the same name");
            continue;
        }
        let variant = match read_variant(&dist.path) {
            Ok(variant) => variant,
            Err(problem) => {
                installed.problems.push(problem);
                None
            }
        };
        installed.distributions.push(InstalledDistribution {
            name: dist.name,
            version: dist.version,
            variant,
            metadata_dir: dist.path,
        });
    }
    installed
        .distributions
        .sort_by_cached_key(InstalledDistribution::normalized_name);
    installed
}

/// The variant recorded in a metadata directory; `Ok(None)` when there is none.
fn read_variant(metadata_dir: &Path) -> Result<Option<InstalledVariant>, VariantJsonProblem> {
    let is_dist_info = metadata_dir
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("dist-info"));
    if !is_dist_info {
        return Ok(None);
    }
    let path = metadata_dir.join(VARIANT_JSON);
    let problem = |problem: Diagnostic| VariantJsonProblem {
        path: path.clone(),
        problem,
    };
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| problem(Diagnostic::document("not valid UTF-8")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(problem(Diagnostic::document(e.to_string()))),
    };
    // Leniently, as an installer reads: an entry the schema does not allow is dropped (and
    // reported below when none is left), unknown future minor versions are accepted.
    let (metadata, warnings) =
        read_json_lenient(&text, SourceKind::WheelFile).map_err(|errors| problem(first(errors)))?;
    let mut variants = metadata.variants.into_iter();
    match (variants.next(), variants.next()) {
        (Some((label, properties)), None) => Ok(Some(InstalledVariant { label, properties })),
        _ => Err(problem(first(warnings))),
    }
}

/// The first problem of a reader's list (never empty when the reader failed).
fn first(problems: Vec<Diagnostic>) -> Diagnostic {
    problems
        .into_iter()
        .next()
        .unwrap_or_else(|| Diagnostic::new("variants", "no usable variant entry"))
}

impl fmt::Display for InstalledDistribution {
    /// `torch 2.10.0 (cu128)`, `numpy 2.3.2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.version)?;
        if let Some(variant) = &self.variant {
            write!(f, " ({})", variant.label)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist_info(site: &Path, name: &str, version: &str, variant_json: Option<&str>) -> PathBuf {
        let dir = site.join(format!("{name}-{version}.dist-info"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody: Name: no\n"),
        )
        .unwrap();
        if let Some(text) = variant_json {
            std::fs::write(dir.join(VARIANT_JSON), text).unwrap();
        }
        dir
    }

    const CU128: &str = r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
        "default-priorities": {"namespace": ["nvidia"]},
        "variants": {"cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}}}"#;

    #[test]
    fn plain_and_variant_distributions_sorted_by_normalised_name() {
        let site = tempfile::tempdir().unwrap();
        dist_info(site.path(), "Zeta_Pkg", "1.0", None);
        dist_info(site.path(), "torch", "2.10.0", Some(CU128));
        dist_info(site.path(), "a.b", "3", None);
        let installed = list_installed(&[site.path().to_path_buf()]);
        let names: Vec<String> = installed
            .distributions
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(names, ["a.b 3", "torch 2.10.0 (cu128)", "Zeta_Pkg 1.0"]);
        let torch = &installed.distributions[1];
        assert_eq!(
            torch.variant.as_ref().unwrap().property_list()[0].to_string(),
            "nvidia :: cuda_version_lower_bound :: 12.8"
        );
        assert_eq!(installed.distributions[2].normalized_name(), "zeta-pkg");
        assert!(installed.problems.is_empty());
    }

    #[test]
    fn the_first_directory_wins_for_a_name_installed_twice() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        dist_info(first.path(), "torch", "2.10.0", Some(CU128));
        dist_info(second.path(), "Torch", "2.8.0", None);
        let installed = list_installed(&[first.path().into(), second.path().into()]);
        assert_eq!(installed.distributions.len(), 1);
        assert_eq!(installed.distributions[0].version, "2.10.0");
    }

    #[test]
    fn an_unreadable_variant_json_is_a_problem_and_the_dist_stays_listed() {
        let site = tempfile::tempdir().unwrap();
        let two = CU128.replace(r#""variants": {"#, r#""variants": {"null": {}, "#);
        let dir = dist_info(site.path(), "torch", "2.10.0", Some(&two));
        dist_info(site.path(), "broken", "1", Some("{"));
        let installed = list_installed(&[site.path().into()]);
        assert_eq!(installed.distributions.len(), 2);
        assert!(installed.distributions.iter().all(|d| d.variant.is_none()));
        let messages: Vec<String> = installed.problems.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 2);
        assert!(
            messages[0].contains("broken-1.dist-info/variant.json: "),
            "{messages:?}"
        );
        assert_eq!(
            messages[1],
            format!(
                "{}: variants: a wheel's variant.json must list exactly one variant, found 2",
                dir.join(VARIANT_JSON).display()
            )
        );
    }

    #[test]
    fn egg_info_is_plain_and_missing_directories_are_skipped() {
        let site = tempfile::tempdir().unwrap();
        std::fs::write(
            site.path().join("legacy-0.1-py3.11.egg-info"),
            "Metadata-Version: 1.0\nName: legacy\nVersion: 0.1\n",
        )
        .unwrap();
        let installed = list_installed(&[site.path().join("missing"), site.path().to_path_buf()]);
        assert_eq!(installed.distributions.len(), 1);
        assert_eq!(installed.distributions[0].to_string(), "legacy 0.1");
    }
}
