//! # vari-install
//!
//! Installing the right variant with the tools people already use, and seeing which variant
//! is installed.
//!
//! - Listing: [`list_installed`] reads the distributions installed in a Python environment's
//!   site-packages directories and, for each variant wheel that was installed, its label and
//!   properties from `*.dist-info/variant.json`: what `pip list` cannot show.
//! - Which installer and which indexes: [`Installer::find`] (uv when on `PATH`, else the
//!   target Python's pip), [`installer_indexes`] (the indexes pip or uv would use on its own:
//!   their variables, pip's configuration files, else PyPI).
//! - Installing: [`install`] starts `vari-proxy` in front of those indexes, runs the
//!   installer against it alone ([`InstallRequest::command`]), stops the proxy and reports
//!   which variant each package was installed as in this run, and why ([`InstalledChoice`]),
//!   or, when the installer failed, the upstream failures it met
//!   ([`InstallOutcome::upstream_failures`]). The proxy's port is derived from its
//!   configuration ([`stable_port`]), so that the installers' caches (uv's is keyed by index
//!   URL) are reused from one run to the next.
//!
//! - Planning and reporting: [`Plan`] (the installer, the proxy's sources, what hides the
//!   installer's own sources, the target it installs for), and after the run what the journal
//!   cannot say because the installer never asked ([`kept_requirements`], [`unmet`]) and the
//!   exit status ([`InstallOutcome::exit_code`]).
//!
//! - Syncing a lock (`vari sync`, `vari install -r pylock.toml`): [`sync::sync`], one
//!   operation from the lock to the environment (the installer started early, the lock opened
//!   and planned, the environment surveyed, the files fetched and checked, then installed);
//!   `vari export` opens, plans and fetches through the same parts ([`sync::LockedPlan`],
//!   [`sync::fetch`]).
//!
//! What it leaves to others: which environment is the target (`vari-python`'s one answer
//! gives the interpreter and the site-packages directories), choosing and presenting variants
//! (`vari-select`, `vari-proxy`), and printing (the front-end).
//!
//! ```
//! let site = tempfile::tempdir().unwrap();
//! let dist_info = site.path().join("demo-1.0.dist-info");
//! std::fs::create_dir(&dist_info).unwrap();
//! std::fs::write(dist_info.join("METADATA"), "Name: demo\nVersion: 1.0\n").unwrap();
//! std::fs::write(dist_info.join("variant.json"), r#"{
//!     "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
//!     "default-priorities": {"namespace": ["x86_64"]},
//!     "variants": {"x8664v3": {"x86_64": {"level": ["v3"]}}}
//! }"#).unwrap();
//! let installed = vari_install::list_installed(&[site.path().to_path_buf()]);
//! assert_eq!(installed.distributions[0].to_string(), "demo 1.0 (x8664v3)");
//! ```

mod changes;
mod environment;
mod index_source;
mod ini;
mod installer;
mod installer_env;
mod list;
mod plan;
pub mod profile_store;
mod requirements_file;
mod run;
pub mod stable_port;
pub mod sync;
mod unasked;
mod uv_config;

pub use environment::{environment_to_change, ChangedEnvironment, EnvironmentRuleError};
pub use index_source::{
    installer_indexes, pip_config_files, IndexSourceError, InstallerEnv, InstallerIndexes, Origin,
    Sourced,
};
pub use installer::{
    HideOwn, InstallRequest, Installer, InstallerChoice, InstallerError, InstallerKind, Program,
    UV_INDEX_VARIABLES,
};
pub use list::{
    list_installed, Installed, InstalledDistribution, InstalledVariant, VariantJsonProblem,
    VARIANT_JSON,
};
pub use plan::{HiddenSources, Plan, PlanError};
pub use requirements_file::{
    requirements_in_args, RequirementsFileError, MAX_DEPTH as MAX_REQUIREMENTS_FILE_DEPTH,
};
pub use run::{
    install, install_page_ttl, InstallError, InstallOutcome, InstalledChoice, KeptDistribution,
    INSTALL_PAGE_TTL, TEMPORARY_PREFIX,
};
pub use unasked::{kept_requirements, unmet, KeptRequirement};
