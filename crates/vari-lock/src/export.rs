//! What one machine class installs, written for tools without variant support: a
//! requirements file of pinned files with their hashes, or the lock narrowed to the class's
//! files. Pure: the caller fetches files, writes the output.

use crate::model::{Lock, LockInfo, PackageInfo};
use vari_core::VariantLabel;

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

/// Why a file cannot be written as a line of a requirements file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", .name.escape_default())]
pub struct ExportError {
    /// The distribution whose line it would be.
    pub name: String,
    /// What cannot be written.
    pub message: String,
}

/// `name @ URL --hash=sha256:…` per URL, `PATH --hash=sha256:…` per path, after `header`
/// (each of its lines as a `#` comment), in the order given. pip and uv check each hash
/// (`--require-hashes` is implied once every line has one).
///
/// A requirements file is read by rules of its own (pip ends a line where Python's
/// `str.splitlines` does, at `\r`, U+2028 and others; ` #` starts a comment; `\` at the end
/// joins lines; `${VAR}` is replaced; a word starting with `-` is an option), and no quoting
/// escapes them. So nothing is written that those rules would read otherwise: a path only of
/// letters, digits and `/._+~-`, not starting with `-` (any other absolute path is written as a
/// percent-encoded `file:` URL, `name @ file:///My%20Projects/…`); an http(s) URL only of printable ASCII
/// without whitespace, `#`, `$` or `\` (as `url` serializes it, spaces and the like are
/// percent-encoded); a valid project name; a SHA-256 in lowercase hex. Anything else is an
/// [`ExportError`] naming the distribution, and nothing is written. The header's characters
/// that could end a line are written escaped (`\u{2028}`).
///
/// ```
/// use vari_lock::export::{requirements_txt, ExportedFile};
/// let text = requirements_txt("for a100", &[ExportedFile {
///     name: "numlike".into(),
///     location: "https://files.example/numlike-2.3.4-py3-none-any.whl".into(),
///     sha256: "ab".repeat(32),
/// }]).unwrap();
/// assert!(text.starts_with("# for a100\nnumlike @ https://files.example/numlike-2.3.4-py3-none-any.whl --hash=sha256:abab"));
/// let hostile = ExportedFile {
///     name: "numlike".into(),
///     location: "w/n.whl\u{2028}--index-url=https://evil.example/simple".into(),
///     sha256: "ab".repeat(32),
/// };
/// assert!(requirements_txt("", &[hostile]).is_err());
/// ```
pub fn requirements_txt(header: &str, files: &[ExportedFile]) -> Result<String, ExportError> {
    let mut text = String::new();
    for line in comment_safe(header).lines() {
        text.push_str(&format!("# {line}\n"));
    }
    for file in files {
        let refuse = |message: String| ExportError {
            name: file.name.clone(),
            message,
        };
        if !vari_core::project::is_valid(&file.name) {
            return Err(refuse("is not a project name".to_owned()));
        }
        let hex = file.sha256.len() == 64
            && file
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(refuse(format!(
                "{} is not a SHA-256 in lowercase hex",
                describe(&file.sha256)
            )));
        }
        let remote = file.location.starts_with("https://") || file.location.starts_with("http://");
        match remote {
            true => {
                plain_url(&file.location).map_err(refuse)?;
                text.push_str(&format!(
                    "{} @ {} --hash=sha256:{}\n",
                    file.name, file.location, file.sha256
                ));
            }
            false => match plain_path(&file.location) {
                Ok(()) => text.push_str(&format!(
                    "{} --hash=sha256:{}\n",
                    file.location, file.sha256
                )),
                // An absolute path with a space or a non-ASCII letter (the lock's own
                // directory: `~/My Projects`) as a percent-encoded `file:` URL, which pip and
                // uv read back as exactly that path and which no rule of the file can split.
                Err(message) => {
                    let url = file_url(&file.location).ok_or_else(|| refuse(message))?;
                    text.push_str(&format!(
                        "{} @ {url} --hash=sha256:{}\n",
                        file.name, file.sha256
                    ));
                }
            },
        }
    }
    Ok(text)
}

