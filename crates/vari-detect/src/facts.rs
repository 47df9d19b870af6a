//! Facts profiles: a TOML description of a target machine's hardware that the providers turn
//! into a [`Profile`], for resolving on a machine other than the target (docker builds, CI
//! without a GPU, cluster login nodes).
//!
//! ```toml
//! schema = "vari-facts/1"        # optional
//! inherit = "host"               # optional: start from this machine's detection
//! exclude = ["intel"]            # optional: namespaces to drop (after inheriting)
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
//! blas_lapack = true             # or false, or a list such as ["openblas"]
//! openmp = ["gnu"]
//!
//! [[namespace]]                  # exact lists, as in vari-profile/1
//! namespace = "custom"
//! features = [{ name = "f", values = ["a", "b"], multi_value = false }]
//! ```
//!
//! A profile describes a whole target: namespaces it does not mention are unsupported, unless
//! `inherit = "host"`, in which case each namespace it mentions replaces the host's. Paths
//! (`cpuinfo`) are relative to the TOML file. Unknown keys are errors, named by key path.

use std::path::Path;

use toml::{Table, Value};
use vari_core::{FeatureSupport, Namespace, NamespaceSupport, Platform, Profile};

use crate::abi::{self, Pin};
use crate::aot;
use crate::cpu::cpuinfo::{CpuArch, CpuInfo};
use crate::cpu::{aarch64, x86_64};
use crate::gpu::{amd, intel, nvidia};

/// The value of the optional `schema` key.
pub const FACTS_SCHEMA: &str = "vari-facts/1";

/// Why a facts profile was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsError {
    /// Not valid TOML.
    #[error("not valid TOML: {0}")]
    Syntax(String),
    /// A key is unknown, has the wrong type or an invalid value.
    #[error("{path}: {message}")]
    Invalid {
        /// Key path, e.g. `nvidia.compute_capability[1]`.
        path: String,
        /// What is wrong there.
        message: String,
    },
}

fn invalid(path: impl Into<String>, message: impl Into<String>) -> FactsError {
    FactsError::Invalid {
        path: path.into(),
        message: message.into(),
    }
}

fn as_table<'a>(value: &'a Value, path: &str) -> Result<&'a Table, FactsError> {
    value.as_table().ok_or_else(|| {
        invalid(
            path,
            format!("expected a table, found {}", value.type_str()),
        )
    })
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

fn as_str<'a>(value: &'a Value, path: &str) -> Result<&'a str, FactsError> {
    value.as_str().ok_or_else(|| {
        invalid(
            path,
            format!("expected a string, found {}", value.type_str()),
        )
    })
}

/// A string or a list of strings, each with its key path.
fn string_list(value: &Value, path: &str) -> Result<Vec<(String, String)>, FactsError> {
    match value {
        Value::String(s) => Ok(vec![(path.to_owned(), s.clone())]),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let p = format!("{path}[{i}]");
                as_str(v, &p).map(|s| (p.clone(), s.to_owned()))
            })
            .collect(),
        other => Err(invalid(
            path,
            format!(
                "expected a string or a list of strings, found {}",
                other.type_str()
            ),
        )),
    }
}

/// `M.m` with decimal numbers (a compute capability).
fn major_minor(text: &str, path: &str) -> Result<(u32, u32), FactsError> {
    let bad = || {
        invalid(
            path,
            format!("expected \"M.m\" such as \"8.6\", found {text:?}"),
        )
    };
    let (major, minor) = text.trim().split_once('.').ok_or_else(bad)?;
    let number = |s: &str| -> Result<u32, FactsError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    Ok((number(major)?, number(minor)?))
}

/// Reads the facts of one namespace section into its supported features and a source label.
type Derived = (Vec<FeatureSupport>, String);

/// Turns one section's table into its derived features.
type SectionReader<'a> = dyn Fn(&Table) -> Result<Derived, FactsError> + 'a;

