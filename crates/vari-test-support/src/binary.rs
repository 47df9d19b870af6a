//! The real `vari` binary, run with a clean, reproducible environment, its streams captured.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

/// Whether the variable `key` could change what `vari` does if a test inherited it from the
/// caller: vari's own settings, the providers' override variables, logging, the GPU runtimes'
/// overrides and the active environment.
pub fn leaks_into_vari(key: &str) -> bool {
    key.starts_with("VARI_")
        || key.contains("_VARIANT_PROVIDER_")
        || matches!(
            key,
            "RUST_LOG"
                | "VARIANT_ABI_DEPENDENCY"
                | "HSA_OVERRIDE_GFX_VERSION"
                | "ROCM_PATH"
                | "VIRTUAL_ENV"
                | "CONDA_PREFIX"
        )
}

/// A command for the binary `exe` (the test's `env!("CARGO_BIN_EXE_vari")`) with no variable
/// [`leaks_into_vari`] says could matter, no colour, no configuration file, and the detection
/// cache in `cache_dir`, away from the user's.
pub fn clean_command(exe: impl AsRef<OsStr>, cache_dir: &Path) -> Command {
    let mut cmd = Command::new(exe);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if leaks_into_vari(&key) {
            cmd.env_remove(&key);
        }
    }
    cmd.env("NO_COLOR", "1");
    // A developer's own vari.toml or a project's [tool.vari] must not change the results.
    cmd.env("VARI_NO_CONFIG", "1");
    cmd.env("VARI_CACHE_DIR", cache_dir);
    cmd
}

/// The result of one run, with text streams.
#[derive(Debug)]
pub struct Run {
    /// The exit status.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the exit status is `code`.
    pub fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Parses stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Asserts the failure contract: exit 1, stderr is exactly one `error:` line containing every
    /// fragment, nothing on stdout.
    pub fn expect_one_error(self, fragments: &[&str]) -> Self {
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

/// Runs `cmd` to completion; panics if it does not start, ends by a signal, writes anything
/// but UTF-8, or panicked.
pub fn run(cmd: &mut Command) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} does not run: {e}"));
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
