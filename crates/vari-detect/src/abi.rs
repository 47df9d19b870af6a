//! The `abi_dependency` namespace (PEP 817 "ABI Dependency Variant Namespace").
//!
//! For each distribution installed in the **target** Python environment — name normalised
//! (lowercase, runs of `-`, `_`, `.` → `_`), processed in sorted order — the supported values
//! are `M`, `M.m`, `M.m.p` of its release, zero-padded (a wheel's `2.0` property means
//! `==2.0.*`, which release `2` matches). `VARIANT_ABI_DEPENDENCY=a==1.2,b==3` replaces (or adds)
//! the listed packages' versions.
//!
//! The environment is read from disk, without running Python: `*.dist-info/METADATA` and
//! `*.egg-info/PKG-INFO` (`Name`, `Version`) in the environment's site-packages.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Instant;

use pep440_rs::Version;
use vari_core::{FeatureName, FeatureSupport, FeatureValue};

use crate::context::DetectContext;
use crate::facts_section::{self, FactsError};
use crate::provider::{
    Derived, Detected, EnvVar, FactsInput, FactsSection, Provider, Scope, VarRole,
};
use crate::report::ProviderReport;
use vari_python::environment::{installed_distributions, site_packages};

/// The namespace name (it goes last in namespace order).
pub const NAMESPACE: &str = "abi_dependency";

/// The override variable: `name==version[,name==version…]`.
pub const OVERRIDE_VAR: &str = "VARIANT_ABI_DEPENDENCY";

/// Why a package pin (override entry or profile fact) is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// An entry is not `name==version`.
    #[error("entry {entry:?} is not `name==version` (expected e.g. `torch==2.8.0,numpy==2.1`)")]
    NotAPin {
        /// The offending entry.
        entry: String,
    },
    /// The package name is not a valid distribution name.
    #[error("invalid package name {name:?}: use letters, digits, `-`, `_` and `.`")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// The version is not a PEP 440 version.
    #[error("{name}: invalid version {version:?}: {message}")]
    InvalidVersion {
        /// The package.
        name: String,
        /// The version given.
        version: String,
        /// The parser's explanation.
        message: String,
    },
    /// PEP 817 does not support versions with a nonzero epoch.
    #[error("{name}: version {version} has an epoch, which abi_dependency does not support")]
    Epoch {
        /// The package.
        name: String,
        /// The version given.
        version: String,
    },
    /// The same package is listed twice.
    #[error("package {name} is listed twice")]
    Duplicate {
        /// The normalised package name.
        name: String,
    },
}

/// A package and the version the target has (or should be treated as having).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// Normalised name (the feature name), e.g. `torch`, `nvidia_cublas_cu12`.
    pub name: String,
    /// The version.
    pub version: Version,
}

impl Pin {
    /// Validates a package name and version.
    ///
    /// ```
    /// let pin = vari_detect::abi::Pin::new("Flash.Attn", "2.8.0+cu128").unwrap();
    /// assert_eq!(pin.name, "flash_attn");
    /// assert_eq!(pin.values(), ["2", "2.8", "2.8.0"]);
    /// ```
    pub fn new(name: &str, version: &str) -> Result<Self, PinError> {
        let normalised = normalize_name(name).ok_or_else(|| PinError::InvalidName {
            name: name.to_owned(),
        })?;
        let parsed = Version::from_str(version.trim()).map_err(|e| PinError::InvalidVersion {
            name: normalised.clone(),
            version: version.to_owned(),
            message: e.to_string(),
        })?;
        if parsed.epoch() != 0 {
            return Err(PinError::Epoch {
                name: normalised,
                version: version.to_owned(),
            });
        }
        Ok(Self {
            name: normalised,
            version: parsed,
        })
    }

    /// `M`, `M.m`, `M.m.p` of the release, zero-padded.
    pub fn values(&self) -> Vec<String> {
        let release = self.version.release();
        let part = |i: usize| release.get(i).copied().unwrap_or(0);
        vec![
            format!("{}", part(0)),
            format!("{}.{}", part(0), part(1)),
            format!("{}.{}.{}", part(0), part(1), part(2)),
        ]
    }

    /// The namespace entry for this pin.
    pub fn feature(&self) -> FeatureSupport {
        FeatureSupport {
            // `normalize_name` only produces `[a-z0-9_]+`, and the values are digits and dots.
            name: FeatureName::new(self.name.clone()).expect("normalised names are feature names"),
            values: self
                .values()
                .into_iter()
                .map(|v| FeatureValue::new(v).expect("release numbers are valid values"))
                .collect(),
            // A wheel may list several compatible versions of the same dependency.
            multi_value: true,
        }
    }
}

