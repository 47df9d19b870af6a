//! # vari-python
//!
//! The one answer to "which Python is the target?": [`resolve`] turns the user's settings
//! ([`PythonRequest`]: an interpreter or environment, a version, a named platform), the
//! environment ([`DiscoveryEnv`]: `VIRTUAL_ENV`, `CONDA_PREFIX`, `PATH`, pyenv and asdf
//! settings) and the host platform into a [`TargetPython`]: interpreter, prefix, version,
//! implementation, ABI (free-threaded included), site-packages, platform, the PEP 508 marker
//! environment, and the compatible wheel [`Tags`] in the order `packaging.tags.sys_tags()`
//! gives them, with an [`Origin`] saying which source won and why.
//!
//! An interpreter is asked once (a small embedded script, with a time limit), and its answer
//! is cached under the real interpreter's path, modification time and size. A target that is
//! not here is described by a [`PythonVersion`] and a [`PlatformName`] spelled as uv spells
//! them (`x86_64-manylinux_2_28`, `aarch64-apple-darwin`, …).
//!
//! This crate knows nothing about hardware: the host platform (system, machine, C library) is
//! the caller's input, as detected by `vari-detect`. Nor does it choose wheels: it says which
//! tags fit and how well, and `vari-select` decides.
//!
//! ```
//! use vari_python::{resolve, DiscoveryEnv, PythonRequest, ResolveOptions};
//! let request = PythonRequest {
//!     version: Some("3.12".parse().unwrap()),
//!     platform: Some("aarch64-apple-darwin".parse().unwrap()),
//!     ..PythonRequest::default()
//! };
//! let options = ResolveOptions { cache_dir: None, timeout: ResolveOptions::DEFAULT_TIMEOUT };
//! let host = vari_core::Platform::default();
//! let target = resolve(&request, &DiscoveryEnv::default(), &host, &options).unwrap();
//! assert_eq!(target.marker_environment().get("sys_platform"), Some("darwin"));
//! assert_eq!(target.tags().iter().next().unwrap().to_string(), "cp312-cp312-macosx_13_0_arm64");
//! assert_eq!(target.origin.to_string(), "described: Python 3.12 on aarch64-apple-darwin");
//! ```

mod abi;
mod discover;
mod env;
pub mod environment;
mod error;
mod platform;
mod platform_name;
mod query;
mod query_cache_layout;
mod shim;
mod tags;
mod target;
mod version;

pub use abi::{Abi, Implementation};
pub use discover::{find_interpreter, Found};
pub use env::{DiscoveryEnv, Source};
pub use error::PythonError;
pub use platform::{Os, TargetPlatform};
pub use platform_name::{
    PlatformName, ProfilePlatformError, DEFAULT_MACOS_VERSION, PROFILE_BASELINE_GLIBC_MINOR,
};
pub use query_cache_layout::PythonCacheLayout;
pub use shim::{Shim, ShimKind};
pub use tags::{platform_tags, TagRef, Tags};
pub use target::{
    resolve, Interpreter, Origin, PlatformOrigin, PythonRequest, ResolveOptions, TargetPython,
};
pub use version::PythonVersion;
