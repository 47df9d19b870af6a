//! Planning one installation before anything runs: which installer, the sources it would use
//! on its own (which the proxy reads unless the front-end names others), what stands in for
//! those sources while it runs ([`HiddenSources`]), and the target it installs for.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use vari_client::ClientSettings;
use vari_select::{Target, TargetSettings};

use crate::index_source::{installer_indexes, IndexSourceError, InstallerEnv, InstallerIndexes};
use crate::installer::{
    HideOwn, InstallRequest, Installer, InstallerChoice, InstallerError, InstallerKind,
};

/// Why an installation cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No installer, or not the one asked for.
    #[error(transparent)]
    Installer(#[from] InstallerError),
    /// The installer's own configuration names sources that cannot be read.
    #[error(transparent)]
    Sources(#[from] IndexSourceError),
    /// The target is described (a Python version or platform) without an interpreter, so there
    /// is no environment to install into.
    #[error(
        "no Python environment to install into: the target is described without an interpreter"
    )]
    NoInterpreter,
    /// A Python version or platform other than the interpreter's was asked of pip, which
    /// installs only for the Python it runs.
    #[error("pip installs only for the Python it runs")]
    PipTargetsItsInterpreter,
    /// The temporary files that hide the installer's own sources could not be made.
    #[error("{0}")]
    Temporary(String),
}

/// The installer and the sources it would use on its own.
#[derive(Debug)]
pub struct Plan {
    /// The installer.
    pub installer: Installer,
    /// The sources it would use on its own: its variables, its configuration files, else its
    /// default index.
    pub own: InstallerIndexes,
}

impl Plan {
    /// Finds the installer (`choice`, else uv on `PATH`, else the target's pip) and the sources
    /// it would use on its own. For a dry run nothing is installed, so pip need not be
    /// importable from the target.
    pub fn find(
        choice: Option<&InstallerChoice>,
        target: &Target,
        dry_run: bool,
    ) -> Result<Self, PlanError> {
        let python = target
            .python
            .interpreter
            .as_ref()
            .map(|i| i.executable.clone());
        let installer = Installer::find(
            choice,
            std::env::var_os("PATH").as_deref(),
            python.as_deref().unwrap_or(Path::new("python")),
            match dry_run {
                true => &[],
                false => &target.python.site_packages,
            },
        )?;
        let own = installer_indexes(
            installer.kind,
            &InstallerEnv::from_process(target.python.prefix().map(Path::to_path_buf)),
        )?;
        if !own.files.is_empty() {
            let files: Vec<String> = own.files.iter().map(|f| f.display().to_string()).collect();
            tracing::debug!(
                "{}'s configuration files: {}",
                installer.kind,
                files.join(", ")
            );
        }
        Ok(Self { installer, own })
    }

    /// The sources the proxy reads before the front-end's settings go over them: the
    /// installer's own, unless the front-end names sources (`named`), which then replace them.
    pub fn proxy_sources(&self, named: bool) -> ClientSettings {
        match named {
            true => ClientSettings {
                indexes: Vec::new(),
                ..ClientSettings::default()
            },
            false => self.own.client_settings(ClientSettings::default()),
        }
    }

    /// The installation of `requirements` into the target's environment, with `args` for the
    /// installer, and the temporary files that hide its own sources while it runs (keep them
    /// until it has run).
    pub fn request(
        self,
        target: &Target,
        described: &TargetSettings,
        requirements: Vec<String>,
        args: Vec<OsString>,
        pre: bool,
    ) -> Result<(InstallRequest, HiddenSources), PlanError> {
        let python = target
            .python
            .interpreter
            .as_ref()
            .map(|i| i.executable.clone())
            .ok_or(PlanError::NoInterpreter)?;
        let uv_target = uv_target(self.installer.kind, described)?;
        // What stands in for the installer's own sources while it runs: the proxy reads those.
        let hidden = HiddenSources::new(self.installer.kind, &self.own)?;
        let request = InstallRequest {
            installer: self.installer,
            python,
            requirements,
            args,
            pre,
            uv_target,
            hide: HideOwn {
                extra_indexes: self.own.extra_indexes,
                no_index: self.own.no_index,
                find_links: hidden.empty_find_links.clone(),
                uv_config: hidden.uv_config.clone(),
            },
        };
        Ok((request, hidden))
    }
}

/// `--python-version` and `--python-platform` for uv, which installs for a described target;
/// pip installs only for the interpreter it runs.
fn uv_target(kind: InstallerKind, described: &TargetSettings) -> Result<Vec<OsString>, PlanError> {
    let mut given = Vec::new();
    if let Some(version) = &described.python.version {
        given.push("--python-version".into());
        given.push(version.to_string().into());
    }
    if let Some(platform) = &described.python.platform {
        given.push("--python-platform".into());
        given.push(platform.to_string().into());
    }
    if kind == InstallerKind::Pip && !given.is_empty() {
        return Err(PlanError::PipTargetsItsInterpreter);
    }
    Ok(given)
}

/// Files that stand in for the installer's own sources while it runs, in a temporary directory
/// removed when this is dropped: for pip, an empty find-links directory; for uv, its settings
/// without the sources its configuration files name.
#[derive(Debug)]
pub struct HiddenSources {
    _dir: Option<tempfile::TempDir>,
    /// Removes the directory if vari is interrupted (it then exits without dropping `_dir`).
    _interrupt: Option<vari_fs::interrupt::Registration>,
    empty_find_links: Option<PathBuf>,
    uv_config: Option<PathBuf>,
}

impl HiddenSources {
    fn new(kind: InstallerKind, own: &InstallerIndexes) -> Result<Self, PlanError> {
        let pip_links = kind == InstallerKind::Pip && !own.find_links.is_empty();
        let uv_config = own
            .uv_config
            .as_deref()
            .filter(|_| kind == InstallerKind::Uv);
        if !pip_links && uv_config.is_none() {
            return Ok(Self {
                _dir: None,
                _interrupt: None,
                empty_find_links: None,
                uv_config: None,
            });
        }
        let failed = |e: std::io::Error| {
            PlanError::Temporary(format!("cannot make a temporary directory: {e}"))
        };
        let dir = tempfile::Builder::new()
            .prefix(crate::run::TEMPORARY_PREFIX)
            .tempdir()
            .map_err(failed)?;
        let interrupt = vari_fs::interrupt::remove_on_interrupt(dir.path().to_path_buf());
        let empty_find_links = match pip_links {
            true => {
                let empty = dir.path().join("empty-find-links");
                std::fs::create_dir(&empty).map_err(failed)?;
                Some(empty)
            }
            false => None,
        };
        let uv_config = match uv_config {
            Some(text) => {
                let path = dir.path().join("uv.toml");
                vari_fs::write_atomic(&path, text.as_bytes()).map_err(|e| {
                    PlanError::Temporary(format!("{}: cannot write: {e}", path.display()))
                })?;
                Some(path)
            }
            None => None,
        };
        Ok(Self {
            _dir: Some(dir),
            _interrupt: Some(interrupt),
            empty_find_links,
            uv_config,
        })
    }
}
