//! `vari wheel` on hostile wheels and configs: one `error:` line naming the culprit, bounded
//! memory, nothing written outside `-o`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{data, files_in, test_python, vari_run};

/// Builds the "2,000 entries, one member" zip bomb with Python's zlib (fast in a debug test
/// build): one deflated member of 256 MiB of zeros, and 2,000 central-directory entries with
/// other names pointing at its local header (512 GiB if each were inflated).
const BOMB: &str = r#"
import struct, sys, zlib
path = sys.argv[1]
deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
chunk = bytes(1 << 20)
data, crc = [], 0
for _ in range(256):
    data.append(deflate.compress(chunk))
    crc = zlib.crc32(chunk, crc)
data.append(deflate.flush())
data = b"".join(data)
size = 256 << 20
name = b"bomb/zeros.bin"
local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(name), 0)
body = local + name + data
central = b""
names = [name] + [b"bomb/zeros%04d.bin" % i for i in range(2000)]
for n in names:
    central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, 0, 8, 0, 0, crc,
                           len(data), size, len(n), 0, 0, 0, 0, 0o100644 << 16, 0) + n
end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(names), len(names), len(central), len(body), 0)
open(path, "wb").write(body + central + end)
"#;

/// Runs `vari ARGS…` under Python and returns its exit code, stdout, stderr and peak resident
/// memory in KiB (`getrusage(RUSAGE_CHILDREN).ru_maxrss`, which counts only `vari`).
const MEASURE: &str = r#"
import json, resource, subprocess, sys
run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"code": run.returncode, "stdout": run.stdout, "stderr": run.stderr,
                  "maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"#;

#[test]
fn validate_refuses_the_overlap_bomb_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir.path().join("bomb-1.0-py3-none-any.whl");
    let built = Command::new(test_python())
        .args(["-c", BOMB])
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(built.success());
    let out = Command::new(test_python())
        .args([
            "-c",
            MEASURE,
            env!("CARGO_BIN_EXE_vari"),
            "wheel",
            "validate",
        ])
        .arg(&wheel)
        .env("NO_COLOR", "1")
        .env("VARI_NO_CONFIG", "1")
        .env(
            "VARI_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("vari-cache"),
        )
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let stderr = result["stderr"].as_str().unwrap();
    assert_eq!(result["code"], 1, "{result:#}");
    let error = stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        error.contains("bomb-1.0-py3-none-any.whl") && error.contains("`bomb/zeros"),
        "{stderr}"
    );
    let peak = result["maxrss_kib"].as_u64().unwrap();
    eprintln!("vari wheel validate on the overlap bomb: peak RSS {peak} KiB");
    assert!(peak < 256 * 1024, "peak RSS {peak} KiB");
}

/// The fixture plain wheel, copied into `dir`.
fn plain_wheel(dir: &Path) -> PathBuf {
    let path = dir.join("test_package-0-py3-none-any.whl");
    std::fs::copy(data("wheels/test_package-0-py3-none-any.whl"), &path).unwrap();
    path
}

#[test]
fn repack_refuses_a_config_name_that_is_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = plain_wheel(dir.path());
    let canary = dir.path().join("canary");
    std::fs::create_dir(&canary).unwrap();
    let out = dir.path().join("site");
    for name in ["../canary/x", "/abs/path", "a/b", "x\\ny", "<script>"] {
        let config = dir.path().join("evil.toml");
        std::fs::write(
            &config,
            format!(
                "name = \"{name}\"\n[[build]]\nmatch = {{ name = \"test_package\" }}\n\
                 properties = [\"x86_64 :: level :: v3\"]\n"
            ),
        )
        .unwrap();
        let args: Vec<&std::ffi::OsStr> = vec![
            "wheel".as_ref(),
            "repack".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            wheel.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ];
        vari_run(&args).expect_one_error(&["evil.toml: name: `", "not a valid project name"]);
        assert!(files_in(&canary).is_empty());
        assert!(!out.exists());
    }
}

#[test]
fn make_variant_creates_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = plain_wheel(dir.path());
    let out = dir.path().join("new/site");
    let made = vari_run([
        Path::new("wheel"),
        Path::new("make-variant"),
        &wheel,
        Path::new("-p"),
        Path::new("x86_64::level::v3"),
        Path::new("-o"),
        &out,
    ])
    .expect_code(0);
    assert!(
        Path::new(made.stdout.trim()).starts_with(&out),
        "{}",
        made.stdout
    );
    assert_eq!(files_in(&out).len(), 1);
}