/// PEP 503 normalisation with `_` as separator (the form feature names take); `None` when
/// `name` (surrounding spaces aside) is not a valid distribution name.
pub fn normalize_name(name: &str) -> Option<String> {
    let name = name.trim();
    vari_core::project::is_valid(name).then(|| vari_core::filename::normalize_name(name))
}

/// Parses `VARIANT_ABI_DEPENDENCY` (`a==1.2,b==3`; empty entries and spaces are ignored).
///
/// ```
/// let pins = vari_detect::abi::parse_override("torch==2.8.0, numpy==2").unwrap();
/// assert_eq!(pins[1].values(), ["2", "2.0", "2.0.0"]);
/// assert!(vari_detect::abi::parse_override("torch>=2").is_err());
/// ```
pub fn parse_override(value: &str) -> Result<Vec<Pin>, PinError> {
    let mut pins: Vec<Pin> = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((name, version)) = entry.split_once("==") else {
            return Err(PinError::NotAPin {
                entry: entry.to_owned(),
            });
        };
        if version.starts_with('=') {
            return Err(PinError::NotAPin {
                entry: entry.to_owned(),
            });
        }
        let pin = Pin::new(name, version)?;
        if pins.iter().any(|p| p.name == pin.name) {
            return Err(PinError::Duplicate { name: pin.name });
        }
        pins.push(pin);
    }
    Ok(pins)
}

/// The supported list for these pins: sorted by name, `M`, `M.m`, `M.m.p` each.
pub fn supported_from_pins(pins: &[Pin]) -> Vec<FeatureSupport> {
    let sorted: BTreeMap<&str, &Pin> = pins.iter().map(|p| (p.name.as_str(), p)).collect();
    sorted.values().map(|p| p.feature()).collect()
}

