//! Bodies the caller reads as they arrive (downloads, the proxy's pass-through, hashing a
//! file): no size ceiling and no overall deadline, since a large wheel over a slow link
//! legitimately takes long, but a low-speed rule like curl's `--speed-limit`/`--speed-time`:
//! each window of [`Limits::low_speed_time`] must bring at least [`Limits::low_speed_bytes`],
//! or the transfer ends. The read timeout alone stops a server that goes silent; this stops
//! one that drips a byte just inside it.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use url::Url;

use crate::error::{chain, ClientError};
use crate::limits::Limits;

/// An open response whose body is read by the caller, holding its slot among the parallel
/// requests until dropped.
pub(crate) struct Streaming {
    url: Url,
    response: reqwest::Response,
    read_timeout: Duration,
    speed: SpeedCheck,
    _permit: OwnedSemaphorePermit,
}

impl Streaming {
    pub(super) fn new(
        url: &Url,
        response: reqwest::Response,
        limits: &Limits,
        read_timeout: Duration,
        permit: OwnedSemaphorePermit,
    ) -> Self {
        Self {
            url: url.clone(),
            response,
            read_timeout,
            speed: SpeedCheck::new(
                limits.low_speed_bytes,
                limits.low_speed_time,
                Instant::now(),
            ),
            _permit: permit,
        }
    }

    /// The `Content-Length` the server announced (read it before the first chunk: afterwards
    /// it counts what is left).
    pub(crate) fn content_length(&self) -> Option<u64> {
        self.response.content_length()
    }

    /// The next bytes; `None` at the end. A body that breaks, stops for longer than the read
    /// timeout, or falls below the low-speed rule is an error naming the URL.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, ClientError> {
        loop {
            let next = tokio::time::timeout_at(self.speed.window_end(), self.response.chunk());
            match next.await {
                // A body that is complete is never judged: its last window may be short.
                Ok(Ok(None)) => return Ok(None),
                Ok(Ok(Some(chunk))) => {
                    self.speed
                        .received(chunk.len() as u64, Instant::now())
                        .map_err(|s| self.too_slow(s))?;
                    return Ok(Some(chunk));
                }
                Ok(Err(e)) => return Err(self.body_error(e)),
                // The window closed with nothing more arriving: judge it, then wait on. The
                // dropped `chunk()` future had taken nothing from the body, so nothing is lost.
                Err(_) => self
                    .speed
                    .received(0, Instant::now())
                    .map_err(|s| self.too_slow(s))?,
            }
        }
    }

    fn too_slow(&self, slow: Slow) -> ClientError {
        ClientError::TooSlow {
            url: self.url.clone(),
            received: slow.received,
            bytes: self.speed.min_bytes,
            window: self.speed.window,
        }
    }

    fn body_error(&self, error: reqwest::Error) -> ClientError {
        if error.is_timeout() {
            return ClientError::Timeout {
                url: self.url.clone(),
                timeout: self.read_timeout,
            };
        }
        ClientError::Transport {
            url: self.url.clone(),
            message: chain(&error.without_url()),
        }
    }
}

/// The low-speed rule over consecutive windows: each must bring `min_bytes`.
#[derive(Debug)]
struct SpeedCheck {
    min_bytes: u64,
    window: Duration,
    started: Instant,
    in_window: u64,
}

/// A window that brought too little.
#[derive(Debug, PartialEq, Eq)]
struct Slow {
    received: u64,
}

impl SpeedCheck {
    fn new(min_bytes: u64, window: Duration, now: Instant) -> Self {
        Self {
            min_bytes,
            window,
            started: now,
            in_window: 0,
        }
    }

    fn window_end(&self) -> Instant {
        self.started + self.window
    }

    /// Counts `len` bytes that arrived at `now`; once the window is over, judges it and opens
    /// the next. Bytes that arrive exactly as a window closes count for it.
    fn received(&mut self, len: u64, now: Instant) -> Result<(), Slow> {
        self.in_window = self.in_window.saturating_add(len);
        if now < self.window_end() {
            return Ok(());
        }
        if self.in_window < self.min_bytes {
            return Err(Slow {
                received: self.in_window,
            });
        }
        self.started = now;
        self.in_window = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_window_must_bring_enough() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut check = SpeedCheck::new(100, s(10), t0);
        // Plenty in the first window, however it is spread.
        check.received(60, t0 + s(1)).unwrap();
        check.received(60, t0 + s(9)).unwrap();
        check.received(0, t0 + s(10)).unwrap();
        // The next window starts empty: a drip is judged at its end, not before.
        check.received(1, t0 + s(15)).unwrap();
        check.received(1, t0 + s(19)).unwrap();
        assert_eq!(check.received(0, t0 + s(20)), Err(Slow { received: 2 }));
    }
}