#[test]
fn index_build_refuses_a_member_outside_the_install_directory() {
    let input = tempfile::tempdir().unwrap();
    let src = data("wheels/test_package-0-py3-none-any.whl");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&src).unwrap()).unwrap();
    let wheel = input.path().join("test_package-0-py3-none-any.whl");
    let mut out = zip::ZipWriter::new(std::fs::File::create(&wheel).unwrap());
    for i in 0..zip.len() {
        out.raw_copy_file(zip.by_index_raw(i).unwrap()).unwrap();
    }
    out.start_file("../evil.py", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut out, b"import os\n").unwrap();
    out.finish().unwrap();
    let site = tempfile::tempdir().unwrap();
    vari_run([
        "index".as_ref(),
        "build".as_ref(),
        input.path().as_os_str(),
        "-o".as_ref(),
        site.path().as_os_str(),
    ])
    .expect_one_error(&["test_package-0-py3-none-any.whl", "member `../evil.py`"]);
    assert!(!site.path().join("simple").exists());
}

/// Adds `test_package/zeros.bin` to a copy of `src` at `dst`, 1,000 deflated zeros whose
/// local and central headers both declare 3 GiB: far past the default inflation ceiling
/// (1 GiB for a small wheel), without the test inflating gigabytes.
const DECLARES_3_GIB: &str = r#"
import shutil, struct, sys, zipfile
src, dst = sys.argv[1:3]
shutil.copy(src, dst)
name = b"test_package/zeros.bin"
with zipfile.ZipFile(dst, "a", zipfile.ZIP_DEFLATED) as z:
    z.writestr(name.decode(), bytes(1000))
data = bytearray(open(dst, "rb").read())
for signature, name_at, size_at in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
    at = 0
    while True:
        at = data.index(signature, at)
        if data[at + name_at:at + name_at + len(name)] == name:
            data[at + size_at:at + size_at + 4] = struct.pack("<I", 3 << 30)
            break
        at += 4
open(dst, "wb").write(data)
"#;

#[test]
fn the_inflation_ceiling_is_raised_by_its_environment_variable() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = dir.path().join("test_package-0-py3-none-any.whl");
    let built = Command::new(test_python())
        .args(["-c", DECLARES_3_GIB])
        .arg(data("wheels/test_package-0-py3-none-any.whl"))
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(built.success());
    let errors = |ratio: Option<&str>| {
        let mut cmd = crate::common::vari();
        cmd.args(["wheel", "validate", "--json"]).arg(&wheel);
        if let Some(ratio) = ratio {
            cmd.env("VARI_MAX_INFLATE_RATIO", ratio);
        }
        let run = crate::common::run(&mut cmd).expect_code(1);
        run.json()["files"][0]["errors"].to_string()
    };
    let refused = errors(None);
    assert!(
        refused.contains("more than the ceiling of 1073741824")
            && refused.contains("`max-inflate-ratio` in vari.toml or VARI_MAX_INFLATE_RATIO"),
        "{refused}"
    );
    // Raised: the declared total is accepted; only the member's own lie remains.
    let raised = errors(Some("10000000"));
    assert!(!raised.contains("ceiling"), "{raised}");
    assert!(raised.contains("test_package/zeros.bin"), "{raised}");
    // The same ratio from vari.toml.
    let config = wheel.with_file_name("vari.toml");
    std::fs::write(&config, "max-inflate-ratio = 10000000\n").unwrap();
    let mut cmd = crate::common::vari();
    cmd.args(["wheel", "validate", "--json"])
        .arg(&wheel)
        .env("VARI_CONFIG", &config);
    let from_file =
        crate::common::run(&mut cmd).expect_code(1).json()["files"][0]["errors"].to_string();
    assert!(!from_file.contains("ceiling"), "{from_file}");
    assert!(from_file.contains("test_package/zeros.bin"), "{from_file}");
    let mut cmd = crate::common::vari();
    cmd.args(["wheel", "validate"])
        .arg(&wheel)
        .env("VARI_MAX_INFLATE_RATIO", "0");
    crate::common::run(&mut cmd)
        .expect_one_error(&["VARI_MAX_INFLATE_RATIO: `0` is not a positive integer"]);
}
