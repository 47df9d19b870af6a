//! What happens when a command is interrupted (SIGINT, SIGTERM): the temporary and partial
//! files it registered are removed, hooks run (`vari install` forwards the signal to the
//! installer), and the process exits with `128 + signal` (130, 143).
//!
//! One process-wide registry, so that every writer inherits it: [`crate::AtomicFile`]
//! registers its `.vari-*.partial` file, so downloads, index builds and the proxy's cache all
//! clean up after an interruption without a line of their own. Signals are received through
//! `signal-hook`'s registry, in which several handlers coexist (tokio's, the proxy's graceful
//! stop, this one): the handler only wakes a thread, which does the work outside signal context.
//! The thread starts with the first registration; a process that never registers anything keeps
//! the default behaviour.
//!
//! Callers that stop on their own terms take a [`Hold`]: while one is held a signal is only
//! recorded (hooks still run), and acted on when the hold is released, so the installer is
//! waited for and the proxy drains its connections before the process exits.
//!
//! On other platforms than Unix nothing is installed: registrations are kept and dropped, and
//! Ctrl-C ends the process as before.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

type Hook = Arc<dyn Fn(i32) + Send + Sync>;

#[derive(Default)]
struct Registry {
    next_id: u64,
    /// Files and directories to remove on interruption.
    paths: BTreeMap<u64, PathBuf>,
    /// Run on every signal, before anything else.
    hooks: BTreeMap<u64, Hook>,
    /// How many [`Hold`]s are alive.
    holds: usize,
    /// A signal received while held.
    pending: Option<i32>,
}

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    let mutex = REGISTRY.get_or_init(Mutex::default);
    // A panic while holding the lock leaves plain data behind, still usable.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts the thread that listens for SIGINT and SIGTERM (once per process). Registering a
/// path, a hook or taking a [`Hold`] calls it; it is public for commands that want the
/// behaviour from their first instruction.
pub fn listen() {
    #[cfg(unix)]
    {
        static STARTED: OnceLock<()> = OnceLock::new();
        STARTED.get_or_init(|| {
            use signal_hook::consts::{SIGINT, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
                // Without the handler the default stays: the process ends, partial files stay,
                // and the next run's sweep removes them (see `crate::stale`).
                return;
            };
            // If the thread cannot start, the closure and its `Signals` are dropped, which
            // unregisters the handlers: the default (the process ends) stays.
            let _ = std::thread::Builder::new()
                .name("vari-signals".to_owned())
                .spawn(move || {
                    for signal in signals.forever() {
                        received(signal);
                    }
                });
        });
    }
}

fn received(signal: i32) {
    // Recorded before the hooks run: a hold released while they run (its child has exited,
    // which a hook waits for) acts on it, instead of letting its owner carry on and exit with
    // a status of its own.
    let hooks: Vec<Hook> = {
        let mut state = registry();
        state.pending.get_or_insert(signal);
        state.hooks.values().cloned().collect()
    };
    for hook in hooks {
        hook(signal);
    }
    let state = registry();
    if state.holds > 0 {
        return;
    }
    let signal = state.pending.unwrap_or(signal);
    drop(state);
    clean_up_and_exit(signal);
}

/// Removes every registered path.
fn remove_registered() {
    let paths: Vec<PathBuf> = std::mem::take(&mut registry().paths)
        .into_values()
        .collect();
    for path in paths {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(_) => {}
        }
    }
}

fn clean_up_and_exit(signal: i32) -> ! {
    // One caller at a time: the signal thread and the release of the last hold can both get
    // here, and the second must not exit while the first is still removing the paths.
    static EXITING: Mutex<()> = Mutex::new(());
    let _exiting = EXITING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    remove_registered();
    std::process::exit(128 + signal)
}

/// A path removed if the process is interrupted, until this is dropped (dropping removes
/// nothing: the owner removes or keeps the file).
#[derive(Debug)]
#[must_use = "the path is forgotten when this is dropped"]
pub struct Registration {
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        registry().paths.remove(&self.id);
    }
}

/// Registers `path` (a file or a directory, removed with its content) for removal on
/// interruption.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let partial = dir.path().join(".vari-x.partial");
/// let registration = vari_fs::interrupt::remove_on_interrupt(partial);
/// drop(registration); // written and renamed: nothing to remove any more
/// ```
pub fn remove_on_interrupt(path: PathBuf) -> Registration {
    listen();
    let mut state = registry();
    state.next_id += 1;
    let id = state.next_id;
    state.paths.insert(id, path);
    Registration { id }
}

/// A function run with the signal number when SIGINT or SIGTERM comes, until dropped.
#[must_use = "the hook is removed when this is dropped"]
pub struct HookGuard {
    id: u64,
}

impl std::fmt::Debug for HookGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookGuard").field("id", &self.id).finish()
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        registry().hooks.remove(&self.id);
    }
}

