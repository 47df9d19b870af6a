//! One resolution for `vari lock`: `uv pip compile` run against the proxy for one target, so
//! that uv resolves with the variant the target would install (and the dependencies that
//! variant brings in through variant markers, which the proxy has already evaluated).
//!
//! Preferences carry between targets through uv's own rule: it reads an existing output file
//! (`-o`) as the versions to prefer. The caller writes the pins so far into that file before
//! each run, so versions agree across targets whenever the requirements allow.
//!
//! uv runs with `--no-config` (a lock depends on its inputs, not on the user's uv settings) and
//! without its index variables; the proxy is its only index.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vari_proxy::{ProxyError, ProxySettings};

use vari_install::UV_INDEX_VARIABLES;

/// At most this many bytes of uv's error output are kept for the message.
const MAX_STDERR: usize = 16 << 10;

/// The variable that sets how long one `uv pip compile` may run, in seconds, before it is
/// stopped (as HTTP requests have a time limit): [`DEFAULT_RESOLVE_TIMEOUT`] unless set.
pub const RESOLVE_TIMEOUT_ENV: &str = "VARI_RESOLVE_TIMEOUT";

/// How long one resolution may run when [`RESOLVE_TIMEOUT_ENV`] does not say: long enough for
/// a cold cache and sdists to build, short enough that a hung uv does not hang CI for hours.
pub const DEFAULT_RESOLVE_TIMEOUT: Duration = Duration::from_secs(1800);

/// The longest [`RESOLVE_TIMEOUT_ENV`] may ask for: a day.
const MAX_RESOLVE_TIMEOUT_SECS: f64 = 86_400.0;

/// How long one resolution may run: [`RESOLVE_TIMEOUT_ENV`], else [`DEFAULT_RESOLVE_TIMEOUT`].
/// A value that is not a number of seconds above 0 and at most a day is an error naming the
/// variable.
///
/// ```
/// assert_eq!(vari_lockmaker::steps::resolve_timeout_from(None).unwrap().as_secs(), 1800);
/// assert_eq!(vari_lockmaker::steps::resolve_timeout_from(Some("2.5")).unwrap().as_millis(), 2500);
/// assert!(vari_lockmaker::steps::resolve_timeout_from(Some("0")).is_err());
/// assert!(vari_lockmaker::steps::resolve_timeout_from(Some("soon")).is_err());
/// ```
pub fn resolve_timeout_from(value: Option<&str>) -> Result<Duration, CompileError> {
    let Some(value) = value else {
        return Ok(DEFAULT_RESOLVE_TIMEOUT);
    };
    match value.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= MAX_RESOLVE_TIMEOUT_SECS => {
            Ok(Duration::from_secs_f64(seconds))
        }
        _ => Err(CompileError::Setting {
            message: format!(
                "{RESOLVE_TIMEOUT_ENV}={value:?}: expected a number of seconds more than 0 and \
                 at most {MAX_RESOLVE_TIMEOUT_SECS}"
            ),
        }),
    }
}

/// One `uv pip compile`.
#[derive(Debug, Clone)]
pub struct CompileRequest {
    /// The uv executable.
    pub uv: PathBuf,
    /// The requirements file to resolve.
    pub input: PathBuf,
    /// The output file: read by uv as preferences when it exists, then overwritten.
    pub output: PathBuf,
    /// `--python-version`.
    pub python_version: Option<String>,
    /// `--python-platform` (ignored when [`universal`](Self::universal): uv then resolves for
    /// every platform).
    pub python_platform: Option<String>,
    /// Allow pre-releases.
    pub pre: bool,
    /// One resolution for every Python from `python_version` up and every platform
    /// (`--universal`), each package at one version wherever one serves them all
    /// (`--fork-strategy fewest`, as a lock of one version per package needs): pins carry
    /// markers saying where they apply.
    pub universal: bool,
    /// Annotate each pin with what required it (`# via …` on its line, [`read_via`]);
    /// otherwise no annotations.
    pub annotate: bool,
    /// The requirements to give uv on its standard input instead of `input`; uv then writes
    /// its pins on its standard output ([`compile_through`] returns them) instead of
    /// `output`, and prefers no versions. No file is written: creating files costs more than
    /// a resolution on some file systems.
    pub piped: Option<String>,
}

