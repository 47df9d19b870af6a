//! Which files of the input directory are distributions, and of which project and version.
//!
//! Wheels are named by their (PEP 427 / PEP 825) filename; source distributions by
//! `{name}-{version}.tar.gz` or `.zip` (PEP 625), split at the last `-` so that legacy names with
//! dashes still parse. A `*-variants.json` (the one `wheel repack` writes beside its wheels) is
//! listed apart, to be checked against the one the build combines. Everything else (README
//! files, directories) is skipped and reported, never guessed at.

use std::path::{Path, PathBuf};

use pep440_rs::Version;
use vari_core::filename::{WheelFilename, VARIANTS_JSON_SUFFIX};
use vari_core::project::normalize;

use crate::error::BuildError;

/// A distribution file found in the input directory.
#[derive(Debug, Clone)]
pub(crate) struct Input {
    /// Its path.
    pub(crate) path: PathBuf,
    /// Its file name (also its name in the site).
    pub(crate) filename: String,
    /// The PEP 503 normalised project name (`test-package`).
    pub(crate) project: String,
    /// Its version.
    pub(crate) version: Version,
    /// Wheel or sdist.
    pub(crate) kind: InputKind,
    /// Its size when listed.
    pub(crate) size: u64,
    /// Its stamp when listed, for a seal kept of it (by the build state, or by the caller's
    /// store: [`crate::build::KnownHashes`]); `None` where there are no stamps.
    pub(crate) stamp: Option<vari_fs::Stamp>,
}

/// What kind of distribution a file is.
#[derive(Debug, Clone)]
pub(crate) enum InputKind {
    /// A wheel, with its parsed filename (which carries the variant label).
    Wheel(WheelFilename),
    /// A source distribution.
    Sdist,
}

/// A file of the input directory that is not published, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why it is not published.
    pub reason: String,
}

/// What the input directory holds.
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    /// The distributions, sorted by file name.
    pub(crate) inputs: Vec<Input>,
    /// The `*-variants.json` files (path, file name), sorted by file name.
    pub(crate) variants_json: Vec<(PathBuf, String)>,
    /// Everything else, sorted by path.
    pub(crate) skipped: Vec<Skipped>,
}

/// Lists the distributions directly in `dir` (not in subdirectories).
pub(crate) fn discover(dir: &Path) -> Result<Discovered, BuildError> {
    let list_error = |source| BuildError::ListInput {
        path: dir.to_owned(),
        source,
    };
    let mut inputs = Vec::new();
    let mut variants_json = Vec::new();
    let mut skipped = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(list_error)? {
        let entry = entry.map_err(list_error)?;
        let path = entry.path();
        let Some(filename) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            skipped.push(Skipped {
                path,
                reason: "the file name is not UTF-8".to_owned(),
            });
            continue;
        };
        // Hidden files are editor and sync leftovers (`.DS_Store`, `.foo.whl.swp`); one named
        // like a distribution is said to be skipped, never dropped silently.
        if filename.starts_with('.') {
            if DIST_SUFFIXES.iter().any(|s| filename.ends_with(s)) {
                skipped.push(Skipped {
                    path,
                    reason: "a hidden file (its name starts with `.`), not a distribution name"
                        .to_owned(),
                });
            }
            continue;
        }
        // `metadata` follows symbolic links: a directory of links to wheels is a fine input.
        let (size, stamp) = match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() => (meta.len(), vari_fs::Stamp::of(&meta)),
            Ok(_) => continue,
            Err(source) => return Err(BuildError::Read { path, source }),
        };
        if filename.ends_with(VARIANTS_JSON_SUFFIX) {
            variants_json.push((path, filename));
            continue;
        }
        match classify(&filename) {
            Ok((project, version, kind)) => inputs.push(Input {
                path,
                filename,
                project,
                version,
                kind,
                size,
                stamp,
            }),
            Err(reason) => skipped.push(Skipped { path, reason }),
        }
    }
    inputs.sort_by(|a, b| a.filename.cmp(&b.filename));
    variants_json.sort_by(|a, b| a.1.cmp(&b.1));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Discovered {
        inputs,
        variants_json,
        skipped,
    })
}

/// The endings of distribution files.
const DIST_SUFFIXES: [&str; 3] = [".whl", ".tar.gz", ".zip"];