/// Runs `hook` on every SIGINT or SIGTERM until the guard is dropped (it runs on the signal
/// thread, not in signal context: it may lock, allocate, send signals).
pub fn on_signal(hook: impl Fn(i32) + Send + Sync + 'static) -> HookGuard {
    listen();
    let mut state = registry();
    state.next_id += 1;
    let id = state.next_id;
    state.hooks.insert(id, Arc::new(hook));
    HookGuard { id }
}

/// How long a child told of a signal has to exit before it is killed ([`spawn_supervised`]):
/// pip and uv stop within a second; one that ignores the signal must not keep vari running.
pub const CHILD_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// A child process started with [`spawn_supervised`]: a SIGINT or SIGTERM that reaches vari
/// reaches it too, and vari exits (`128 + signal`, registered paths removed) only once it has
/// exited. Dropping the value without waiting kills the child and waits for it, so no child
/// outlives the code that started it.
#[derive(Debug)]
pub struct Supervised {
    child: Option<std::process::Child>,
    forward: Option<HookGuard>,
    hold: Option<Hold>,
}

/// Starts `command` as a [`Supervised`] child that the caller waits for at once: the one way
/// vari runs pip, uv or any other program that works for a while, so that every command
/// forwards an interruption to it and waits for it instead of leaving it running (and its
/// temporary files behind). While it runs, a signal is acted on once it has exited, when the
/// caller's wait returns: the caller never goes on as if the child had failed on its own.
pub fn spawn_supervised(command: &mut std::process::Command) -> std::io::Result<Supervised> {
    let held = hold();
    let mut child = spawn_supervised_in_background(command)?;
    child.hold = Some(held);
    Ok(child)
}

/// [`spawn_supervised`] for a child the caller waits for only later (uv started early, reading
/// its input while vari works on): a signal is forwarded to it, and vari exits as soon as it
/// has exited, without waiting for the caller to get to it.
pub fn spawn_supervised_in_background(
    command: &mut std::process::Command,
) -> std::io::Result<Supervised> {
    listen();
    let child = command.spawn()?;
    #[cfg(unix)]
    let forward = Some(forward_and_wait(child.id()));
    #[cfg(not(unix))]
    let forward = None;
    Ok(Supervised {
        child: Some(child),
        forward,
        hold: None,
    })
}

/// The hook of a [`Supervised`] child: forwards the signal, then waits (without reaping: its
/// owner still waits for it) until it has exited, [`CHILD_GRACE`] at most before killing it.
/// The registry acts on the signal only after its hooks have run, so vari exits after the
/// child, and its temporary files are removed once nothing uses them.
#[cfg(unix)]
fn forward_and_wait(pid: u32) -> HookGuard {
    use rustix::process::{kill_process, waitid, Pid, Signal, WaitId, WaitIdOptions};
    let Some(target) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return on_signal(|_| {});
    };
    let hook = move |signal| {
        let signal = match signal {
            signal_hook::consts::SIGINT => Signal::INT,
            _ => Signal::TERM,
        };
        // The child may have exited already: nothing to tell it then.
        let _ = kill_process(target, signal);
        let exited = || {
            !matches!(
                waitid(
                    WaitId::Pid(target),
                    WaitIdOptions::EXITED | WaitIdOptions::NOWAIT | WaitIdOptions::NOHANG,
                ),
                Ok(None)
            )
        };
        let deadline = std::time::Instant::now() + CHILD_GRACE;
        while !exited() {
            if std::time::Instant::now() >= deadline {
                let _ = kill_process(target, Signal::KILL);
                let _ = waitid(
                    WaitId::Pid(target),
                    WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
                );
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    let guard = on_signal(hook);
    // A signal that came while the child was being started is its too.
    let pending = registry().pending;
    if let Some(signal) = pending {
        hook(signal);
    }
    guard
}

impl Supervised {
    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.as_ref().map_or(0, std::process::Child::id)
    }

    /// The child, for its pipes.
    pub fn child_mut(&mut self) -> &mut std::process::Child {
        self.child
            .as_mut()
            .expect("a supervised child is there until waited for")
    }

    /// Waits for the child to exit (a signal received meanwhile is acted on then: the process
    /// exits `128 + signal`).
    pub fn wait(mut self) -> std::io::Result<std::process::ExitStatus> {
        self.finish(|mut child| child.wait())
    }

    /// [`Supervised::wait`], collecting what the child writes to its piped stdout and stderr.
    pub fn wait_with_output(mut self) -> std::io::Result<std::process::Output> {
        self.finish(std::process::Child::wait_with_output)
    }

    /// Kills the child and waits for it.
    pub fn kill(mut self) {
        let _ = self.finish(|mut child| {
            let _ = child.kill();
            child.wait()
        });
    }

    /// Runs `wait` on the child under a hold, then lets go of the forwarding and the hold
    /// (acting on a signal received meanwhile).
    fn finish<T>(
        &mut self,
        wait: impl FnOnce(std::process::Child) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let held = self.hold.take().unwrap_or_else(hold);
        let result = match self.child.take() {
            Some(child) => wait(child),
            None => Err(std::io::Error::other("the child was waited for already")),
        };
        self.forward = None;
        drop(held);
        // A signal is being acted on (another hold keeps the process alive a moment longer):
        // the caller must not carry on as if the child had failed on its own, and print or
        // exit with a status of its own. The last hold's release, or the signal thread, ends
        // the process.
        if registry().pending.is_some() {
            loop {
                std::thread::park();
            }
        }
        result
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.finish(|mut child| {
                let _ = child.kill();
                child.wait()
            });
        }
    }
}

