//! The requirements an installer's own arguments name through requirements files
//! (`-r FILE`, `--requirement FILE`, `--requirement=FILE`, `-rFILE`), so that a front-end can
//! judge them as it judges requirements given on its command line: one line each in a dry run,
//! and the selector's explanation when the installer fails.
//!
//! Only what decides the choice is read: requirement lines (PEP 508, with pip's `\`
//! continuations and `#` comments) and nested `-r` files (relative to the file naming them, at
//! most [`MAX_DEPTH`] deep). Option lines (`--index-url`, `-c`, `-e`, `--hash` …), paths and
//! URLs are the installer's business and are left out. Each file is read with the input
//! ceiling of configuration files, and must be a regular file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use vari_fs::input::{read_input_to_string, InputError, InputKind};
use vari_select::Request;

/// How deep `-r` files may name other `-r` files (pip has no limit; a cycle must not hang).
pub const MAX_DEPTH: usize = 8;

/// Why the requirements files could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RequirementsFileError {
    /// A file could not be read (missing, not a regular file, too large, not UTF-8).
    #[error(transparent)]
    Read(#[from] InputError),
    /// `-r` files name each other deeper than [`MAX_DEPTH`] (or in a cycle).
    #[error("{}: requirements files nest deeper than {MAX_DEPTH} levels (or name each other in a cycle)", .path.display())]
    TooDeep {
        /// The file that would have been read one level too deep.
        path: PathBuf,
    },
    /// A requirement line is not PEP 508.
    #[error("{}: line {line}: {message}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line the requirement starts on (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// `-r` (or `--requirement`) ends the arguments or a line without a file.
    #[error("{}: `-r` names no file", .path.display())]
    MissingFile {
        /// Where: the file, or `the installer's arguments`.
        path: PathBuf,
    },
}

/// The requirement lines of every requirements file `args` (the arguments for pip or uv)
/// names, in order, with the requirements of nested `-r` files in place. Relative files are
/// looked up from `cwd`, the directory the installer runs in.
pub fn requirements_in_args(
    args: &[OsString],
    cwd: &Path,
) -> Result<Vec<String>, RequirementsFileError> {
    let mut found = Vec::new();
    let mut args = args.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(arg) = args.next() {
        let file = match requirement_option(&arg) {
            Some(Some(file)) => file.to_owned(),
            Some(None) => args
                .next()
                .ok_or_else(|| RequirementsFileError::MissingFile {
                    path: PathBuf::from("the installer's arguments"),
                })?,
            None => continue,
        };
        read_file(&cwd.join(file), 0, &mut found)?;
    }
    Ok(found)
}

/// For `-r`/`--requirement` options: `Some(Some(file))` when the file is in the same word,
/// `Some(None)` when it is the next word; `None` for anything else.
fn requirement_option(word: &str) -> Option<Option<&str>> {
    if word == "-r" || word == "--requirement" {
        return Some(None);
    }
    if let Some(file) = word.strip_prefix("--requirement=") {
        return Some(Some(file));
    }
    match word.strip_prefix("-r") {
        // `-rFILE`, but not another long option such as `--reinstall`.
        Some(file) if !file.is_empty() && !word.starts_with("--") => {
            Some(Some(file.strip_prefix('=').unwrap_or(file)))
        }
        _ => None,
    }
}

fn read_file(
    path: &Path,
    depth: usize,
    found: &mut Vec<String>,
) -> Result<(), RequirementsFileError> {
    if depth >= MAX_DEPTH {
        return Err(RequirementsFileError::TooDeep {
            path: path.to_owned(),
        });
    }
    let text = read_input_to_string(path, InputKind::Config)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    for (number, line) in logical_lines(&text) {
        if line.starts_with('-') {
            let mut words = line.split_whitespace();
            let first = words.next().unwrap_or_default();
            let file = match requirement_option(first) {
                Some(Some(file)) => file,
                Some(None) => words
                    .next()
                    .ok_or_else(|| RequirementsFileError::MissingFile {
                        path: path.to_owned(),
                    })?,
                None => continue,
            };
            read_file(&dir.join(file), depth + 1, found)?;
        } else if is_named_requirement(&line) {
            let requirement = without_options(&line);
            Request::parse(requirement).map_err(|e| RequirementsFileError::Invalid {
                path: path.to_owned(),
                line: number,
                message: e.to_string(),
            })?;
            found.push(requirement.to_owned());
        }
    }
    Ok(())
}