/// A pinned release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pin {
    /// The name as uv wrote it, normalised (PEP 503).
    pub name: String,
    /// The version, as uv wrote it.
    pub version: String,
}

/// Why a resolution did not give pins.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The proxy did not start.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// uv could not be started.
    #[error("cannot run {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// uv failed: its own words (the last of them, bounded).
    #[error("{message}")]
    Failed {
        /// uv's error output, trimmed.
        message: String,
    },
    /// uv ran longer than [`RESOLVE_TIMEOUT_ENV`] allows: it was stopped.
    #[error(
        "{} did not finish within {} s and was stopped (set {RESOLVE_TIMEOUT_ENV} to allow \
         longer)",
        program.display(),
        timeout.as_secs_f64()
    )]
    TimedOut {
        /// The program.
        program: PathBuf,
        /// The limit it ran into.
        timeout: Duration,
    },
    /// [`RESOLVE_TIMEOUT_ENV`] is not a number of seconds.
    #[error("{message}")]
    Setting {
        /// What is wrong with it.
        message: String,
    },
    /// uv's output file could not be read or has a line vari does not understand.
    #[error("{}: {message}", path.display())]
    Output {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// uv's variable for whether it may download Pythons (`automatic`, `manual`, `never`).
pub(crate) const PYTHON_DOWNLOADS_VARIABLE: &str = "UV_PYTHON_DOWNLOADS";

/// Whether the user asked uv for Python downloads themselves (`UV_PYTHON_DOWNLOADS` set to
/// anything): then uv's own setting stands; else vari passes `--no-python-downloads`.
fn python_downloads_asked(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

impl CompileRequest {
    /// The command line against the index at `index`.
    pub fn command(&self, index: &url::Url) -> std::process::Command {
        let mut command = std::process::Command::new(&self.uv);
        command.args(["pip", "compile", "--quiet", "--no-config", "--no-header"]);
        // A Python version not on this machine is only a description for a resolution: uv
        // would spend seconds trying to download one. Unless the user asks for downloads.
        if !python_downloads_asked(std::env::var_os(PYTHON_DOWNLOADS_VARIABLE).as_deref()) {
            command.arg("--no-python-downloads");
        }
        command
            .args(match self.annotate {
                true => ["--annotation-style", "line"].as_slice(),
                false => ["--no-annotate"].as_slice(),
            })
            .args(["--index-url", index.as_str()]);
        if self.piped.is_none() {
            command.arg("--output-file").arg(&self.output);
        }
        if let Some(version) = &self.python_version {
            command.args(["--python-version", version]);
        }
        match (&self.python_platform, self.universal) {
            (_, true) => {
                command.args(["--universal", "--fork-strategy", "fewest"]);
            }
            (Some(platform), false) => {
                command.args(["--python-platform", platform]);
            }
            (None, false) => {}
        }
        if self.pre {
            command.args(["--prerelease", "allow"]);
        }
        match self.piped {
            Some(_) => command.arg("-"),
            None => command.arg(&self.input),
        };
        for variable in UV_INDEX_VARIABLES {
            command.env_remove(variable);
        }
        command
    }
}

/// Starts the proxy with `settings` (on its stable port, so uv's cache is reused run after
/// run), runs `request` against it, stops the proxy and reads the pins uv wrote.
pub async fn compile(
    settings: ProxySettings,
    request: &CompileRequest,
) -> Result<Vec<Pin>, CompileError> {
    let proxy = vari_install::stable_port::start_stable(settings).await?;
    let result = compile_through(&proxy, request).await;
    proxy.shutdown().await;
    match result? {
        Some(text) => read_pins(&text).map_err(|message| CompileError::Output {
            path: PathBuf::from("-"),
            message,
        }),
        None => read_output(&request.output),
    }
}

/// Runs `request` against the running `proxy` (left running: the caller may ask it what it
/// served); uv's error output, with the proxy's first upstream failure, when uv fails. Returns
/// uv's standard output (its pins, bounded) when the requirements were piped
/// ([`CompileRequest::piped`]).
pub async fn compile_through(
    proxy: &vari_proxy::RunningProxy,
    request: &CompileRequest,
) -> Result<Option<String>, CompileError> {
    let mut command = request.command(&proxy.index_url());
    let piped = request.piped.clone();
    command.stderr(Stdio::piped());
    match piped {
        Some(_) => command.stdin(Stdio::piped()).stdout(Stdio::piped()),
        None => command.stdout(Stdio::null()),
    };
    tracing::debug!("running {command:?}");
    let program = request.uv.clone();
    let timeout = resolve_timeout_from(std::env::var(RESOLVE_TIMEOUT_ENV).ok().as_deref())?;
    // As much as an output file may hold (read with `InputKind::Config`).
    let limit = vari_fs::input::InputKind::Config.limit();
    let waited =
        tokio::task::spawn_blocking(move || run_bounded(command, piped, limit, timeout)).await;
    let failures = proxy.upstream_failures();
    let output = waited.map_err(|e| CompileError::Failed {
        message: format!("lost the uv process: {e}"),
    })?;
    let output = match output {
        Ok(output) => output,
        Err(Ran::Spawn(source)) => return Err(CompileError::Spawn { program, source }),
        Err(Ran::TimedOut) => return Err(CompileError::TimedOut { program, timeout }),
    };
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        // uv repeats what the index said (names, versions): no control characters reach the
        // terminal through it (line breaks stay; the front-end joins the lines).
        let mut message: String = tail(text.trim(), MAX_STDERR)
            .chars()
            .map(|c| match c.is_control() && c != '\n' {
                true => c.escape_unicode().to_string(),
                false => c.to_string(),
            })
            .collect();
        if let Some(failure) = failures.first() {
            message.push_str(&format!(
                "\n(the package index failed for {}: {})",
                failure.what, failure.message
            ));
        }
        return Err(CompileError::Failed { message });
    }
    if request.piped.is_none() {
        return Ok(None);
    }
    let stdout = |message: &str| CompileError::Output {
        path: PathBuf::from("-"),
        message: message.to_owned(),
    };
    if output.stdout_overflowed {
        return Err(stdout("uv's output is larger than a resolution can be"));
    }
    String::from_utf8(output.stdout)
        .map(Some)
        .map_err(|_| stdout("is not UTF-8"))
}

/// What [`run_bounded`] kept of a finished uv.
struct BoundedOutput {
    status: std::process::ExitStatus,
    /// Standard output, at most the limit given.
    stdout: Vec<u8>,
    /// Whether standard output held more than the limit (the rest was read and dropped).
    stdout_overflowed: bool,
    /// The last [`MAX_STDERR`] bytes (or a little more) of standard error.
    stderr: Vec<u8>,
}

/// Why [`run_bounded`] has no output.
enum Ran {
    Spawn(std::io::Error),
    TimedOut,
}

/// Runs `command` (its stdout and stderr piped by the caller's settings here), writing `stdin`
/// to it when given, reading its standard output up to `limit` bytes and keeping the tail of
/// its error output, as they come: neither is ever held whole. Stopped (killed and waited
/// for) once it has run for `timeout`.
fn run_bounded(
    mut command: Command,
    stdin: Option<String>,
    limit: u64,
    timeout: Duration,
) -> Result<BoundedOutput, Ran> {
    let start = Instant::now();
    // Supervised: a Ctrl-C or SIGTERM reaches uv, and vari exits (its scratch directory
    // removed) only after uv has (issue 33: uv resolved on for seconds after vari exited).
    let mut supervised = vari_fs::interrupt::spawn_supervised(&mut command).map_err(Ran::Spawn)?;
    let child = supervised.child_mut();
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A thread: a uv that does not read its input must not block the deadline.
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut pipe, text.as_bytes());
        });
    }
    let stdout = child.stdout.take().map(|pipe| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut pipe = pipe;
            let _ = vari_fs::input::read_bounded(&mut pipe, limit, &mut kept);
            let overflowed = kept.len() as u64 > limit;
            kept.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
            // The rest is drained, so that uv never blocks on a full pipe.
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            (kept, overflowed)
        })
    });
    // Told when uv's error output closes, which it does as uv exits: the wait below wakes then
    // instead of at its next poll.
    let (closed, closing) = std::sync::mpsc::channel::<()>();
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut buffer = [0u8; 8192];
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        tail.extend_from_slice(&buffer[..n]);
                        if tail.len() > 2 * MAX_STDERR {
                            tail.drain(..tail.len() - MAX_STDERR);
                        }
                    }
                }
            }
            let _ = closed.send(());
            tail
        })
    });
    if wait_until(child, start + timeout, &closing).is_none() {
        supervised.kill();
        return Err(Ran::TimedOut);
    }
    // Reaped already: this returns its status at once, and acts on a signal received
    // meanwhile (vari exits once uv has).
    let status = supervised.wait().map_err(Ran::Spawn)?;
    let (stdout, stdout_overflowed) = stdout.and_then(|t| t.join().ok()).unwrap_or_default();
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    Ok(BoundedOutput {
        status,
        stdout,
        stdout_overflowed,
        stderr,
    })
}

