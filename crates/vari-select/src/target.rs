//! The target a selection is made for: the hardware (what each namespace supports) and the
//! Python environment (version, interpreter, tags, installed packages).
//!
//! The hardware comes from one of four places: a `vari-profile/1` JSON file, a TOML file of
//! hardware facts, a snapshot of another machine's files (a sysroot), or this machine's
//! detection. The Python environment is `vari_python`'s one answer; the marker environment that
//! `enable-if` sees, `abi_dependency` and wheel tags all read that same answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use vari_core::markers::TargetEnvironment;
use vari_core::{Platform, Profile};
use vari_detect::facts::{profile_from_facts, FactsError};
use vari_detect::{detect, DetectContext, DetectOptions, Detection, Sysroot};
use vari_python::{DiscoveryEnv, PlatformName, PythonRequest, ResolveOptions, TargetPython};

use crate::error::InputError;
pub use crate::hardware::{Hardware, HardwareSource};
use crate::release::{read_bytes, text_of};

/// How to find the target.
#[derive(Debug, Clone, Default)]
pub struct TargetSettings {
    /// A profile file: `vari-profile/1` JSON, or hardware facts when its name ends in `.toml`.
    pub profile: Option<PathBuf>,
    /// A snapshot directory (or any file tree) to detect from instead of this machine.
    pub sysroot: Option<PathBuf>,
    /// Which Python environment, or a described one.
    pub python: PythonRequest,
    /// The environment variables detection and Python discovery read (overrides, `VIRTUAL_ENV`,
    /// …). Usually the process's.
    pub env: BTreeMap<String, String>,
    /// Whether this machine's detection may come from (and go to) the on-disk cache.
    pub use_cache: bool,
}

impl TargetSettings {
    /// Settings for this machine with the process's environment variables. With no
    /// interpreter to be found and no version given, the Python is taken to be
    /// [`TargetSettings::FALLBACK_PYTHON`] (the origin says so).
    pub fn from_process_env() -> Self {
        Self {
            env: std::env::vars().collect(),
            use_cache: true,
            python: PythonRequest {
                fallback_version: Self::FALLBACK_PYTHON.parse().ok(),
                ..PythonRequest::default()
            },
            ..Self::default()
        }
    }

    /// The Python version assumed when no interpreter is found and none is given.
    pub const FALLBACK_PYTHON: &'static str = "3.12";
}

