//! Discovery: a venv, `VIRTUAL_ENV`, `CONDA_PREFIX`, pyenv-style and wrapper shims, described
//! targets and overrides, the errors, and the answer cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use vari_python::{DiscoveryEnv, Os, PlatformOrigin, PythonError, PythonRequest, ShimKind, Source};

use crate::support::{base_python, resolve, tag_strings, venv, venv_python};

fn request(python: Option<&Path>) -> PythonRequest {
    PythonRequest {
        python: python.map(Path::to_path_buf),
        ..PythonRequest::default()
    }
}

fn env(vars: &[(&str, &Path)]) -> DiscoveryEnv {
    DiscoveryEnv::new(
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.as_os_str().to_owned())),
    )
}

/// The interpreter's own `sys.version`-based marker values, per packaging.
fn packaging_markers(python: &Path) -> BTreeMap<String, String> {
    let code = format!(
        "import sys, json; sys.path.insert(0, {:?}); \
         from packaging.markers import default_environment; \
         print(json.dumps(default_environment()))",
        crate::support::packaging_parent().display().to_string()
    );
    let out = Command::new(python).args(["-c", &code]).output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[test]
fn a_venv_directory_gives_its_interpreter_prefix_and_site_packages() {
    let cache = tempfile::tempdir().unwrap();
    let target = resolve(
        &request(Some(&venv())),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    let interpreter = target.interpreter.as_ref().unwrap();
    assert_eq!(target.origin.found.as_ref().unwrap().source, Source::Given);
    assert!(
        interpreter.path.starts_with(venv()),
        "{}",
        interpreter.path.display()
    );
    assert_eq!(
        std::fs::canonicalize(&interpreter.prefix).unwrap(),
        std::fs::canonicalize(venv()).unwrap()
    );
    assert_ne!(interpreter.prefix, interpreter.base_prefix);
    assert!(
        target
            .site_packages
            .iter()
            .any(|d| d.join("packaging").is_dir()),
        "{:?}",
        target.site_packages
    );
    // Every marker is the interpreter's own value, as packaging computes it there.
    let theirs = packaging_markers(&venv_python());
    for (name, value) in target.marker_environment().values() {
        assert_eq!(Some(value), theirs.get(name).map(String::as_str), "{name}");
    }
    assert_eq!(target.abi.abis, [format!("cp{}", target.version.nodot())]);
    assert_eq!(
        target.origin.to_string(),
        format!(
            "requested {}: {} → {}",
            venv().display(),
            interpreter.path.display(),
            interpreter.real.display()
        )
    );
}

#[test]
fn virtual_env_wins_over_conda_prefix_and_path() {
    let cache = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let e = env(&[
        ("VIRTUAL_ENV", &venv()),
        ("CONDA_PREFIX", other.path()),
        ("PATH", Path::new("/usr/bin")),
    ]);
    let target = resolve(&request(None), &e, cache.path()).unwrap();
    let found = target.origin.found.as_ref().unwrap();
    assert_eq!(found.source, Source::VirtualEnv);
    let shown = target.origin.to_string();
    assert!(
        shown.starts_with(&format!("VIRTUAL_ENV={}: ", venv().display())),
        "{shown}"
    );
}

#[test]
fn conda_prefix_with_a_linked_interpreter() {
    let cache = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    std::fs::create_dir(prefix.path().join("bin")).unwrap();
    symlink(&base_python(), &prefix.path().join("bin/python"));
    let e = env(&[
        ("CONDA_PREFIX", prefix.path()),
        ("PATH", Path::new("/usr/bin")),
    ]);
    let target = resolve(&request(None), &e, cache.path()).unwrap();
    let found = target.origin.found.as_ref().unwrap();
    assert_eq!(found.source, Source::CondaPrefix);
    assert_eq!(found.interpreter, prefix.path().join("bin/python"));
    assert_eq!(target.origin.real.as_deref(), Some(base_python().as_path()));
    let shown = target.origin.to_string();
    assert!(
        shown.contains(&format!("→ {}", base_python().display())),
        "{shown}"
    );
    // The same interpreter answers the same, whichever way it was reached.
    let direct = resolve(
        &request(Some(&base_python())),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    assert_eq!(target.version, direct.version);
    assert_eq!(tag_strings(&target), tag_strings(&direct));
}

/// A pyenv root with one version (linked to the venv's base installation) and a shim that
/// cannot run (its pyenv does not exist): resolving it must not run it.
fn fake_pyenv(root: &Path, version: &str) -> PathBuf {
    let install = base_python()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::create_dir_all(root.join("versions")).unwrap();
    std::fs::create_dir_all(root.join("shims")).unwrap();
    symlink(&install, &root.join("versions").join(version));
    let shim = root.join("shims/python3");
    std::fs::write(
        &shim,
        format!(
            "#!/usr/bin/env bash\nset -e\nprogram=\"${{0##*/}}\"\nexport PYENV_ROOT=\"{}\"\n\
             exec \"{}/libexec/pyenv\" exec \"$program\" \"$@\"\n",
            root.display(),
            root.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    shim
}

#[test]
fn a_pyenv_shim_on_path_is_resolved_to_its_interpreter() {
    let cache = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let shim = fake_pyenv(root.path(), "9.9.9");
    std::fs::write(root.path().join("version"), "missing 9.9.9\n").unwrap();
    let e = env(&[("PATH", shim.parent().unwrap())]);
    let target = resolve(&request(None), &e, cache.path()).unwrap();
    let found = target.origin.found.as_ref().unwrap();
    assert_eq!(found.source, Source::Path("python3".into()));
    assert_eq!(found.shim.as_ref().unwrap().kind, ShimKind::Pyenv);
    assert_eq!(target.origin.real.as_deref(), Some(base_python().as_path()));
    let shown = target.origin.to_string();
    assert!(shown.contains("(pyenv shim) →"), "{shown}");

    // A `.python-version` in the working directory (or above) names the version instead.
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("sub")).unwrap();
    std::fs::write(project.path().join(".python-version"), "8.8.8\n").unwrap();
    let e = e.with_current_dir(project.path().join("sub"));
    let err = resolve(&request(None), &e, cache.path()).unwrap_err();
    // 8.8.8 is not installed: the shim is run as pyenv would be, and its pyenv is missing.
    assert!(matches!(err, PythonError::NotPython { .. }), "{err}");
}

#[test]
fn the_machines_pyenv_shim_agrees_with_pyenv() {
    let Some(home) = std::env::var_os("HOME") else {
        return;
    };
    let root = Path::new(&home).join(".pyenv");
    let pyenv = root.join("libexec/pyenv");
    if !pyenv.is_file() {
        eprintln!("no pyenv here; nothing to compare");
        return;
    }
    let shims = root.join("shims");
    let path =
        std::env::join_paths([shims.as_path(), Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    let out = Command::new(&pyenv)
        .args(["which", "python3"])
        .env_clear()
        .env("PATH", &path)
        .env("HOME", &home)
        .env("PYENV_ROOT", &root)
        .current_dir("/")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    let e =
        DiscoveryEnv::new([("PATH", path.clone()), ("HOME", home.clone())]).with_current_dir("/");
    let cache = tempfile::tempdir().unwrap();
    let target = resolve(&request(None), &e, cache.path()).unwrap();
    eprintln!("{target}");
    assert_eq!(
        target.origin.real,
        Some(std::fs::canonicalize(expected).unwrap()),
        "{}",
        target.origin
    );
}

#[test]
fn a_wrapper_script_is_run_every_time() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("python3");
    let write = |target: &Path| {
        std::fs::write(
            &wrapper,
            format!("#!/bin/sh\nexec \"{}\" \"$@\"\n", target.display()),
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    };
    write(&base_python());
    let first = resolve(
        &request(Some(&wrapper)),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    assert_eq!(
        first
            .origin
            .found
            .as_ref()
            .unwrap()
            .shim
            .as_ref()
            .unwrap()
            .kind,
        ShimKind::Script
    );
    assert_eq!(first.origin.real.as_deref(), Some(base_python().as_path()));
    // The wrapper now runs the venv: same file size class, same mtime second — still seen.
    write(&venv_python());
    let second = resolve(
        &request(Some(&wrapper)),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    let prefix = &second.interpreter.as_ref().unwrap().prefix;
    assert_eq!(
        std::fs::canonicalize(prefix).unwrap(),
        std::fs::canonicalize(venv()).unwrap()
    );
}

#[test]
fn a_requested_version_overrides_the_interpreters() {
    let cache = tempfile::tempdir().unwrap();
    let mut r = request(Some(&venv()));
    r.version = Some("3.12".parse().unwrap());
    let target = resolve(&r, &DiscoveryEnv::default(), cache.path()).unwrap();
    let markers = target.marker_environment();
    assert_eq!(markers.get("python_version"), Some("3.12"));
    assert_eq!(markers.get("python_full_version"), Some("3.12.0"));
    // The platform is still the interpreter's own, kernel release included.
    let real = packaging_markers(&venv_python());
    assert_eq!(
        markers.get("platform_release"),
        real.get("platform_release").map(String::as_str)
    );
    assert_eq!(tag_strings(&target)[0], "cp312-cp312-linux_x86_64");
    // abi_dependency still reads the environment's packages.
    assert!(target.site_packages.iter().any(|d| d.starts_with(venv())));
    assert!(
        target
            .origin
            .to_string()
            .ends_with("; version 3.12 as requested"),
        "{}",
        target.origin
    );
}

#[test]
fn a_named_platform_with_an_interpreter_keeps_its_version() {
    let cache = tempfile::tempdir().unwrap();
    let mut r = request(Some(&venv_python()));
    r.platform = Some("aarch64-apple-darwin".parse().unwrap());
    let target = resolve(&r, &DiscoveryEnv::default(), cache.path()).unwrap();
    let real = packaging_markers(&venv_python());
    let markers = target.marker_environment();
    assert_eq!(
        markers.get("python_full_version"),
        real.get("python_full_version").map(String::as_str)
    );
    assert_eq!(markers.get("sys_platform"), Some("darwin"));
    assert_eq!(markers.get("platform_machine"), Some("arm64"));
    assert_eq!(markers.get("platform_release"), Some(""));
    assert!(tag_strings(&target)[0].ends_with("-macosx_13_0_arm64"));
}

#[test]
fn a_described_target_runs_no_interpreter() {
    let cache = tempfile::tempdir().unwrap();
    let r = PythonRequest {
        version: Some("3.12".parse().unwrap()),
        platform: Some("x86_64-pc-windows-msvc".parse().unwrap()),
        ..PythonRequest::default()
    };
    // An active venv does not matter to a described target.
    let e = env(&[("VIRTUAL_ENV", &venv())]);
    let target = resolve(&r, &e, cache.path()).unwrap();
    assert!(target.interpreter.is_none() && target.site_packages.is_empty());
    let markers = target.marker_environment();
    assert_eq!(markers.get("sys_platform"), Some("win32"));
    assert_eq!(markers.get("platform_machine"), Some("AMD64"));
    assert_eq!(markers.get("os_name"), Some("nt"));
    assert_eq!(tag_strings(&target)[0], "cp312-cp312-win_amd64");
    assert_eq!(
        target.origin.to_string(),
        "described: Python 3.12 on x86_64-pc-windows-msvc"
    );
    assert!(
        std::fs::read_dir(cache.path()).unwrap().next().is_none(),
        "nothing was queried"
    );
}

#[test]
fn without_an_interpreter_the_host_platform_and_fallback_apply() {
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let e = env(&[("PATH", empty.path())]);
    let err = resolve(&request(None), &e, cache.path()).unwrap_err();
    assert!(matches!(err, PythonError::NoInterpreter), "{err}");

    let mut r = request(None);
    r.version = Some("3.13".parse().unwrap());
    let target = resolve(&r, &e, cache.path()).unwrap();
    assert_eq!(target.origin.platform, PlatformOrigin::Host);
    assert_eq!(
        target.platform.os,
        Os::Manylinux {
            major: 2,
            minor: 36
        }
    );
    assert!(tag_strings(&target).contains(&"cp313-cp313-manylinux_2_36_x86_64".to_owned()));

    let r = PythonRequest {
        fallback_version: Some("3.12".parse().unwrap()),
        ..PythonRequest::default()
    };
    let target = resolve(&r, &e, cache.path()).unwrap();
    assert_eq!(target.version.to_string(), "3.12");
    let shown = target.origin.to_string();
    assert!(shown.contains("assumed"), "{shown}");
}

#[test]
fn paths_that_are_not_pythons_are_errors_naming_them() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let none = DiscoveryEnv::default();

    let missing = dir.path().join("no-such-python");
    let err = resolve(&request(Some(&missing)), &none, cache.path()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, PythonError::NotFound { .. }), "{text}");
    assert!(text.contains(&missing.display().to_string()), "{text}");
    assert!(
        text.contains("expected a Python interpreter or an environment directory"),
        "{text}"
    );

    let err = resolve(
        &request(Some(Path::new("/usr/bin/ls"))),
        &none,
        cache.path(),
    )
    .unwrap_err();
    assert!(matches!(err, PythonError::NotPython { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("/usr/bin/ls is not a Python interpreter"),
        "{err}"
    );

    let err = resolve(&request(Some(dir.path())), &none, cache.path()).unwrap_err();
    assert!(
        matches!(err, PythonError::NoInterpreterInDirectory { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("bin/python3"), "{err}");

    // Named like a Python, but it is not one.
    let fake = dir.path().join("python3");
    std::fs::write(&fake, "#!/bin/sh\necho not json\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let err = resolve(&request(Some(&fake)), &none, cache.path()).unwrap_err();
    assert!(
        err.to_string()
            .contains("did not answer the interpreter query"),
        "{err}"
    );

    // A stale VIRTUAL_ENV is named as such.
    let err = resolve(
        &request(None),
        &env(&[("VIRTUAL_ENV", &missing)]),
        cache.path(),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("VIRTUAL_ENV: "), "{err}");
}

/// The single cache file under `cache`.
fn cache_file(cache: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(cache.join("python"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

#[test]
fn answers_are_cached_until_the_interpreter_changes() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let env_dir = dir.path().join("copied");
    let made = Command::new(base_python())
        .args(["-m", "venv", "--copies", "--without-pip"])
        .arg(&env_dir)
        .status()
        .unwrap();
    assert!(made.success());
    let python = env_dir.join("bin/python3");
    let first = resolve(
        &request(Some(&python)),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    let release = first
        .marker_environment()
        .get("platform_release")
        .unwrap()
        .to_owned();

    // Mark the cached answer: the next run must return the mark, not ask the interpreter.
    let file = cache_file(cache.path());
    let mut entry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    entry["facts"]["markers"]["platform_release"] = "from-the-cache".into();
    std::fs::write(&file, serde_json::to_vec(&entry).unwrap()).unwrap();
    let second = resolve(
        &request(Some(&python)),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    assert_eq!(
        second.marker_environment().get("platform_release"),
        Some("from-the-cache")
    );

    // A new modification time on the interpreter makes the cached answer stale.
    let real = std::fs::canonicalize(&python).unwrap();
    let later = SystemTime::now() + Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&real)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let third = resolve(
        &request(Some(&python)),
        &DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    assert_eq!(
        third.marker_environment().get("platform_release"),
        Some(release.as_str())
    );
}
