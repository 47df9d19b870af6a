//! The limits of a lock and the characters its strings may hold: one set, defined here, checked
//! on both sides. [`crate::read_lock`] refuses what breaks them; [`crate::write_lock`] refuses
//! to write it, so that whatever `vari lock` writes, `vari sync`, `export` and `mirror` read.
//!
//! Characters: a lock's strings reach requirements files, command lines and terminals. Python's
//! `str.splitlines` (which pip's requirements parser uses) ends a line at `\r`, `\v`, `\f`,
//! `\x1c`-`\x1e`, `\x85`, U+2028 and U+2029 as well as `\n`, so a string holding any of them
//! could add a line (`--index-url=…`) to an exported requirements file. No string of a lock may
//! hold a control character, a Unicode line or paragraph separator, or an invisible formatting
//! character (bidirectional overrides, zero-width characters: text that reads differently from
//! what it is). Strings that name a file (`name`, `path`, `url`, `index`) hold no whitespace
//! either; `name` and `path` no `#` (` #` starts a comment in a requirements file).

use crate::model::{Artifact, Lock, LockTarget, Package};
use crate::LockError;

/// The largest lock vari reads by default (`max-input-bytes` may raise the reading ceiling,
/// never this): a lock of a few thousand packages with every PyTorch variant is a few MiB.
/// [`crate::write_lock`] writes no more than this, so that any reader accepts what it writes.
pub const MAX_LOCK_BYTES: u64 = 32 << 20;
/// At most this many `[[packages]]` entries.
pub const MAX_PACKAGES: usize = 20_000;
/// At most this many wheels in one entry (PyTorch lists a few hundred per release).
pub const MAX_WHEELS_PER_PACKAGE: usize = 5_000;
/// At most this many items in any other array of strings.
pub const MAX_ITEMS: usize = 10_000;
/// At most this many tables in any other array of tables (`dependencies`, `targets`).
pub const MAX_TABLES: usize = 20_000;
/// At most this many bytes in any string. Generous: a variant dependency's marker naming every
/// property of a large release is legal and may run to hundreds of KiB; the file's own ceiling
/// bounds the total.
pub const MAX_STRING: usize = 1 << 20;

/// Whether `c` may not appear in any string of a lock: a control character (C0, DEL, C1), a
/// Unicode line or paragraph separator, or an invisible formatting character.
pub fn is_forbidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}'
            // Zero-width and joiner characters, bidirectional marks and overrides.
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
        )
}

/// Checks a string of a lock: at most [`MAX_STRING`] bytes, no [`is_forbidden_char`].
///
/// ```
/// use vari_lock::limits::check_text;
/// assert!(check_text("torch>=2 ; 'nvidia' in variant_namespaces").is_ok());
/// assert!(check_text("a\u{2028}--index-url=https://evil").is_err());
/// ```
pub fn check_text(text: &str) -> Result<(), String> {
    if text.len() > MAX_STRING {
        return Err(format!("is longer than {MAX_STRING} bytes"));
    }
    match text.chars().find(|c| is_forbidden_char(*c)) {
        Some(c) => Err(format!(
            "holds the character {}, which a lock may not hold",
            c.escape_unicode()
        )),
        None => Ok(()),
    }
}

/// Checks a string that names a file or a location (`name`, `path`, `url`, `index`):
/// [`check_text`], and no whitespace; with `no_hash`, no `#` either.
///
/// ```
/// use vari_lock::limits::check_location;
/// assert!(check_location("wheels/a-1-py3-none-any.whl", true).is_ok());
/// assert!(check_location("a.whl #", true).is_err());
/// assert!(check_location("a.whl#x", true).is_err());
/// ```
pub fn check_location(text: &str, no_hash: bool) -> Result<(), String> {
    check_text(text)?;
    if let Some(c) = text.chars().find(|c| c.is_whitespace()) {
        return Err(format!(
            "{text:?} holds whitespace ({}), which a location may not hold",
            c.escape_unicode()
        ));
    }
    if no_hash && text.contains('#') {
        return Err(format!(
            "{text:?} holds `#`, which a file's name may not hold"
        ));
    }
    Ok(())
}