/// `file://` and the absolute `path` with every byte but `[A-Za-z0-9/._~-]` percent-encoded;
/// `None` for a relative path, or one holding a character a lock may not hold (a line break,
/// a control, an invisible format character).
fn file_url(path: &str) -> Option<String> {
    if !path.starts_with('/')
        || path.starts_with("//")
        || path.chars().any(crate::limits::is_forbidden_char)
    {
        return None;
    }
    let mut url = String::from("file://");
    for byte in path.bytes() {
        match byte.is_ascii_alphanumeric() || b"/._~-".contains(&byte) {
            true => url.push(char::from(byte)),
            false => url.push_str(&format!("%{byte:02X}")),
        }
    }
    Some(url)
}

/// A path a requirements file reads as that path and nothing else.
fn plain_path(path: &str) -> Result<(), String> {
    let plain = !path.is_empty()
        && !path.starts_with('-')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._+~-".contains(c));
    match plain {
        true => Ok(()),
        false => Err(format!(
            "the path {} cannot be written in a requirements file (only letters, digits and \
             `/._+~-`); give --wheelhouse DIR, or move the files",
            describe(path)
        )),
    }
}

/// A URL a requirements file reads as that URL and nothing else.
fn plain_url(text: &str) -> Result<(), String> {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_graphic() && !"#$\\\"'`".contains(c));
    let parses = url::Url::parse(text).is_ok_and(|url| url.as_str() == text);
    match plain && parses {
        true => Ok(()),
        false => Err(format!(
            "the URL {} cannot be written in a requirements file (whitespace, `#`, `$`, \
             quotes or characters a URL does not hold as written)",
            describe(text)
        )),
    }
}

/// `text` for a message: quoted, every character that is not printable ASCII escaped.
fn describe(text: &str) -> String {
    format!("\"{}\"", text.escape_default())
}

/// `text` with every character that Python's `str.splitlines` would end a line at (but `\n`,
/// which the caller splits at), every other control or invisible formatting character and
/// `\` written as a `\u{…}` escape: one comment line stays one.
fn comment_safe(text: &str) -> String {
    text.chars()
        .map(
            |c| match c != '\n' && (crate::limits::is_forbidden_char(c) || c == '\\') {
                true => c.escape_unicode().to_string(),
                false => c.to_string(),
            },
        )
        .collect()
}

/// One entry an install plan keeps (`vari_select`'s plan for one machine), for [`narrow`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept<'a> {
    /// Its index in [`Lock::packages`].
    pub package: usize,
    /// The index of its chosen wheel in `wheels`; `None`: its sdist.
    pub wheel: Option<usize>,
    /// The chosen wheel's variant label.
    pub label: Option<&'a VariantLabel>,
}

