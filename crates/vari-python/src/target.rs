//! The one answer to "which Python is the target": [`TargetPython`], worked out by
//! [`resolve`] from a [`PythonRequest`], the environment, and the host platform.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use vari_core::markers::{MarkerError, TargetEnvironment};

use crate::abi::{Abi, Implementation};
use crate::discover::{find_interpreter, Found};
use crate::env::{DiscoveryEnv, Source};
use crate::error::PythonError;
use crate::platform::{normalize_tag, parse_major_minor, Os, TargetPlatform};
use crate::platform_name::{PlatformName, DEFAULT_MACOS_VERSION};
use crate::query::{Facts, Querier};
use crate::shim::{Shim, ShimKind};
use crate::tags::Tags;
use crate::version::PythonVersion;

/// What the caller asks for: each field is one user setting, `None` when not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonRequest {
    /// An interpreter or an environment directory.
    pub python: Option<PathBuf>,
    /// The Python version; with an interpreter it overrides the interpreter's version.
    pub version: Option<PythonVersion>,
    /// A named platform; it replaces the interpreter's or the host's platform.
    pub platform: Option<PlatformName>,
    /// The version to assume when no interpreter is found and no version is given; `None`
    /// makes that case an error ([`PythonError::NoInterpreter`]).
    pub fallback_version: Option<PythonVersion>,
}

/// How [`resolve`] runs: where its cache is and how long an interpreter may take.
#[derive(Debug, Clone)]
pub struct ResolveOptions {
    /// The cache directory (answers go to `DIR/python/`); `None`: no cache.
    pub cache_dir: Option<PathBuf>,
    /// The time limit of one interpreter query.
    pub timeout: Duration,
}

impl ResolveOptions {
    /// The default time limit of one interpreter query.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

    /// vari's cache directory (per [`vari_fs::cache_dir`]) and the default time limit.
    pub fn from_process_env() -> Self {
        Self {
            cache_dir: vari_fs::cache_dir(),
            timeout: Self::DEFAULT_TIMEOUT,
        }
    }
}

/// The interpreter behind a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The program as found (a venv's `bin/python`, a pyenv shim, …).
    pub path: PathBuf,
    /// `sys.executable` as the interpreter reported it.
    pub executable: PathBuf,
    /// The file that finally runs: links resolved, shims seen through.
    pub real: PathBuf,
    /// `sys.prefix`.
    pub prefix: PathBuf,
    /// `sys.base_prefix` (differs from `prefix` in a virtual environment).
    pub base_prefix: PathBuf,
    /// The interpreter's own version (`patch` always set).
    pub version: PythonVersion,
    /// The interpreter's own platform.
    pub platform: TargetPlatform,
}

/// Which setting decided the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformOrigin {
    /// The interpreter's own platform.
    Interpreter,
    /// A named platform.
    Named(PlatformName),
    /// The host platform the caller passed in.
    Host,
}

/// Which source won, and why: a value the front-end can print (`-v`) or inspect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// How the interpreter was found, when there is one.
    pub found: Option<Found>,
    /// The real interpreter (links resolved, shims seen through), when there is one.
    pub real: Option<PathBuf>,
    /// The version requested in place of the interpreter's (or for a described target).
    pub requested_version: Option<PythonVersion>,
    /// The version assumed because nothing else gave one.
    pub fallback_version: Option<PythonVersion>,
    /// Where the platform came from.
    pub platform: PlatformOrigin,
}

impl fmt::Display for Origin {
    /// `requested /x/bin/python`, `VIRTUAL_ENV=/x: /x/bin/python3`,
    /// `python3 on PATH: /root/.pyenv/shims/python3 (pyenv shim) → /root/.pyenv/versions/3.11.7/bin/python3.11`,
    /// `described: Python 3.12 on x86_64-manylinux_2_28`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            Some(found) => {
                match found.source {
                    Source::Given => write!(f, "requested {}", found.given.display())?,
                    Source::VirtualEnv | Source::CondaPrefix => {
                        write!(f, "{}={}", found.source, found.given.display())?;
                    }
                    Source::Path(_) => write!(f, "{}", found.source)?,
                }
                if found.given != found.interpreter || matches!(found.source, Source::Path(_)) {
                    write!(f, ": {}", found.interpreter.display())?;
                }
                if let Some(shim) = &found.shim {
                    write!(f, " ({})", shim.kind)?;
                }
                if let Some(real) = &self.real {
                    if *real != found.interpreter {
                        write!(f, " → {}", real.display())?;
                    }
                }
                if let Some(version) = &self.requested_version {
                    write!(f, "; version {version} as requested")?;
                }
            }
            None => {
                f.write_str("described: ")?;
                match (&self.requested_version, &self.fallback_version) {
                    (Some(v), _) => write!(f, "Python {v}")?,
                    (None, Some(v)) => write!(f, "Python {v} (assumed: no interpreter found)")?,
                    (None, None) => f.write_str("Python")?,
                }
            }
        }
        match &self.platform {
            PlatformOrigin::Interpreter => Ok(()),
            PlatformOrigin::Named(name) => write!(f, " on {name}"),
            PlatformOrigin::Host => write!(f, " on this machine's platform"),
        }
    }
}