/// A path relative to the lock's directory that cannot leave it: `/`-separated, no
/// absolute path, no drive, no `..`, no empty segment.
pub(crate) fn check_relative_path(text: &str) -> Result<(), String> {
    let bad = text.is_empty()
        || text.starts_with('/')
        || text.contains('\\')
        || text.contains('\0')
        || text.as_bytes().get(1) == Some(&b':')
        || text
            .split('/')
            .any(|segment| segment.is_empty() || segment == "..");
    if bad {
        Err(format!(
            "{text:?} must be a relative path inside the lock's directory"
        ))
    } else {
        Ok(())
    }
}

impl LockTarget {
    /// The profile as a path relative to the lock's directory, for a command that reads it
    /// from there (`vari mirror --lock`): `None` when the target names none; an error when it
    /// names one outside that directory (absolute, with `..`, a drive), which a lock from
    /// elsewhere must not make vari read.
    ///
    /// ```
    /// let target = |p: &str| vari_lock::LockTarget { name: "a".into(), profile: Some(p.into()), ..Default::default() };
    /// assert_eq!(target("profiles/a100.toml").profile_in_lock_dir(), Ok(Some("profiles/a100.toml")));
    /// assert!(target("/etc/shadow").profile_in_lock_dir().is_err());
    /// assert!(target("../../home/u/.ssh/id_rsa").profile_in_lock_dir().is_err());
    /// ```
    pub fn profile_in_lock_dir(&self) -> Result<Option<&str>, String> {
        let Some(profile) = self.profile.as_deref() else {
            return Ok(None);
        };
        check_location(profile, false)?;
        check_relative_path(profile).map_err(|_| {
            format!(
                "target {}: its profile {profile:?} is outside the lock's directory (give \
                 --target PROFILE)",
                self.name
            )
        })?;
        Ok(Some(profile))
    }
}

/// Checks what [`crate::read_lock`] checks of each string and count of `lock`, before it is
/// written: the same limits, the same characters.
pub(crate) fn check_lock(lock: &Lock) -> Result<(), LockError> {
    let text = |path: &str, value: &str| check_text(value).map_err(|m| LockError::new(path, m));
    let texts = |path: &str, values: &[String]| {
        if values.len() > MAX_ITEMS {
            return Err(LockError::new(
                path,
                format!("has more than {MAX_ITEMS} items"),
            ));
        }
        values
            .iter()
            .enumerate()
            .try_for_each(|(i, value)| text(&format!("{path}[{i}]"), value))
    };
    text("lock-version", &lock.lock_version)?;
    texts("environments", &lock.environments)?;
    if let Some(value) = &lock.requires_python {
        text("requires-python", value)?;
    }
    texts("extras", &lock.extras)?;
    texts("dependency-groups", &lock.dependency_groups)?;
    texts("default-groups", &lock.default_groups)?;
    text("created-by", &lock.created_by)?;
    if lock.packages.len() > MAX_PACKAGES {
        return Err(LockError::new(
            "packages",
            format!("has more than {MAX_PACKAGES} entries"),
        ));
    }
    for (i, package) in lock.packages.iter().enumerate() {
        check_package(package, &format!("packages[{i}]"))?;
    }
    if let Some(info) = &lock.vari {
        if let Some(value) = &info.inputs_hash {
            text("tool.vari.inputs-hash", value)?;
        }
        texts("tool.vari.requirements", &info.requirements)?;
        texts("tool.vari.indexes", &info.indexes)?;
        for (i, index) in info.indexes.iter().enumerate() {
            check_location(index, false)
                .map_err(|m| LockError::new(format!("tool.vari.indexes[{i}]"), m))?;
        }
        if info.targets.len() > MAX_TABLES {
            return Err(LockError::new(
                "tool.vari.targets",
                format!("has more than {MAX_TABLES} items"),
            ));
        }
        for (i, target) in info.targets.iter().enumerate() {
            let path = format!("tool.vari.targets[{i}]");
            text(&format!("{path}.name"), &target.name)?;
            let optional = [
                ("profile", &target.profile),
                ("profile-hash", &target.profile_hash),
                ("python-version", &target.python_version),
                ("python-platform", &target.python_platform),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    text(&format!("{path}.{key}"), value)?;
                }
            }
        }
    }
    Ok(())
}

