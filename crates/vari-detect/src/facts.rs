//! Facts profiles: a TOML description of a target machine's hardware that the providers turn
//! into a [`Profile`], for resolving on a machine other than the target (docker builds, CI
//! without a GPU, cluster login nodes).
//!
//! ```toml
//! schema = "vari-facts/1"        # optional
//! inherit = "host"               # optional: "host" starts from this machine's detection;
//!                                # "none" (the default) starts from nothing
//! exclude = ["intel"]            # optional: namespaces to drop (after inheriting)
//! blas_lapack = true             # or false, or a list such as ["openblas"]
//! openmp = ["gnu"]
//!
//! [platform]                     # optional
//! system = "Linux"
//! machine = "x86_64"
//! libc = "glibc 2.36"
//!
//! [nvidia]
//! cuda_version = "12.8"          # the driver's CUDA version
//! compute_capability = ["8.6", "9.0"]
//! gpu = "highest"                # or "lowest", or an index into compute_capability
//!
//! [amd]
//! gfx_arch = ["gfx90a", "gfx942"]
//! rocm_version = "6.4"
//!
//! [intel]
//! device_ip = ["12.60.7"]
//!
//! [x86_64]
//! microarchitecture = "haswell"  # or: level = 3, or: cpuinfo = "node/cpuinfo"
//!
//! [aarch64]
//! microarchitecture = "neoverse_v2"   # or: cpuinfo = "…"
//!
//! [abi_dependency]
//! torch = "2.8.0"
//!
//! [[namespace]]                  # exact lists, as in vari-profile/1
//! namespace = "custom"
//! features = [{ name = "f", values = ["a", "b"], multi_value = false }]
//! ```
//!
//! (Top-level keys such as `blas_lapack` come before the first `[table]`: in TOML a key after a
//! table header belongs to that table.)
//!
//! A profile describes a whole target: namespaces it does not mention are unsupported, unless
//! `inherit = "host"`, in which case each namespace it mentions replaces the host's. Each
//! namespace section is read by its provider in the [registry], which checks
//! the facts against what exists (`data/hardware-ranges.toml`: a CUDA `12.999` or a compute
//! capability `8.99` is refused). Paths (`cpuinfo`) are relative to the TOML file. Unknown keys
//! are errors, named by key path; an `exclude` entry that names no namespace is a warning
//! ([`FactsProfile::warnings`]).

use std::path::Path;

use toml::{Table, Value};
use vari_core::{Diagnostic, Namespace, NamespaceSupport, Platform, Profile};

pub use crate::facts_section::FactsError;
use crate::facts_section::{as_str, as_table, invalid, string_list};
use crate::provider::{Derived, FactsInput, FactsSection};
use crate::registry;

/// The value of the optional `schema` key.
pub const FACTS_SCHEMA: &str = "vari-facts/1";

/// Top-level keys besides the providers' namespaces.
pub const DOCUMENT_KEYS: &[&str] = &["schema", "inherit", "exclude", "platform", "namespace"];

/// The profile a facts document describes, and what deserves a warning in it.
#[derive(Debug, Clone, PartialEq)]
pub struct FactsProfile {
    /// The profile.
    pub profile: Profile,
    /// Problems that do not stop the profile from being used (an `exclude` entry naming no
    /// namespace), each with its key path.
    pub warnings: Vec<Diagnostic>,
}

