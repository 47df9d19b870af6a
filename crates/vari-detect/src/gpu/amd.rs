//! The `amd` provider (`spec/providers.md`): `gfx_arch` (multi-value) from the KFD topology in
//! sysfs (no `rocminfo` needed) and `rocm_version` from the ROCm installation's version file.
//!
//! Variables: [`FORCE_GFX_ARCH_ENV`], [`FORCE_ROCM_VERSION_ENV`] (reference overrides),
//! `HSA_OVERRIDE_GFX_VERSION` (honoured like the ROCm runtime does), `ROCM_PATH`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use vari_core::FeatureSupport;

use super::{feature, parse_decimal};
use crate::facts_section::{self, FactsError};
use crate::override_error::InvalidVariable;
use crate::provider::{
    Derived, Detected, EnvVar, Evidence, FactsInput, FactsSection, Provider, SnapshotFile, VarRole,
};
use crate::{DetectContext, ProviderReport};

/// The namespace name.
pub const NAMESPACE: &str = "amd";
/// Override of the GPU targets (split on commas, whitespace or `;`, order kept).
pub const FORCE_GFX_ARCH_ENV: &str = "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH";
/// Override of the ROCm version (`x.y.z`).
pub const FORCE_ROCM_VERSION_ENV: &str = "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION";
/// The ROCm runtime's override of every GPU's target (`M.m.s`).
pub const HSA_OVERRIDE_ENV: &str = "HSA_OVERRIDE_GFX_VERSION";
/// Where ROCm is installed, when not in `/opt/rocm`.
pub const ROCM_PATH_ENV: &str = "ROCM_PATH";
/// Where the KFD topology lives.
const KFD_NODES: &str = "/sys/class/kfd/kfd/topology/nodes";

/// All valid `gfx_arch` values (reference list plus 950/1150/1151, which real metadata uses).
const ALL_GFX: &[&str] = &[
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101",
    "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
];

/// The target name for a KFD `gfx_target_version` (decimal `MMmmss`): `gfx` + decimal major +
/// hex minor + hex stepping; `None` for 0 (a CPU node).
///
/// ```
/// use vari_detect::gpu::amd::gfx_name;
/// assert_eq!(gfx_name(90010).as_deref(), Some("gfx90a"));
/// assert_eq!(gfx_name(110001).as_deref(), Some("gfx1101"));
/// assert_eq!(gfx_name(0), None);
/// ```
pub fn gfx_name(target_version: u32) -> Option<String> {
    (target_version != 0).then(|| {
        let major = target_version / 10000 % 100;
        let minor = target_version / 100 % 100;
        let stepping = target_version % 100;
        format!("gfx{major}{minor:x}{stepping:x}")
    })
}

/// The supported features for the GPU targets found and the ROCm version: `gfx_arch`
/// (de-duplicated, sorted as strings) then `rocm_version`; empty features omitted.
pub fn supported_from_facts(gfx: &[String], rocm: Option<(u32, u32)>) -> Vec<FeatureSupport> {
    let mut targets = gfx.to_vec();
    targets.sort();
    targets.dedup();
    supported_in_order(targets, rocm)
}