/// Why the target could not be established.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// A profile or facts file is wrong.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A directory was given where a profile file was expected.
    #[error("{}: is a directory, not a profile (a snapshot directory is read as a sysroot)", .0.display())]
    ProfileIsDirectory(PathBuf),
    /// An override variable has a value that cannot be used.
    #[error(transparent)]
    Override(#[from] vari_detect::overrides::OverrideError),
    /// The Python environment could not be found or asked.
    #[error(transparent)]
    Python(#[from] vari_python::PythonError),
    /// Detection from a sysroot failed.
    #[error("{0}")]
    Detection(String),
}

/// Everything a selection needs to know about the machine and environment installed for.
#[derive(Debug, Clone)]
pub struct Target {
    /// The hardware.
    pub hardware: Hardware,
    /// The Python environment (or described target).
    pub python: TargetPython,
    /// The PEP 508 marker environment `enable-if` and dependency markers see.
    pub markers: TargetEnvironment,
    /// Decisions worth telling the user (where the platform came from, …).
    pub notes: Vec<String>,
}

impl Target {
    /// Finds the target the settings describe.
    pub fn resolve(settings: &TargetSettings) -> Result<Self, TargetError> {
        Self::resolve_described(settings).map(|(target, _)| target)
    }

    /// [`Target::resolve`], with what describes its hardware as read: a profile's or facts
    /// file's bytes, or the `vari-profile/1` JSON detected from a snapshot; `None` for this
    /// machine. The one read of the file, for whoever also needs its hash.
    pub(crate) fn resolve_described(
        settings: &TargetSettings,
    ) -> Result<(Self, Option<Vec<u8>>), TargetError> {
        let mut context = DetectContext::from_process_env(Sysroot::host());
        context.env = settings.env.clone();
        vari_detect::overrides::check_overrides(&context)?;
        let host_platform = vari_detect::detect_platform(&context);
        let discovery = DiscoveryEnv::new(settings.env.iter());
        let options = ResolveOptions {
            cache_dir: vari_fs::cache_dir_with(|name| settings.env.get(name).cloned()),
            timeout: ResolveOptions::DEFAULT_TIMEOUT,
        };
        let mut python =
            vari_python::resolve(&settings.python, &discovery, &host_platform, &options)?;
        tracing::debug!(python = %python.origin, "target Python");
        // abi_dependency reads the packages installed where this Python installs.
        context.python = python
            .site_packages
            .first()
            .cloned()
            .or_else(|| python.prefix().map(Path::to_path_buf));
        let (mut hardware, described) = resolve_hardware(settings, context)?;
        let mut notes = Vec::new();
        // A profile's platform decides the target's platform: its tags, and the name uv is
        // given. It must agree with `--python-platform` when both are given.
        if let Some(name) = profile_platform(settings, &hardware, &python)? {
            notes.push(format!(
                "platform {name} from {} (its [platform])",
                hardware.source
            ));
            let request = PythonRequest {
                platform: Some(name),
                ..settings.python.clone()
            };
            python = vari_python::resolve(&request, &discovery, &host_platform, &options)?;
        }
        // Another architecture's target: this machine's CPU facts cannot describe it.
        if let Some(platform) = &settings.python.platform {
            let target_arch = platform.platform(None).arch;
            notes.extend(crate::cross_cpu::apply_target_baseline(
                &mut hardware,
                platform.as_str(),
                &target_arch,
                host_platform.machine.as_deref(),
            ));
        }
        let markers = marker_environment(settings, &hardware, &python, &mut notes)?;
        // Every command's `-v` shows them.
        for note in &notes {
            tracing::debug!("{note}");
        }
        let target = Self {
            hardware,
            python,
            markers,
            notes,
        };
        Ok((target, described))
    }
}

/// The platform a profile (or facts file, or snapshot) decides, when it is not the Python's
/// own: its `platform` table as a name uv knows ([`PlatformName::for_profile`]: the glibc
/// level it gives, else the documented baseline). `None` for this machine's hardware, a
/// profile that names no machine, a `--python-platform` that agrees with it, or a profile of
/// the Python's own system and machine that gives no C library. A profile that contradicts
/// `--python-platform` is an error naming both.
fn profile_platform(
    settings: &TargetSettings,
    hardware: &Hardware,
    python: &TargetPython,
) -> Result<Option<PlatformName>, TargetError> {
    if matches!(hardware.source, HardwareSource::Host { .. }) {
        return Ok(None);
    }
    let Some(platform) = &hardware.profile.platform else {
        return Ok(None);
    };
    let at = |message: String| {
        TargetError::Input(InputError::at(
            source_path(&hardware.source),
            "platform",
            message,
        ))
    };
    if let Some(named) = &settings.python.platform {
        return match named.agrees_with(platform) {
            true => Ok(None),
            false => Err(at(format!(
                "{} {} contradicts --python-platform {named}: give one or the other, or \
                 a profile of that platform",
                platform.system.as_deref().unwrap_or("Linux"),
                platform.machine.as_deref().unwrap_or("?"),
            ))),
        };
    }
    let name = match PlatformName::for_profile(platform) {
        Ok(Some(name)) => name,
        Ok(None) => return Ok(None),
        // A snapshot of a machine whose platform uv has no name for (ppc64le, s390x) keeps
        // the Python's platform, as before; a profile written for a target must name one.
        Err(e) if matches!(hardware.source, HardwareSource::Sysroot(_)) => {
            tracing::debug!("{}: {e}: the Python's platform is used", hardware.source);
            return Ok(None);
        }
        Err(e) => return Err(at(e.to_string())),
    };
    let theirs = name.platform(None);
    let same_machine =
        theirs.arch == python.platform.arch && theirs.system() == python.platform.system();
    if same_machine && (platform.libc.is_none() || theirs.os == python.platform.os) {
        return Ok(None);
    }
    Ok(Some(name))
}

/// The marker environment: the Python's own; the platform from `--python-platform` when
/// described, else from a profile that gives one, else the Python's (this machine's).
fn marker_environment(
    settings: &TargetSettings,
    hardware: &Hardware,
    python: &TargetPython,
    notes: &mut Vec<String>,
) -> Result<TargetEnvironment, TargetError> {
    let own = python.marker_environment().clone();
    let from_file = !matches!(hardware.source, HardwareSource::Host { .. });
    if settings.python.platform.is_some() || !from_file {
        return Ok(own);
    }
    match &hardware.profile.platform {
        Some(platform) if platform.system.is_some() || platform.machine.is_some() => {
            TargetEnvironment::from_platform(Some(platform), &python.version.full()).map_err(|e| {
                TargetError::Input(InputError::at(
                    source_path(&hardware.source),
                    "platform",
                    e.to_string(),
                ))
            })
        }
        _ => {
            notes.push(format!(
                "{} gives no platform: markers use this machine's ({} {})",
                hardware.source,
                own.get("platform_system").unwrap_or("unknown"),
                own.get("platform_machine").unwrap_or("unknown"),
            ));
            Ok(own)
        }
    }
}

fn source_path(source: &HardwareSource) -> &Path {
    match source {
        HardwareSource::Host { .. } => Path::new("this machine"),
        HardwareSource::Profile(p) | HardwareSource::Facts(p) | HardwareSource::Sysroot(p) => p,
    }
}

/// The hardware lists the settings name, and what describes them as read (see
/// [`Target::resolve_described`]).
fn resolve_hardware(
    settings: &TargetSettings,
    context: DetectContext,
) -> Result<(Hardware, Option<Vec<u8>>), TargetError> {
    if let Some(path) = &settings.profile {
        let (hardware, bytes) = read_profile_bytes(path, context)?;
        return Ok((hardware, Some(bytes)));
    }
    if let Some(root) = &settings.sysroot {
        // `open` reads the snapshot's manifest: what the node's driver libraries answered is
        // not in its files, and a broken manifest must be an error, not a CPU-only answer.
        let sysroot = Sysroot::open(root.clone()).map_err(|e| match e {
            vari_detect::SysrootError::NotADirectory(path) => {
                InputError::new(path, "is not a directory")
            }
            vari_detect::SysrootError::Manifest(e) => InputError::at(e.path, e.key, e.message),
        })?;
        let context = DetectContext {
            sysroot: sysroot.clone(),
            ..context
        };
        let detection = detect(&DetectOptions {
            context,
            use_cache: false,
        });
        let hardware = detected(detection, HardwareSource::Sysroot(root.clone()), sysroot);
        // A snapshot is described by what was detected from it: its files are many and
        // unbounded, the profile they make is one small document.
        let described = hardware.profile.to_json().into_bytes();
        return Ok((hardware, Some(described)));
    }
    let detection = detect(&DetectOptions {
        context,
        use_cache: settings.use_cache,
    });
    let overrides = set_overrides(&settings.env);
    let hardware = detected(
        detection,
        HardwareSource::Host { overrides },
        Sysroot::host(),
    );
    Ok((hardware, None))
}

/// The override variables set in `env` (`NAME=value`), in the registry's order, their values
/// escaped so that a log line cannot be steered by them.
fn set_overrides(env: &BTreeMap<String, String>) -> Vec<String> {
    vari_detect::registry::variables()
        .filter(|v| v.role == vari_detect::provider::VarRole::Override)
        .filter_map(|v| {
            let value = env.get(v.name).filter(|value| !value.trim().is_empty())?;
            Some(format!("{}={}", v.name, value.escape_debug()))
        })
        .collect()
}

fn detected(detection: Detection, source: HardwareSource, sysroot: Sysroot) -> Hardware {
    for note in &detection.notes {
        tracing::debug!("{note}");
    }
    let absent = detection
        .reports
        .iter()
        .filter(|r| r.features.is_none())
        .filter_map(|r| Some((r.namespace.clone(), r.note.clone()?)))
        .collect();
    Hardware {
        profile: detection.profile(),
        source,
        absent,
        detection: Some(detection),
        sysroot: Some(sysroot),
        warnings: Vec::new(),
    }
}

/// Reads a profile file: `vari-profile/1` JSON, or hardware facts when the name ends in
/// `.toml` (`context` is this machine's, for facts that inherit from it).
pub fn read_profile(path: &Path, context: DetectContext) -> Result<Hardware, TargetError> {
    read_profile_bytes(path, context).map(|(hardware, _)| hardware)
}

/// [`read_profile`], with the file's bytes as read (once, bounded).
fn read_profile_bytes(
    path: &Path,
    context: DetectContext,
) -> Result<(Hardware, Vec<u8>), TargetError> {
    if path.is_dir() {
        return Err(TargetError::ProfileIsDirectory(path.to_path_buf()));
    }
    let bytes = read_bytes(path)?;
    let text = text_of(path, bytes.clone())?;
    let hardware = hardware_of(path, &text, context)?;
    Ok((hardware, bytes))
}

/// The hardware a profile's `text` (read from `path`) describes.
fn hardware_of(path: &Path, text: &str, context: DetectContext) -> Result<Hardware, TargetError> {
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if is_toml {
        let base = path.parent().unwrap_or(Path::new("."));
        // Detecting this machine costs time; only facts that inherit from it need it.
        let host = match inherits_from_host(text) {
            true => Some(
                detect(&DetectOptions {
                    context,
                    use_cache: true,
                })
                .profile(),
            ),
            false => None,
        };
        let facts = profile_from_facts(text, base, host.as_ref()).map_err(|e| match e {
            FactsError::Invalid { path: key, message } => InputError::at(path, key, message),
            FactsError::Syntax(message) => {
                let (position, message) = compact_toml_error(&message);
                match position {
                    Some(at) => InputError::at(path, at, format!("not valid TOML: {message}")),
                    None => InputError::new(path, format!("not valid TOML: {message}")),
                }
            }
        })?;
        return Ok(Hardware {
            profile: facts.profile,
            warnings: facts
                .warnings
                .into_iter()
                .map(|w| InputError::at(path, w.path, w.message))
                .collect(),
            source: HardwareSource::Facts(path.to_path_buf()),
            absent: BTreeMap::new(),
            detection: None,
            sysroot: None,
        });
    }
    let profile = Profile::from_json(text).map_err(|e| match e {
        vari_core::profile::ProfileError::Invalid { path: key, message } => {
            let hint = if looks_like_toml(text) {
                " (this looks like TOML hardware facts: name the file *.toml)"
            } else {
                ""
            };
            InputError::at(path, key, format!("{message}{hint}"))
        }
    })?;
    Ok(Hardware {
        profile,
        source: HardwareSource::Profile(path.to_path_buf()),
        absent: BTreeMap::new(),
        detection: None,
        sysroot: None,
        warnings: Vec::new(),
    })
}

/// Whether text that failed as JSON parses as a TOML table (a facts file with another name).
fn looks_like_toml(text: &str) -> bool {
    !text.trim_start().starts_with('{')
        && vari_core::check_toml_depth(text).is_ok()
        && text.parse::<toml::Table>().is_ok()
}

/// Whether a facts document says `inherit = "host"` (malformed TOML is reported by the facts
/// reader itself).
fn inherits_from_host(text: &str) -> bool {
    if vari_core::check_toml_depth(text).is_err() {
        return false;
    }
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("inherit")
                .and_then(|v| v.as_str().map(|s| s == "host"))
        })
        .unwrap_or(false)
}