/// A temporary directory (named `{prefix}…` in the system's temporary directory) removed when
/// dropped, and also when the process is interrupted: the scratch space of a command that runs
/// a child ([`spawn_supervised`]) is never left behind by a Ctrl-C or a SIGTERM.
#[derive(Debug)]
pub struct TempDir {
    dir: tempfile::TempDir,
    _registration: Registration,
}

impl TempDir {
    /// Makes one.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir()?;
        let registration = remove_on_interrupt(dir.path().to_path_buf());
        Ok(Self {
            dir,
            _registration: registration,
        })
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// While alive, a SIGINT or SIGTERM is recorded instead of acted on (hooks still run).
/// Dropping the last hold acts on it: registered paths removed, exit `128 + signal`.
#[derive(Debug)]
#[must_use = "signals are acted on when this is dropped"]
pub struct Hold {
    released: bool,
}

/// Takes a [`Hold`].
pub fn hold() -> Hold {
    listen();
    registry().holds += 1;
    Hold { released: false }
}

impl Hold {
    /// The signal received while held, if any.
    pub fn pending(&self) -> Option<i32> {
        registry().pending
    }

    /// Ends the hold after the caller has stopped gracefully because of a signal (the proxy's
    /// own handling): registered paths are removed, and signals stay the caller's for the rest
    /// of the process (the hold is never released). Releasing it would race: the signal that
    /// stopped the caller may reach this registry's thread only now, and must not turn a
    /// graceful stop (status 0) into an exit with 130.
    pub fn stopped_gracefully(mut self) {
        self.released = true;
        registry().pending = None;
        remove_registered();
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        let mut state = registry();
        state.holds -= 1;
        if state.holds == 0 {
            if let Some(signal) = state.pending.take() {
                drop(state);
                clean_up_and_exit(signal);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[cfg(unix)]
    #[test]
    fn a_supervised_child_is_told_of_the_signal_and_waited_for() {
        let mut command = std::process::Command::new("sleep");
        command.arg("600");
        let child = spawn_supervised(&mut command).unwrap();
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        // What the signal thread does on SIGTERM (the process itself is not signalled here:
        // the registry would exit the test process): every hook runs, this one forwards and
        // returns only once the child has exited.
        let id = child.forward.as_ref().unwrap().id;
        let hook = registry().hooks[&id].clone();
        hook(signal_hook::consts::SIGTERM);
        let exited = rustix::process::waitid(
            rustix::process::WaitId::Pid(pid),
            rustix::process::WaitIdOptions::EXITED
                | rustix::process::WaitIdOptions::NOWAIT
                | rustix::process::WaitIdOptions::NOHANG,
        )
        .unwrap();
        assert!(exited.is_some(), "the child is still running");
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal_hook::consts::SIGTERM));
    }

    #[test]
    fn a_dropped_supervised_child_is_killed_and_a_temporary_directory_registered() {
        let mut command = std::process::Command::new("sleep");
        command.arg("600");
        let child = spawn_supervised(&mut command).unwrap();
        drop(child);
        let dir = TempDir::new("vari-test-").unwrap();
        let path = dir.path().to_owned();
        assert!(registry().paths.values().any(|p| p == &path));
        drop(dir);
        assert!(!path.exists());
        assert!(!registry().paths.values().any(|p| p == &path));
    }

    #[test]
    fn registrations_come_and_go() {
        // By path, not by count: other tests of this binary register paths at the same time.
        let a = remove_on_interrupt(PathBuf::from("/nonexistent/a"));
        let b = remove_on_interrupt(PathBuf::from("/nonexistent/b"));
        let registered = |path: &str| registry().paths.values().any(|p| p == Path::new(path));
        assert!(registered("/nonexistent/a") && registered("/nonexistent/b"));
        drop(a);
        assert!(!registered("/nonexistent/a") && registered("/nonexistent/b"));
        drop(b);
        assert!(!registered("/nonexistent/b"));
    }
}
