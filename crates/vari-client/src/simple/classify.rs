//! From a link's file name to what it is: wheel, source distribution, or `variants.json`, and
//! whether it belongs to the project asked for.

use std::collections::HashMap;
use std::str::FromStr;

use pep440_rs::{Version, VersionSpecifiers};
use vari_core::filename::{parse_variants_json_filename, WheelFilename};

use super::model::{FileKind, FileSource, IndexFile, PageWarning, RawFile};
use crate::name::ProjectName;

/// Source distribution extensions installers recognise.
const SDIST_EXTENSIONS: [&str; 6] = [".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tgz", ".tar"];

/// Classifies the links of one page for `project`. Links of other projects are dropped
/// silently (a find-links page lists many); links of this project that cannot be read are
/// dropped with a warning.
pub(crate) fn classify(
    raw: Vec<RawFile>,
    project: &ProjectName,
    source: &FileSource,
    location: &str,
    warnings: &mut Vec<PageWarning>,
) -> Vec<IndexFile> {
    let mut warn = |message: String| {
        warnings.push(PageWarning {
            location: location.to_owned(),
            message,
        })
    };
    let mut files = Vec::with_capacity(raw.len());
    // Pages repeat a handful of `requires-python` values thousands of times: parse each once.
    let mut specifiers: HashMap<String, Option<VersionSpecifiers>> = HashMap::new();
    for file in raw {
        let kind = match kind_of(&file.filename, project) {
            Kind::Ours(kind) => kind,
            Kind::Other => continue,
            Kind::Unreadable(message) => {
                warn(message);
                continue;
            }
        };
        let requires_python = match file.requires_python.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(text) => {
                if !specifiers.contains_key(text) {
                    let parsed = VersionSpecifiers::from_str(text).map_err(|e| e.to_string());
                    specifiers.insert(text.to_owned(), parsed.clone().ok());
                    if let Err(e) = parsed {
                        // pip ignores a requires-python it cannot parse; so do we, visibly.
                        warn(format!(
                            "{}: ignoring invalid requires-python `{text}`: {e}",
                            file.filename
                        ));
                    }
                }
                specifiers.get(text).cloned().flatten()
            }
        };
        files.push(IndexFile {
            filename: file.filename,
            kind,
            url: file.url,
            hashes: file.hashes,
            requires_python,
            yanked: file.yanked,
            core_metadata: file.core_metadata,
            size: file.size,
            upload_time: file.upload_time,
            source: source.clone(),
        });
    }
    files
}

enum Kind {
    Ours(FileKind),
    Other,
    Unreadable(String),
}

fn kind_of(filename: &str, project: &ProjectName) -> Kind {
    if filename.ends_with(".whl") {
        return match WheelFilename::parse(filename) {
            Ok(wheel) if project.matches(&wheel.name) => Kind::Ours(FileKind::Wheel(wheel)),
            Ok(_) => Kind::Other,
            // Only complain about files that look like this project's.
            Err(e) if starts_with_project(filename, project) => Kind::Unreadable(e.to_string()),
            Err(_) => Kind::Other,
        };
    }
    if let Some(parsed) = parse_variants_json_filename(filename) {
        return match parsed {
            Ok(name) if project.matches(&name.name) => Kind::Ours(FileKind::VariantsJson {
                version: name.version,
            }),
            Ok(_) => Kind::Other,
            Err(e) if project.matches(&e.name) => Kind::Unreadable(e.to_string()),
            Err(_) => Kind::Other,
        };
    }
    let lower = filename.to_ascii_lowercase();
    if let Some(ext) = SDIST_EXTENSIONS.iter().find(|ext| lower.ends_with(*ext)) {
        let stem = &filename[..filename.len() - ext.len()];
        return match sdist_version(stem, project) {
            Some(version) => Kind::Ours(FileKind::Sdist { version }),
            None => Kind::Other,
        };
    }
    Kind::Other
}

/// The version of a source distribution named `{name}-{version}`, where the name may itself
/// contain dashes: the split is the one whose name part is this project and whose rest is a
/// version.
fn sdist_version(stem: &str, project: &ProjectName) -> Option<Version> {
    stem.match_indices('-').find_map(|(i, _)| {
        let (name, version) = (&stem[..i], &stem[i + 1..]);
        if project.matches(name) {
            Version::from_str(version).ok()
        } else {
            None
        }
    })
}

fn starts_with_project(filename: &str, project: &ProjectName) -> bool {
    filename
        .split_once('-')
        .is_some_and(|(name, _)| project.matches(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(filename: &str) -> RawFile {
        let url = url::Url::parse(&format!("https://example.com/{filename}")).unwrap();
        RawFile::new(filename, url)
    }

    fn run(names: &[&str], project: &str) -> (Vec<IndexFile>, Vec<PageWarning>) {
        let mut warnings = Vec::new();
        let files = classify(
            names.iter().map(|n| raw(n)).collect(),
            &ProjectName::new(project).unwrap(),
            &FileSource::FindLinks("page".into()),
            "page",
            &mut warnings,
        );
        (files, warnings)
    }

    #[test]
    fn kinds_are_recognised_for_the_project() {
        let (files, warnings) = run(
            &[
                "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl",
                "torch-2.10.0-variants.json",
                "torch-2.10.0.tar.gz",
                "torchvision-0.25.0-py3-none-any.whl",
                "torchvision-0.25.0.tar.gz",
                "torch-2.10.0-cp312-cp312-win_amd64.exe",
            ],
            "Torch",
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let kinds: Vec<_> = files
            .iter()
            .map(|f| match &f.kind {
                FileKind::Wheel(w) => format!("wheel {}", w.label.as_ref().unwrap()),
                FileKind::Sdist { version } => format!("sdist {version}"),
                FileKind::VariantsJson { version } => format!("variants {version}"),
            })
            .collect();
        assert_eq!(kinds, ["wheel cu128", "variants 2.10.0", "sdist 2.10.0"]);
    }

    #[test]
    fn dashed_names_split_at_the_version() {
        let (files, _) = run(
            &[
                "my-pkg-1.0.0.tar.gz",
                "my_pkg-2.0-variants.json",
                "my-pkg-extra-1.0.zip",
            ],
            "my.pkg",
        );
        let versions: Vec<String> = files.iter().map(|f| f.version().to_string()).collect();
        assert_eq!(versions, ["1.0.0", "2.0"]);
    }

    #[test]
    fn unreadable_files_of_the_project_are_warned_about() {
        let (files, warnings) = run(&["foo-1.0-py3-none-any-BAD.whl", "bar-x.whl"], "foo");
        assert!(files.is_empty());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("foo-1.0-py3-none-any-BAD.whl"));
    }

    #[test]
    fn invalid_requires_python_is_ignored_with_a_warning() {
        let mut file = raw("foo-1.0-py3-none-any.whl");
        file.requires_python = Some(">=3.8,<<4".into());
        let mut warnings = Vec::new();
        let files = classify(
            vec![file],
            &ProjectName::new("foo").unwrap(),
            &FileSource::FindLinks("page".into()),
            "page",
            &mut warnings,
        );
        assert_eq!(files[0].requires_python, None);
        assert!(warnings[0].message.contains(">=3.8,<<4"));
    }
}
