//! `vari wheel slim` on CUDA libraries that nvcc (PyPI's CUDA 13 compiler, the machine's `cc`
//! as host compiler) builds here, in the shapes real projects ship: one container per object
//! file, several containers per library (objects built for different architectures), and
//! compressed entries (`-Xfatbin -compress-all`). cuobjdump must list exactly the kept entries
//! of each slim library and extract them byte-identical to the fat build's; `vari wheel scan`
//! must agree with the label; every other ELF section must be byte-identical.
//!
//! The toolchain comes from `scripts/cuda-test-env` (`.venv-cuda`, or `VARI_CUDA_VENV`). Without
//! it the tests skip with a note, except under CI, where they fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection};

use crate::common::vari_run;
use crate::slim::{members, wheel_with_record};

/// The directory holding `nvcc` and `cuobjdump`, or `None` (the test skips) outside CI.
fn cuda_bin() -> Option<PathBuf> {
    let venv = std::env::var_os("VARI_CUDA_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-cuda"));
    let found = std::fs::read_dir(venv.join("lib")).ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join("site-packages/nvidia/cu13/bin"))
            .find(|bin| bin.join("nvcc").exists() && bin.join("cuobjdump").exists())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "nvcc and cuobjdump are missing from {}: run scripts/cuda-test-env",
            venv.display()
        );
        eprintln!(
            "skipped: no CUDA toolchain in {} (run scripts/cuda-test-env)",
            venv.display()
        );
    }
    found
}

fn tool(bin: &Path, name: &str) -> Command {
    let mut cmd = Command::new(bin.join(name));
    // nvcc finds cicc, ptxas and fatbinary next to itself and the host compiler on PATH.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_owned()];
    paths.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(paths).unwrap());
    cmd
}