/// Like [`supported_from_facts`] but keeping the order given (overrides keep theirs).
fn supported_in_order(gfx: Vec<String>, rocm: Option<(u32, u32)>) -> Vec<FeatureSupport> {
    let rocm = rocm.map(|(major, minor)| vec![format!("{major}.{minor}")]);
    [
        feature("gfx_arch", gfx, true),
        rocm.and_then(|r| feature("rocm_version", r, false)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every valid value of every feature.
pub fn all_configs() -> Vec<FeatureSupport> {
    let gfx = ALL_GFX.iter().map(|s| (*s).to_owned()).collect();
    let mut rocm: Vec<String> = (0..=10).rev().map(|minor| format!("7.{minor}")).collect();
    rocm.extend(["6.4".to_owned(), "6.3".to_owned()]);
    [
        feature("gfx_arch", gfx, true),
        feature("rocm_version", rocm, false),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Parses [`FORCE_GFX_ARCH_ENV`]: targets split on commas, whitespace or `;`, order kept,
/// duplicates dropped.
pub fn parse_gfx_arch_override(value: &str) -> Result<Vec<String>, InvalidVariable> {
    let mut targets: Vec<String> = Vec::new();
    for part in value.split(|c: char| c == ',' || c == ';' || c.is_whitespace()) {
        if part.is_empty() {
            continue;
        }
        let target = part.to_ascii_lowercase();
        crate::ranges::check_gfx(&target)
            .map_err(|expected| InvalidVariable::new(FORCE_GFX_ARCH_ENV, value, expected))?;
        if !targets.contains(&target) {
            targets.push(target);
        }
    }
    if targets.is_empty() {
        return Err(InvalidVariable::new(
            FORCE_GFX_ARCH_ENV,
            value,
            "no GPU target given",
        ));
    }
    Ok(targets)
}

/// Parses [`FORCE_ROCM_VERSION_ENV`]: `x.y.z` (or `x.y`); the reported value is `x.y`.
pub fn parse_rocm_version_override(value: &str) -> Result<(u32, u32), InvalidVariable> {
    let parts: Vec<&str> = value.trim().split('.').collect();
    let numbers: Option<Vec<u32>> = parts.iter().map(|p| parse_decimal(p)).collect();
    match numbers.as_deref() {
        Some([major, minor]) | Some([major, minor, _]) => Ok((*major, *minor)),
        _ => Err(InvalidVariable::new(
            FORCE_ROCM_VERSION_ENV,
            value,
            "expected a ROCm version x.y.z such as 6.4.1",
        )),
    }
}

/// Reads `major.minor` from a ROCm `.info/version` file (`6.4.1-120` → 6.4).
fn parse_rocm_version_file(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split(['.', '-']);
    Some((parse_decimal(parts.next()?)?, parse_decimal(parts.next()?)?))
}

/// Parses `HSA_OVERRIDE_GFX_VERSION` (`M.m.s`, decimal) into a `gfx_target_version`.
fn parse_hsa_override(value: &str) -> Option<u32> {
    let parts: Option<Vec<u32>> = value.trim().split('.').map(parse_decimal).collect();
    match parts.as_deref() {
        Some([major, minor, stepping]) if *minor < 100 && *stepping < 100 => {
            Some(major * 10000 + minor * 100 + stepping)
        }
        _ => None,
    }
}

/// Runs the provider.
pub fn detect(ctx: &DetectContext) -> ProviderReport {
    let start = Instant::now();
    let (features, source, note) = match run(ctx) {
        Ok(found) => found,
        Err(e) => (None, "override".into(), Some(e.to_string())),
    };
    ProviderReport::builtin(NAMESPACE, features, source, note, start)
}

type Found = (Option<Vec<FeatureSupport>>, String, Option<String>);

fn run(ctx: &DetectContext) -> Result<Found, InvalidVariable> {
    let mut sources = Vec::new();
    let mut notes = Vec::new();

    let gfx = match ctx.var(FORCE_GFX_ARCH_ENV) {
        Some(value) => {
            sources.push(format!("{FORCE_GFX_ARCH_ENV}={value}"));
            parse_gfx_arch_override(value)?
        }
        None => {
            let mut targets = detect_gfx(ctx, &mut sources, &mut notes);
            targets.sort();
            targets.dedup();
            targets
        }
    };
    let rocm = match ctx.var(FORCE_ROCM_VERSION_ENV) {
        Some(value) => {
            sources.push(format!("{FORCE_ROCM_VERSION_ENV}={value}"));
            Some(parse_rocm_version_override(value)?)
        }
        None => detect_rocm_version(ctx, &mut sources),
    };
    let features = supported_in_order(gfx, rocm);
    let source = if sources.is_empty() {
        "none".into()
    } else {
        sources.join("; ")
    };
    let note = (!notes.is_empty()).then(|| notes.join("; "));
    Ok(((!features.is_empty()).then_some(features), source, note))
}

/// GPU targets from the KFD topology, else (live machine only) `rocm_agent_enumerator -name`.
fn detect_gfx(
    ctx: &DetectContext,
    sources: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let nodes_dir = ctx.sysroot.path(KFD_NODES);
    let Ok(entries) = std::fs::read_dir(&nodes_dir) else {
        if ctx.sysroot.is_host() {
            if let Some(targets) = from_agent_enumerator(ctx, sources, notes) {
                return targets;
            }
        }
        notes.push(format!("no AMD GPU (no {KFD_NODES})"));
        return Vec::new();
    };
    let hsa_override = ctx.var(HSA_OVERRIDE_ENV);
    let forced = hsa_override.and_then(parse_hsa_override);
    if let (Some(value), None) = (hsa_override, forced) {
        notes.push(format!(
            "ignored {HSA_OVERRIDE_ENV}={value:?} (expected M.m.s)"
        ));
    }
    let mut targets = Vec::new();
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("properties"))
        .collect();
    paths.sort();
    for path in paths {
        let Ok(text) = crate::system_file::read_system_file(&path) else {
            continue;
        };
        let version = text.lines().find_map(|line| {
            let (key, value) = line.split_once(char::is_whitespace)?;
            (key == "gfx_target_version").then(|| value.trim().parse::<u32>().ok())?
        });
        match version {
            // A GPU node; the runtime override replaces what the kernel says.
            Some(v) if v != 0 => targets.extend(gfx_name(forced.unwrap_or(v))),
            _ => {}
        }
    }
    if targets.is_empty() {
        notes.push("no AMD GPU in the KFD topology".into());
    } else {
        let how = match (hsa_override, forced) {
            (Some(value), Some(_)) => format!(" ({HSA_OVERRIDE_ENV}={value})"),
            _ => String::new(),
        };
        let mut shown = targets.clone();
        shown.sort();
        shown.dedup();
        sources.push(format!("{KFD_NODES}: {}{how}", shown.join(", ")));
    }
    targets
}

/// The ROCm installation directory on the host: `$ROCM_PATH`, else `/opt/rocm`.
fn rocm_dirs(ctx: &DetectContext) -> Vec<String> {
    let mut dirs = Vec::new();
    if let Some(path) = ctx.var(ROCM_PATH_ENV) {
        dirs.push(path.trim_end_matches('/').to_owned());
    }
    dirs.push("/opt/rocm".to_owned());
    dirs
}

fn detect_rocm_version(ctx: &DetectContext, sources: &mut Vec<String>) -> Option<(u32, u32)> {
    for dir in rocm_dirs(ctx) {
        let file = format!("{dir}/.info/version");
        if let Ok(text) = ctx.sysroot.read_to_string(&file) {
            if let Some((major, minor)) = parse_rocm_version_file(&text) {
                sources.push(format!("{file}: ROCm {major}.{minor}"));
                return Some((major, minor));
            }
        }
    }
    None
}

/// Runs `rocm_agent_enumerator -name` when it is installed; `None` when it is not.
fn from_agent_enumerator(
    ctx: &DetectContext,
    sources: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Option<Vec<String>> {
    let program = rocm_dirs(ctx)
        .into_iter()
        .map(|dir| PathBuf::from(format!("{dir}/bin/rocm_agent_enumerator")))
        .chain(
            ctx.var("PATH")
                .map(|path| {
                    std::env::split_paths(path)
                        .map(|p| p.join("rocm_agent_enumerator"))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        )
        .find(|p| p.is_file())?;
    let mut command = Command::new(&program);
    command.arg("-name").env_clear().envs(&ctx.env);
    match vari_fs::run_with_timeout(command, None, ctx.timeout) {
        Ok(output) if output.code == Some(0) => {
            let text = String::from_utf8_lossy(&output.stdout);
            let targets = parse_agent_names(&text);
            if !targets.is_empty() {
                sources.push(format!(
                    "{} -name: {}",
                    program.display(),
                    targets.join(", ")
                ));
            }
            Some(targets)
        }
        Ok(output) => {
            notes.push(format!(
                "{} -name exited with {:?}",
                program.display(),
                output.code
            ));
            Some(Vec::new())
        }
        Err(_) => {
            notes.push(format!("{} -name did not finish", program.display()));
            Some(Vec::new())
        }
    }
}

/// The `gfx…` names in `rocm_agent_enumerator -name` output, without the CPU's `gfx000`.
fn parse_agent_names(text: &str) -> Vec<String> {
    let mut targets: Vec<String> = text
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .filter(|t| {
            t.strip_prefix("gfx").is_some_and(|rest| {
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric())
            })
        })
        .filter(|t| t != "gfx000")
        .collect();
    targets.sort();
    targets.dedup();
    targets
}

/// The `amd` provider in the [registry](crate::registry).
pub(crate) struct Amd;

const VARIABLES: &[EnvVar] = &[
    EnvVar::new(
        FORCE_GFX_ARCH_ENV,
        VarRole::Override,
        "the GPU targets, such as `gfx90a,gfx942` (reference override)",
    )
    .checked(|v| parse_gfx_arch_override(v).map(drop).map_err(|e| e.expected)),
    EnvVar::new(
        FORCE_ROCM_VERSION_ENV,
        VarRole::Override,
        "the ROCm version, such as `6.4.1` (reference override)",
    )
    .checked(|v| {
        parse_rocm_version_override(v)
            .map(drop)
            .map_err(|e| e.expected)
    }),
    EnvVar::new(
        HSA_OVERRIDE_ENV,
        VarRole::Location,
        "every AMD GPU's target as `M.m.s`, honoured as the ROCm runtime does",
    ),
    EnvVar::new(
        ROCM_PATH_ENV,
        VarRole::Location,
        "the ROCm installation (default `/opt/rocm`): its version file and `rocm_agent_enumerator`",
    ),
];

impl Provider for Amd {
    fn namespace(&self) -> &'static str {
        NAMESPACE
    }

    fn detection(&self) -> &'static str {
        "The GPUs' gfx targets from the KFD topology in sysfs (no `rocminfo` needed), `HSA_OVERRIDE_GFX_VERSION` honoured as the ROCm runtime does, and the ROCm version from the installation's version file (`ROCM_PATH`)."
    }

    fn hardware(&self) -> Option<&'static str> {
        Some("AMD GPUs")
    }

    fn variables(&self) -> &'static [EnvVar] {
        VARIABLES
    }

    fn evidence(&self, ctx: &DetectContext, evidence: &mut Evidence) {
        evidence.insert(
            "kfd_nodes".into(),
            crate::system_file::listing(&ctx.sysroot.path(KFD_NODES), None),
        );
        // A ROCm upgrade changes rocm_version without a reboot.
        let versions: Vec<String> = rocm_dirs(ctx)
            .iter()
            .map(|dir| {
                ctx.sysroot
                    .read_to_string(format!("{dir}/.info/version"))
                    .unwrap_or_default()
            })
            .collect();
        evidence.insert("rocm_version".into(), versions.join("|"));
    }

    fn snapshot_files(&self, ctx: &DetectContext) -> Vec<SnapshotFile> {
        let mut files = vec![SnapshotFile::Copy(format!("{KFD_NODES}/*/properties"))];
        files.extend(
            rocm_dirs(ctx)
                .into_iter()
                .map(|dir| SnapshotFile::Copy(format!("{dir}/.info/version"))),
        );
        files.push(SnapshotFile::Marker("/dev/kfd".into()));
        files
    }

    fn facts_section(&self) -> FactsSection {
        FactsSection::Table(&["gfx_arch", "rocm_version"])
    }

    fn facts(
        &self,
        value: &toml::Value,
        _: &FactsInput<'_>,
    ) -> Result<Option<Derived>, FactsError> {
        facts(facts_section::as_table(value, NAMESPACE)?).map(Some)
    }

    fn all_features(&self) -> Vec<FeatureSupport> {
        all_configs()
    }

    fn detect(&self, ctx: &DetectContext) -> Detected {
        detect(ctx).into()
    }
}

/// The `[amd]` facts: GPU targets and the ROCm version.
fn facts(t: &toml::Table) -> Result<Derived, FactsError> {
    let mut gfx = Vec::new();
    if let Some(v) = t.get("gfx_arch") {
        for (path, s) in facts_section::string_list(v, "amd.gfx_arch")? {
            let target = s.trim().to_ascii_lowercase();
            crate::ranges::check_gfx(&target).map_err(|e| facts_section::invalid(&path, e))?;
            gfx.push(target);
        }
    }
    let rocm = match t.get("rocm_version") {
        None => None,
        Some(v) => {
            let s = facts_section::as_str(v, "amd.rocm_version")?;
            Some(parse_rocm_version_override(s).map_err(|_| {
                facts_section::invalid(
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
    Ok((supported_from_facts(&gfx, rocm), label.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sysroot;

    fn values(f: &FeatureSupport) -> Vec<&str> {
        f.values.iter().map(|v| v.as_str()).collect()
    }

    #[test]
    fn kfd_versions_encode_minor_and_stepping_in_hex() {
        assert_eq!(gfx_name(90000).as_deref(), Some("gfx900"));
        assert_eq!(gfx_name(90012).as_deref(), Some("gfx90c"));
        assert_eq!(gfx_name(90402).as_deref(), Some("gfx942"));
        assert_eq!(gfx_name(100300).as_deref(), Some("gfx1030"));
        assert_eq!(gfx_name(110500).as_deref(), Some("gfx1150"));
        assert_eq!(gfx_name(120001).as_deref(), Some("gfx1201"));
    }

    #[test]
    fn targets_sort_as_strings() {
        let f = supported_from_facts(
            &["gfx90a".into(), "gfx1030".into(), "gfx90a".into()],
            Some((6, 4)),
        );
        assert_eq!(values(&f[0]), ["gfx1030", "gfx90a"]);
        assert!(f[0].multi_value);
        assert_eq!(values(&f[1]), ["6.4"]);
        assert!(!f[1].multi_value);
        assert!(supported_from_facts(&[], None).is_empty());
        assert_eq!(
            supported_from_facts(&[], Some((6, 3)))[0].name.as_str(),
            "rocm_version"
        );
    }

    #[test]
    fn all_configs_lists() {
        let all = all_configs();
        assert_eq!(all[0].values.len(), 14);
        assert_eq!(values(&all[1])[..2], ["7.10", "7.9"]);
        assert_eq!(values(&all[1])[10..], ["7.0", "6.4", "6.3"]);
    }

    #[test]
    fn overrides() {
        assert_eq!(
            parse_gfx_arch_override("gfx1100, gfx90a;gfx942  gfx1100").unwrap(),
            ["gfx1100", "gfx90a", "gfx942"]
        );
        assert!(parse_gfx_arch_override("nvidia").is_err());
        assert!(parse_gfx_arch_override(" ; ").is_err());
        assert_eq!(parse_rocm_version_override("6.4.1"), Ok((6, 4)));
        assert_eq!(parse_rocm_version_override("7.0"), Ok((7, 0)));
        let e = parse_rocm_version_override("six").unwrap_err();
        assert!(e.to_string().contains(FORCE_ROCM_VERSION_ENV));
        assert!(parse_rocm_version_override("6.4.1.2").is_err());
    }

    #[test]
    fn version_files_and_hsa_override_parse() {
        assert_eq!(parse_rocm_version_file("6.4.1-120\n"), Some((6, 4)));
        assert_eq!(parse_rocm_version_file("7.0.0"), Some((7, 0)));
        assert_eq!(parse_rocm_version_file("garbage"), None);
        assert_eq!(parse_hsa_override("11.0.0"), Some(110000));
        assert_eq!(parse_hsa_override("10.3.0"), Some(100300));
        assert_eq!(parse_hsa_override("11"), None);
    }

    #[test]
    fn agent_names() {
        assert_eq!(
            parse_agent_names("gfx000\ngfx90a\ngfx1030\ngfx90a\n"),
            ["gfx1030", "gfx90a"]
        );
        assert!(parse_agent_names("error: nothing").is_empty());
    }

    /// A sysfs tree with a CPU node and GPU nodes of the given versions.
    fn kfd_tree(versions: &[u32]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let nodes = dir.path().join("sys/class/kfd/kfd/topology/nodes");
        std::fs::create_dir_all(nodes.join("0")).unwrap();
        std::fs::write(
            nodes.join("0/properties"),
            "cpu_cores_count 16\nsimd_count 0\ngfx_target_version 0\n",
        )
        .unwrap();
        for (i, v) in versions.iter().enumerate() {
            let node = nodes.join((i + 1).to_string());
            std::fs::create_dir_all(&node).unwrap();
            std::fs::write(
                node.join("properties"),
                format!(
                    "cpu_cores_count 0\nsimd_count 304\ngfx_target_version {v}\nvendor_id 4098\n"
                ),
            )
            .unwrap();
        }
        dir
    }

    fn ctx_at(root: &std::path::Path) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(Sysroot::new(root));
        ctx.env.clear();
        ctx
    }

    #[test]
    fn reads_the_kfd_topology() {
        let dir = kfd_tree(&[90010, 100300, 90010]);
        std::fs::create_dir_all(dir.path().join("opt/rocm/.info")).unwrap();
        std::fs::write(dir.path().join("opt/rocm/.info/version"), "6.4.1-120\n").unwrap();
        let report = detect(&ctx_at(dir.path()));
        let f = report.features.unwrap();
        assert_eq!(values(&f[0]), ["gfx1030", "gfx90a"]);
        assert_eq!(values(&f[1]), ["6.4"]);
        assert!(
            report.source.contains("gfx1030, gfx90a"),
            "{}",
            report.source
        );
    }

    #[test]
    fn rocm_path_wins_over_opt_rocm() {
        let dir = kfd_tree(&[]);
        for (sub, v) in [("opt/rocm", "6.3.0"), ("custom/rocm", "7.1.0")] {
            std::fs::create_dir_all(dir.path().join(sub).join(".info")).unwrap();
            std::fs::write(dir.path().join(sub).join(".info/version"), v).unwrap();
        }
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert("ROCM_PATH".into(), "/custom/rocm".into());
        let report = detect(&ctx);
        let f = report.features.unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(values(&f[0]), ["7.1"]);
        assert!(report.note.unwrap().contains("no AMD GPU"));
    }

    #[test]
    fn hsa_override_replaces_gpu_targets_only() {
        let dir = kfd_tree(&[100302]);
        let mut ctx = ctx_at(dir.path());
        ctx.env.insert(HSA_OVERRIDE_ENV.into(), "10.3.0".into());
        let f = detect(&ctx).features.unwrap();
        assert_eq!(values(&f[0]), ["gfx1030"]);
        ctx.env.insert(HSA_OVERRIDE_ENV.into(), "bogus".into());
        let report = detect(&ctx);
        assert_eq!(values(&report.features.unwrap()[0]), ["gfx1032"]);
        assert!(report.note.unwrap().contains(HSA_OVERRIDE_ENV));
    }

    #[test]
    fn overrides_keep_their_order_and_fail_clearly() {
        let dir = kfd_tree(&[90010]);
        let mut ctx = ctx_at(dir.path());
        ctx.env
            .insert(FORCE_GFX_ARCH_ENV.into(), "gfx942,gfx1100".into());
        ctx.env
            .insert(FORCE_ROCM_VERSION_ENV.into(), "7.0.2".into());
        let f = detect(&ctx).features.unwrap();
        assert_eq!(values(&f[0]), ["gfx942", "gfx1100"]);
        assert_eq!(values(&f[1]), ["7.0"]);
        ctx.env.insert(FORCE_ROCM_VERSION_ENV.into(), "7".into());
        let report = detect(&ctx);
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains(FORCE_ROCM_VERSION_ENV));
    }

    #[test]
    fn no_kfd_in_a_sysroot_is_absent() {
        let dir = tempfile::tempdir().unwrap();
        let report = detect(&ctx_at(dir.path()));
        assert!(report.features.is_none());
        assert!(report.note.unwrap().contains("no AMD GPU"));
    }
}
