//! The open connections: a cap on how many, and which to close when more come.
//!
//! Each connection holds a file descriptor. Without a cap, clients that open connections and
//! send nothing (or keep them idle between requests) use up the process's open-file limit:
//! accepts then fail with "too many open files", and so do the files and upstream sockets the
//! proxy needs, until the idle ones time out. With the cap, a new connection at the cap (or a
//! failed accept) closes the connection idle the longest (no request under way: before its
//! first request or between two); when every connection is busy, the next one waits in the
//! listen queue until one ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

/// The most connections open at once; fewer when the open-file limit is low: at most three
/// quarters of it are used (at least 32 descriptors, or a quarter, stay for served files,
/// upstream sockets and the cache).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The open connections, and room for new ones.
#[derive(Debug)]
pub(crate) struct Connections {
    slots: Arc<Semaphore>,
    cap: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    next_id: u64,
    by_id: HashMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// Requests under way (a response still being sent counts).
    busy: usize,
    /// When the last request ended (or the connection was accepted).
    idle_since: Instant,
    /// Asks the connection to close; `None` once asked.
    close: Option<oneshot::Sender<()>>,
}

impl Connections {
    pub(crate) fn new(cap: usize) -> Arc<Self> {
        let cap = cap.max(1);
        Arc::new(Self {
            slots: Arc::new(Semaphore::new(cap)),
            cap,
            open: Mutex::new(Open::default()),
        })
    }

    /// The cap.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    /// Room for one more connection: at once below the cap; at the cap, after the connection
    /// idle the longest was asked to close and has closed (or, when none is idle, after any
    /// connection ends).
    pub(crate) async fn room(&self) -> OwnedSemaphorePermit {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return permit;
        }
        self.close_oldest_idle();
        loop {
            // The semaphore is never closed; should it be, wait on the next free slot again.
            if let Ok(permit) = self.slots.clone().acquire_owned().await {
                return permit;
            }
            tokio::task::yield_now().await;
        }
    }

    /// Asks the connection idle the longest to close, unless one is closing already (a burst
    /// of arrivals would otherwise close every idle connection at once). Whether one was
    /// asked, or is closing.
    pub(crate) fn close_oldest_idle(&self) -> bool {
        let mut open = self.lock();
        if open.by_id.values().any(|entry| entry.close.is_none()) {
            return true;
        }
        let oldest = open
            .by_id
            .values_mut()
            .filter(|entry| entry.busy == 0)
            .min_by_key(|entry| entry.idle_since);
        match oldest.and_then(|entry| entry.close.take()) {
            Some(close) => {
                let _ = close.send(());
                true
            }
            None => false,
        }
    }

    /// Registers an accepted connection holding `permit`: the returned handle marks its
    /// requests and, dropped, frees its slot; the receiver says when it should close.
    pub(crate) fn register(
        self: &Arc<Self>,
        permit: OwnedSemaphorePermit,
    ) -> (Tracked, oneshot::Receiver<()>) {
        let (close, closing) = oneshot::channel();
        let mut open = self.lock();
        let id = open.next_id;
        open.next_id += 1;
        open.by_id.insert(
            id,
            Entry {
                busy: 0,
                idle_since: Instant::now(),
                close: Some(close),
            },
        );
        let tracked = Tracked {
            id,
            connections: self.clone(),
            _permit: permit,
        };
        (tracked, closing)
    }

    /// How many connections are open.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.lock().by_id.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One open connection; dropping it frees its slot.
#[derive(Debug)]
pub(crate) struct Tracked {
    id: u64,
    connections: Arc<Connections>,
    _permit: OwnedSemaphorePermit,
}

impl Tracked {
    /// Whether no request is under way on it.
    pub(crate) fn idle(&self) -> bool {
        self.connections
            .lock()
            .by_id
            .get(&self.id)
            .is_none_or(|entry| entry.busy == 0)
    }

    /// Marks a request under way until the guard is dropped (with the response's body).
    pub(crate) fn request(&self) -> RequestGuard {
        if let Some(entry) = self.connections.lock().by_id.get_mut(&self.id) {
            entry.busy += 1;
        }
        RequestGuard {
            id: self.id,
            connections: self.connections.clone(),
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.connections.lock().by_id.remove(&self.id);
    }
}

/// A request under way on a connection.
#[derive(Debug)]
pub(crate) struct RequestGuard {
    id: u64,
    connections: Arc<Connections>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if let Some(entry) = self.connections.lock().by_id.get_mut(&self.id) {
            entry.busy = entry.busy.saturating_sub(1);
            entry.idle_since = Instant::now();
        }
    }
}

/// The cap on connections: `max`, and at most three quarters of the open-file limit (at
/// least 32 descriptors, or a quarter, stay for served files, upstream sockets and the cache),
/// so idle connections cannot take the descriptors the proxy needs to answer.
pub(crate) fn connection_cap(max: usize) -> usize {
    match open_file_limit() {
        Some(limit) => {
            let reserve = (limit / 4).max(32);
            max.min(limit.saturating_sub(reserve)).max(1)
        }
        None => max.max(1),
    }
}

/// The soft limit on open files (`RLIMIT_NOFILE`), when there is one.
#[cfg(unix)]
fn open_file_limit() -> Option<usize> {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    limit.current.and_then(|n| usize::try_from(n).ok())
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn at_the_cap_the_longest_idle_connection_is_closed() {
        let connections = Connections::new(2);
        let (first, mut first_closing) = connections.register(connections.room().await);
        tokio::time::sleep(Duration::from_millis(5)).await;
        let (second, mut second_closing) = connections.register(connections.room().await);
        // A request on the first makes the second the only idle one.
        let busy = first.request();
        let third_room = {
            let connections = connections.clone();
            tokio::spawn(async move { connections.room().await })
        };
        tokio::time::timeout(Duration::from_secs(30), &mut second_closing)
            .await
            .expect("the idle connection is asked to close")
            .unwrap();
        assert!(first_closing.try_recv().is_err());
        drop(second);
        let third = tokio::time::timeout(Duration::from_secs(30), third_room)
            .await
            .expect("its slot goes to the new one")
            .unwrap();
        let (_third, _) = connections.register(third);
        assert_eq!(connections.open(), 2);
        drop(busy);
        drop(first);
        assert_eq!(connections.open(), 1);
    }

    #[tokio::test]
    async fn only_one_connection_is_closed_at_a_time() {
        let connections = Connections::new(3);
        let mut closing = Vec::new();
        let mut tracked = Vec::new();
        for _ in 0..3 {
            let (t, c) = connections.register(connections.room().await);
            tracked.push(t);
            closing.push(c);
        }
        assert!(connections.close_oldest_idle());
        assert!(connections.close_oldest_idle());
        let asked = closing
            .iter_mut()
            .map(|c| c.try_recv())
            .filter(Result::is_ok)
            .count();
        assert_eq!(asked, 1);
    }

    #[tokio::test]
    async fn busy_connections_are_never_closed() {
        let connections = Connections::new(1);
        let (only, mut closing) = connections.register(connections.room().await);
        let _busy = only.request();
        assert!(!connections.close_oldest_idle());
        assert!(closing.try_recv().is_err());
    }

    #[test]
    fn the_cap_leaves_descriptors_for_the_rest() {
        let cap = connection_cap(usize::MAX);
        if let Some(limit) = open_file_limit() {
            assert!(
                cap <= limit - (limit / 4).max(32).min(limit - 1),
                "{cap} {limit}"
            );
        }
        assert!(connection_cap(10) <= 10);
        assert!(connection_cap(0) >= 1);
    }
}