/// The target Python environment: the one value markers, `abi_dependency` and wheel tags read.
#[derive(Debug, Clone)]
pub struct TargetPython {
    /// The interpreter, when there is one (none for a described target).
    pub interpreter: Option<Interpreter>,
    /// The target's Python version.
    pub version: PythonVersion,
    /// The implementation.
    pub implementation: Implementation,
    /// The interpreter tag and ABI tags.
    pub abi: Abi,
    /// The directories packages are installed into (purelib, platlib, then the other
    /// site-packages directories on `sys.path`); empty without an interpreter.
    pub site_packages: Vec<PathBuf>,
    /// The target platform.
    pub platform: TargetPlatform,
    /// Which source won and why.
    pub origin: Origin,
    /// The PEP 508 marker environment.
    markers: TargetEnvironment,
    /// The compatible wheel tags, best first.
    tags: Tags,
}

impl TargetPython {
    /// The PEP 508 marker environment: a real interpreter's own values for every marker, with
    /// the requested version or platform put in where one was requested; for a described
    /// target, the values the version and platform imply (kernel release and version empty).
    pub fn marker_environment(&self) -> &TargetEnvironment {
        &self.markers
    }

    /// The compatible wheel tags, in the order `packaging.tags.sys_tags()` gives them.
    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    /// The prefix (`sys.prefix`), when there is an interpreter.
    pub fn prefix(&self) -> Option<&Path> {
        self.interpreter.as_ref().map(|i| i.prefix.as_path())
    }
}

impl fmt::Display for TargetPython {
    /// `CPython 3.11.7 (cp311) on Linux x86_64 glibc 2.36 — VIRTUAL_ENV=/x: /x/bin/python`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} ({}) on {} — {}",
            self.implementation,
            self.version,
            self.abi.abis.join(", "),
            self.platform,
            self.origin
        )
    }
}

