//! Page builds on a few threads of their own, however many run at once.
//!
//! A page build's future is not `Send`: the selector's and the client's futures hold streams of
//! closures over borrowed data, for which rustc cannot prove `Send` ("implementation of
//! `FnOnce` is not general enough", rust-lang/rust#102211) although nothing in them is tied to
//! a thread. So it cannot be a `tokio::spawn`ed task. It used to be driven by a thread of the
//! blocking pool each (`Handle::block_on`), which held that thread for the whole upstream
//! fetch: a burst of requests for fifty projects started fifty threads, each with its stack and
//! its own allocator heap (32 MiB of address space each under mimalloc), 3.2 GB of virtual
//! memory in all, and under a 1 GiB address-space limit the proxy aborted.
//!
//! Here each of a fixed number of threads runs a [`LocalSet`] on the proxy's runtime
//! ([`Handle::block_on`]): a build is sent to one of them as a `Send` closure, made and
//! polled there as a local task, next to every other build on that thread. Builds wait on the
//! network almost all the time, so a few threads carry any number of them; whatever a build
//! spawns (the client's connections) runs on the runtime's workers as before.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use futures_util::future::LocalBoxFuture;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tokio::task::{JoinHandle, LocalSet};

use crate::error::ServeError;
use crate::runtime::THREAD_STACK_SIZE;

/// A build as it travels to its thread: made there, so its future need not be `Send`.
type Job = Box<dyn FnOnce() -> LocalBoxFuture<'static, ()> + Send>;

/// The page-build threads. Dropping it (or [`Self::close`]) ends them; builds under way are
/// dropped, and their waiters get an internal error.
pub(crate) struct Builders {
    queues: Mutex<Vec<mpsc::UnboundedSender<Job>>>,
    next: AtomicUsize,
}

impl Builders {
    /// Starts `threads` threads (at least one) running builds on `runtime`.
    pub(crate) fn start(runtime: &Handle, threads: usize) -> std::io::Result<Self> {
        let mut queues = Vec::new();
        for i in 0..threads.max(1) {
            let (queue, mut jobs) = mpsc::unbounded_channel::<Job>();
            let runtime = runtime.clone();
            std::thread::Builder::new()
                .name(format!("vari-proxy-pages-{i}"))
                .stack_size(THREAD_STACK_SIZE)
                .spawn(move || {
                    let builds = LocalSet::new();
                    runtime.block_on(async move {
                        builds
                            .run_until(async {
                                while let Some(job) = jobs.recv().await {
                                    tokio::task::spawn_local(job());
                                }
                            })
                            .await;
                        // Builds still under way are dropped here, inside the runtime's
                        // context (their sockets and timers belong to it).
                        drop(builds);
                    });
                })?;
            queues.push(queue);
        }
        Ok(Self {
            queues: Mutex::new(queues),
            next: AtomicUsize::new(0),
        })
    }

    /// Runs the future `make()` returns on a build thread; the handle gives its result (an
    /// internal error when the builders were closed first).
    pub(crate) fn spawn<T, F, Fut>(&self, make: F) -> JoinHandle<Result<T, ServeError>>
    where
        T: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, ServeError>> + 'static,
    {
        let (done, result) = oneshot::channel();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                let _ = done.send(make().await);
            })
        });
        {
            let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            if !queues.is_empty() {
                let i = self.next.fetch_add(1, Ordering::Relaxed) % queues.len();
                // A closed queue drops the job, and with it `done`: the waiter below learns.
                let _ = queues[i].send(job);
            }
        }
        tokio::spawn(async move {
            result.await.unwrap_or_else(|_| {
                Err(ServeError::Internal(
                    "the proxy is stopping: page builds were cancelled".to_owned(),
                ))
            })
        })
    }

    /// Ends the build threads: builds under way are dropped, later ones fail at once.
    pub(crate) fn close(&self) {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_builds_run_at_once_on_few_threads() {
        let builders = Builders::start(&Handle::current(), 2).unwrap();
        // Each build waits for all the others to have started: they must run concurrently.
        let started = std::sync::Arc::new(tokio::sync::Barrier::new(50));
        let handles: Vec<_> = (0..50)
            .map(|i| {
                let started = started.clone();
                builders.spawn(move || async move {
                    // Not `Send`: only a build thread can hold it across an await.
                    let local = Rc::new(i);
                    started.wait().await;
                    Ok::<_, ServeError>((*local, std::thread::current().name().map(String::from)))
                })
            })
            .collect();
        let mut threads = std::collections::HashSet::new();
        for (i, handle) in handles.into_iter().enumerate() {
            let (value, thread) = tokio::time::timeout(std::time::Duration::from_secs(30), handle)
                .await
                .expect("the builds ran concurrently")
                .unwrap()
                .unwrap();
            assert_eq!(value, i);
            threads.insert(thread.unwrap());
        }
        assert!(threads.len() <= 2, "{threads:?}");
        assert!(threads.iter().all(|t| t.starts_with("vari-proxy-pages-")));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn closed_builders_fail_builds_instead_of_hanging() {
        let builders = Builders::start(&Handle::current(), 1).unwrap();
        let pending = builders.spawn(std::future::pending::<Result<(), ServeError>>);
        builders.close();
        let after = builders.spawn(|| async { Ok::<_, ServeError>(()) });
        for handle in [pending, after] {
            let result = tokio::time::timeout(std::time::Duration::from_secs(30), handle)
                .await
                .expect("a cancelled build answers")
                .unwrap();
            assert!(matches!(result, Err(ServeError::Internal(_))), "{result:?}");
        }
    }
}