/// The child's exit status, or `None` when it is still running at `deadline`. Until
/// `closing` says its error output closed (or cannot say), the wait sleeps on it, so that an
/// exit is seen at once rather than at the next poll (a resolution takes tens of
/// milliseconds: a poll every 50 ms added up to as much again); then, or when the output stays
/// open (a process it started keeps it), it polls, from 1 ms up to 50 ms apart.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
    closing: &std::sync::mpsc::Receiver<()>,
) -> Option<std::process::ExitStatus> {
    const LONGEST: Duration = Duration::from_millis(50);
    let mut pause = Duration::from_millis(1);
    let mut closed = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(_) => return None,
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        if closed {
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(LONGEST);
            continue;
        }
        match closing.recv_timeout(LONGEST.min(deadline - now)) {
            // Exiting: it is reaped within a poll or two.
            Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => closed = true,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Reads uv's output file, bounded like any other input.
pub(crate) fn read_output_text(path: &Path) -> Result<String, CompileError> {
    let bytes =
        vari_fs::input::read_input(path, vari_fs::input::InputKind::Config).map_err(|e| {
            CompileError::Output {
                path: path.to_owned(),
                message: e.to_string(),
            }
        })?;
    String::from_utf8(bytes).map_err(|_| CompileError::Output {
        path: path.to_owned(),
        message: "is not UTF-8".to_owned(),
    })
}

/// Reads the pins of uv's output file.
pub(crate) fn read_output(path: &Path) -> Result<Vec<Pin>, CompileError> {
    let text = read_output_text(path)?;
    read_pins(&text).map_err(|message| CompileError::Output {
        path: path.to_owned(),
        message,
    })
}

/// The pins of a `uv pip compile` output: `name==version` lines (extras and markers dropped),
/// comments and blank lines skipped. Anything else (a URL requirement, an option) is an error
/// naming the line: a lock lists index files only.
///
/// ```
/// let pins = vari_lockmaker::steps::read_pins("# comment\nApp_Like==1.0\nreqlike[socks]==1.1 ; python_version >= '3.8'\n").unwrap();
/// assert_eq!(pins[0].name, "app-like");
/// assert_eq!(pins[1].version, "1.1");
/// assert!(vari_lockmaker::steps::read_pins("demo @ https://x/demo.whl\n").is_err());
/// ```
pub fn read_pins(text: &str) -> Result<Vec<Pin>, String> {
    let mut pins = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split(" #").next().unwrap_or_default().trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let requirement = line.split(';').next().unwrap_or_default().trim();
        let Some((name, version)) = requirement.split_once("==") else {
            return Err(format!(
                "line {}: `{line}` is not a pinned requirement (name==version)",
                number + 1
            ));
        };
        let name = name.split('[').next().unwrap_or_default().trim();
        let version = version.trim();
        let valid_name = vari_client::ProjectName::new(name).is_ok();
        if !valid_name || version.parse::<pep440_rs::Version>().is_err() {
            return Err(format!(
                "line {}: `{line}` is not a pinned requirement (name==version)",
                number + 1
            ));
        }
        pins.push(Pin {
            name: vari_core::project::normalize(name),
            version: version.to_owned(),
        });
    }
    Ok(pins)
}

/// A pin of a universal resolution ([`CompileRequest::universal`]) with the marker uv wrote
/// for it: where it applies (none: everywhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkedPin {
    /// The pin.
    pub(crate) pin: Pin,
    /// The PEP 508 marker after the `;`, as uv wrote it.
    pub(crate) marker: Option<String>,
}