fn nvidia_facts(t: &Table) -> Result<Derived, FactsError> {
    check_keys(t, "nvidia", &["cuda_version", "compute_capability", "gpu"])?;
    let cuda = match t.get("cuda_version") {
        None => None,
        Some(v) => {
            let s = as_str(v, "nvidia.cuda_version")?;
            let parsed = nvidia::parse_cuda_version_override(s).map_err(|_| {
                invalid(
                    "nvidia.cuda_version",
                    format!("expected a CUDA version such as \"12.8\", found {s:?}"),
                )
            })?;
            Some(parsed)
        }
    };
    let ccs: Vec<(u32, u32)> = match t.get("compute_capability") {
        None => Vec::new(),
        Some(v) => string_list(v, "nvidia.compute_capability")?
            .iter()
            .map(|(p, s)| major_minor(s, p))
            .collect::<Result<_, _>>()?,
    };
    let chosen = match t.get("gpu") {
        None => ccs.iter().copied().max(),
        Some(Value::String(s)) if s == "highest" => ccs.iter().copied().max(),
        Some(Value::String(s)) if s == "lowest" => ccs.iter().copied().min(),
        Some(Value::Integer(i)) => {
            let index = usize::try_from(*i)
                .ok()
                .filter(|&i| i < ccs.len())
                .ok_or_else(|| {
                    invalid(
                        "nvidia.gpu",
                        format!("index {i} is not in compute_capability (0..{})", ccs.len()),
                    )
                })?;
            Some(ccs[index])
        }
        Some(_) => {
            return Err(invalid(
                "nvidia.gpu",
                "expected \"highest\", \"lowest\" or an index into compute_capability",
            ))
        }
    };
    if cuda.is_none() {
        return Err(invalid(
            "nvidia.cuda_version",
            "missing: without the driver's CUDA version the provider reports nothing",
        ));
    }
    let mut label = Vec::new();
    if let Some((m, n)) = cuda {
        label.push(format!("CUDA {m}.{n}"));
    }
    if let Some((m, n)) = chosen {
        label.push(format!("compute capability {m}.{n}"));
    }
    Ok((nvidia::supported_from_facts(cuda, chosen), label.join(", ")))
}

fn amd_facts(t: &Table) -> Result<Derived, FactsError> {
    check_keys(t, "amd", &["gfx_arch", "rocm_version"])?;
    let mut gfx = Vec::new();
    if let Some(v) = t.get("gfx_arch") {
        for (path, s) in string_list(v, "amd.gfx_arch")? {
            let parsed = amd::parse_gfx_arch_override(&s).map_err(|_| {
                invalid(
                    &path,
                    format!("expected a GPU target such as \"gfx90a\", found {s:?}"),
                )
            })?;
            gfx.extend(parsed);
        }
    }
    let rocm = match t.get("rocm_version") {
        None => None,
        Some(v) => {
            let s = as_str(v, "amd.rocm_version")?;
            Some(amd::parse_rocm_version_override(s).map_err(|_| {
                invalid(
                    "amd.rocm_version",
                    format!("expected a ROCm version such as \"6.4\", found {s:?}"),
                )
            })?)
        }
    };
    let mut label = Vec::new();
    if !gfx.is_empty() {
        label.push(gfx.join(" "));
    }
    if let Some((m, n)) = rocm {
        label.push(format!("ROCm {m}.{n}"));
    }
    Ok((amd::supported_from_facts(&gfx, rocm), label.join(", ")))
}

fn intel_facts(t: &Table) -> Result<Derived, FactsError> {
    check_keys(t, "intel", &["device_ip"])?;
    let mut ips = Vec::new();
    if let Some(v) = t.get("device_ip") {
        for (path, s) in string_list(v, "intel.device_ip")? {
            ips.push(intel::parse_device_ip_override(&s).map_err(|_| {
                invalid(
                    &path,
                    format!("expected a device IP such as \"12.60.7\", found {s:?}"),
                )
            })?);
        }
    }
    let features = intel::supported_from_facts(&ips);
    if features.is_empty() && !ips.is_empty() {
        return Err(invalid(
            "intel.device_ip",
            format!("no known device IP among {}", ips.join(", ")),
        ));
    }
    Ok((features, format!("device IP {}", ips.join(" "))))
}

/// Exactly one of `keys` must be present in a CPU section.
fn one_of<'a>(
    t: &'a Table,
    section: &str,
    keys: &[&'a str],
) -> Result<(&'a str, &'a Value), FactsError> {
    let present: Vec<(&str, &Value)> = keys
        .iter()
        .filter_map(|k| t.get(*k).map(|v| (*k, v)))
        .collect();
    match present[..] {
        [one] => Ok(one),
        [] => Err(invalid(
            section,
            format!("give one of: {}", keys.join(", ")),
        )),
        _ => Err(invalid(
            section,
            format!("give only one of: {}", keys.join(", ")),
        )),
    }
}

