//! What the driver's tests share: the test venv's tools, fresh environments, the demo release
//! (all from the shared test support, under the names these tests use).

pub(crate) use vari_test_support::paths::demo;
pub(crate) use vari_test_support::venv::{
    bare_venv, clean_installer_env as clean_env, run_ok as ok, site_packages, test_venv,
};