/// Works out the target Python.
///
/// The interpreter is the requested path (an interpreter or an environment directory; it must
/// exist and be a Python), else `VIRTUAL_ENV`, else `CONDA_PREFIX`, else `python3` on `PATH`
/// (pyenv and asdf shims resolved to the interpreter they run). When both a version and a
/// platform are requested and no path is, the target is described and no interpreter is
/// looked for. The version is the requested one, else the interpreter's, else the fallback;
/// the platform is the named one, else the interpreter's, else `host`.
///
/// `env` supplies the variables (`VIRTUAL_ENV`, `CONDA_PREFIX`, `PATH`, `PYENV_*`, `ASDF_*`,
/// `MACOSX_DEPLOYMENT_TARGET`) and the working directory.
pub fn resolve(
    request: &PythonRequest,
    env: &DiscoveryEnv,
    host: &vari_core::Platform,
    options: &ResolveOptions,
) -> Result<TargetPython, PythonError> {
    let described =
        request.python.is_none() && request.version.is_some() && request.platform.is_some();
    let found = if described {
        None
    } else {
        find_interpreter(request.python.as_deref(), env)?
    };
    let querier = Querier {
        cache_dir: options.cache_dir.clone(),
        timeout: options.timeout,
    };
    let interpreter = match &found {
        Some(found) => {
            let cacheable = !matches!(
                found.shim,
                Some(Shim {
                    kind: ShimKind::Script,
                    ..
                })
            );
            let facts = querier.facts(found.program(), cacheable, &found.source, &found.given)?;
            Some((interpreter_from(found, &facts), facts))
        }
        None => None,
    };
    let macos_target = env.var_str("MACOSX_DEPLOYMENT_TARGET");
    let (platform, platform_origin) = match (&request.platform, &interpreter) {
        (Some(name), _) => (
            name.platform(macos_target),
            PlatformOrigin::Named(name.clone()),
        ),
        (None, Some((interp, _))) => (interp.platform.clone(), PlatformOrigin::Interpreter),
        (None, None) => {
            let macos = macos_target
                .and_then(parse_major_minor)
                .unwrap_or(DEFAULT_MACOS_VERSION);
            let platform = TargetPlatform::from_core(host, macos).unwrap_or(TargetPlatform {
                os: Os::Linux,
                arch: host.machine.clone().unwrap_or_default(),
            });
            (platform, PlatformOrigin::Host)
        }
    };
    let fallback = if request.version.is_none() && interpreter.is_none() {
        Some(request.fallback_version.ok_or(PythonError::NoInterpreter)?)
    } else {
        None
    };
    let version = request
        .version
        .or(fallback)
        .or_else(|| interpreter.as_ref().map(|(i, _)| i.version))
        .ok_or(PythonError::NoInterpreter)?;

    let (implementation, abi) = match &interpreter {
        Some((_, facts)) if request.version.is_none() => {
            let implementation = Implementation::from_name(&facts.implementation_name);
            let abi = Abi {
                implementation: implementation.clone(),
                language_version: (version.major, version.minor),
                interpreter: format!("{}{}", implementation.tag_prefix(), facts.py_version_nodot),
                abis: facts.abis.clone(),
            };
            (implementation, abi)
        }
        Some((_, facts)) if facts.implementation_name != "cpython" => {
            // Another implementation at another version: its ABI cannot be guessed, so only
            // tags without an ABI (`none`) apply.
            let implementation = Implementation::from_name(&facts.implementation_name);
            let abi = Abi {
                implementation: implementation.clone(),
                language_version: (version.major, version.minor),
                interpreter: format!("{}{}", implementation.tag_prefix(), version.nodot()),
                abis: Vec::new(),
            };
            (implementation, abi)
        }
        _ => (Implementation::CPython, Abi::cpython(&version)),
    };

    let markers = markers(
        &version,
        &platform,
        &request.platform,
        &interpreter,
        request.version.is_some(),
    )
    .map_err(|e| PythonError::InvalidVersion {
        version: format!("{version} ({e})"),
    })?;
    let tags = Tags::new(&abi, &platform);
    let site_packages = interpreter
        .as_ref()
        .map(|(_, facts)| site_packages(facts))
        .unwrap_or_default();
    let origin = Origin {
        real: interpreter.as_ref().map(|(i, _)| i.real.clone()),
        found,
        requested_version: request.version,
        fallback_version: fallback,
        platform: platform_origin,
    };
    Ok(TargetPython {
        interpreter: interpreter.map(|(i, _)| i),
        version,
        implementation,
        abi,
        site_packages,
        platform,
        origin,
        markers,
        tags,
    })
}

/// The marker environment: the interpreter's own values, then the requested version and
/// platform put in.
fn markers(
    version: &PythonVersion,
    platform: &TargetPlatform,
    named_platform: &Option<PlatformName>,
    interpreter: &Option<(Interpreter, Facts)>,
    version_requested: bool,
) -> Result<TargetEnvironment, MarkerError> {
    let mut env = TargetEnvironment::from_platform(Some(&platform.to_core()), &version.full())?;
    if let Some((_, facts)) = interpreter {
        for (name, value) in &facts.markers {
            let is_version = matches!(name.as_str(), "python_version" | "python_full_version")
                || (name == "implementation_version" && facts.implementation_name == "cpython");
            let is_platform = matches!(
                name.as_str(),
                "os_name"
                    | "platform_machine"
                    | "platform_release"
                    | "platform_system"
                    | "platform_version"
                    | "sys_platform"
            );
            if (is_version && version_requested) || (is_platform && named_platform.is_some()) {
                continue;
            }
            env = env.with_value(name, value)?;
        }
    }
    Ok(env)
}

