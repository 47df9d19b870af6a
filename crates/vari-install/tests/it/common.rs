//! What the driver's tests share: the test venv's tools, fresh environments, the demo release.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace's test venv (newest pip, uv): `$VARI_TEST_VENV` or `<workspace>/.venv`.
pub(crate) fn test_venv() -> PathBuf {
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

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The demo release (`examples/demo`).
pub(crate) fn demo() -> PathBuf {
    root().join("examples/demo")
}

/// A new environment without pip at `dir`, made by the test venv's Python (fast: nothing to
/// install); pip or uv from the test venv install into it.
pub(crate) fn bare_venv(dir: &Path) -> PathBuf {
    ok(Command::new(test_venv().join("bin/python"))
        .args(["-m", "venv", "--without-pip"])
        .arg(dir));
    dir.join("bin/python")
}

/// The environment's site-packages directory.
pub(crate) fn site_packages(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    let python = std::fs::read_dir(&lib)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("python")
        })
        .unwrap();
    python.join("site-packages")
}

/// Runs `command` with a clean environment of the installers' variables and asserts success.
pub(crate) fn ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The process environment without anything pip, uv or vari would read from the caller's.
pub(crate) fn clean_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| {
            !(k.starts_with("PIP_")
                || k.starts_with("UV_")
                || k.starts_with("VARI_")
                || k.contains("_VARIANT_PROVIDER_")
                || matches!(
                    k.as_str(),
                    "VIRTUAL_ENV" | "CONDA_PREFIX" | "XDG_CONFIG_HOME" | "XDG_CONFIG_DIRS" | "HOME"
                ))
        })
        .collect()
}
