//! The tokio runtime a proxy is served on, with its threads bounded.
//!
//! Why bounded: every thread that allocates gets its own heap segments from the allocator
//! (mimalloc reserves 32 MiB of address space per thread heap segment, glibc malloc a 64 MiB
//! arena per thread), besides its stack. tokio's defaults allow 512 threads in the blocking
//! pool; page builds used to take one each, so a burst of requests for many projects (an
//! installer resolving a large set) started dozens of threads: 3.2 GB of virtual memory at
//! 170 MB resident, and an abort ("memory allocation failed") under a 1 GiB address-space
//! limit (`ulimit -v`). Page builds now run on a few threads of their own
//! ([`crate::builders`]), and the blocking pool, which only does short file work (opening and
//! reading served files, hashing a rewritten copy, pruning the cache), is capped.

use std::io;

/// The most worker threads (at most the number of cores). Serving cached pages is a few
/// microseconds of work each; more threads only cost memory.
pub const MAX_WORKER_THREADS: usize = 4;

/// The most threads in the blocking pool (file reads and writes, hashing). Requests beyond it
/// wait for a free thread rather than starting a new one.
pub const MAX_BLOCKING_THREADS: usize = 16;

/// The stack size of every runtime thread: tokio's default, stated so it cannot grow
/// unnoticed. Nothing on these threads recurses without a depth limit.
pub const THREAD_STACK_SIZE: usize = 2 * 1024 * 1024;

/// The number of worker threads: the cores, at most [`MAX_WORKER_THREADS`].
pub(crate) fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().min(MAX_WORKER_THREADS))
        .unwrap_or(2)
}

/// A multi-thread runtime for a proxy: a worker per core, at most [`MAX_WORKER_THREADS`]; at
/// most [`MAX_BLOCKING_THREADS`] blocking threads; stacks of [`THREAD_STACK_SIZE`]; I/O and
/// timers enabled.
///
/// The proxy answers on the worker threads while the thread that called `block_on` waits (for
/// a signal, or for an installer): see [`crate::start`].
///
/// ```no_run
/// let runtime = vari_proxy::server_runtime().expect("a runtime");
/// runtime.block_on(async { /* vari_proxy::start(…) */ });
/// ```
pub fn server_runtime() -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_stack_size(THREAD_STACK_SIZE)
        .thread_name("vari-proxy")
        .enable_all()
        .build()
}
