//! Driver libraries are loaded in a child process with a timeout, so a hanging or crashing driver
//! costs a clear message instead of the whole run.
//!
//! # Protocol
//!
//! The parent re-executes a *probe runner* (by default the running executable, see
//! [`run_probe_child_if_requested`]) with the environment variable [`PROBE_ENV`] set to a JSON
//! [`ProbeRequest`]. The child loads the library, makes the calls, writes one line
//! `VARI-PROBE-RESULT:<json>` to stdout and exits. Only that line is read, so a driver (or a test
//! harness) that prints to stdout cannot corrupt the answer. The parent waits at most
//! [`DetectContext::timeout`](crate::DetectContext::timeout), kills the child on expiry, and maps
//! death by signal, a timeout, a non-zero exit or a missing/garbled result line to a typed
//! [`ProbeError`].
//!
//! The child gets exactly the context's environment ([`DetectContext::env`](crate::DetectContext))
//! plus [`PROBE_ENV`]: the context is the single source of truth for variables, in the parent
//! and in the child.
//!
//! # Who runs the probe
//!
//! A binary opts in by calling [`run_probe_child_if_requested`] first thing in `main`; that call
//! also registers the executable as the probe runner. Tests register a runner that re-executes the
//! test binary with a filter selecting a test that calls [`run_probe_child_if_requested`]
//! ([`set_probe_runner`]). When no runner is registered (a library user that did not opt in),
//! probes run in a thread of the calling process: the timeout still applies (the thread is
//! abandoned), but a crashing driver takes the process down.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use vari_fs::RunError;

use crate::gpu::cuda::{self, CudaFacts};
use crate::gpu::level_zero::{self, LevelZeroFacts};
use crate::gpu::nvml::{self, NvmlFacts};
pub use crate::gpu::ProbeFailure;
use crate::DetectContext;

/// The environment variable that turns a process into a probe child (value: a JSON request).
pub const PROBE_ENV: &str = "VARI_PROBE";

/// Overrides [`DetectContext::timeout`](crate::DetectContext::timeout) for probes, in seconds
/// (decimals allowed). Invalid values are ignored.
pub const TIMEOUT_ENV: &str = "VARI_PROBE_TIMEOUT";

/// The prefix of the one stdout line a probe child answers with.
const RESULT_PREFIX: &str = "VARI-PROBE-RESULT:";

/// The most stderr text quoted in an error message.
const STDERR_EXCERPT: usize = 400;

/// What the child is asked to do: which library family to probe and which files to try.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "probe", rename_all = "snake_case")]
pub enum ProbeRequest {
    /// NVML (`libnvidia-ml.so.1`).
    Nvml {
        /// Library names or paths, tried in order.
        libraries: Vec<String>,
    },
    /// The CUDA driver API (`libcuda.so.1`).
    Cuda {
        /// Library names or paths, tried in order.
        libraries: Vec<String>,
    },
    /// Level Zero (`libze_loader.so.1`).
    LevelZero {
        /// Library names or paths, tried in order.
        libraries: Vec<String>,
    },
}

/// What a probe found, or why the library could not answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeResponse {
    /// NVML answered.
    Nvml(NvmlFacts),
    /// The CUDA driver API answered.
    Cuda(CudaFacts),
    /// Level Zero answered.
    LevelZero(LevelZeroFacts),
    /// The library is missing or a required call failed.
    Failed(ProbeFailure),
}

/// Why a probe gave no facts (seen from the parent).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The probe ran and reported a missing library or a failed call.
    #[error(transparent)]
    Failed(#[from] ProbeFailure),
    /// The child did not answer in time and was killed.
    #[error("no answer within {} s; the driver library was abandoned (set {TIMEOUT_ENV}=<seconds> to wait longer)", .0.as_secs_f32())]
    TimedOut(Duration),
    /// The child was killed by a signal (the driver library crashed).
    #[error("the driver library crashed the probe process ({signal}){stderr}")]
    Crashed {
        /// The signal, e.g. `signal 11 (SIGSEGV)`.
        signal: String,
        /// An excerpt of the child's stderr, prefixed with `: ` when non-empty.
        stderr: String,
    },
    /// The child exited with a failure status.
    #[error("the probe process exited with status {code}{stderr}")]
    Exited {
        /// The exit status.
        code: i32,
        /// An excerpt of the child's stderr, prefixed with `: ` when non-empty.
        stderr: String,
    },
    /// The child exited normally without a readable answer.
    #[error("the probe process gave no readable answer: {0}")]
    Garbage(String),
    /// The child could not be started.
    #[error("could not start the probe process {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The system error.
        source: std::io::Error,
    },
}

impl ProbeError {
    /// Whether the failure may go away by itself (a hang, a crash): such results are not cached.
    pub fn is_transient(&self) -> bool {
        !matches!(self, ProbeError::Failed(_))
    }
}