/// The interpreter's install directories: purelib, platlib, then the other site directories
/// on its `sys.path`, each once.
fn site_packages(facts: &Facts) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let candidates = [&facts.purelib, &facts.platlib]
        .into_iter()
        .flatten()
        .chain(&facts.site_dirs);
    for dir in candidates {
        let dir = PathBuf::from(dir);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// The interpreter as the query described it.
fn interpreter_from(found: &Found, facts: &Facts) -> Interpreter {
    let (major, minor, patch, _, _) = facts.version.clone();
    let version = PythonVersion {
        major,
        minor,
        patch: Some(patch),
        free_threaded: facts.gil_disabled,
    };
    let executable = PathBuf::from(&facts.executable);
    let real = std::fs::canonicalize(found.program())
        .ok()
        .filter(|_| !matches!(&found.shim, Some(s) if s.kind == ShimKind::Script))
        .or_else(|| std::fs::canonicalize(&executable).ok())
        .unwrap_or_else(|| executable.clone());
    Interpreter {
        path: found.interpreter.clone(),
        executable,
        real,
        prefix: PathBuf::from(&facts.prefix),
        base_prefix: PathBuf::from(&facts.base_prefix),
        version,
        platform: interpreter_platform(facts),
    }
}

/// The platform an interpreter runs on, as packaging's `platform_tags()` sees it.
fn interpreter_platform(facts: &Facts) -> TargetPlatform {
    let system = facts
        .markers
        .get("platform_system")
        .map(String::as_str)
        .unwrap_or("");
    let sysconfig = normalize_tag(&facts.sysconfig_platform);
    let is_32bit = facts.pointer_bits == 32;
    match system {
        "Linux" => {
            let Some(mut arch) = sysconfig.strip_prefix("linux_").map(str::to_owned) else {
                return other(system, sysconfig);
            };
            if is_32bit {
                arch = match arch.as_str() {
                    "x86_64" => "i686".to_owned(),
                    "aarch64" => "armv8l".to_owned(),
                    _ => arch,
                };
            }
            let os = if let Some((major, minor)) = facts.musl {
                Os::Musllinux { major, minor }
            } else if let Some((major, minor)) = facts.glibc.as_deref().and_then(parse_major_minor)
            {
                if manylinux_abi_matches(&arch, facts.elf.as_ref()) {
                    Os::Manylinux { major, minor }
                } else {
                    Os::Linux
                }
            } else {
                Os::Linux
            };
            TargetPlatform { os, arch }
        }
        "Darwin" => {
            let (major, minor) = facts
                .mac_version
                .as_deref()
                .and_then(parse_major_minor)
                .unwrap_or(DEFAULT_MACOS_VERSION);
            let machine = facts.mac_machine.clone().unwrap_or_default();
            let arch = if is_32bit {
                if machine.starts_with("ppc") {
                    "ppc".to_owned()
                } else {
                    "i386".to_owned()
                }
            } else {
                machine
            };
            TargetPlatform {
                os: Os::Macos { major, minor },
                arch,
            }
        }
        "Windows" => {
            let arch = match sysconfig.as_str() {
                "win32" => "x86".to_owned(),
                other => other.strip_prefix("win_").unwrap_or(other).to_owned(),
            };
            TargetPlatform {
                os: Os::Windows,
                arch,
            }
        }
        _ => other(system, sysconfig),
    }
}

fn other(system: &str, tag: String) -> TargetPlatform {
    TargetPlatform {
        os: Os::Other {
            system: system.to_owned(),
            tag: tag.clone(),
        },
        arch: tag,
    }
}

/// packaging's `_have_compatible_abi`: 32-bit x86 and Arm interpreters must really be i386 /
/// hard-float ELF files for manylinux wheels to load.
fn manylinux_abi_matches(arch: &str, elf: Option<&crate::query::ElfHeader>) -> bool {
    const EM_386: u16 = 3;
    const EM_ARM: u16 = 40;
    const EF_ARM_ABIMASK: u32 = 0xFF00_0000;
    const EF_ARM_ABI_VER5: u32 = 0x0500_0000;
    const EF_ARM_ABI_FLOAT_HARD: u32 = 0x0000_0400;
    match arch {
        "armv8l" | "armv7l" => elf.is_some_and(|e| {
            e.class == 1
                && e.machine == EM_ARM
                && e.flags & EF_ARM_ABIMASK == EF_ARM_ABI_VER5
                && e.flags & EF_ARM_ABI_FLOAT_HARD == EF_ARM_ABI_FLOAT_HARD
        }),
        "i686" => elf.is_some_and(|e| e.class == 1 && e.machine == EM_386),
        _ => true,
    }
}