fn read_cpuinfo(
    value: &Value,
    path: &str,
    base_dir: &Path,
    arch: CpuArch,
) -> Result<(CpuInfo, String), FactsError> {
    let rel = as_str(value, path)?;
    let file = base_dir.join(rel);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| invalid(path, format!("cannot read {}: {e}", file.display())))?;
    let info = CpuInfo::parse(&text);
    if info.arch() != arch {
        return Err(invalid(
            path,
            format!(
                "{} describes a CPU of {}, not {}",
                file.display(),
                info.arch().name(),
                arch.name()
            ),
        ));
    }
    Ok((info, file.display().to_string()))
}

fn x86_facts(t: &Table, base_dir: &Path) -> Result<Derived, FactsError> {
    check_keys(t, "x86_64", &["microarchitecture", "level", "cpuinfo"])?;
    match one_of(t, "x86_64", &["microarchitecture", "level", "cpuinfo"])? {
        ("microarchitecture", v) => {
            let name = as_str(v, "x86_64.microarchitecture")?;
            let f = x86_64::supported_from_microarch(name)
                .map_err(|e| invalid("x86_64.microarchitecture", e.to_string()))?;
            Ok((f, format!("microarchitecture {name}")))
        }
        ("level", v) => {
            let level = v
                .as_integer()
                .and_then(|l| u32::try_from(l).ok())
                .ok_or_else(|| invalid("x86_64.level", "expected an integer 1 to 4"))?;
            let f =
                x86_64::from_level(level).map_err(|e| invalid("x86_64.level", e.to_string()))?;
            Ok((f, format!("x86-64-v{level}")))
        }
        (_, v) => {
            let (info, file) = read_cpuinfo(v, "x86_64.cpuinfo", base_dir, CpuArch::X86_64)?;
            let c = x86_64::classify(&info);
            Ok((c.supported, format!("{file}: {}", c.microarchitecture)))
        }
    }
}

fn aarch64_facts(t: &Table, base_dir: &Path) -> Result<Derived, FactsError> {
    check_keys(t, "aarch64", &["microarchitecture", "cpuinfo"])?;
    match one_of(t, "aarch64", &["microarchitecture", "cpuinfo"])? {
        ("microarchitecture", v) => {
            let name = as_str(v, "aarch64.microarchitecture")?;
            let f = aarch64::supported_from_microarch(name)
                .map_err(|e| invalid("aarch64.microarchitecture", e.to_string()))?;
            Ok((f, format!("microarchitecture {name}")))
        }
        (_, v) => {
            let (info, file) = read_cpuinfo(v, "aarch64.cpuinfo", base_dir, CpuArch::Aarch64)?;
            let c = aarch64::classify(&info);
            Ok((c.supported, format!("{file}: {}", c.microarchitecture)))
        }
    }
}

fn abi_facts(t: &Table) -> Result<Derived, FactsError> {
    let mut pins = Vec::new();
    for (name, v) in t {
        let path = format!("abi_dependency.{name}");
        let version = as_str(v, &path)?;
        let pin = Pin::new(name, version).map_err(|e| invalid(&path, e.to_string()))?;
        if pins.iter().any(|p: &Pin| p.name == pin.name) {
            return Err(invalid(
                &path,
                format!("package {} is listed twice", pin.name),
            ));
        }
        pins.push(pin);
    }
    Ok((
        abi::supported_from_pins(&pins),
        "abi_dependency facts".to_owned(),
    ))
}

