//! The few settings of an AWS profile that an S3 destination needs, read from the shared files
//! as the AWS CLI reads them (`object_store` reads only the environment).
//!
//! The profile is `AWS_PROFILE` (else `default`). Credentials come from
//! `AWS_SHARED_CREDENTIALS_FILE` (else `~/.aws/credentials`, section `[NAME]`), then from
//! `AWS_CONFIG_FILE` (else `~/.aws/config`, section `[profile NAME]`, or `[default]`); region
//! and `endpoint_url` from the config file. Each file is read bounded ([`MAX_FILE_BYTES`]); a
//! missing file is no error, an unreadable or malformed one is (naming the file and line).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most a profile file may hold (real ones are a few hundred bytes).
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;

/// The keys read; the rest of a section is ignored.
const KEYS: [&str; 5] = [
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "region",
    "endpoint_url",
];

/// What the profile says, by key (`aws_access_key_id`, `region`, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Profile {
    pub(crate) values: BTreeMap<&'static str, String>,
}

impl Profile {
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }
}

/// Why a profile file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", .path.display())]
pub(crate) struct ProfileError {
    pub(crate) path: PathBuf,
    pub(crate) problem: String,
}

/// The profile the environment names, from the files the environment names.
pub(crate) fn load_from_env() -> Result<Profile, ProfileError> {
    let var = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
    let name = var("AWS_PROFILE")
        .and_then(|v| v.into_string().ok())
        .unwrap_or_else(|| "default".to_owned());
    let home = var("HOME").map(PathBuf::from);
    let file = |key: &str, default: &str| {
        var(key)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
    };
    load(
        &name,
        file("AWS_SHARED_CREDENTIALS_FILE", "credentials").as_deref(),
        file("AWS_CONFIG_FILE", "config").as_deref(),
    )
}

/// Profile `name` from `credentials` then `config` (either may be absent).
pub(crate) fn load(
    name: &str,
    credentials: Option<&Path>,
    config: Option<&Path>,
) -> Result<Profile, ProfileError> {
    let mut profile = Profile::default();
    if let Some(path) = credentials {
        if let Some(text) = read(path)? {
            merge(&mut profile, &text, path, |section| section == name)?;
        }
    }
    if let Some(path) = config {
        if let Some(text) = read(path)? {
            merge(&mut profile, &text, path, |section| {
                section.strip_prefix("profile ").map(str::trim) == Some(name)
                    || (name == "default" && section == "default")
            })?;
        }
    }
    Ok(profile)
}

fn read(path: &Path) -> Result<Option<String>, ProfileError> {
    match vari_fs::read_input_limited(path, MAX_FILE_BYTES) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| ProfileError {
                path: path.to_owned(),
                problem: "not UTF-8".to_owned(),
            }),
        Err(vari_fs::InputError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(None)
        }
        Err(e) => Err(ProfileError {
            path: path.to_owned(),
            problem: e.problem(),
        }),
    }
}

/// Adds the keys of the sections `wanted` accepts, keeping values already set (the credentials
/// file wins over the config file, as in the AWS CLI).
fn merge(
    profile: &mut Profile,
    text: &str,
    path: &Path,
    wanted: impl Fn(&str) -> bool,
) -> Result<(), ProfileError> {
    let mut in_section = false;
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let Some(section) = section.strip_suffix(']') else {
                return Err(ProfileError {
                    path: path.to_owned(),
                    problem: format!("line {}: a section header without `]`", number + 1),
                });
            };
            in_section = wanted(section.trim());
            continue;
        }
        if !in_section {
            continue;
        }
        // Indented lines continue a nested setting (`s3 =` then `  endpoint_url = …`): only
        // top-level keys are read, so a nested one never passes for the profile's own.
        if raw.starts_with([' ', '\t']) {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        if let Some(known) = KEYS.iter().find(|k| **k == key) {
            let value = value.trim();
            if !value.is_empty() {
                profile
                    .values
                    .entry(known)
                    .or_insert_with(|| value.to_owned());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_win_over_config_and_sections_are_matched_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &credentials,
            "[default]\naws_access_key_id = D\n\n[ci]\n# comment\naws_access_key_id = K\n\
             aws_secret_access_key=S\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n[profile ci]\nregion = garage\n\
             endpoint_url = http://127.0.0.1:3900\naws_access_key_id = ignored\n\
             s3 =\n  region = nested\n",
        )
        .unwrap();
        let ci = load("ci", Some(&credentials), Some(&config)).unwrap();
        assert_eq!(ci.get("aws_access_key_id"), Some("K"));
        assert_eq!(ci.get("aws_secret_access_key"), Some("S"));
        assert_eq!(ci.get("region"), Some("garage"));
        assert_eq!(ci.get("endpoint_url"), Some("http://127.0.0.1:3900"));
        let default = load("default", Some(&credentials), Some(&config)).unwrap();
        assert_eq!(default.get("aws_access_key_id"), Some("D"));
        assert_eq!(default.get("region"), Some("eu-west-1"));
        let missing = load("ci", Some(&dir.path().join("none")), None).unwrap();
        assert_eq!(missing, Profile::default());
    }

    #[test]
    fn a_broken_header_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        std::fs::write(&config, "[default]\nregion = x\n[profile ci\n").unwrap();
        let err = load("ci", None, Some(&config)).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("config: line 3: a section header without `]`"));
        std::fs::write(&config, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert!(load("ci", None, Some(&config)).is_err());
    }
}
