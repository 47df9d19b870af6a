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
    let hooks: Vec<Hook> = registry().hooks.values().cloned().collect();
    for hook in hooks {
        hook(signal);
    }
    let mut state = registry();
    if state.holds > 0 {
        state.pending.get_or_insert(signal);
        return;
    }
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

/// Forwards SIGINT and SIGTERM to the child process `pid` until dropped (`vari install` and
/// its installer). Used with a [`Hold`], so that the caller waits for the child before the
/// process exits. (A Ctrl-C typed in a terminal reaches the whole foreground group, the child
/// included; it then gets the signal twice, which pip and uv treat as one interruption.)
#[cfg(unix)]
pub fn forward_to(pid: u32) -> HookGuard {
    let forward = move |signal| {
        let target = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw);
        let signal = match signal {
            signal_hook::consts::SIGINT => rustix::process::Signal::INT,
            _ => rustix::process::Signal::TERM,
        };
        if let Some(target) = target {
            // The child may have exited already: nothing to tell it then.
            let _ = rustix::process::kill_process(target, signal);
        }
    };
    let guard = on_signal(forward);
    // A signal that came while the child was being started is its too.
    let pending = registry().pending;
    if let Some(signal) = pending {
        forward(signal);
    }
    guard
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

    #[test]
    fn registrations_come_and_go() {
        let a = remove_on_interrupt(PathBuf::from("/nonexistent/a"));
        let b = remove_on_interrupt(PathBuf::from("/nonexistent/b"));
        let count = || registry().paths.len();
        let before = count();
        drop(a);
        assert_eq!(count(), before - 1);
        drop(b);
        assert_eq!(count(), before - 2);
    }
}