/// The file's lines with `\` continuations joined and comments (`#` at the start or after
/// whitespace, as pip reads them) removed; blank lines left out. Each with the number of the
/// line it starts on.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (index, raw) in text.lines().enumerate() {
        if current.is_empty() {
            start = index + 1;
        }
        match raw.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(raw);
                let line = strip_comment(&current).trim().to_owned();
                if !line.is_empty() {
                    lines.push((start, line));
                }
                current.clear();
            }
        }
    }
    let line = strip_comment(&current).trim().to_owned();
    if !line.is_empty() {
        lines.push((start, line));
    }
    lines
}

fn strip_comment(line: &str) -> &str {
    if line.starts_with('#') {
        return "";
    }
    match line.find(" #").or_else(|| line.find("\t#")) {
        Some(at) => &line[..at],
        None => line,
    }
}

/// A requirement line without pip's per-requirement options (`--hash=…`, `--config-settings
/// …`), which are the installer's and not PEP 508.
fn without_options(line: &str) -> &str {
    match line.find(" --").or_else(|| line.find("\t--")) {
        Some(at) => line[..at].trim_end(),
        None => line,
    }
}

/// Whether a line is a requirement by name (paths, URLs and archives are the installer's).
fn is_named_requirement(line: &str) -> bool {
    let first = line.chars().next().unwrap_or(' ');
    first.is_ascii_alphanumeric()
        && !line.contains("://")
        && !line.starts_with("file:")
        && !line.contains('/')
        && !line.ends_with(".whl")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn reads_requirements_and_nested_files_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/req.txt"),
            "# pinned\nnumpy>=2 \\\n  ; python_version >= '3.9'  # why\n\
             --index-url http://x/simple\n-r more.txt\n./local/pkg\nhttps://x/a.whl\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sub/more.txt"),
            "torch==2.9 --hash=sha256:00 \\\n    --hash=sha256:11\n-c pins.txt\n",
        )
        .unwrap();
        let found = requirements_in_args(
            &args(&["--no-deps", "-r", "sub/req.txt", "--reinstall"]),
            dir.path(),
        )
        .unwrap();
        assert_eq!(
            found,
            ["numpy>=2   ; python_version >= '3.9'", "torch==2.9"]
        );
    }

    #[test]
    fn every_spelling_of_the_option() {
        assert_eq!(requirement_option("-r"), Some(None));
        assert_eq!(requirement_option("--requirement"), Some(None));
        assert_eq!(
            requirement_option("--requirement=a.txt"),
            Some(Some("a.txt"))
        );
        assert_eq!(requirement_option("-ra.txt"), Some(Some("a.txt")));
        assert_eq!(requirement_option("--reinstall"), None);
        assert_eq!(requirement_option("torch"), None);
    }

    #[test]
    fn a_line_that_is_not_pep_508_is_named_with_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.txt"), "# ok\ntorch\nnumpy >=>= 2\n").unwrap();
        let error = requirements_in_args(&args(&["-r", "r.txt"]), dir.path()).unwrap_err();
        assert!(
            matches!(error, RequirementsFileError::Invalid { line: 3, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("r.txt: line 3: "), "{error}");
    }

    #[test]
    fn a_cycle_stops_at_the_depth_limit() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "-r a.txt\n").unwrap();
        let error = requirements_in_args(&args(&["-r", "a.txt"]), dir.path()).unwrap_err();
        assert!(
            matches!(error, RequirementsFileError::TooDeep { .. }),
            "{error}"
        );
    }

    #[test]
    fn a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let error = requirements_in_args(&args(&["-r", "nope.txt"]), dir.path()).unwrap_err();
        assert!(error.to_string().contains("nope.txt"), "{error}");
        assert!(matches!(
            requirements_in_args(&args(&["-r"]), dir.path()),
            Err(RequirementsFileError::MissingFile { .. })
        ));
    }
}