fn check_package(package: &Package, path: &str) -> Result<(), LockError> {
    let text = |key: &str, value: &str| {
        check_text(value).map_err(|m| LockError::new(format!("{path}.{key}"), m))
    };
    text("name", &package.name)?;
    if let Some(version) = &package.version {
        text("version", &version.to_string())?;
    }
    if let Some(value) = &package.marker {
        text("marker", value)?;
    }
    if let Some(value) = &package.requires_python {
        text("requires-python", value)?;
    }
    if let Some(value) = &package.index {
        check_location(value, false).map_err(|m| LockError::new(format!("{path}.index"), m))?;
    }
    if package.dependencies.len() > MAX_TABLES {
        return Err(LockError::new(
            format!("{path}.dependencies"),
            format!("has more than {MAX_TABLES} items"),
        ));
    }
    for (i, dependency) in package.dependencies.iter().enumerate() {
        text(&format!("dependencies[{i}].name"), &dependency.name)?;
        if let Some(version) = &dependency.version {
            text(&format!("dependencies[{i}].version"), version)?;
        }
    }
    if let Some(sdist) = &package.sdist {
        check_artifact(sdist, &format!("{path}.sdist"))?;
    }
    if package.wheels.len() > MAX_WHEELS_PER_PACKAGE {
        return Err(LockError::new(
            format!("{path}.wheels"),
            format!("has more than {MAX_WHEELS_PER_PACKAGE} entries"),
        ));
    }
    for (i, wheel) in package.wheels.iter().enumerate() {
        check_artifact(wheel, &format!("{path}.wheels[{i}]"))?;
    }
    if let Some(info) = &package.vari {
        for (key, values) in [
            ("variant-dependencies", &info.variant_dependencies),
            ("targets", &info.targets),
        ] {
            let key = format!("{path}.tool.vari.{key}");
            if values.len() > MAX_ITEMS {
                return Err(LockError::new(
                    key,
                    format!("has more than {MAX_ITEMS} items"),
                ));
            }
            for (i, value) in values.iter().enumerate() {
                check_text(value).map_err(|m| LockError::new(format!("{key}[{i}]"), m))?;
            }
        }
    }
    Ok(())
}

fn check_artifact(artifact: &Artifact, path: &str) -> Result<(), LockError> {
    let at = |key: &'static str| move |m: String| LockError::new(format!("{path}.{key}"), m);
    if let Some(name) = &artifact.name {
        check_location(name, true).map_err(at("name"))?;
    }
    if let Some(url) = &artifact.url {
        check_location(url, false).map_err(at("url"))?;
    }
    if let Some(file_path) = &artifact.path {
        check_location(file_path, true).map_err(at("path"))?;
    }
    if let Some(time) = &artifact.upload_time {
        check_text(time).map_err(at("upload-time"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_break_python_knows_is_forbidden() {
        // Python's str.splitlines() breaks at each of these.
        for c in [
            '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
            '\u{2029}',
        ] {
            assert!(is_forbidden_char(c), "{}", c.escape_unicode());
            assert!(check_text(&format!("a{c}b")).is_err());
        }
        for c in ['\0', '\t', '\u{7f}', '\u{202e}', '\u{200b}', '\u{feff}'] {
            assert!(is_forbidden_char(c), "{}", c.escape_unicode());
        }
        assert!(check_text("numlike >= 1 ; 'x86_64 :: level :: v3' in variant_properties").is_ok());
        assert!(check_text(&"a".repeat(MAX_STRING)).is_ok());
        assert!(check_text(&"a".repeat(MAX_STRING + 1)).is_err());
    }

    #[test]
    fn locations_hold_no_whitespace_and_names_no_hash() {
        assert!(check_location("https://x/a.whl", false).is_ok());
        assert!(check_location("https://x/a.whl\u{a0}", false).is_err());
        assert!(check_location("wheels/a.whl --hash=sha256:00", true).is_err());
        assert!(check_location("wheels/a#b.whl", true).is_err());
        assert!(check_location("wheels/é.whl", true).is_ok());
    }
}
