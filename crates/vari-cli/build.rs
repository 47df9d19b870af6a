//! Build facts for `vari --version`: the commit the binary was built from and its target triple.
//!
//! The commit comes from `VARI_BUILD_COMMIT` when set (a release pipeline building from an
//! archive), else from `git rev-parse --short=10 HEAD`, else it is "unknown" (an sdist has no
//! `.git`). Cargo sets `TARGET` for build scripts.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=VARI_BUILD_COMMIT");
    let commit = std::env::var("VARI_BUILD_COMMIT")
        .ok()
        .filter(|c| is_plain_commit(c))
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=VARI_BUILD_COMMIT={commit}");
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=VARI_BUILD_TARGET={target}");
}

/// A commit name printed as is: hexadecimal, at most a full SHA-256 object name.
fn is_plain_commit(commit: &str) -> bool {
    !commit.is_empty() && commit.len() <= 64 && commit.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The short name of HEAD, and rerun-if-changed lines for the files that move when HEAD does
/// (so a new commit gives a new `--version` without rebuilding anything else).
fn git_commit() -> Option<String> {
    // Only this repository's own history: an sdist unpacked inside some other checkout is not
    // built from that checkout's HEAD.
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let workspace_root = manifest_dir.parent()?.parent()?;
    if top.canonicalize().ok()? != workspace_root.canonicalize().ok()? {
        return None;
    }
    let git_dir = PathBuf::from(git(&["rev-parse", "--git-dir"])?);
    let common_dir = PathBuf::from(git(&["rev-parse", "--git-common-dir"])?);
    watch(&git_dir.join("HEAD"));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&common_dir.join(branch));
        watch(&common_dir.join("packed-refs"));
    }
    git(&["rev-parse", "--short=10", "HEAD"]).filter(|c| is_plain_commit(c))
}

fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// A git command's trimmed stdout, or None if git is missing, fails or prints nothing.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}