/// `lock` narrowed to the `kept` entries (what a plan installs): only them, each with only
/// its chosen file (and the variants-json of its label), unconditional (no `marker`, not
/// `through-variants`: the plan decided), and no extras or groups left to choose.
pub fn narrow(lock: &Lock, kept: &[Kept<'_>]) -> Lock {
    let mut packages = Vec::with_capacity(kept.len());
    for entry in kept {
        let Some(source) = lock.packages.get(entry.package) else {
            continue;
        };
        let mut package = source.clone();
        package.marker = None;
        match entry.wheel {
            Some(index) => {
                package.wheels = source.wheels.get(index).cloned().into_iter().collect();
                package.sdist = None;
            }
            None => package.wheels.clear(),
        }
        package.variants_json = match entry.label {
            Some(label) => source
                .variants_json
                .as_ref()
                .map(|m| m.keep_labels(std::slice::from_ref(label))),
            None => None,
        };
        if let Some(info) = &mut package.vari {
            // The kept entries are those of the builds chosen for this machine: what remains is
            // a lock of one build per family, which plain installers read.
            *info = PackageInfo {
                through_variants: false,
                group_marker: None,
                builds: Vec::new(),
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
        vari: lock.vari.as_ref().map(|info| LockInfo {
            group_markers: false,
            families: Vec::new(),
            ..info.clone()
        }),
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
        )
        .unwrap();
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

    fn file(name: &str, location: &str) -> ExportedFile {
        ExportedFile {
            name: name.into(),
            location: location.into(),
            sha256: "ab".repeat(32),
        }
    }

    #[test]
    fn what_would_read_as_another_line_an_option_or_a_comment_is_refused() {
        let hostile = [
            file("a", "w/a.whl\n--index-url=https://evil.example/simple"),
            file("a", "w/a.whl\r--index-url=https://evil.example/simple"),
            file(
                "a",
                "w/a.whl\u{2028}--index-url=https://evil.example/simple",
            ),
            file("a", "w/a.whl\u{85}b"),
            file("a", "w/a.whl #"),
            file("a", "w/a.whl\t#"),
            file("a", "w/a.whl\\"),
            file("a", "w/${HOME}.whl"),
            file("a", "--index-url=https://evil.example/simple"),
            file("a", "-e."),
            file("a", "w/a b.whl"),
            file("a", ""),
            file("a", "https://x.example/a.whl #"),
            file("a", "https://x.example/a.whl#sha256=00"),
            file("a", "https://x.example/a.whl?${PIP_INDEX_URL}"),
            file("a", "https://x.example/a b.whl"),
            file("a", "https://x.example/a.whl\n-i https://evil.example/"),
            file("a", "https://x.example/ä.whl"),
            file("a b", "https://x.example/a.whl"),
            file("a\n-i x", "https://x.example/a.whl"),
            ExportedFile {
                sha256: "AB".repeat(32),
                ..file("a", "w/a.whl")
            },
            ExportedFile {
                sha256: format!("{}\n-i x", "ab".repeat(32)),
                ..file("a", "w/a.whl")
            },
        ];
        for bad in hostile {
            let err = requirements_txt("h", &[file("ok", "w/ok.whl"), bad.clone()])
                .expect_err(&format!("{bad:?}"));
            assert_eq!(err.name, bad.name);
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }

    /// Real pip's requirements parser (the test venv's) reads back exactly the requirements
    /// and hashes meant, for names, paths, URLs and headers that are legal but unusual.
    #[test]
    fn pip_reads_back_exactly_what_was_meant() {
        let files = [
            file(
                "Demo_Pkg.x",
                "https://files.example/a/Demo_Pkg.x-1.0+local-py3-none-any.whl",
            ),
            file(
                "b",
                "http://127.0.0.1:9/f%20x/b-1-py3-none-any.whl?a=1&b=%23;c=@",
            ),
            file("c", "wheels/c-1.0-py3-none-any.whl"),
            file("d", "/abs/dir+x~/d-1.0-py3-none-any.whl"),
            file("e", "e-1.0-py3-none-any.whl"),
            file("f", "https://user-less.example/~f/f-1.0.tar.gz"),
            file("g", "/home/me/My Projects/wheels/g-1.0-py3-none-any.whl"),
            file("h", "/srv/équipe/#1 %20/h-1.0-py3-none-any.whl"),
        ];
        let header = "lock\u{2028}--index-url=https://evil.example/simple\r-i x\u{85}y\\\n\
                      ${HOME} #comment\u{202e}\u{1e}\u{c}\u{b}\nlast\\";
        let text = requirements_txt(header, &files).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requirements.txt");
        std::fs::write(&path, &text).unwrap();
        let script = r#"
import json, sys
from pip._internal.network.session import PipSession
from pip._internal.req.req_file import parse_requirements
from pip._internal.utils.urls import url_to_path
out = []
for r in parse_requirements(sys.argv[1], session=PipSession()):
    req = r.requirement
    path = url_to_path(req.split(" @ ", 1)[1]) if " @ file:" in req else None
    out.append([req, (r.options or {}).get("hashes", {}), path])
print(json.dumps(out))
"#;
        let output = std::process::Command::new(vari_test_support::venv::python())
            .args(["-c", script])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let read: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let expected: Vec<serde_json::Value> = files
            .iter()
            .map(|f| {
                // A file URL is read back as exactly the path it was made from.
                let (requirement, path) = match f.location.starts_with("http") {
                    true => (format!("{} @ {}", f.name, f.location), None),
                    false => match plain_path(&f.location) {
                        Ok(()) => (f.location.clone(), None),
                        Err(_) => (
                            format!("{} @ {}", f.name, file_url(&f.location).unwrap()),
                            Some(f.location.clone()),
                        ),
                    },
                };
                serde_json::json!([requirement, {"sha256": [f.sha256]}, path])
            })
            .collect();
        assert_eq!(read, serde_json::Value::Array(expected), "{text}");
    }
}