/// Detects the `abi_dependency` namespace for `ctx.python` and the override variable.
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    let started = Instant::now();
    let mut notes: Vec<String> = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    // Name → pin; the first distribution found for a name wins (the one Python would import).
    let mut pins: BTreeMap<String, Pin> = BTreeMap::new();

    match &ctx.python {
        None => notes.push(
            "no target Python environment (give --python, or activate a virtual environment)"
                .to_owned(),
        ),
        Some(python) => match site_packages(python) {
            Err(e) => notes.push(e.to_string()),
            Ok(dirs) => {
                sources.push(format!(
                    "site-packages: {}",
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                let mut skipped = Vec::new();
                for dist in installed_distributions(&dirs) {
                    match Pin::new(&dist.name, &dist.version) {
                        Ok(pin) => {
                            pins.entry(pin.name.clone()).or_insert(pin);
                        }
                        Err(e) => skipped.push(e.to_string()),
                    }
                }
                if !skipped.is_empty() {
                    notes.push(format!("skipped: {}", skipped.join("; ")));
                }
            }
        },
    }
    if let Some(value) = ctx.var(OVERRIDE_VAR) {
        match parse_override(value) {
            Ok(overrides) => {
                sources.push(format!("{OVERRIDE_VAR}={value}"));
                for pin in overrides {
                    pins.insert(pin.name.clone(), pin);
                }
            }
            Err(e) => notes.push(format!("{e}; the override was ignored")),
        }
    }
    let features = supported_from_pins(&pins.into_values().collect::<Vec<_>>());
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    ProviderReport::builtin(
        NAMESPACE,
        (!features.is_empty()).then_some(features),
        sources.join("; "),
        note,
        started,
    )
}

/// The `abi_dependency` provider in the [registry](crate::registry).
pub(crate) struct AbiDependency;

const VARIABLES: &[EnvVar] = &[EnvVar::new(
    OVERRIDE_VAR,
    VarRole::Override,
    "package versions of the target environment, such as `torch==2.8.0,numpy==2.1` (reference \
     override; replaces or adds those packages)",
)
.checked(|v| parse_override(v).map(drop).map_err(|e| e.to_string()))];

impl Provider for AbiDependency {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The distributions installed in the target Python environment, read from disk without running Python (`*.dist-info/METADATA`, `*.egg-info/PKG-INFO`): each release's `M`, `M.m`, `M.m.p`. Never cached."
    }

    fn scope(&self) -> Scope {
        Scope::PythonEnvironment
    }

    fn variables(&self) -> &'static [EnvVar] {
        VARIABLES
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Packages
    }

    fn facts(
        &self,
        value: &toml::Value,
        _: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        let t = facts_section::as_table(value, NAMESPACE)?;
        let mut pins: Vec<Pin> = Vec::new();
        for (name, v) in t {
            let path = format!("{NAMESPACE}.{name}");
            let version = facts_section::as_str(v, &path)?;
            let pin = Pin::new(name, version)
                .map_err(|e| facts_section::invalid(&path, e.to_string()))?;
            if pins.iter().any(|p| p.name == pin.name) {
                return Err(facts_section::invalid(
                    &path,
                    format!("package {} is listed twice", pin.name),
                ));
            }
            pins.push(pin);
        }
        Ok(Some((
            supported_from_pins(&pins),
            "abi_dependency facts".to_owned(),
        )))
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        Vec::new()
    }

    fn open_features(&self) -> Option<bool> {
        // Each package is a feature; PEP 817 lets a wheel list several versions of one package
        // ("compatible with both PyTorch 2.8.0 and 2.9.0").
        Some(true)
    }

    fn detect(&self, ctx: &DetectContext) -> Detected {
        detect(ctx).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;
    use std::path::{Path, PathBuf};
    use vari_python::environment::{site_packages, EnvironmentError};

    fn write_dist(site: &Path, dir: &str, metadata: &str) {
        let d = site.join(dir);
        std::fs::create_dir_all(&d).unwrap();
        let file = if dir.ends_with(".dist-info") {
            "METADATA"
        } else {
            "PKG-INFO"
        };
        std::fs::write(d.join(file), metadata).unwrap();
    }

    fn meta(name: &str, version: &str) -> String {
        format!(
            "Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n\nName: body-is-ignored\n"
        )
    }

    /// A venv at `<tmp>/venv` with a few distributions.
    fn venv() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let venv = tmp.path().join("venv");
        let site = venv.join("lib/python3.12/site-packages");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            "home = /usr/bin\nversion_info = 3.12.3\n",
        )
        .unwrap();
        std::fs::write(venv.join("bin/python"), "").unwrap();
        write_dist(
            &site,
            "torch-2.8.0+cu128.dist-info",
            &meta("torch", "2.8.0+cu128"),
        );
        write_dist(&site, "Flash_Attn-2.dist-info", &meta("Flash.Attn", "2"));
        write_dist(
            &site,
            "numpy-2.1.3.dist-info",
            &meta("numpy", "2.1.3.post1"),
        );
        write_dist(&site, "old-1.0.egg-info", &meta("Old-Pkg", "1.0"));
        write_dist(&site, "weird-1.dist-info", &meta("weird", "1!2.0"));
        // Unrelated files are ignored.
        std::fs::write(site.join("six.py"), "").unwrap();
        (tmp, venv)
    }

    fn ctx(python: Option<PathBuf>, env: &[(&str, &str)]) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::host());
        ctx.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ctx.python = python;
        ctx
    }

    fn flat(r: &ProviderReport) -> Vec<(String, Vec<String>)> {
        r.features
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f.name.to_string(),
                    f.values.iter().map(|v| v.to_string()).collect(),
                )
            })
            .collect()
    }

    fn vals(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_a_venv_without_running_python() {
        let (_tmp, venv) = venv();
        for python in [
            venv.clone(),
            venv.join("bin/python"),
            venv.join("lib/python3.12/site-packages"),
        ] {
            let r = detect(&ctx(Some(python.clone()), &[]));
            assert_eq!(
                flat(&r),
                vec![
                    ("flash_attn".to_owned(), vals(&["2", "2.0", "2.0.0"])),
                    ("numpy".to_owned(), vals(&["2", "2.1", "2.1.3"])),
                    ("old_pkg".to_owned(), vals(&["1", "1.0", "1.0.0"])),
                    ("torch".to_owned(), vals(&["2", "2.8", "2.8.0"])),
                ],
                "{}",
                python.display()
            );
            assert!(r.features.as_ref().unwrap().iter().all(|f| f.multi_value));
            assert!(r.note.as_deref().unwrap().contains("epoch"), "{:?}", r.note);
            assert!(r.source.contains("site-packages"));
        }
    }

    #[test]
    fn override_replaces_and_adds() {
        let (_tmp, venv) = venv();
        let r = detect(&ctx(
            Some(venv),
            &[(OVERRIDE_VAR, "torch==2.9.1,vllm==0.10")],
        ));
        let f = flat(&r);
        assert_eq!(
            f.iter().find(|(n, _)| n == "torch").unwrap().1,
            vals(&["2", "2.9", "2.9.1"])
        );
        assert_eq!(
            f.iter().find(|(n, _)| n == "vllm").unwrap().1,
            vals(&["0", "0.10", "0.10.0"])
        );
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        // Override alone, without an environment.
        let r = detect(&ctx(None, &[(OVERRIDE_VAR, "a==1.2")]));
        assert_eq!(
            flat(&r),
            vec![("a".to_owned(), vals(&["1", "1.2", "1.2.0"]))]
        );
    }

    #[test]
    fn malformed_override_is_reported_and_ignored() {
        let (_tmp, venv) = venv();
        let r = detect(&ctx(Some(venv), &[(OVERRIDE_VAR, "torch>=2")]));
        assert!(r.note.as_deref().unwrap().contains("not `name==version`"));
        assert!(flat(&r).iter().any(|(n, v)| n == "torch" && v[1] == "2.8"));
    }

    #[test]
    fn override_errors() {
        assert!(matches!(
            parse_override("torch"),
            Err(PinError::NotAPin { .. })
        ));
        assert!(matches!(
            parse_override("torch===2"),
            Err(PinError::NotAPin { .. })
        ));
        assert!(matches!(
            parse_override("-x==1"),
            Err(PinError::InvalidName { .. })
        ));
        assert!(matches!(
            parse_override("x==abc"),
            Err(PinError::InvalidVersion { .. })
        ));
        assert!(matches!(
            parse_override("x==1!2"),
            Err(PinError::Epoch { .. })
        ));
        assert!(matches!(
            parse_override("a==1,A==2"),
            Err(PinError::Duplicate { .. })
        ));
        assert_eq!(parse_override(" , ").unwrap(), vec![]);
        let pins = parse_override("c==7.8.9b1,d==1.2.3.4").unwrap();
        assert_eq!(pins[0].values(), ["7", "7.8", "7.8.9"]);
        assert_eq!(pins[1].values(), ["1", "1.2", "1.2.3"]);
    }

    #[test]
    fn names_normalise() {
        assert_eq!(normalize_name("Foo.-_Bar").as_deref(), Some("foo_bar"));
        assert_eq!(
            normalize_name("nvidia-cublas-cu12").as_deref(),
            Some("nvidia_cublas_cu12")
        );
        assert_eq!(normalize_name("bad name"), None);
        assert_eq!(normalize_name(""), None);
    }

    #[test]
    fn missing_environments_are_explained() {
        let r = detect(&ctx(None, &[]));
        assert!(r.features.is_none());
        assert!(r.note.unwrap().contains("no target Python"));
        let r = detect(&ctx(Some(PathBuf::from("/nonexistent/venv")), &[]));
        assert!(r.note.unwrap().contains("does not exist"));
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            site_packages(empty.path()),
            Err(EnvironmentError::NoSitePackages { .. })
        ));
    }

    #[test]
    fn system_site_packages_of_a_venv() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("base");
        write_dist(
            &base.join("lib/python3.11/site-packages"),
            "numpy-1.26.0.dist-info",
            &meta("numpy", "1.26.0"),
        );
        std::fs::create_dir_all(base.join("bin")).unwrap();
        let venv = tmp.path().join("venv");
        write_dist(
            &venv.join("lib/python3.11/site-packages"),
            "numpy-2.0.0.dist-info",
            &meta("numpy", "2.0.0"),
        );
        write_dist(
            &venv.join("lib/python3.11/site-packages"),
            "scipy-1.14.dist-info",
            &meta("scipy", "1.14"),
        );
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!(
                "home = {}\ninclude-system-site-packages = true\nversion = 3.11.9\n",
                base.join("bin").display()
            ),
        )
        .unwrap();
        let dirs = site_packages(&venv).unwrap();
        assert_eq!(dirs.len(), 2);
        let r = detect(&ctx(Some(venv), &[]));
        // The venv's numpy shadows the base one.
        assert_eq!(
            flat(&r)[0],
            ("numpy".to_owned(), vals(&["2", "2.0", "2.0.0"]))
        );
        assert_eq!(flat(&r).len(), 2);
    }
}
