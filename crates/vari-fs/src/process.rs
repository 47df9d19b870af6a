//! Running a helper program (a driver probe, the target's Python interpreter) with a time
//! limit: a hung program is killed, never waited for forever.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What a finished program left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutput {
    /// The exit code when it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it (Unix).
    pub signal: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

impl ProcessOutput {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Why [`run_with_timeout`] has no output to give.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (not found, not executable, …).
    #[error("could not start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// It ran longer than allowed and was killed.
    #[error("{program} did not finish within {} s and was stopped", timeout.as_secs_f64())]
    TimedOut {
        /// The program.
        program: String,
        /// The limit.
        timeout: Duration,
    },
}

/// Runs `command` with `stdin` as its standard input (none: empty), collecting stdout and
/// stderr, and kills it after `timeout`.
///
/// ```
/// # #[cfg(unix)] {
/// use std::time::Duration;
/// let out = vari_fs::run_with_timeout(
///     std::process::Command::new("cat"), Some(b"hello"), Duration::from_secs(10)).unwrap();
/// assert_eq!(out.stdout, b"hello");
/// # }
/// ```
pub fn run_with_timeout(
    mut command: Command,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<ProcessOutput, RunError> {
    let program = command.get_program().to_string_lossy().into_owned();
    let start = Instant::now();
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        // A writer thread: a child that does not read its input must not block us.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    // Pipes are drained by threads so a chatty child cannot block on a full pipe.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    // Between checks, wait for the child's stdout to end rather than sleeping: it ends when the
    // child exits, which then wakes this thread at once instead of up to a polling interval
    // later (20 ms, on every interpreter query). A child that closes its stdout early, or
    // whose stdout a grandchild keeps open, is polled as before.
    let mut stdout_bytes: Option<Vec<u8>> = None;
    let mut pause = Duration::from_micros(500);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::TimedOut { program, timeout });
            }
            Ok(None) => {
                let wait = pause.min(timeout.saturating_sub(start.elapsed()));
                pause = (pause * 2).min(Duration::from_millis(20));
                if stdout_bytes.is_some() {
                    std::thread::sleep(wait);
                    continue;
                }
                match stdout.recv_timeout(wait) {
                    Ok(bytes) => {
                        stdout_bytes = Some(bytes);
                        // Exiting, most likely: look again soon.
                        pause = Duration::from_micros(100);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => stdout_bytes = Some(Vec::new()),
                }
            }
            Err(source) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Spawn { program, source });
            }
        }
    };
    // A grandchild could hold the pipes open; do not wait for it long.
    let grace = Duration::from_millis(200);
    Ok(ProcessOutput {
        code: status.code(),
        signal: exit_signal(&status),
        stdout: match stdout_bytes {
            Some(bytes) => bytes,
            None => stdout.recv_timeout(grace).unwrap_or_default(),
        },
        stderr: stderr.recv_timeout(grace).unwrap_or_default(),
    })
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut buffer);
        }
        let _ = tx.send(buffer);
    });
    rx
}

#[cfg(unix)]
fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn output_and_status_are_collected() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "cat; echo err >&2; exit 3"]);
        let out = run_with_timeout(cmd, Some(b"in"), Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"in");
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.code, Some(3));
        assert!(!out.success());
    }

    #[test]
    fn output_closed_before_the_exit_is_kept() {
        // Its stdout ends while it still runs: what it wrote before is the output, and its
        // status is still waited for.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo early; exec >&-; sleep 0.2; exit 4"]);
        let out = run_with_timeout(cmd, None, Duration::from_secs(10)).unwrap();
        assert_eq!(out.stdout, b"early\n");
        assert_eq!(out.code, Some(4));
    }

    #[test]
    fn a_hung_program_is_killed() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let err = run_with_timeout(cmd, None, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, RunError::TimedOut { .. }), "{err}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let err = run_with_timeout(
            Command::new("/nonexistent/python3"),
            None,
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/python3"), "{err}");
    }

    #[test]
    fn a_crash_reports_its_signal() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "kill -SEGV $$"]);
        let out = run_with_timeout(cmd, None, Duration::from_secs(10)).unwrap();
        assert_eq!(out.signal, Some(11));
    }
}
