//! The test venv (`scripts/test-env` makes it: pip, uv, packaging, variantlib) and fresh
//! environments made from it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::paths::root;

/// The workspace's test venv: `$VARI_TEST_VENV`, else `<workspace>/.venv`. Panics, saying how
/// to make it, when it has no Python.
pub fn test_venv() -> PathBuf {
    let venv = std::env::var_os("VARI_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv"));
    assert!(
        venv.join("bin/python").is_file(),
        "the test venv {} is missing: run scripts/test-env",
        venv.display()
    );
    venv
}

/// The test venv's Python.
pub fn python() -> PathBuf {
    test_venv().join("bin/python")
}

/// The test venv's uv. Panics when the venv has none.
pub fn uv() -> PathBuf {
    let uv = test_venv().join("bin/uv");
    assert!(
        uv.is_file(),
        "the test venv lacks uv ({}): run scripts/test-env",
        uv.display()
    );
    uv
}

/// A new environment without pip at `dir`, made by the test venv's Python (fast: nothing to
/// install); pip or uv from the test venv install into it. Returns its Python.
pub fn bare_venv(dir: &Path) -> PathBuf {
    run_ok(
        Command::new(python())
            .args(["-m", "venv", "--without-pip"])
            .arg(dir),
    );
    dir.join("bin/python")
}

/// The `lib/pythonX.Y/site-packages` directory of the environment at `venv`.
pub fn site_packages(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    let python = std::fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("{}: {e}", lib.display()))
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("python")
        })
        .unwrap_or_else(|| panic!("no python* directory in {}", lib.display()));
    python.join("site-packages")
}

/// Runs `command` and asserts it succeeded, showing both streams where it did not.
pub fn run_ok(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} does not run: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Whether an installer (pip, uv) or vari reads the variable `key` from the caller's
/// environment: what a test must not inherit.
pub fn is_installer_variable(key: &str) -> bool {
    key.starts_with("PIP_")
        || key.starts_with("UV_")
        || key.starts_with("VARI_")
        || key.contains("_VARIANT_PROVIDER_")
        || matches!(
            key,
            "VIRTUAL_ENV" | "CONDA_PREFIX" | "XDG_CONFIG_HOME" | "XDG_CONFIG_DIRS" | "HOME"
        )
}

/// The process environment without anything pip, uv or vari would read from the caller's.
pub fn clean_installer_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(key, _)| !is_installer_variable(key))
        .collect()
}