/// The project, version and kind of a distribution file name, or why it is not one. Only names
/// that follow their grammar are accepted (PEP 427 for wheels; `{name}-{version}.tar.gz` or
/// `.zip` for sdists, with a valid PEP 508 name and a PEP 440 version), so that what names a
/// site directory and fills a page is always a plain, valid name.
fn classify(filename: &str) -> Result<(String, Version, InputKind), String> {
    let (project, version, kind) = classify_grammar(filename)?;
    // Belt and braces: whatever the grammars accept must also be a plain path component.
    vari_fs::check_name(filename).map_err(|e| e.to_string())?;
    vari_fs::check_name(&project).map_err(|e| e.to_string())?;
    Ok((project, version, kind))
}

fn classify_grammar(filename: &str) -> Result<(String, Version, InputKind), String> {
    if filename.ends_with(".whl") {
        let parsed = WheelFilename::parse(filename).map_err(|e| e.to_string())?;
        return Ok((
            normalize(&parsed.name),
            parsed.version.clone(),
            InputKind::Wheel(parsed),
        ));
    }
    let stem = filename
        .strip_suffix(".tar.gz")
        .or_else(|| filename.strip_suffix(".zip"))
        .ok_or_else(|| "not a wheel or a source distribution (.tar.gz, .zip)".to_owned())?;
    let (name, version) = stem
        .rsplit_once('-')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| "a source distribution is named `{name}-{version}.tar.gz`".to_owned())?;
    if !vari_core::project::is_valid(name) {
        return Err(format!(
            "a source distribution is named `{{name}}-{{version}}.tar.gz`; `{}` is not a valid \
             project name (ASCII letters, digits, `-`, `_`, `.`, starting and ending with a \
             letter or digit)",
            name.escape_debug()
        ));
    }
    // PEP 440's spellings use these characters only; the parser also forgives spaces around
    // the version, which a file name must not carry.
    if version.is_empty()
        || !version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'!' | b'_'))
    {
        return Err(format!(
            "a source distribution is named `{{name}}-{{version}}.tar.gz`; `{}` is not a version",
            version.escape_debug()
        ));
    }
    let version: Version = version.parse().map_err(|e| {
        format!("a source distribution is named `{{name}}-{{version}}.tar.gz`; `{version}` is not a version: {e}")
    })?;
    Ok((normalize(name), version, InputKind::Sdist))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheels_and_sdists_are_classified() {
        let (project, version, kind) = classify("Foo_Bar-1.0-py3-none-any-cu12.whl").unwrap();
        assert_eq!(
            (project.as_str(), version.to_string().as_str()),
            ("foo-bar", "1.0")
        );
        assert!(
            matches!(kind, InputKind::Wheel(w) if w.label.as_ref().unwrap().as_str() == "cu12")
        );
        let (project, version, kind) = classify("my-legacy.pkg-2.0rc1.tar.gz").unwrap();
        assert_eq!(
            (project.as_str(), version.to_string().as_str()),
            ("my-legacy-pkg", "2.0rc1")
        );
        assert!(matches!(kind, InputKind::Sdist));
        assert!(classify("foo-1.0.zip").is_ok());
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        assert!(classify("README.md").unwrap_err().contains("not a wheel"));
        assert!(classify("foo.tar.gz")
            .unwrap_err()
            .contains("{name}-{version}"));
        assert!(classify("foo-bar.tar.gz")
            .unwrap_err()
            .contains("not a version"));
        assert!(classify("foo-1.0-py3.whl")
            .unwrap_err()
            .contains("dash-separated"));
    }

    #[test]
    fn hostile_sdist_names_are_refused() {
        for bad in [
            "javascript:alert(1)+%2fx-1.0.tar.gz",
            "..-1.0.tar.gz",
            "a b-1.0.tar.gz",
            "line\nbreak-1.0.tar.gz",
            "esc\u{1b}[31m-1.0.tar.gz",
            "<script>-1.0.zip",
            "foo- 1.0.tar.gz",
            "foo-1.0 .tar.gz",
        ] {
            let reason = classify(bad).unwrap_err();
            assert!(
                reason.contains("not a valid project name") || reason.contains("not a version"),
                "{bad:?}: {reason}"
            );
        }
    }
}