fn check_keys(table: &Table, path: &str, allowed: &[&str]) -> Result<(), FactsError> {
    for key in table.keys() {
        if !allowed.contains(&key.as_str()) {
            let at = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            return Err(invalid(
                at,
                format!("unknown key (expected one of: {})", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

/// `[[namespace]]` entries: exact lists, read with the `vari-profile/1` rules.
fn exact_namespaces(value: &Value) -> Result<Vec<NamespaceSupport>, FactsError> {
    let json = serde_json::to_value(value).map_err(|e| invalid("namespace", e.to_string()))?;
    if !json.is_array() {
        return Err(invalid("namespace", "expected [[namespace]] tables"));
    }
    let doc =
        serde_json::json!({ "schema": vari_core::profile::PROFILE_SCHEMA, "namespaces": json });
    let profile = Profile::from_value(&doc).map_err(|e| match e {
        vari_core::profile::ProfileError::Invalid { path, message } => {
            invalid(path.replacen("namespaces", "namespace", 1), message)
        }
    })?;
    Ok(profile.namespaces)
}

/// Whether `text` looks like a facts profile: TOML whose top-level keys include a facts key (a
/// provider's namespace, `platform`, `inherit`, …). A reader that chose another format by the
/// file's name can then hint that the file should be named `*.toml`.
///
/// ```
/// assert!(vari_detect::facts::looks_like_facts("[nvidia]\ncuda_version = \"12.8\"\n"));
/// assert!(!vari_detect::facts::looks_like_facts("{\"schema\": \"vari-profile/1\"}"));
/// assert!(!vari_detect::facts::looks_like_facts("[tool.poetry]\nname = \"x\"\n"));
/// ```
pub fn looks_like_facts(text: &str) -> bool {
    let Ok(root) = vari_core::strip_bom(text).parse::<Table>() else {
        return false;
    };
    root.keys()
        .any(|k| DOCUMENT_KEYS.contains(&k.as_str()) || registry::provider(k).is_some())
}

/// Builds the profile a facts document describes.
///
/// `base_dir` resolves relative paths (the TOML file's directory); `host` is this machine's
/// detected profile, required when the document says `inherit = "host"`.
///
/// ```
/// let facts = vari_detect::facts::profile_from_facts(
///     "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.6\"\n[x86_64]\nlevel = 3\n",
///     std::path::Path::new("."),
///     None,
/// ).unwrap();
/// let p = facts.profile;
/// assert_eq!(p.namespace("nvidia").unwrap().feature("sm_arch").unwrap().values[0].as_str(), "86_real");
/// assert!(p.namespace("amd").is_none());
/// assert!(facts.warnings.is_empty());
/// ```
pub fn profile_from_facts(
    text: &str,
    base_dir: &Path,
    host: Option<&Profile>,
) -> Result<FactsProfile, FactsError> {
    vari_core::check_toml_depth(text).map_err(|e| FactsError::Syntax(e.to_string()))?;
    let root: Table = vari_core::strip_bom(text)
        .parse()
        .map_err(|e: toml::de::Error| FactsError::Syntax(e.to_string()))?;
    let mut top: Vec<&str> = DOCUMENT_KEYS.to_vec();
    top.extend(registry::providers().iter().map(|p| p.namespace()));
    check_keys(&root, "", &top)?;
    if let Some(v) = root.get("schema") {
        let s = as_str(v, "schema")?;
        if s != FACTS_SCHEMA {
            return Err(invalid(
                "schema",
                format!("unsupported schema {s:?} (expected {FACTS_SCHEMA:?})"),
            ));
        }
    }
    let mut profile = match root.get("inherit") {
        None => Profile::empty(),
        Some(v) => match as_str(v, "inherit")? {
            "host" => host.cloned().ok_or_else(|| {
                invalid(
                    "inherit",
                    "inherit = \"host\" needs this machine's detection, which was not run",
                )
            })?,
            "none" => Profile::empty(),
            other => {
                return Err(invalid(
                    "inherit",
                    format!("expected \"host\" or \"none\", found {other:?}"),
                ))
            }
        },
    };
    if let Some(v) = root.get("platform") {
        let t = as_table(v, "platform")?;
        check_keys(t, "platform", &["system", "machine", "libc"])?;
        let mut platform = profile.platform.take().unwrap_or_default();
        let field = |key: &str| -> Result<Option<String>, FactsError> {
            t.get(key)
                .map(|v| as_str(v, &format!("platform.{key}")).map(str::to_owned))
                .transpose()
        };
        platform.system = field("system")?.or(platform.system);
        platform.machine = field("machine")?.or(platform.machine);
        platform.libc = field("libc")?.or(platform.libc);
        profile.platform = Some(Platform { ..platform });
    }

    // Each described namespace: Some(features) replaces, None removes.
    let input = FactsInput { base_dir };
    let mut described: Vec<(Namespace, Option<Derived>)> = Vec::new();
    for provider in registry::providers() {
        let name = provider.namespace();
        let Some(value) = root.get(name) else {
            continue;
        };
        if let FactsSection::Table(keys) = provider.facts_section() {
            check_keys(as_table(value, name)?, name, keys)?;
        }
        described.push((namespace(name), provider.facts(value, &input)?));
    }
    let mut exact = Vec::new();
    if let Some(v) = root.get("namespace") {
        for (i, ns) in exact_namespaces(v)?.into_iter().enumerate() {
            if described.iter().any(|(n, _)| *n == ns.namespace) {
                return Err(invalid(
                    format!("namespace[{i}].namespace"),
                    format!(
                        "{} is also described by its own [{}] section",
                        ns.namespace, ns.namespace
                    ),
                ));
            }
            exact.push(ns);
        }
    }

    for (ns, derived) in described {
        let entry = derived.and_then(|(features, source)| {
            (!features.is_empty()).then(|| NamespaceSupport {
                namespace: ns.clone(),
                source: Some(format!("facts: {source}")),
                features,
            })
        });
        replace(&mut profile, &ns, entry);
    }
    for ns in exact {
        let name = ns.namespace.clone();
        replace(&mut profile, &name, Some(ns));
    }
    let mut warnings = Vec::new();
    if let Some(v) = root.get("exclude") {
        for (path, name) in string_list(v, "exclude")? {
            Namespace::new(name.as_str()).map_err(|e| invalid(&path, e.to_string()))?;
            let present = profile
                .namespaces
                .iter()
                .any(|n| n.namespace.as_str() == name);
            if !present && registry::provider(&name).is_none() {
                warnings.push(Diagnostic::new(
                    path,
                    format!(
                        "no provider or [[namespace]] entry has the namespace {name:?}: nothing \
                         to exclude"
                    ),
                ));
            }
            profile.namespaces.retain(|n| n.namespace.as_str() != name);
        }
    }
    // Namespace order: the registry's, then the exact lists in the order given; abi_dependency
    // always last (`spec/providers.md`).
    profile.namespaces.sort_by_key(|n| {
        let name = n.namespace.as_str();
        (name == crate::abi::NAMESPACE, registry::position(name))
    });
    Ok(FactsProfile { profile, warnings })
}

fn namespace(name: &str) -> Namespace {
    // Registry namespaces are valid (a unit test checks every one).
    Namespace::new(name).expect("provider namespaces are valid")
}

/// Replaces (in place), appends, or removes (`None`) a namespace entry.
fn replace(profile: &mut Profile, ns: &Namespace, entry: Option<NamespaceSupport>) {
    let pos = profile.namespaces.iter().position(|n| &n.namespace == ns);
    match (pos, entry) {
        (Some(i), Some(e)) => profile.namespaces[i] = e,
        (Some(i), None) => {
            profile.namespaces.remove(i);
        }
        (None, Some(e)) => profile.namespaces.push(e),
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::cpu::x86_64;
    use crate::gpu::nvidia;

    fn build(text: &str) -> Result<Profile, FactsError> {
        profile_from_facts(text, Path::new(env!("CARGO_MANIFEST_DIR")), None).map(|f| f.profile)
    }

    fn err_path(text: &str) -> String {
        match build(text) {
            Err(FactsError::Invalid { path, .. }) => path,
            other => panic!("{text}: expected an invalid-key error, got {other:?}"),
        }
    }

    fn values(p: &Profile, ns: &str, feature: &str) -> Vec<String> {
        p.namespace(ns)
            .unwrap()
            .feature(feature)
            .unwrap()
            .values
            .iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn gpu_facts_use_the_provider_derivations() {
        let p = build(
            r#"
            [nvidia]
            cuda_version = "12.8"
            compute_capability = ["8.6", "9.0"]
            [amd]
            gfx_arch = ["gfx942", "gfx90a"]
            rocm_version = "6.4"
            [intel]
            device_ip = "12.56.5"
            "#,
        )
        .unwrap();
        let nv = p.namespace("nvidia").unwrap();
        assert_eq!(
            nv.features,
            nvidia::supported_from_facts(Some((12, 8)), Some((9, 0)))
        );
        assert_eq!(values(&p, "nvidia", "sm_arch")[0], "90_real");
        assert_eq!(values(&p, "amd", "gfx_arch"), ["gfx90a", "gfx942"]);
        assert_eq!(values(&p, "amd", "rocm_version"), ["6.4"]);
        assert_eq!(values(&p, "intel", "device_ip"), ["12.56.5", "12.55.8"]);
        assert!(
            p.namespace("x86_64").is_none(),
            "unlisted namespaces are unsupported"
        );
        let names: Vec<&str> = p.namespaces.iter().map(|n| n.namespace.as_str()).collect();
        assert_eq!(names, ["nvidia", "amd", "intel"]);
    }

    #[test]
    fn gpu_policy() {
        let lowest = build("[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = [\"8.6\", \"9.0\"]\ngpu = \"lowest\"\n").unwrap();
        assert_eq!(values(&lowest, "nvidia", "sm_arch")[0], "86_real");
        let index = build(
            "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = [\"9.0\", \"7.5\"]\ngpu = 1\n",
        )
        .unwrap();
        assert_eq!(values(&index, "nvidia", "sm_arch")[0], "75_real");
        assert_eq!(
            err_path(
                "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = [\"9.0\"]\ngpu = 3\n"
            ),
            "nvidia.gpu"
        );
        // A CUDA version alone: bounds without sm_arch.
        let cuda_only = build("[nvidia]\ncuda_version = \"13.0\"\n").unwrap();
        assert!(cuda_only
            .namespace("nvidia")
            .unwrap()
            .feature("sm_arch")
            .is_none());
    }

    #[test]
    fn cpu_facts() {
        let p = build("[x86_64]\nmicroarchitecture = \"haswell\"\n[aarch64]\nmicroarchitecture = \"neoverse_v2\"\n").unwrap();
        assert_eq!(
            p.namespace("x86_64").unwrap().features,
            x86_64::supported_from_microarch("haswell").unwrap()
        );
        assert_eq!(values(&p, "aarch64", "version")[0], "9.0a");
        let level = build("[x86_64]\nlevel = 2\n").unwrap();
        assert_eq!(values(&level, "x86_64", "level"), ["v2", "v1"]);
        // Plain x86_64 reports nothing, so the namespace is unsupported.
        assert!(build("[x86_64]\nlevel = 1\n")
            .unwrap()
            .namespace("x86_64")
            .is_none());
        let from_file =
            build("[x86_64]\ncpuinfo = \"../../testdata/cpuinfo/linux-rhel7-zen\"\n").unwrap();
        assert!(from_file
            .namespace("x86_64")
            .unwrap()
            .source
            .as_deref()
            .unwrap()
            .ends_with(": zen"));
        let arm =
            build("[aarch64]\ncpuinfo = \"../../testdata/cpuinfo/linux-asahi-m1\"\n").unwrap();
        assert_eq!(values(&arm, "aarch64", "version")[0], "8.4a");
    }

    #[test]
    fn other_namespaces() {
        let p = build(
            r#"
            blas_lapack = ["mkl", "openblas"]
            openmp = true
            [abi_dependency]
            torch = "2.8.0"
            "Flash-Attn" = "2.7"
            [[namespace]]
            namespace = "custom"
            features = [{ name = "f", values = ["a", "b"], multi_value = true }]
            "#,
        )
        .unwrap();
        assert_eq!(values(&p, "blas_lapack", "provider"), ["mkl", "openblas"]);
        assert_eq!(values(&p, "openmp", "provider"), ["gnu", "intel", "llvm"]);
        assert_eq!(
            values(&p, "abi_dependency", "flash_attn"),
            ["2", "2.7", "2.7.0"]
        );
        assert_eq!(
            p.namespaces.last().unwrap().namespace.as_str(),
            "abi_dependency"
        );
        assert!(p.namespace("custom").unwrap().features[0].multi_value);
        assert!(build("blas_lapack = false\n")
            .unwrap()
            .namespace("blas_lapack")
            .is_none());
    }

    #[test]
    fn inherit_replaces_per_namespace_and_excludes() {
        let host = build("openmp = true\n[x86_64]\nlevel = 3\n[intel]\ndevice_ip = \"12.60.7\"\n[abi_dependency]\nnumpy = \"2.1\"\n").unwrap();
        let text = "inherit = \"host\"\nexclude = [\"intel\"]\n[x86_64]\nlevel = 2\n[nvidia]\ncuda_version = \"12.4\"\n[platform]\nmachine = \"x86_64\"\n";
        let p = profile_from_facts(text, Path::new("."), Some(&host))
            .unwrap()
            .profile;
        let names: Vec<&str> = p.namespaces.iter().map(|n| n.namespace.as_str()).collect();
        assert_eq!(names, ["nvidia", "x86_64", "openmp", "abi_dependency"]);
        assert_eq!(values(&p, "x86_64", "level"), ["v2", "v1"]);
        assert_eq!(p.platform.unwrap().machine.as_deref(), Some("x86_64"));
        assert_eq!(err_path("inherit = \"host\"\n"), "inherit");
    }

    #[test]
    fn errors_name_the_key_path() {
        let cases = [
            ("[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = [\"8.6\", \"9\"]\n", "nvidia.compute_capability[1]"),
            ("[nvidia]\ncuda = \"12.8\"\n", "nvidia.cuda"),
            ("[nvidia]\ncompute_capability = \"8.6\"\n", "nvidia.cuda_version"),
            ("[amd]\ngfx_arch = [\"gfx90a\", \"vega\"]\n", "amd.gfx_arch[1]"),
            ("[amd]\nrocm_version = \"six\"\n", "amd.rocm_version"),
            ("[intel]\ndevice_ip = [\"1.2\"]\n", "intel.device_ip[0]"),
            ("[x86_64]\nmicroarchitecture = \"haswel\"\n", "x86_64.microarchitecture"),
            ("[x86_64]\nlevel = 5\n", "x86_64.level"),
            ("[x86_64]\nlevel = 3\nmicroarchitecture = \"zen\"\n", "x86_64"),
            ("[x86_64]\ncpuinfo = \"../../testdata/cpuinfo/linux-asahi-m1\"\n", "x86_64.cpuinfo"),
            ("[aarch64]\ncpuinfo = \"no/such/file\"\n", "aarch64.cpuinfo"),
            ("[abi_dependency]\ntorch = \"2.x\"\n", "abi_dependency.torch"),
            ("blas_lapack = [\"atlas\"]\n", "blas_lapack[0]"),
            ("gpus = 1\n", "gpus"),
            ("schema = \"vari-facts/2\"\n", "schema"),
            ("[[namespace]]\nnamespace = \"c\"\nfeatures = [{ name = \"F\", values = [] }]\n", "namespace[0].features[0].name"),
            ("[[namespace]]\nnamespace = \"amd\"\nfeatures = []\n[amd]\nrocm_version = \"6.4\"\n", "namespace[0].namespace"),
            ("[amd]\ngfx_arch = [\"gfxZZZ\"]\n", "amd.gfx_arch[0]"),
            ("[nvidia]\ncuda_version = \"12.999\"\n", "nvidia.cuda_version"),
            ("[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = [\"8.6\", \"8.99\"]\n", "nvidia.compute_capability[1]"),
            ("[intel]\ndevice_ip = \"12.999.0\"\n", "intel.device_ip"),
            ("exclude = [\"Bad\"]\n", "exclude[0]"),
            ("[platform]\nos = \"Linux\"\n", "platform.os"),
        ];
        for (text, path) in cases {
            assert_eq!(err_path(text), path, "{text}");
        }
        assert!(matches!(build("[nvidia"), Err(FactsError::Syntax(_))));
        let message = build("[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"9\"\n")
            .unwrap_err()
            .to_string();
        assert!(message.contains("expected \"M.m\""), "{message}");
    }

    #[test]
    fn an_exclude_that_names_nothing_is_a_warning() {
        let facts = profile_from_facts(
            "exclude = [\"nope\", \"intel\", \"custom\"]\n[[namespace]]\nnamespace = \"custom\"\nfeatures = []\n",
            Path::new("."),
            None,
        )
        .unwrap();
        assert_eq!(facts.warnings.len(), 1, "{:?}", facts.warnings);
        assert_eq!(facts.warnings[0].path, "exclude[0]");
        assert!(facts.warnings[0].message.contains("\"nope\""));
    }

    #[test]
    fn inherit_none_starts_from_nothing() {
        let p = build("inherit = \"none\"\nopenmp = true\n").unwrap();
        let names: Vec<&str> = p.namespaces.iter().map(|n| n.namespace.as_str()).collect();
        assert_eq!(names, ["openmp"]);
    }

    #[test]
    fn facts_text_is_recognised() {
        assert!(looks_like_facts("inherit = \"host\"\n"));
        assert!(looks_like_facts("\u{feff}[x86_64]\nlevel = 3\n"));
        assert!(!looks_like_facts("not toml at all {"));
        assert!(!looks_like_facts(""));
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        assert!(build("\u{feff}openmp = true\n").is_ok());
    }
}