/// The command that answers probe requests: a program and the arguments placed before nothing
/// else (the request travels in [`PROBE_ENV`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeRunner {
    /// The executable.
    pub program: PathBuf,
    /// Arguments (e.g. a test filter).
    pub args: Vec<OsString>,
}

static RUNNER: OnceLock<ProbeRunner> = OnceLock::new();

/// Registers the command that answers probe requests; the first registration wins.
pub fn set_probe_runner(runner: ProbeRunner) {
    let _ = RUNNER.set(runner);
}

/// The registered probe runner, if any.
pub fn probe_runner() -> Option<&'static ProbeRunner> {
    RUNNER.get()
}

/// Call first thing in `main`: when this process was started as a probe child, runs the probe,
/// writes the answer and exits; otherwise registers the current executable as the probe runner
/// and returns.
pub fn run_probe_child_if_requested() {
    if let Some(request) = std::env::var_os(PROBE_ENV) {
        let response = match serde_json::from_str::<ProbeRequest>(&request.to_string_lossy()) {
            Ok(request) => execute(&request),
            Err(e) => {
                eprintln!("vari: invalid {PROBE_ENV} request: {e}");
                std::process::exit(2);
            }
        };
        let line = encode_response(&response);
        // Written to the real stdout (not `println!`, which a test harness may capture).
        let mut out = std::io::stdout().lock();
        let ok = out.write_all(line.as_bytes()).is_ok() && out.flush().is_ok();
        std::process::exit(if ok { 0 } else { 3 });
    }
    if let Ok(program) = std::env::current_exe() {
        set_probe_runner(ProbeRunner {
            program,
            args: Vec::new(),
        });
    }
}

/// Runs a probe in this process (no isolation): what the child does.
pub fn execute(request: &ProbeRequest) -> ProbeResponse {
    let result = match request {
        ProbeRequest::Nvml { libraries } => nvml::probe(libraries).map(ProbeResponse::Nvml),
        ProbeRequest::Cuda { libraries } => cuda::probe(libraries).map(ProbeResponse::Cuda),
        ProbeRequest::LevelZero { libraries } => {
            level_zero::probe(libraries).map(ProbeResponse::LevelZero)
        }
    };
    result.unwrap_or_else(ProbeResponse::Failed)
}

fn encode_response(response: &ProbeResponse) -> String {
    // Serialising plain data (strings, numbers, lists) cannot fail.
    let json = serde_json::to_string(response).unwrap_or_default();
    format!("\n{RESULT_PREFIX}{json}\n")
}

/// Finds the answer line in a child's stdout.
fn decode_response(stdout: &[u8]) -> Result<ProbeResponse, ProbeError> {
    let text = String::from_utf8_lossy(stdout);
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(RESULT_PREFIX))
        .ok_or_else(|| ProbeError::Garbage(excerpt_or(&text, "empty output")))?;
    serde_json::from_str(line).map_err(|e| ProbeError::Garbage(format!("{e}: {}", excerpt(line))))
}

/// Runs `request` isolated (in a child when a runner is registered, else in a thread), waiting at
/// most `ctx.timeout`.
pub fn run_probe(request: &ProbeRequest, ctx: &DetectContext) -> Result<ProbeResponse, ProbeError> {
    let timeout = probe_timeout(ctx);
    let response = match probe_runner() {
        Some(runner) => run_in_child(runner, request, ctx, timeout)?,
        None => run_in_thread(request, timeout)?,
    };
    match response {
        ProbeResponse::Failed(failure) => Err(ProbeError::Failed(failure)),
        other => Ok(other),
    }
}

/// The time a probe gets: [`TIMEOUT_ENV`] when valid, else the context's (an invalid value is
/// refused up front by [`check_overrides`](crate::overrides::check_overrides)).
pub fn probe_timeout(ctx: &DetectContext) -> Duration {
    ctx.var(TIMEOUT_ENV)
        .and_then(|v| parse_timeout(v).ok())
        .unwrap_or(ctx.timeout)
}

