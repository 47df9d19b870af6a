//! A machine class as every command takes it (`vari lock`, `vari mirror`, `vari proxy`,
//! `vari detect --class`): a name, the source describing its hardware (a profile, a facts file
//! or a snapshot directory), and its Python version and platform; and the one way to read it
//! into a [`Target`].
//!
//! The name's grammar and the command line's `[NAME=]PROFILE` are pure rules
//! (`vari_core::class`); what a path is (a directory is a snapshot, `*.toml` facts, anything
//! else `vari-profile/1` JSON) needs the file system, so it is told here, where profiles and
//! snapshots are read. A class's source is read once: for its hardware and for the bytes a lock
//! hashes ([`ResolvedClass::described_by`]), so that both always come from the same read.

use std::path::{Path, PathBuf};

use vari_core::class::{ClassArg, ClassName};
use vari_python::{PlatformName, PythonVersion};

use crate::target::{Target, TargetError, TargetSettings};

/// Where a machine class's hardware is described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassSource {
    /// A `vari-profile/1` JSON file (as `vari detect --json` prints it).
    Profile(PathBuf),
    /// A `.toml` file of hardware facts.
    Facts(PathBuf),
    /// A snapshot directory (`vari snapshot`), detected from as `--sysroot` does.
    Snapshot(PathBuf),
}

impl ClassSource {
    /// What `path` is: a directory is a snapshot, a name ending in `.toml` a facts file, anything
    /// else a profile (what is in it is checked when it is read).
    pub fn of(path: &Path) -> Self {
        let path_buf = path.to_path_buf();
        if path.is_dir() {
            return Self::Snapshot(path_buf);
        }
        let is_toml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
        match is_toml {
            true => Self::Facts(path_buf),
            false => Self::Profile(path_buf),
        }
    }

    /// The file or directory.
    pub fn path(&self) -> &Path {
        match self {
            Self::Profile(path) | Self::Facts(path) | Self::Snapshot(path) => path,
        }
    }

    /// The settings' hardware source replaced by this one.
    fn apply(&self, settings: &mut TargetSettings) {
        let (profile, sysroot) = match self {
            Self::Profile(path) | Self::Facts(path) => (Some(path.clone()), None),
            Self::Snapshot(path) => (None, Some(path.clone())),
        };
        settings.profile = profile;
        settings.sysroot = sysroot;
    }
}

/// One machine class: its name, what describes its hardware, and its Python.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineClass {
    /// Its name (the proxy's URLs, a lock's targets, `vari detect --class`'s answer).
    pub name: ClassName,
    /// What describes its hardware; `None`: not described (a lock then keeps every variant).
    pub source: Option<ClassSource>,
    /// Its Python version; `None`: the one the settings it is resolved with give.
    pub python_version: Option<PythonVersion>,
    /// Its platform; `None`: the one its source decides, else the settings'.
    pub python_platform: Option<PlatformName>,
}

impl MachineClass {
    /// The class a command line's `[NAME=]PROFILE` names, its source told by the file system.
    pub fn from_arg(arg: ClassArg) -> Self {
        Self::named(arg.name, Some(ClassSource::of(&arg.profile)))
    }

    /// A class with the Python the settings it is resolved with give.
    pub fn named(name: ClassName, source: Option<ClassSource>) -> Self {
        Self {
            name,
            source,
            python_version: None,
            python_platform: None,
        }
    }

    /// Reads the class: its target, with `base`'s environment and Python request, this class's
    /// source in place of any other hardware (none: this machine's), and its Python version
    /// and platform over `base`'s when it has them.
    pub fn resolve(&self, base: &TargetSettings) -> Result<ResolvedClass, TargetError> {
        resolve_source(
            self.source.as_ref(),
            self.python_version.as_ref(),
            self.python_platform.as_ref(),
            base,
        )
    }
}

/// The target of a hardware `source` (none: this machine), with `base`'s environment and
/// Python request and `version` and `platform` over it: what [`MachineClass::resolve`] does,
/// for a target that has a source and a Python but no class name (a lock's recorded targets
/// are named `cpu-py3.12`, which is no class name).
pub fn resolve_source(
    source: Option<&ClassSource>,
    version: Option<&PythonVersion>,
    platform: Option<&PlatformName>,
    base: &TargetSettings,
) -> Result<ResolvedClass, TargetError> {
    let mut settings = base.clone();
    match source {
        Some(source) => source.apply(&mut settings),
        None => {
            settings.profile = None;
            settings.sysroot = None;
        }
    }
    if let Some(version) = version {
        settings.python.version = Some(*version);
    }
    if let Some(platform) = platform {
        settings.python.platform = Some(platform.clone());
    }
    let (target, described_by) = Target::resolve_described(&settings)?;
    Ok(ResolvedClass {
        target,
        described_by,
    })
}

/// A machine class read.
#[derive(Debug, Clone)]
pub struct ResolvedClass {
    /// Its target: hardware, Python, tags, markers.
    pub target: Target,
    /// What describes its hardware, as read once: the profile's or facts file's bytes, or the
    /// `vari-profile/1` JSON detected from a snapshot; `None` for this machine's hardware.
    pub described_by: Option<Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_told_by_the_file_system_and_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let facts = dir.path().join("cpu.TOML");
        std::fs::write(&facts, "").unwrap();
        assert_eq!(
            ClassSource::of(dir.path()),
            ClassSource::Snapshot(dir.path().into())
        );
        assert_eq!(ClassSource::of(&facts), ClassSource::Facts(facts.clone()));
        let json = dir.path().join("cpu.json");
        assert_eq!(ClassSource::of(&json), ClassSource::Profile(json.clone()));
        assert_eq!(ClassSource::of(&json).path(), json);
    }

    #[test]
    fn a_facts_file_is_read_once_for_its_hardware_and_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arm.toml");
        let text =
            "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"aarch64\"\n";
        std::fs::write(&path, text).unwrap();
        let class = MachineClass {
            python_version: Some("3.12".parse().unwrap()),
            ..MachineClass::from_arg(ClassArg::parse(&path.display().to_string()).unwrap())
        };
        assert_eq!(class.name.as_str(), "arm");
        let mut base = TargetSettings::from_process_env();
        base.env.clear();
        let resolved = class.resolve(&base).unwrap();
        assert_eq!(resolved.described_by.as_deref(), Some(text.as_bytes()));
        // Its platform decides its tags: aarch64 wheels, never x86_64 ones.
        let platform = &resolved.target.python.platform;
        assert_eq!(platform.arch, "aarch64", "{platform:?}");
    }

    #[test]
    fn a_snapshot_is_described_by_the_profile_detected_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut base = TargetSettings::from_process_env();
        base.env.clear();
        base.python.version = Some("3.12".parse().unwrap());
        let source = ClassSource::of(dir.path());
        let resolved = resolve_source(Some(&source), None, None, &base).unwrap();
        let json = resolved.target.hardware.profile.to_json();
        assert_eq!(resolved.described_by.as_deref(), Some(json.as_bytes()));
    }
}
