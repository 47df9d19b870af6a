//! One Python answer for markers, `abi_dependency` and tags: whichever way the target Python is
//! named, the three agree.

use std::path::{Path, PathBuf};

use vari_core::ordering::{Rejection, SelectionOptions};
use vari_select::{choose, FileFate, Release, Target, TargetSettings, VariantRejection};

use crate::support::{described, target, wheel, x86_profile};

use vari_test_support::venv::test_venv;

/// A release whose `abi` variant needs packaging 26.3 and Python >= 3.12 (by `enable-if`), with
/// a plain fallback.
fn release(dir: &Path) -> Release {
    let json = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
      "default-priorities": {"namespace": ["x86_64"]},
      "providers": {"x86_64": {"requires": ["provider-variant-x86-64"],
                               "enable-if": "python_version >= '3.12'"}},
      "variants": {"new": {"x86_64": {"level": ["v2"]}, "abi_dependency": {"packaging": ["26.3"]}}}}"#;
    wheel(dir, "demo-1.0-py3-none-any-new.whl", Some(json));
    wheel(dir, "demo-1.0-py3-none-any.whl", None);
    Release::read(dir).unwrap()
}

/// Facts for this machine's own detection (abi_dependency comes from the target Python) with a
/// fixed CPU level, so the test does not depend on this machine's CPU.
fn facts(dir: &Path) -> PathBuf {
    let path = dir.join("facts.toml");
    std::fs::write(
        &path,
        "inherit = \"host\"\nexclude = [\"nvidia\", \"amd\", \"intel\"]\n[x86_64]\nlevel = 3\n",
    )
    .unwrap();
    path
}

fn settings_for(python: Option<&Path>, env: &[(&str, &Path)], profile: &Path) -> TargetSettings {
    let mut settings = TargetSettings::from_process_env();
    settings
        .env
        .retain(|k, _| k == "HOME" || k == "PATH" || k.starts_with("PYENV"));
    let cache = tempfile::tempdir().unwrap().keep();
    settings
        .env
        .insert("VARI_CACHE_DIR".into(), cache.display().to_string());
    for (name, value) in env {
        settings
            .env
            .insert((*name).into(), value.display().to_string());
    }
    settings.python.python = python.map(Path::to_path_buf);
    settings.profile = Some(profile.to_path_buf());
    settings
}

fn assert_one_answer(target: &Target, version: &str) {
    assert_eq!(target.markers.get("python_version"), Some(version));
    let first_tag = target.python.tags().iter().next().unwrap().to_string();
    let nodot = version.replace('.', "");
    assert!(
        first_tag.starts_with(&format!("cp{nodot}-cp{nodot}")),
        "{first_tag}"
    );
}

#[test]
fn a_venv_named_or_active_gives_markers_abi_and_tags_together() {
    let venv = test_venv();
    let work = tempfile::tempdir().unwrap();
    let facts = facts(work.path());
    let release_dir = tempfile::tempdir().unwrap();
    let release = release(release_dir.path());
    let named = settings_for(Some(&venv), &[], &facts);
    let active = settings_for(None, &[("VIRTUAL_ENV", &venv)], &facts);
    for settings in [named, active] {
        let target = Target::resolve(&settings).unwrap();
        let version = target.python.version.short();
        assert_one_answer(&target, &version);
        // abi_dependency lists what this venv has installed.
        let abi = target.hardware.profile.namespace("abi_dependency").unwrap();
        let packaging = abi.feature("packaging").unwrap();
        assert_eq!(packaging.values[1].as_str(), "26.3");
        let choice = choose(&release, &target, &SelectionOptions::default());
        let new = choice.variant("new").unwrap();
        if version.as_str() >= "3.12" {
            assert!(new.is_selectable(), "{:?}", new.rejection);
        } else {
            // Markers read the same interpreter: its version disables the provider.
            assert!(matches!(
                new.rejection,
                Some(VariantRejection::Ranking(
                    Rejection::NamespaceDisabled { .. }
                ))
            ));
            assert_eq!(choice.chosen().unwrap().name(), "demo-1.0-py3-none-any.whl");
        }
    }
}

#[test]
fn a_described_version_drives_markers_and_tags() {
    let profile_dir = tempfile::tempdir().unwrap();
    let profile = x86_profile(profile_dir.path(), None);
    let release_dir = tempfile::tempdir().unwrap();
    let json = r#"{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
      "default-priorities": {"namespace": ["x86_64"]},
      "providers": {"x86_64": {"requires": ["p"], "enable-if": "python_version >= '3.12'"}},
      "variants": {"v2": {"x86_64": {"level": ["v2"]}}}}"#;
    wheel(
        release_dir.path(),
        "demo-1.0-py3-none-any-v2.whl",
        Some(json),
    );
    wheel(
        release_dir.path(),
        "demo-1.0-cp313-cp313-manylinux_2_17_x86_64.whl",
        None,
    );
    wheel(release_dir.path(), "demo-1.0-py3-none-any.whl", None);
    let release = Release::read(release_dir.path()).unwrap();
    for (version, selectable, chosen) in [
        ("3.9", false, "demo-1.0-py3-none-any.whl"),
        ("3.12", true, "demo-1.0-py3-none-any-v2.whl"),
        ("3.13", true, "demo-1.0-py3-none-any-v2.whl"),
    ] {
        let target = target(&described(&profile, version, "x86_64-manylinux_2_28"));
        assert_one_answer(&target, version);
        let choice = choose(&release, &target, &SelectionOptions::default());
        assert_eq!(
            choice.variant("v2").unwrap().is_selectable(),
            selectable,
            "{version}"
        );
        assert_eq!(choice.chosen().unwrap().name(), chosen, "{version}");
        let cp313 = choice
            .files
            .iter()
            .find(|f| f.file.name().contains("cp313"))
            .unwrap();
        // Only a 3.13 target takes the cp313 wheel (it is a fallback after the variant).
        assert_eq!(
            cp313.fate == FileFate::WrongTags,
            version != "3.13",
            "{version}"
        );
    }
}

#[test]
fn a_profile_without_platform_uses_this_machines_and_says_so() {
    let profile_dir = tempfile::tempdir().unwrap();
    let bare = x86_profile(profile_dir.path(), None);
    let mut settings = described(&bare, "3.12", "x86_64-manylinux_2_28");
    settings.python.platform = None;
    let bare_target = target(&settings);
    assert!(
        bare_target
            .notes
            .iter()
            .any(|n| n.contains("gives no platform")),
        "{:?}",
        bare_target.notes
    );
    assert!(!bare_target
        .markers
        .get("platform_system")
        .unwrap_or("")
        .is_empty());
    // A profile that gives a platform is the platform markers see.
    let with_platform = tempfile::tempdir().unwrap();
    let windows = x86_profile(
        with_platform.path(),
        Some(r#"{"system": "Windows", "machine": "AMD64"}"#),
    );
    let mut settings = described(&windows, "3.12", "x86_64-manylinux_2_28");
    settings.python.platform = None;
    let target = target(&settings);
    assert_eq!(target.markers.get("platform_system"), Some("Windows"));
    assert_eq!(target.markers.get("sys_platform"), Some("win32"));
}
