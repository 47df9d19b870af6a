//! Where NVIDIA's driver libraries (`libnvidia-ml.so.1`, `libcuda.so.1`) are looked for.
//!
//! First by soname alone, through the dynamic loader's own search (`LD_LIBRARY_PATH`, the
//! `ld.so.cache`, the default directories): what a CUDA application loads. Then in the places real
//! systems keep them where that search does not reach, each tried only when the file is there:
//!
//! | where | who puts the libraries there |
//! |---|---|
//! | `/run/opengl-driver/lib` | NixOS (no global library directories, no loader cache) |
//! | `/usr/lib/wsl/lib` | WSL2: the Windows driver's Linux libraries (with `/dev/dxg`) |
//! | `/usr/local/nvidia/lib64`, `/usr/local/nvidia/lib` | containers of the NVIDIA container toolkit's legacy mode and Kubernetes device plugins, which CUDA images name in `LD_LIBRARY_PATH` |
//! | `/usr/lib/<arch>-linux-gnu`, `/usr/lib64`, `/usr/lib` | the container toolkit's mounts (the image's library directory) when the image's loader cache does not list them (`--no-ldconfig`, or a loader that reads another cache) |
//! | `/usr/lib/<arch>-linux-gnu/nvidia/current` | Debian's driver packages (through alternatives) |
//! | `$CONDA_PREFIX/lib`, `$CONDA_PREFIX/cuda-compat` | conda environments that ship the driver's libraries or its forward-compatibility package |
//! | `/usr/local/cuda/compat` | NVIDIA's `cuda-compat` package (forward compatibility, last: it only works beside a driver) |
//!
//! The list is rooted at [`DetectContext::driver_root`] (`/` on a machine), so tests point it at
//! a fixture tree of stub libraries. Which path answered is what the provider's source line names.

use std::path::Path;

use crate::DetectContext;

/// The conda environment variable whose `lib` and `cuda-compat` directories are searched.
pub const CONDA_PREFIX_ENV: &str = "CONDA_PREFIX";

/// The fixed directories, in the order tried (`{arch}`: this machine's architecture).
const DIRECTORIES: &[&str] = &[
    "/run/opengl-driver/lib",
    "/usr/lib/wsl/lib",
    "/usr/local/nvidia/lib64",
    "/usr/local/nvidia/lib",
    "/usr/lib/{arch}-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/lib/{arch}-linux-gnu/nvidia/current",
];

/// Directories of forward-compatibility libraries, tried after everything else.
const COMPAT_DIRECTORIES: &[&str] = &["/usr/local/cuda/compat"];

/// The candidates for a driver library: its default names (sonames, for the loader's search),
/// then on Linux each search directory (rooted at the context's driver root) that holds a file of
/// such a name.
pub(crate) fn candidates(ctx: &DetectContext, defaults: Vec<String>) -> Vec<String> {
    let mut candidates = defaults.clone();
    if cfg!(target_os = "linux") {
        for soname in defaults.iter().filter(|d| !d.contains('/')) {
            candidates.extend(found(ctx, soname));
        }
    }
    candidates
}

/// The search directories' copies of `soname` under the context's driver root that exist, in
/// the order tried.
pub(crate) fn found(ctx: &DetectContext, soname: &str) -> Vec<String> {
    let arch = std::env::consts::ARCH;
    let mut directories: Vec<String> = DIRECTORIES
        .iter()
        .map(|d| d.replace("{arch}", arch))
        .collect();
    // Only an absolute prefix is a place: a relative one would name a directory under wherever
    // vari happens to run.
    if let Some(prefix) = ctx.var(CONDA_PREFIX_ENV).filter(|p| p.starts_with('/')) {
        let prefix = prefix.trim_end_matches('/');
        directories.push(format!("{prefix}/lib"));
        directories.push(format!("{prefix}/cuda-compat"));
    }
    directories.extend(COMPAT_DIRECTORIES.iter().map(|d| (*d).to_owned()));
    let mut found: Vec<String> = Vec::new();
    for directory in directories {
        let path = rooted(&ctx.driver_root, &directory).join(soname);
        let path = path.display().to_string();
        if Path::new(&path).is_file() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// An absolute host path under `root`.
fn rooted(root: &Path, absolute: &str) -> std::path::PathBuf {
    root.join(absolute.trim_start_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(root: &Path, conda: Option<&str>) -> DetectContext {
        let mut ctx = DetectContext::from_process_env(crate::Sysroot::host());
        ctx.env.clear();
        if let Some(prefix) = conda {
            ctx.env.insert(CONDA_PREFIX_ENV.into(), prefix.into());
        }
        ctx.driver_root = root.to_owned();
        ctx
    }

    fn place(root: &Path, directory: &str, soname: &str) -> String {
        let dir = rooted(root, directory);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(soname), b"").unwrap();
        dir.join(soname).display().to_string()
    }

    #[test]
    fn the_soname_comes_first_then_the_places_that_hold_the_file() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        assert_eq!(
            candidates(&ctx(root, None), vec!["libcuda.so.1".into()]),
            ["libcuda.so.1"]
        );
        if !cfg!(target_os = "linux") {
            return;
        }
        let compat = place(root, "/usr/local/cuda/compat", "libcuda.so.1");
        let conda = place(root, "/envs/a/cuda-compat", "libcuda.so.1");
        let wsl = place(root, "/usr/lib/wsl/lib", "libcuda.so.1");
        let nixos = place(root, "/run/opengl-driver/lib", "libcuda.so.1");
        // Another library in a place is not a candidate for this one.
        place(root, "/usr/local/nvidia/lib64", "libnvidia-ml.so.1");
        assert_eq!(
            candidates(&ctx(root, Some("/envs/a/")), vec!["libcuda.so.1".into()]),
            ["libcuda.so.1", &nixos, &wsl, &conda, &compat]
        );
        // A relative prefix names no place.
        assert_eq!(
            candidates(&ctx(root, Some("envs/a")), vec!["libcuda.so.1".into()]),
            ["libcuda.so.1", &nixos, &wsl, &compat]
        );
    }

    #[test]
    fn a_directory_named_like_the_library_is_not_a_candidate() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("usr/lib/wsl/lib/libcuda.so.1")).unwrap();
        assert!(found(&ctx(root.path(), None), "libcuda.so.1").is_empty());
    }
}
