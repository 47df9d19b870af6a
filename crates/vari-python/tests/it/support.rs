//! Finding the test venv (packaging 26.3, made by `scripts/test-env`) and the interpreters on
//! this machine, and asking packaging for its tag lists.

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_python::{DiscoveryEnv, PythonRequest, ResolveOptions, TargetPython};

/// The workspace's test venv (`$VARI_TEST_VENV` or `<workspace>/.venv`), canonical.
pub(crate) fn venv() -> PathBuf {
    std::fs::canonicalize(vari_test_support::venv::test_venv()).unwrap()
}

/// The venv's interpreter.
pub(crate) fn venv_python() -> PathBuf {
    venv().join("bin/python")
}

/// The real interpreter the venv was made from (pyvenv.cfg `executable`, else `home/python3`).
pub(crate) fn base_python() -> PathBuf {
    let cfg = std::fs::read_to_string(venv().join("pyvenv.cfg")).unwrap();
    let value = |key: &str| {
        cfg.lines().find_map(|line| {
            let (k, v) = line.split_once('=')?;
            (k.trim() == key).then(|| v.trim().to_owned())
        })
    };
    let python = value("executable")
        .map(PathBuf::from)
        .or_else(|| value("home").map(|home| Path::new(&home).join("python3")))
        .unwrap();
    std::fs::canonicalize(python).unwrap()
}

/// The directory holding the venv's `packaging` package.
pub(crate) fn packaging_parent() -> PathBuf {
    let lib = venv().join("lib");
    std::fs::read_dir(&lib)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.join("packaging").is_dir())
        .expect("packaging is not installed in the test venv: run scripts/test-env")
}

/// Every interpreter worth comparing here: the venv's, its base, the system's python3, and
/// every pyenv version (`$PYENV_ROOT` or `~/.pyenv`).
pub(crate) fn interpreters() -> Vec<PathBuf> {
    let mut found = vec![venv_python(), base_python()];
    for system in ["/usr/bin/python3", "/usr/local/bin/python3"] {
        if Path::new(system).is_file() {
            found.push(PathBuf::from(system));
        }
    }
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
    if let Some(Ok(entries)) = root.map(|r| std::fs::read_dir(r.join("versions"))) {
        let mut versions: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path().join("bin/python"))
            .filter(|p| p.is_file())
            .collect();
        versions.sort();
        found.extend(versions);
    }
    found
}

/// Runs the packaging helper with `python` and returns its tags.
pub(crate) fn packaging_tags(python: &Path, request: &serde_json::Value) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/packaging_tags.py");
    let output = Command::new(python)
        .arg(script)
        .arg(packaging_parent())
        .arg(request.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{} failed: {}",
        python.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Options with a private cache directory.
pub(crate) fn options(cache: &Path) -> ResolveOptions {
    ResolveOptions {
        cache_dir: Some(cache.to_owned()),
        timeout: ResolveOptions::DEFAULT_TIMEOUT,
    }
}

/// This machine's platform as the detection crate would pass it.
pub(crate) fn host() -> vari_core::Platform {
    vari_core::Platform {
        system: Some("Linux".into()),
        machine: Some("x86_64".into()),
        libc: Some("glibc 2.36".into()),
    }
}

/// Resolves `request` with `env` and a private cache.
pub(crate) fn resolve(
    request: &PythonRequest,
    env: &DiscoveryEnv,
    cache: &Path,
) -> Result<TargetPython, vari_python::PythonError> {
    vari_python::resolve(request, env, &host(), &options(cache))
}

/// The tags of a target as strings.
pub(crate) fn tag_strings(target: &TargetPython) -> Vec<String> {
    target.tags().iter().map(|t| t.to_string()).collect()
}

/// Asserts two tag lists are equal, naming the first difference.
pub(crate) fn assert_same_tags(ours: &[String], theirs: &[String], what: &str) {
    if let Some(i) = (0..ours.len().max(theirs.len())).find(|&i| ours.get(i) != theirs.get(i)) {
        panic!(
            "{what}: tag {i} differs: vari {:?}, packaging {:?} ({} vs {} tags)",
            ours.get(i),
            theirs.get(i),
            ours.len(),
            theirs.len()
        );
    }
}
