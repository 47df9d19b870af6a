//! Shared helpers for the end-to-end tests: they run the real `vari` binary.
#![allow(dead_code)] // Each test module uses a different subset of the helpers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace test data directory (`testdata/` at the root).
pub(crate) fn data(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(relative)
}

/// A `vari` command with a clean, reproducible environment: no profile from the caller's
/// environment, no colour, no GPU override variables leaking in, a private detection cache.
pub(crate) fn vari() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vari"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("VARI_")
            || key.contains("_VARIANT_PROVIDER_")
            || matches!(
                key.as_str(),
                "RUST_LOG"
                    | "VARIANT_ABI_DEPENDENCY"
                    | "HSA_OVERRIDE_GFX_VERSION"
                    | "ROCM_PATH"
                    | "VIRTUAL_ENV"
                    | "CONDA_PREFIX"
            )
        {
            cmd.env_remove(&key);
        }
    }
    cmd.env("NO_COLOR", "1");
    // A developer's own vari.toml or a project's [tool.vari] must not change the results.
    cmd.env("VARI_NO_CONFIG", "1");
    // Detection results are cached; keep the tests' cache out of the user's.
    cmd.env(
        "VARI_CACHE_DIR",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("vari-cache"),
    );
    cmd
}

/// The result of one run, with text streams.
pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the exit status is `code`.
    pub(crate) fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Parses stdout as JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Asserts the failure contract: exit 1, stderr is exactly one `error:` line containing every
    /// fragment, nothing on stdout.
    pub(crate) fn expect_one_error(self, fragments: &[&str]) -> Self {
        let run = self.expect_code(1);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one stderr line, got:\n{}",
            run.stderr
        );
        assert!(lines[0].starts_with("error: "), "{}", lines[0]);
        for fragment in fragments {
            assert!(
                lines[0].contains(fragment),
                "{:?} not in error line {:?}",
                fragment,
                lines[0]
            );
        }
        assert!(run.stdout.is_empty(), "stdout not empty:\n{}", run.stdout);
        run
    }
}

/// Runs `cmd` to completion.
pub(crate) fn run(cmd: &mut Command) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("the vari binary runs");
    let stderr = String::from_utf8(stderr).expect("stderr is UTF-8");
    assert!(!stderr.contains("panicked"), "vari panicked:\n{stderr}");
    Run {
        code: status
            .code()
            .expect("vari exited normally, not by a signal"),
        stdout: String::from_utf8(stdout).expect("stdout is UTF-8"),
        stderr,
    }
}

/// Runs `vari ARGS…`.
pub(crate) fn vari_run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run(vari().args(args))
}

/// Reads a JSON file from the test data.
pub(crate) fn data_json(relative: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(data(relative)).expect("test data exists");
    serde_json::from_str(&text).expect("test data is JSON")
}

/// Writes `value` as JSON to `dir/name` and returns the path.
pub(crate) fn write_json(dir: &Path, name: &str, value: &serde_json::Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

/// The names of the files in `dir`, sorted.
pub(crate) fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The plain fixture wheel with one member changed after RECORD was written: every hash but
/// that member's still matches.
pub(crate) fn tampered_wheel(dir: &Path) -> PathBuf {
    use std::io::{Read, Write};
    let good = data("wheels/test_package-0-py3-none-any.whl");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
    let bad = dir.join("test_package-0-py3-none-any.whl");
    let mut out = zip::ZipWriter::new(std::fs::File::create(&bad).unwrap());
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let name = file.name().to_owned();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        if name.ends_with(".py") {
            bytes.extend_from_slice(b"# tampered\n");
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&bytes).unwrap();
    }
    out.finish().unwrap();
    bad
}

/// The Python of the test environment `scripts/test-env` makes (`.venv`, or `VARI_TEST_VENV`).
pub(crate) fn test_python() -> PathBuf {
    let venv = std::env::var_os("VARI_TEST_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv"));
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test-env first",
        python.display()
    );
    python
}
