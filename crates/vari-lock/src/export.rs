//! What one machine class installs, written for tools without variant support: a
//! requirements file of pinned files with their hashes, or the lock narrowed to the class's
//! files. Pure: the caller fetches files, writes the output.

use crate::model::{Lock, PackageInfo};
use crate::plan::{Plan, PlannedFile};

/// One line of an exported requirements file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedFile {
    /// The distribution's name.
    pub name: String,
    /// Where the installer takes it from: an `http(s)` URL, or a path (relative to where the
    /// installer runs, or absolute).
    pub location: String,
    /// The SHA-256 of the file there (lowercase hex).
    pub sha256: String,
}

/// `name @ URL --hash=sha256:…` per URL, `PATH --hash=sha256:…` per path, after `header`
/// (each of its lines as a `#` comment), in the order given. pip and uv check each hash
/// (`--require-hashes` is implied once every line has one).
///
/// ```
/// use vari_lock::export::{requirements_txt, ExportedFile};
/// let text = requirements_txt("for a100", &[ExportedFile {
///     name: "numlike".into(),
///     location: "https://files.example/numlike-2.3.4-py3-none-any.whl".into(),
///     sha256: "ab".repeat(32),
/// }]);
/// assert!(text.starts_with("# for a100\nnumlike @ https://files.example/numlike-2.3.4-py3-none-any.whl --hash=sha256:abab"));
/// ```
pub fn requirements_txt(header: &str, files: &[ExportedFile]) -> String {
    let mut text = String::new();
    for line in header.lines() {
        text.push_str(&format!("# {line}\n"));
    }
    for file in files {
        let remote = file.location.starts_with("https://") || file.location.starts_with("http://");
        match remote {
            true => text.push_str(&format!(
                "{} @ {} --hash=sha256:{}\n",
                file.name, file.location, file.sha256
            )),
            false => text.push_str(&format!(
                "{} --hash=sha256:{}\n",
                file.location, file.sha256
            )),
        }
    }
    text
}

/// `lock` narrowed to what `plan` installs: only its entries, each with only its chosen file
/// (and the variants-json of its label), unconditional (no `marker`, not `through-variants`:
/// the plan decided), and no extras or groups left to choose.
pub fn narrow(lock: &Lock, plan: &Plan) -> Lock {
    let mut packages = Vec::with_capacity(plan.install.len());
    for planned in &plan.install {
        let Some(source) = lock.packages.get(planned.package) else {
            continue;
        };
        let mut package = source.clone();
        package.marker = None;
        match &planned.file {
            PlannedFile::Wheel { index, .. } => {
                package.wheels = source.wheels.get(*index).cloned().into_iter().collect();
                package.sdist = None;
            }
            PlannedFile::Sdist => package.wheels.clear(),
        }
        package.variants_json = match &planned.label {
            Some(label) => source
                .variants_json
                .as_ref()
                .map(|m| m.keep_labels(std::slice::from_ref(label))),
            None => None,
        };
        if let Some(info) = &mut package.vari {
            *info = PackageInfo {
                through_variants: false,
                ..info.clone()
            };
        }
        packages.push(package);
    }
    Lock {
        extras: Vec::new(),
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        packages,
        ..lock.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_bare_and_urls_named() {
        let text = requirements_txt(
            "one\ntwo",
            &[
                ExportedFile {
                    name: "a".into(),
                    location: "wheels/a-1-py3-none-any.whl".into(),
                    sha256: "0".repeat(64),
                },
                ExportedFile {
                    name: "b".into(),
                    location: "http://127.0.0.1:1/f/b-1-py3-none-any.whl".into(),
                    sha256: "1".repeat(64),
                },
            ],
        );
        assert_eq!(
            text,
            format!(
                "# one\n# two\nwheels/a-1-py3-none-any.whl --hash=sha256:{}\nb @ \
                 http://127.0.0.1:1/f/b-1-py3-none-any.whl --hash=sha256:{}\n",
                "0".repeat(64),
                "1".repeat(64)
            )
        );
    }
}
