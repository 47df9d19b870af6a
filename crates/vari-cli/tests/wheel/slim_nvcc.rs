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

const KERNEL_STUB: &str = r#"
extern "C" __global__ void stub(int *x) { x[0] = 0; }
extern "C" int launch_stub(int *x) { stub<<<1, 1>>>(x); return 0; }
"#;

/// A library as cuFFT and torch's `libtorch_cuda.so` are built with the large code model: a
/// small `.nv_fatbin` (one object, SASS for 7.5 only) and the real kernels in `.ldata` (SASS for
/// 8.0 and 9.0, PTX for 9.0) and `.lrodata` (SASS for 7.5 and 8.6, PTX for 8.6), each container
/// registered through its `.nvFatBinSegment` wrapper (a `RELATIVE` relocation in this
/// position-independent library). The objects' `.nv_fatbin` is renamed before linking, which is
/// where the large code model puts them.
fn build_large_model_library(bin: &Path, dir: &Path) -> PathBuf {
    std::fs::write(dir.join("a.cu"), KERNEL_A).unwrap();
    std::fs::write(dir.join("b.cu"), KERNEL_B).unwrap();
    std::fs::write(dir.join("stub.cu"), KERNEL_STUB).unwrap();
    let nvcc = |targets: &[&str], source: &str, object: &str| {
        let mut args = ["-cudart", "none", "-Xcompiler", "-fPIC"]
            .map(str::to_owned)
            .to_vec();
        args.extend(gencode(targets));
        args.extend(["-c", "-o", object, source].map(str::to_owned));
        check(tool(bin, "nvcc").current_dir(dir).args(args));
    };
    nvcc(&["arch=compute_75,code=sm_75"], "stub.cu", "stub.o");
    nvcc(
        &[
            "arch=compute_80,code=sm_80",
            "arch=compute_90,code=[sm_90,compute_90]",
        ],
        "a.cu",
        "a.o",
    );
    nvcc(
        &[
            "arch=compute_75,code=sm_75",
            "arch=compute_86,code=[sm_86,compute_86]",
        ],
        "b.cu",
        "b.o",
    );
    for (object, section) in [("a.o", ".ldata"), ("b.o", ".lrodata")] {
        check(
            Command::new("objcopy")
                .current_dir(dir)
                .arg(format!("--rename-section=.nv_fatbin={section}"))
                .arg(object),
        );
    }
    check(tool(bin, "nvcc").current_dir(dir).args([
        "-cudart",
        "none",
        "-shared",
        "-o",
        "libcufft.so",
        "stub.o",
        "a.o",
        "b.o",
    ]));
    dir.join("libcufft.so")
}

/// The bytes of one section of `library`, written to `into` (cuobjdump reads a bare fat binary).
fn section_file(library: &[u8], section: &str, into: &Path) -> PathBuf {
    let elf = object::File::parse(library).unwrap();
    let data = elf.section_by_name(section).unwrap().data().unwrap();
    std::fs::write(into, data).unwrap();
    into.to_owned()
}

/// Every section's bytes but those named, and the file outside them.
fn sections_but(file: &[u8], names: &[&str]) -> (BTreeMap<String, Vec<u8>>, Vec<u8>) {
    let elf = object::File::parse(file).unwrap();
    let mut sections = BTreeMap::new();
    let mut outside = Vec::new();
    let mut at = 0;
    let mut skipped: Vec<(u64, u64)> = Vec::new();
    for section in elf.sections() {
        let name = section.name().unwrap().to_owned();
        if names.contains(&name.as_str()) {
            skipped.push(section.file_range().unwrap());
        } else {
            sections.insert(name, section.data().unwrap().to_vec());
        }
    }
    skipped.sort();
    for (start, len) in skipped {
        outside.extend_from_slice(&file[at..start as usize]);
        at = (start + len) as usize;
    }
    outside.extend_from_slice(&file[at..]);
    (sections, outside)
}

fn scan_json(wheel: &Path) -> serde_json::Value {
    let run = vari_run([
        Path::new("wheel"),
        Path::new("scan"),
        Path::new("--json"),
        wheel,
    ])
    .expect_code(0);
    // Progress is drawn on a terminal only: stderr here is a pipe.
    assert_eq!(run.stderr, "");
    run.json()
}

