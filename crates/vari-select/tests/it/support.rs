//! What the `choose` and `python` tests share: wheels without dependencies, 0.0.3 variant
//! documents, and described targets.

use std::path::{Path, PathBuf};

use vari_select::{Target, TargetSettings};

use crate::test_wheels;

/// Writes `dir/{filename}`: a wheel without dependencies, with `variant.json` when given.
pub(crate) fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>) -> PathBuf {
    test_wheels::wheel(dir, filename, variant_json, &[])
}

/// A 0.0.3 `variant.json` (the generation that has `enable-if`) with one variant of the `x86_64 :: level` feature (or the null
/// variant for `None`), the x86_64 provider enabled only `if` the marker holds.
pub(crate) fn x86_variant_json(
    label: &str,
    level: Option<&str>,
    enable_if: Option<&str>,
) -> String {
    let enable_if = enable_if
        .map(|m| format!(r#", "enable-if": {m:?}"#))
        .unwrap_or_default();
    let properties = level
        .map(|l| format!(r#"{{"x86_64": {{"level": ["{l}"]}}}}"#))
        .unwrap_or_else(|| "{}".to_owned());
    format!(
        r#"{{"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
  "default-priorities": {{"namespace": ["x86_64"]}},
  "providers": {{"x86_64": {{"requires": ["provider-variant-x86-64"]{enable_if}}}}},
  "variants": {{"{label}": {properties}}}}}"#
    )
}

/// A `vari-profile/1` file supporting x86-64 up to `v3` on Linux x86_64 (or the platform given).
pub(crate) fn x86_profile(dir: &Path, platform: Option<&str>) -> PathBuf {
    let platform = platform
        .map(|p| format!(r#""platform": {p},"#))
        .unwrap_or_default();
    let path = dir.join("profile.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"schema": "vari-profile/1", {platform}
  "namespaces": [{{"namespace": "x86_64", "features": [{{"name": "level", "values": ["v3", "v2", "v1"]}}]}}]}}"#
        ),
    )
    .unwrap();
    path
}

/// Settings for a described target: no interpreter, no host detection (a profile file).
pub(crate) fn described(profile: &Path, version: &str, platform: &str) -> TargetSettings {
    let mut settings = TargetSettings::from_process_env();
    settings.env.retain(|k, _| k == "HOME" || k == "PATH");
    settings.profile = Some(profile.to_path_buf());
    settings.python.version = Some(version.parse().unwrap());
    settings.python.platform = Some(platform.parse().unwrap());
    settings
}

/// Resolves a target.
pub(crate) fn target(settings: &TargetSettings) -> Target {
    Target::resolve(settings).unwrap()
}

/// A described CPython 3.12 on `platform` whose CPU supports x86-64 up to v3 (an
/// [`x86_profile`] in a directory of its own, gone once the target is resolved).
pub(crate) fn x86_v3_target(platform: &str) -> Target {
    let dir = tempfile::tempdir().unwrap();
    let profile = x86_profile(dir.path(), None);
    target(&described(&profile, "3.12", platform))
}
