//! Where the workspace and its test data are, wherever the test binary runs from.

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives at `crates/vari-test-support`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A path under the workspace's test data directory (`testdata/`).
pub fn testdata(relative: &str) -> PathBuf {
    root().join("testdata").join(relative)
}

/// The demo release (`examples/demo`): the project the install tests and the README use.
pub fn demo() -> PathBuf {
    root().join("examples/demo")
}

/// The names of the entries of `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file under `root`, recursively: its path relative to `root` and its bytes, sorted.
/// What a test compares before and after to show that nothing changed.
pub fn files_under(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((relative, bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}