fn sm_arch_properties(report: &serde_json::Value) -> Vec<String> {
    report["properties"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str()?.strip_prefix("nvidia :: sm_arch :: "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn kernels_outside_nv_fatbin_are_scanned_slimmed_and_split() {
    let Some(bin) = cuda_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    let library = build_large_model_library(&bin, dir.path());
    let fat = std::fs::read(&library).unwrap();
    // cuobjdump itself reads only `.nv_fatbin`: the kernels are elsewhere.
    assert_eq!(listed(&bin, &library), ["sm_75"]);
    let ldata = section_file(&fat, ".ldata", &dir.path().join("fat.ldata"));
    let lrodata = section_file(&fat, ".lrodata", &dir.path().join("fat.lrodata"));
    assert_eq!(listed(&bin, &ldata), ["compute_90", "sm_80", "sm_90"]);
    assert_eq!(listed(&bin, &lrodata), ["compute_86", "sm_75", "sm_86"]);
    let wheel = wheel_with_record(dir.path(), &[("demo/libcufft.so", fat.clone())]);

    // Scan reads every container, not the 7.5 stub alone.
    let scan = scan_json(&wheel);
    let mut found = sm_arch_properties(&scan);
    found.sort();
    assert_eq!(
        found,
        [
            "75_real",
            "80_real",
            "86_real",
            "86_virtual",
            "90_real",
            "90_virtual"
        ]
    );
    assert!(scan["files"][0].get("unreadable_gpu_code").is_none());

    // Slim for 9.0: `.ldata` keeps its SASS for 9.0, `.lrodata` the PTX for 8.6 the driver
    // would compile there, the stub nothing; every other byte stays.
    let out = dir.path().join("slim");
    let report = slim(&wheel, &out, "9.0");
    let mut labelled = sm_arch_properties(&report["wheels"][0]);
    labelled.sort();
    assert_eq!(labelled, ["86_virtual", "90_real"]);
    let slim_wheel = PathBuf::from(report["wheels"][0]["output"].as_str().unwrap());
    let (_, bytes) = members(&slim_wheel)
        .into_iter()
        .find(|(n, _)| n == "demo/libcufft.so")
        .unwrap();
    assert_eq!(bytes.len(), fat.len());
    let names = [".nv_fatbin", ".ldata", ".lrodata"];
    assert_eq!(sections_but(&bytes, &names), sections_but(&fat, &names));
    let slim_ldata = section_file(&bytes, ".ldata", &out.join("slim.ldata"));
    let slim_lrodata = section_file(&bytes, ".lrodata", &out.join("slim.lrodata"));
    assert_eq!(listed(&bin, &slim_ldata), ["sm_90"]);
    assert_eq!(listed(&bin, &slim_lrodata), ["compute_86"]);
    // The kept entries are the fat build's, byte for byte.
    for (fat_section, slim_section, name) in [
        (&ldata, &slim_ldata, "ldata"),
        (&lrodata, &slim_lrodata, "lrodata"),
    ] {
        let fat_files = extracted(&bin, fat_section, &out.join("fat").join(name));
        let slim_files = extracted(&bin, slim_section, &out.join("slim").join(name));
        assert_eq!(slim_files.len(), 1, "{name}");
        assert!(fat_files.contains(&slim_files[0]), "{name}");
    }
    assert_eq!(
        scan_json(&slim_wheel)["properties"],
        report["wheels"][0]["properties"]
    );

    // Split: one wheel per family of all the containers (7, 8, 9), each labelled by what scan
    // reads of it (the 9.x build keeps `.lrodata`'s PTX for 8.6, as the slim for 9.0 does).
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
    let labels: Vec<Vec<String>> = wheels.iter().map(sm_arch_properties).collect();
    assert_eq!(
        labels,
        [
            vec!["75_real".to_owned()],
            vec!["80_real".to_owned(), "86_real".to_owned()],
            vec!["86_virtual".to_owned(), "90_real".to_owned()],
        ]
    );
    for w in wheels {
        let path = Path::new(w["output"].as_str().unwrap());
        assert_eq!(scan_json(path)["properties"], w["properties"]);
    }
}

/// A library that keeps a fat binary in a section of its own, registered by no wrapper (loaded
/// with `cuModuleLoadData`): what it runs on is unknown. Scan says so and infers no `sm_arch`
/// (not the 7.5 of the part it can read); split refuses, naming the member (its families are
/// unknown); slim leaves the file whole and labels by the other files only.
#[test]
fn gpu_code_vari_cannot_read_is_unknown_and_labels_nothing() {
    let Some(bin) = cuda_bin() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.cu"), KERNEL_A).unwrap();
    std::fs::write(dir.path().join("stub.cu"), KERNEL_STUB).unwrap();
    let mut args = ["-cudart", "none", "-Xcompiler", "-fPIC"]
        .map(str::to_owned)
        .to_vec();
    args.extend(gencode(&["arch=compute_75,code=sm_75"]));
    args.extend(["-shared", "-o", "libstub.so", "stub.cu"].map(str::to_owned));
    check(tool(&bin, "nvcc").current_dir(dir.path()).args(args));
    let mut args = gencode(&["arch=compute_90,code=sm_90"]);
    args.extend(["-fatbin", "-o", "kernels.fatbin", "a.cu"].map(str::to_owned));
    check(tool(&bin, "nvcc").current_dir(dir.path()).args(args));
    check(Command::new("objcopy").current_dir(dir.path()).args([
        "--add-section",
        ".kernels=kernels.fatbin",
        "libstub.so",
        "libown.so",
    ]));
    let fat = std::fs::read(dir.path().join("libown.so")).unwrap();
    let wheel = wheel_with_record(dir.path(), &[("demo/libown.so", fat)]);

    let scan = scan_json(&wheel);
    assert_eq!(sm_arch_properties(&scan), Vec::<String>::new());
    let file = &scan["files"][0];
    assert_eq!(file["sm_arch"], serde_json::Value::Null);
    assert!(file["unreadable_gpu_code"].is_string(), "{file}");
    let text = vari_run([Path::new("wheel"), Path::new("scan"), &wheel]).expect_code(0);
    assert!(text.stdout.contains("unknown"), "{}", text.stdout);
    assert!(!text.stdout.contains("75_real"), "{}", text.stdout);

    let out = dir.path().join("out");
    vari_run([
        Path::new("wheel"),
        Path::new("split"),
        &wheel,
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["demo/libown.so", "GPU code vari cannot read"]);
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().next().is_none(),
        "split wrote output"
    );

    // Slim: the file is left whole (its own loader may need every architecture), and the only
    // other code there is, none, gives no `sm_arch`: nothing to keep, refused as before.
    vari_run([
        Path::new("wheel"),
        Path::new("slim"),
        &wheel,
        Path::new("--keep"),
        Path::new("9.0"),
        Path::new("-o"),
        &out,
    ])
    .expect_one_error(&["none of its GPU code runs on what --keep names"]);
}
