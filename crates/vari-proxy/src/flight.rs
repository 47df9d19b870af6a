//! Single flight: one build per key, however many requests wait for it.
//!
//! Each key holds a shared future of a build running as a task of its own (the caller starts
//! it), so a client that hangs up does not cancel the work the others wait for. A finished
//! value is reused while the caller's `fresh` test accepts it; a failure is handed to everyone
//! who waited for it and to every request within the caller's failure TTL after it, then
//! forgotten, so a later request tries again. (Installers retry a 502 at once: uv three times.
//! Without the TTL each retry would fetch the upstream again, with the client's own retries
//! and back-off, and an upstream that is down would take many seconds to report.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, FutureExt, Shared};
use tokio::task::JoinHandle;

use crate::error::ServeError;

/// The outcome every waiter receives.
pub(crate) type Outcome<T> = Result<Arc<T>, ServeError>;

/// A failed build and when it ended.
#[derive(Clone)]
struct Failed {
    error: ServeError,
    at: Instant,
}

type Pending<T> = Shared<BoxFuture<'static, Result<Arc<T>, Failed>>>;

/// Builds keyed by `String`.
pub(crate) struct Flights<T> {
    map: Mutex<HashMap<String, Pending<T>>>,
}

impl<T> Default for Flights<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T: Send + Sync + 'static> Flights<T> {
    /// The value for `key`: a finished one that `fresh` accepts, else a failure younger than
    /// `failure_ttl`, else the build under way, else a new build, started by `start` as a task
    /// of its own.
    pub(crate) async fn get<F>(
        &self,
        key: &str,
        fresh: impl Fn(&T) -> bool,
        failure_ttl: Duration,
        start: F,
    ) -> Outcome<T>
    where
        F: FnOnce() -> JoinHandle<Result<T, ServeError>>,
    {
        let pending = {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            let reusable = map.get(key).filter(|pending| match pending.peek() {
                None => true,
                Some(Ok(value)) => fresh(value),
                Some(Err(failed)) => failed.at.elapsed() < failure_ttl,
            });
            match reusable {
                Some(pending) => pending.clone(),
                None => {
                    let task = start();
                    let pending = async move {
                        let result = match task.await {
                            Ok(result) => result.map(Arc::new),
                            Err(e) => Err(ServeError::Internal(e.to_string())),
                        };
                        result.map_err(|error| Failed {
                            error,
                            at: Instant::now(),
                        })
                    }
                    .boxed()
                    .shared();
                    map.insert(key.to_owned(), pending.clone());
                    pending
                }
            }
        };
        pending.await.map_err(|failed| failed.error)
    }

    /// The finished value of `key`, if there is one and it succeeded.
    pub(crate) fn ready(&self, key: &str) -> Option<Arc<T>> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(key)?.peek()? {
            Ok(value) => Some(value.clone()),
            Err(_) => None,
        }
    }

    /// Replaces the value of `key` with a finished one (a re-rendered page).
    pub(crate) fn put(&self, key: &str, value: Arc<T>) {
        let ready = futures_util::future::ready(Ok(value)).boxed().shared();
        // A shared future remembers its output once polled; `peek` needs that.
        let _ = (&mut ready.clone()).now_or_never();
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_owned(), ready);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_waiters_share_one_build() {
        let flights = Arc::new(Flights::<usize>::default());
        let builds = Arc::new(AtomicUsize::new(0));
        let mut waiters = Vec::new();
        for _ in 0..50 {
            let flights = flights.clone();
            let builds = builds.clone();
            waiters.push(tokio::spawn(async move {
                flights
                    .get(
                        "k",
                        |_| true,
                        Duration::ZERO,
                        || {
                            tokio::spawn(async move {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                                Ok(builds.fetch_add(1, Ordering::SeqCst) + 7)
                            })
                        },
                    )
                    .await
            }));
        }
        for waiter in waiters {
            assert_eq!(*waiter.await.unwrap().unwrap(), 7);
        }
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert_eq!(flights.ready("k").as_deref(), Some(&7));
    }

    #[tokio::test]
    async fn stale_values_and_failures_are_rebuilt() {
        let flights = Flights::<u32>::default();
        let first = flights
            .get(
                "k",
                |_| true,
                Duration::ZERO,
                || tokio::spawn(async { Ok(1) }),
            )
            .await;
        assert_eq!(*first.unwrap(), 1);
        // Fresh: reused, the new build is not run.
        let again = flights
            .get(
                "k",
                |_| true,
                Duration::ZERO,
                || tokio::spawn(async { Ok(2) }),
            )
            .await;
        assert_eq!(*again.unwrap(), 1);
        // Stale: rebuilt.
        let rebuilt = flights
            .get(
                "k",
                |_| false,
                Duration::ZERO,
                || tokio::spawn(async { Ok(3) }),
            )
            .await;
        assert_eq!(*rebuilt.unwrap(), 3);
        let failed = flights
            .get(
                "f",
                |_| true,
                Duration::ZERO,
                || tokio::spawn(async { Err(ServeError::Internal("boom".into())) }),
            )
            .await;
        assert!(failed.is_err());
        assert!(flights.ready("f").is_none());
        let retried = flights
            .get(
                "f",
                |_| true,
                Duration::ZERO,
                || tokio::spawn(async { Ok(4) }),
            )
            .await;
        assert_eq!(*retried.unwrap(), 4);
        flights.put("k", Arc::new(9));
        assert_eq!(flights.ready("k").as_deref(), Some(&9));
    }

    #[tokio::test]
    async fn failures_are_answered_again_within_their_ttl() {
        let flights = Flights::<u32>::default();
        let fail = || tokio::spawn(async { Err(ServeError::Internal("down".into())) });
        let builds = AtomicUsize::new(0);
        let counted = |result: Result<u32, ServeError>| {
            builds.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move { result })
        };
        let hour = Duration::from_secs(3600);
        assert!(flights.get("f", |_| true, hour, fail).await.is_err());
        // Within the TTL: the same failure, no new build.
        let again = flights.get("f", |_| true, hour, || counted(Ok(1))).await;
        assert!(matches!(again, Err(ServeError::Internal(m)) if m == "down"));
        assert_eq!(builds.load(Ordering::SeqCst), 0);
        // Past it (a TTL the failure is older than): built again.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let later = flights
            .get("f", |_| true, Duration::from_millis(10), || counted(Ok(2)))
            .await;
        assert_eq!(*later.unwrap(), 2);
        assert_eq!(builds.load(Ordering::SeqCst), 1);
    }
}