/// The pins of a `uv pip compile --universal` output with their markers: [`read_pins`]'s
/// lines, in order, each with what follows its `;`.
pub(crate) fn read_marked_pins(text: &str) -> Result<Vec<MarkedPin>, String> {
    let pins = read_pins(text)?;
    // The lines `read_pins` read, in the same order.
    let markers = text.lines().filter_map(|line| {
        let line = line.split(" #").next().unwrap_or_default().trim();
        (!line.is_empty() && !line.starts_with('#')).then(|| {
            line.split_once(';')
                .map(|(_, marker)| marker.trim().to_owned())
                .filter(|marker| !marker.is_empty())
        })
    });
    Ok(pins
        .into_iter()
        .zip(markers)
        .map(|(pin, marker)| MarkedPin { pin, marker })
        .collect())
}

/// What required each pin of an output written with [`CompileRequest::annotate`]: per
/// normalised name, the entries of its `# via a, b` annotation (names normalised, extras
/// dropped; an input file stays as uv wrote it, `-r requirements.in`). A pin without an
/// annotation has no entry.
///
/// ```
/// let via = vari_lockmaker::steps::read_via("idna==3.0  # via requests, Other[x]\nrequests==2.0  # via -r in.txt\n");
/// assert_eq!(via["idna"], ["requests", "other"]);
/// assert_eq!(via["requests"], ["-r in.txt"]);
/// ```
pub fn read_via(text: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut via = std::collections::BTreeMap::new();
    for line in text.lines() {
        let Some((requirement, annotation)) = line.split_once(" #") else {
            continue;
        };
        let Some(parents) = annotation.trim().strip_prefix("via ") else {
            continue;
        };
        let name = requirement
            .split(['=', ';', '['])
            .next()
            .unwrap_or_default()
            .trim();
        if name.is_empty() || name.starts_with('#') {
            continue;
        }
        let parents = parents
            .split(", ")
            .map(|parent| {
                let parent = parent.trim();
                match parent.starts_with('-') {
                    true => parent.to_owned(),
                    false => vari_core::project::normalize(
                        parent.split('[').next().unwrap_or_default().trim(),
                    ),
                }
            })
            .collect();
        via.insert(vari_core::project::normalize(name), parents);
    }
    via
}