/// The longest [`TIMEOUT_ENV`] accepted: a driver that needs more is broken.
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// Parses a [`TIMEOUT_ENV`] value: seconds, decimals allowed, more than 0 and at most an hour.
pub(crate) fn parse_timeout(value: &str) -> Result<Duration, String> {
    let seconds: f64 = value
        .trim()
        .parse()
        .map_err(|_| "expected a number of seconds such as 10 or 2.5".to_owned())?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECS) {
        return Err(format!(
            "expected a number of seconds more than 0 and at most {MAX_TIMEOUT_SECS}"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn run_in_thread(request: &ProbeRequest, timeout: Duration) -> Result<ProbeResponse, ProbeError> {
    let (tx, rx) = mpsc::channel();
    let request = request.clone();
    std::thread::spawn(move || {
        let _ = tx.send(execute(&request));
    });
    rx.recv_timeout(timeout)
        .map_err(|_| ProbeError::TimedOut(timeout))
}

fn run_in_child(
    runner: &ProbeRunner,
    request: &ProbeRequest,
    ctx: &DetectContext,
    timeout: Duration,
) -> Result<ProbeResponse, ProbeError> {
    // Serialising plain data cannot fail.
    let request_json = serde_json::to_string(request).unwrap_or_default();
    let mut command = Command::new(&runner.program);
    command
        .args(&runner.args)
        .env_clear()
        .envs(&ctx.env)
        .env(PROBE_ENV, request_json);
    let output = vari_fs::run_with_timeout(command, None, timeout).map_err(|e| match e {
        RunError::Spawn { program, source } => ProbeError::Spawn { program, source },
        RunError::TimedOut { .. } => ProbeError::TimedOut(timeout),
    })?;
    let stderr = stderr_suffix(&output.stderr);
    if let Some(signal) = output.signal {
        return Err(ProbeError::Crashed {
            signal: describe_signal(signal),
            stderr,
        });
    }
    match output.code {
        Some(0) => decode_response(&output.stdout),
        Some(code) => Err(ProbeError::Exited { code, stderr }),
        None => Err(ProbeError::Garbage("no exit status".into())),
    }
}

fn describe_signal(signal: i32) -> String {
    let name = match signal {
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        15 => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    format!("signal {signal} ({name})")
}

fn stderr_suffix(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!(": {}", excerpt(text))
    }
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    // The tail is the most informative part of a crash message.
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= STDERR_EXCERPT {
        text.replace('\n', " | ")
    } else {
        let tail: String = chars[chars.len() - STDERR_EXCERPT..].iter().collect();
        format!("…{}", tail.replace('\n', " | "))
    }
}

fn excerpt_or(text: &str, empty: &str) -> String {
    if text.trim().is_empty() {
        empty.to_owned()
    } else {
        format!("no result line in {:?}", excerpt(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_as_json() {
        let request = ProbeRequest::Nvml {
            libraries: vec!["/x/libnvidia-ml.so.1".into()],
        };
        let json = serde_json::to_string(&request).unwrap();
        assert!(json.contains("\"probe\":\"nvml\""), "{json}");
        assert_eq!(
            serde_json::from_str::<ProbeRequest>(&json).unwrap(),
            request
        );
    }

    #[test]
    fn the_answer_line_is_found_among_other_output() {
        let response = ProbeResponse::Failed(ProbeFailure::LibraryNotFound {
            tried: vec!["a".into()],
            message: "nope".into(),
        });
        let mut stdout = b"running 1 test\nsome driver chatter\n".to_vec();
        stdout.extend_from_slice(encode_response(&response).as_bytes());
        stdout.extend_from_slice(b"test result: ok\n");
        assert_eq!(decode_response(&stdout).unwrap(), response);
    }

    #[test]
    fn missing_or_broken_answers_are_garbage() {
        assert!(matches!(
            decode_response(b""),
            Err(ProbeError::Garbage(m)) if m == "empty output"
        ));
        assert!(matches!(
            decode_response(b"hello"),
            Err(ProbeError::Garbage(m)) if m.contains("hello")
        ));
        assert!(matches!(
            decode_response(b"VARI-PROBE-RESULT:{not json"),
            Err(ProbeError::Garbage(_))
        ));
    }

    #[test]
    fn the_timeout_variable_overrides_the_context() {
        let mut ctx = DetectContext::from_process_env(crate::Sysroot::host());
        ctx.env.clear();
        assert_eq!(probe_timeout(&ctx), DetectContext::DEFAULT_TIMEOUT);
        ctx.env.insert(TIMEOUT_ENV.into(), "2.5".into());
        assert_eq!(probe_timeout(&ctx), Duration::from_millis(2500));
        for bad in ["-1", "0", "soon", "NaN", "1e30", "inf"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
            ctx.env.insert(TIMEOUT_ENV.into(), bad.into());
            assert_eq!(probe_timeout(&ctx), DetectContext::DEFAULT_TIMEOUT, "{bad}");
        }
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(describe_signal(11), "signal 11 (SIGSEGV)");
        assert_eq!(describe_signal(6), "signal 6 (SIGABRT)");
        assert_eq!(describe_signal(42), "signal 42");
    }

    #[test]
    fn long_stderr_keeps_its_tail() {
        let long = format!("{}END", "x".repeat(1000));
        let e = excerpt(&long);
        assert!(e.ends_with("END") && e.starts_with('…'));
        assert_eq!(stderr_suffix(b"  "), "");
        assert_eq!(stderr_suffix(b"boom\n"), ": boom");
    }
}