/// A `toml` parse error without its source excerpt: (`line L column C`, the explanation).
///
/// The crate renders errors as a multi-line snippet with a caret; a front-end reports one line.
fn compact_toml_error(message: &str) -> (Option<String>, String) {
    let mut position = None;
    let mut parts = Vec::new();
    for line in message.lines().map(str::trim) {
        if let Some(at) = line.strip_prefix("TOML parse error at ") {
            position = Some(at.replace(", ", " "));
        } else if !line.is_empty() && !line.contains('|') {
            parts.push(line);
        }
    }
    (position, parts.join("; "))
}

/// The platform of the host as detection sees it (for a described Python without a platform).
pub fn host_platform() -> Platform {
    vari_detect::detect_platform(&DetectContext::from_process_env(Sysroot::host()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_set_override_variables_are_named_with_escaped_values() {
        let env: BTreeMap<String, String> = [
            (
                "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
                "12.8\u{1b}[2J",
            ),
            ("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", " "),
            ("PATH", "/usr/bin"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(
            set_overrides(&env),
            ["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.8\\u{1b}[2J"]
        );
    }

    #[test]
    fn toml_errors_lose_their_snippet() {
        let message = "TOML parse error at line 1, column 8\n  |\n1 | [nvidia\n  |        ^\ninvalid table header\nexpected `.`, `]`\n";
        assert_eq!(
            compact_toml_error(message),
            (
                Some("line 1 column 8".to_owned()),
                "invalid table header; expected `.`, `]`".to_owned()
            )
        );
    }

    #[test]
    fn toml_facts_are_recognised_by_their_shape() {
        assert!(looks_like_toml("[nvidia]\ncuda_version = \"12.8\"\n"));
        assert!(!looks_like_toml("{\"schema\": 1"));
        assert!(!looks_like_toml("not [ toml"));
    }
}