/// The last `max` bytes of `text`, cut at a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_names_the_proxy_alone() {
        let request = CompileRequest {
            uv: "/bin/uv".into(),
            input: "in.txt".into(),
            output: "out.txt".into(),
            python_version: Some("3.12".into()),
            python_platform: None,
            pre: false,
            annotate: false,
            universal: false,
            piped: None,
        };
        let url = url::Url::parse("http://127.0.0.1:1/t/ab/simple/").unwrap();
        let command = request.command(&url);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let downloads: &[&str] =
            match python_downloads_asked(std::env::var_os(PYTHON_DOWNLOADS_VARIABLE).as_deref()) {
                true => &[],
                false => &["--no-python-downloads"],
            };
        let args: Vec<String> = args
            .iter()
            .filter(|a| !downloads.contains(&a.as_str()))
            .cloned()
            .collect();
        assert_eq!(
            args,
            [
                "pip",
                "compile",
                "--quiet",
                "--no-config",
                "--no-header",
                "--no-annotate",
                "--index-url",
                "http://127.0.0.1:1/t/ab/simple/",
                "--output-file",
                "out.txt",
                "--python-version",
                "3.12",
                "in.txt"
            ]
        );
        assert!(command
            .get_envs()
            .any(|(k, v)| k == "UV_INDEX_URL" && v.is_none()));
    }

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    #[test]
    fn output_is_bounded_while_it_is_read() {
        let long = Duration::from_secs(600);
        let ran = run_bounded(sh("head -c 100000 /dev/zero; exit 0"), None, 1000, long);
        let output = ran.ok().unwrap();
        assert!(output.status.success());
        assert!(output.stdout_overflowed);
        assert_eq!(output.stdout.len(), 1000);
        let ran = run_bounded(
            sh("cat; head -c 100000 /dev/zero >&2"),
            Some("a==1\n".into()),
            1000,
            long,
        );
        let output = ran.ok().unwrap();
        assert_eq!(output.stdout, b"a==1\n");
        assert!(!output.stdout_overflowed);
        assert!(
            output.stderr.len() <= 2 * MAX_STDERR,
            "{}",
            output.stderr.len()
        );
        assert!(output.stderr.len() >= MAX_STDERR);
    }

    #[test]
    fn a_program_past_its_deadline_is_stopped() {
        let ran = run_bounded(sh("exec sleep 600"), None, 1000, Duration::from_millis(100));
        assert!(matches!(ran, Err(Ran::TimedOut)));
        let err = CompileError::TimedOut {
            program: "/bin/uv".into(),
            timeout: Duration::from_millis(2500),
        };
        assert_eq!(
            err.to_string(),
            "/bin/uv did not finish within 2.5 s and was stopped (set VARI_RESOLVE_TIMEOUT to \
             allow longer)"
        );
    }

    #[test]
    fn python_downloads_are_off_unless_the_user_asks() {
        assert!(!python_downloads_asked(None));
        assert!(!python_downloads_asked(Some(std::ffi::OsStr::new(""))));
        assert!(python_downloads_asked(Some(std::ffi::OsStr::new(
            "automatic"
        ))));
        if std::env::var_os(PYTHON_DOWNLOADS_VARIABLE).is_none() {
            let request = CompileRequest {
                uv: "/bin/uv".into(),
                input: "in.txt".into(),
                output: "out.txt".into(),
                python_version: Some("3.7".into()),
                python_platform: None,
                pre: false,
                annotate: false,
                universal: false,
                piped: None,
            };
            let url = url::Url::parse("http://127.0.0.1:1/simple/").unwrap();
            let command = request.command(&url);
            assert!(command.get_args().any(|a| a == "--no-python-downloads"));
        }
    }

    #[test]
    fn a_universal_resolution_is_asked_for_every_platform_and_read_with_its_markers() {
        let request = CompileRequest {
            uv: "/bin/uv".into(),
            input: "-".into(),
            output: "-".into(),
            python_version: Some("3.10".into()),
            python_platform: Some("x86_64-manylinux_2_28".into()),
            pre: false,
            annotate: true,
            universal: true,
            piped: Some("a\n".into()),
        };
        let url = url::Url::parse("http://127.0.0.1:1/simple/").unwrap();
        let args: Vec<String> = request
            .command(&url)
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        assert!(has("--universal") && has("fewest"), "{args:?}");
        // uv refuses a platform with `--universal`.
        assert!(!has("--python-platform"), "{args:?}");
        let text = "a==1.0 ; python_full_version < '3.11'    # via -r -\n\
                    # a comment\n\
                    b==2.0    # via a\n\
                    c[x]==3 ; sys_platform == 'win32'\n";
        let marked = read_marked_pins(text).unwrap();
        let seen: Vec<(&str, &str, Option<&str>)> = marked
            .iter()
            .map(|m| {
                (
                    m.pin.name.as_str(),
                    m.pin.version.as_str(),
                    m.marker.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("a", "1.0", Some("python_full_version < '3.11'")),
                ("b", "2.0", None),
                ("c", "3", Some("sys_platform == 'win32'")),
            ]
        );
        assert!(read_marked_pins("a @ https://x/a.whl ; os_name == 'nt'\n").is_err());
    }

    #[test]
    fn pins_are_read_and_anything_else_refused() {
        assert_eq!(
            read_pins("a==1\n\n# x\nb-c==2.0 # via a\n").unwrap(),
            [
                Pin {
                    name: "a".into(),
                    version: "1".into()
                },
                Pin {
                    name: "b-c".into(),
                    version: "2.0".into()
                }
            ]
        );
        assert!(read_pins("--index-url http://x\n").is_err());
        assert!(read_pins("a==not a version\n").is_err());
        assert_eq!(tail("héllo", 4), "llo");
    }
}