fn check(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const KERNEL_A: &str = r#"
extern "C" __global__ void add_one(int *x) { x[threadIdx.x] += 1; }
extern "C" int launch_a(int *x) { add_one<<<1, 32>>>(x); return 0; }
"#;
const KERNEL_B: &str = r#"
extern "C" __global__ void scale(float *x, float by) { x[threadIdx.x] *= by; }
extern "C" int launch_b(float *x) { scale<<<1, 32>>>(x, 2.0f); return 0; }
"#;

fn gencode(targets: &[&str]) -> Vec<String> {
    targets
        .iter()
        .flat_map(|t| ["-gencode".to_owned(), (*t).to_owned()])
        .collect()
}

/// Builds the three libraries into `dir`; returns (member name, library path).
fn build_libraries(bin: &Path, dir: &Path) -> Vec<(&'static str, PathBuf)> {
    std::fs::write(dir.join("a.cu"), KERNEL_A).unwrap();
    std::fs::write(dir.join("b.cu"), KERNEL_B).unwrap();
    let nvcc = |args: Vec<String>| {
        check(tool(bin, "nvcc").current_dir(dir).args(args));
    };
    let common = ["-cudart", "none", "-Xcompiler", "-fPIC"].map(str::to_owned);
    // One object, one container: SASS for 7.5, 8.0, 8.6, 9.0 and PTX for 9.0.
    let mut args = common.to_vec();
    args.extend(gencode(&[
        "arch=compute_75,code=sm_75",
        "arch=compute_80,code=sm_80",
        "arch=compute_86,code=sm_86",
        "arch=compute_90,code=[sm_90,compute_90]",
    ]));
    args.extend(["-shared", "-o", "libone.so", "a.cu"].map(str::to_owned));
    nvcc(args);
    // Two objects built for different architectures, one container each, in one library.
    let mut args = common.to_vec();
    args.extend(gencode(&[
        "arch=compute_80,code=sm_80",
        "arch=compute_90,code=sm_90",
    ]));
    args.extend(["-c", "-o", "a.o", "a.cu"].map(str::to_owned));
    nvcc(args);
    let mut args = common.to_vec();
    args.extend(gencode(&[
        "arch=compute_75,code=sm_75",
        "arch=compute_86,code=[sm_86,compute_86]",
    ]));
    args.extend(["-c", "-o", "b.o", "b.cu"].map(str::to_owned));
    nvcc(args);
    let mut args = common.to_vec();
    args.extend(["-shared", "-o", "libmany.so", "a.o", "b.o"].map(str::to_owned));
    nvcc(args);
    // Compressed entries.
    let mut args = common.to_vec();
    args.extend(["-Xfatbin", "-compress-all"].map(str::to_owned));
    args.extend(gencode(&[
        "arch=compute_80,code=sm_80",
        "arch=compute_90,code=[sm_90,compute_90]",
    ]));
    args.extend(["-shared", "-o", "libz.so", "b.cu"].map(str::to_owned));
    nvcc(args);
    vec![
        ("demo/libone.so", dir.join("libone.so")),
        ("demo/libmany.so", dir.join("libmany.so")),
        ("demo/libz.so", dir.join("libz.so")),
    ]
}

/// What cuobjdump lists in a library: `sm_80` for each cubin, `compute_90` for each PTX,
/// sorted.
fn listed(bin: &Path, library: &Path) -> Vec<String> {
    // A library left without GPU code makes cuobjdump fail, listing nothing.
    let run = tool(bin, "cuobjdump")
        .args(["-lelf", "-lptx"])
        .arg(library)
        .output()
        .unwrap();
    let out = String::from_utf8(run.stdout).unwrap();
    let mut entries: Vec<String> = out
        .lines()
        .filter_map(|line| {
            let name = line.rsplit(' ').next()?;
            let arch = name.split('.').rev().nth(1)?;
            if line.starts_with("ELF file") {
                Some(arch.to_owned())
            } else if line.starts_with("PTX file") {
                Some(arch.replace("sm_", "compute_"))
            } else {
                None
            }
        })
        .collect();
    entries.sort();
    entries
}

/// Every cubin and PTX file cuobjdump extracts from `library`, as (architecture, bytes).
fn extracted(bin: &Path, library: &Path, into: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::create_dir_all(into).unwrap();
    let lib = into.join("lib.so");
    std::fs::copy(library, &lib).unwrap();
    for flag in ["-xelf", "-xptx"] {
        // cuobjdump fails when there is nothing of that kind to extract.
        let _ = tool(bin, "cuobjdump")
            .current_dir(into)
            .args([flag, "all", "lib.so"])
            .output()
            .unwrap();
    }
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(into)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap() != "lib.so")
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let arch = name.split('.').rev().nth(1).unwrap().to_owned();
            (arch, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Every section's bytes but `.nv_fatbin`'s, by name, and the file outside that section.
fn other_sections(file: &[u8]) -> (BTreeMap<String, Vec<u8>>, Vec<u8>) {
    let elf = object::File::parse(file).unwrap();
    let mut sections = BTreeMap::new();
    let mut outside = file.to_vec();
    for section in elf.sections() {
        let name = section.name().unwrap().to_owned();
        if name == ".nv_fatbin" {
            let (start, len) = section.file_range().unwrap();
            outside.drain(start as usize..(start + len) as usize);
        } else {
            sections.insert(name, section.data().unwrap().to_vec());
        }
    }
    (sections, outside)
}

fn slim(wheel: &Path, out: &Path, keep: &str) -> serde_json::Value {
    vari_run([
        Path::new("wheel"),
        Path::new("slim"),
        wheel,
        Path::new("--keep"),
        Path::new(keep),
        Path::new("-o"),
        out,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json()
}

/// `--keep`, what cuobjdump lists in each library after slimming, the `sm_arch` values.
type Case = (
    &'static str,
    [&'static [&'static str]; 3],
    &'static [&'static str],
);

#[test]
fn nvcc_libraries_slim_to_exactly_the_kept_entries() {
    let Some(bin) = cuda_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let libraries = build_libraries(&bin, dir.path());
    // The fat builds as cuobjdump sees them.
    let fat_lists: Vec<Vec<String>> = libraries.iter().map(|(_, p)| listed(&bin, p)).collect();
    assert_eq!(
        fat_lists,
        [
            vec!["compute_90", "sm_75", "sm_80", "sm_86", "sm_90"],
            vec!["compute_86", "sm_75", "sm_80", "sm_86", "sm_90"],
            vec!["compute_90", "sm_80", "sm_90"],
        ]
    );
    let wheel_members: Vec<(&str, Vec<u8>)> = libraries
        .iter()
        .map(|(name, path)| (*name, std::fs::read(path).unwrap()))
        .collect();
    let wheel = wheel_with_record(dir.path(), &wheel_members);

    // (keep, expected per library, expected sm_arch properties)
    let cases: [Case; 3] = [
        (
            "8.6",
            [&["sm_80", "sm_86"], &["sm_80", "sm_86"], &["sm_80"]],
            &["80_real", "86_real"],
        ),
        // libmany's second object has no SASS for 9.0: its PTX for 8.6 is what the driver
        // would JIT there.
        (
            "9.0",
            [&["sm_90"], &["compute_86", "sm_90"], &["sm_90"]],
            &["86_virtual", "90_real"],
        ),
        ("7.5", [&["sm_75"], &["sm_75"], &[]], &["75_real"]),
    ];
    for (keep, expected, sm_arch) in cases {
        let out = dir.path().join(format!("out-{keep}"));
        let report = slim(&wheel, &out, keep);
        let slim_wheel = PathBuf::from(report["wheels"][0]["output"].as_str().unwrap());
        let slim_members = members(&slim_wheel);

        // The label is what scan reads, and only the kept architectures.
        let properties: Vec<String> = report["wheels"][0]["properties"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        let scan = vari_run([
            Path::new("wheel"),
            Path::new("scan"),
            Path::new("--json"),
            &slim_wheel,
        ])
        .expect_code(0)
        .json();
        assert_eq!(scan["properties"], serde_json::json!(properties), "{keep}");
        let found: Vec<&str> = properties
            .iter()
            .filter_map(|p| p.strip_prefix("nvidia :: sm_arch :: "))
            .collect();
        assert_eq!(found, sm_arch, "{keep}");

        for ((name, fat_path), want) in libraries.iter().zip(expected) {
            let (_, bytes) = slim_members.iter().find(|(n, _)| n == name).unwrap();
            let slim_path = out.join(name.replace('/', "_"));
            std::fs::write(&slim_path, bytes).unwrap();
            // Exactly the kept entries, as cuobjdump reads them.
            assert_eq!(listed(&bin, &slim_path), want, "{keep} {name}");
            // Each byte-identical to the fat build's entry of the same architecture.
            let fat_files = extracted(&bin, fat_path, &out.join("fat").join(name));
            let slim_files = extracted(&bin, &slim_path, &out.join("slim").join(name));
            assert_eq!(slim_files.len(), want.len(), "{keep} {name}");
            for file in &slim_files {
                assert!(
                    fat_files.contains(file),
                    "{keep} {name}: {} differs",
                    file.0
                );
            }
            // Nothing else in the file changed.
            let fat = std::fs::read(fat_path).unwrap();
            assert_eq!(bytes.len(), fat.len());
            assert_eq!(other_sections(bytes), other_sections(&fat), "{keep} {name}");
        }
    }

    // Split: one wheel per family the SASS covers (7, 8, 9), each agreeing with scan.
    let out = dir.path().join("split");
    let report = vari_run([
        Path::new("wheel"),
        Path::new("split"),
        &wheel,
        Path::new("-o"),
        &out,
        Path::new("--json"),
    ])
    .expect_code(0)
    .json();
    let wheels = report["wheels"].as_array().unwrap();
    assert_eq!(wheels.len(), 3);
    for w in wheels {
        let path = Path::new(w["output"].as_str().unwrap());
        let scan = vari_run([
            Path::new("wheel"),
            Path::new("scan"),
            Path::new("--json"),
            path,
        ])
        .expect_code(0)
        .json();
        assert_eq!(scan["properties"], w["properties"]);
    }
}