/// `true` (every value), `false` (unsupported) or a list of known values.
fn fixed_list(
    value: &Value,
    path: &str,
    known: &[&str],
    all: Vec<FeatureSupport>,
) -> Result<Option<Derived>, FactsError> {
    match value {
        Value::Boolean(true) => Ok(Some((all, "fixed list".to_owned()))),
        Value::Boolean(false) => Ok(None),
        _ => {
            let mut chosen: Vec<String> = Vec::new();
            for (p, s) in string_list(value, path)? {
                if !known.contains(&s.as_str()) {
                    return Err(invalid(
                        p,
                        format!("unknown value {s:?} (known: {})", known.join(", ")),
                    ));
                }
                if !chosen.contains(&s) {
                    chosen.push(s);
                }
            }
            let mut features = all;
            for f in &mut features {
                f.values.retain(|v| chosen.iter().any(|c| c == v.as_str()));
                f.values
                    .sort_by_key(|v| chosen.iter().position(|c| c == v.as_str()));
            }
            Ok(Some((features, "listed values".to_owned())))
        }
    }
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

fn namespace(name: &str) -> Namespace {
    // Only called with the fixed provider namespace names of this module.
    Namespace::new(name).expect("provider namespaces are valid")
}

/// Builds the profile a facts document describes.
///
/// `base_dir` resolves relative paths (the TOML file's directory); `host` is this machine's
/// detected profile, required when the document says `inherit = "host"`.
///
/// ```
/// let p = vari_detect::facts::profile_from_facts(
///     "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.6\"\n[x86_64]\nlevel = 3\n",
///     std::path::Path::new("."),
///     None,
/// ).unwrap();
/// assert_eq!(p.namespace("nvidia").unwrap().feature("sm_arch").unwrap().values[0].as_str(), "86_real");
/// assert!(p.namespace("amd").is_none());
/// ```
pub fn profile_from_facts(
    text: &str,
    base_dir: &Path,
    host: Option<&Profile>,
) -> Result<Profile, FactsError> {
    let root: Table = text
        .parse()
        .map_err(|e: toml::de::Error| FactsError::Syntax(e.to_string()))?;
    const TOP: &[&str] = &[
        "schema",
        "inherit",
        "exclude",
        "platform",
        "nvidia",
        "amd",
        "intel",
        "x86_64",
        "aarch64",
        "abi_dependency",
        "blas_lapack",
        "openmp",
        "namespace",
    ];
    check_keys(&root, "", TOP)?;
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
    let mut described: Vec<(Namespace, Option<Derived>)> = Vec::new();
    let sections: [(&str, &SectionReader); 6] = [
        ("nvidia", &nvidia_facts),
        ("amd", &amd_facts),
        ("intel", &intel_facts),
        ("x86_64", &|t| x86_facts(t, base_dir)),
        ("aarch64", &|t| aarch64_facts(t, base_dir)),
        ("abi_dependency", &abi_facts),
    ];
    for (name, derive) in sections {
        if let Some(v) = root.get(name) {
            let derived = derive(as_table(v, name)?)?;
            described.push((namespace(name), Some(derived)));
        }
    }
    if let Some(v) = root.get("blas_lapack") {
        let d = fixed_list(
            v,
            "blas_lapack",
            aot::BLAS_LAPACK_PROVIDERS,
            aot::blas_lapack_all_configs(),
        )?;
        described.push((namespace("blas_lapack"), d));
    }
    if let Some(v) = root.get("openmp") {
        let d = fixed_list(
            v,
            "openmp",
            aot::OPENMP_PROVIDERS,
            aot::openmp_all_configs(),
        )?;
        described.push((namespace("openmp"), d));
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
    if let Some(v) = root.get("exclude") {
        for (path, name) in string_list(v, "exclude")? {
            Namespace::new(name.as_str()).map_err(|e| invalid(&path, e.to_string()))?;
            profile.namespaces.retain(|n| n.namespace.as_str() != name);
        }
    }
    // abi_dependency goes last in namespace order.
    if let Some(pos) = profile
        .namespaces
        .iter()
        .position(|n| n.namespace.as_str() == abi::NAMESPACE)
    {
        let abi = profile.namespaces.remove(pos);
        profile.namespaces.push(abi);
    }
    Ok(profile)
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

    fn build(text: &str) -> Result<Profile, FactsError> {
        profile_from_facts(text, Path::new(env!("CARGO_MANIFEST_DIR")), None)
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
        let p = profile_from_facts(text, Path::new("."), Some(&host)).unwrap();
        let names: Vec<&str> = p.namespaces.iter().map(|n| n.namespace.as_str()).collect();
        assert_eq!(names, ["x86_64", "openmp", "nvidia", "abi_dependency"]);
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
}
