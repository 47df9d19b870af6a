//! Rates for things that can repeat hundreds of times a second: a log line at most once per
//! interval (with how many it stands for), and the back-off between failed accepts.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a repeating event (a refused `Host`, a failed accept) may be logged.
pub(crate) const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Counts events and says when one should be logged: the first at once, then at most one line
/// per interval, which reports the events since the previous line.
#[derive(Debug)]
pub(crate) struct Throttled {
    interval: Duration,
    state: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    last_line: Option<Instant>,
    /// Events since the last line, not yet reported.
    unreported: u64,
}

impl Throttled {
    pub(crate) fn new(interval: Duration) -> Self {
        Self {
            interval,
            state: Mutex::new(Window::default()),
        }
    }

    /// Records one event at `now`. `Some(n)`: log a line now, for `n` events (this one and
    /// those left unreported since the last line); `None`: stay quiet.
    pub(crate) fn record(&self, now: Instant) -> Option<u64> {
        let mut window = self.state.lock().unwrap_or_else(|e| e.into_inner());
        window.unreported += 1;
        let due = window
            .last_line
            .is_none_or(|last| now.saturating_duration_since(last) >= self.interval);
        if !due {
            return None;
        }
        window.last_line = Some(now);
        Some(std::mem::take(&mut window.unreported))
    }
}

/// The wait after a failed accept: 10 ms, doubling up to 1 s, back to 10 ms after a success.
/// Failed accepts are nearly always "too many open files" (EMFILE, ENFILE): retrying at once
/// would spin a core and fail again until connections close.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    pub(crate) const FIRST: Duration = Duration::from_millis(10);
    pub(crate) const MAX: Duration = Duration::from_secs(1);

    pub(crate) fn new() -> Self {
        Self { next: Self::FIRST }
    }

    /// The wait after one more failure.
    pub(crate) fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        wait
    }

    pub(crate) fn succeeded(&mut self) {
        self.next = Self::FIRST;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_interval_counting_the_quiet_ones() {
        let throttled = Throttled::new(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(throttled.record(start), Some(1));
        let lines: Vec<_> = (1..=500)
            .map(|i| throttled.record(start + Duration::from_millis(i)))
            .collect();
        assert!(lines.iter().all(Option::is_none));
        // The next line after the interval reports all of them and itself.
        assert_eq!(throttled.record(start + Duration::from_secs(10)), Some(501));
        assert_eq!(throttled.record(start + Duration::from_secs(11)), None);
        assert_eq!(throttled.record(start + Duration::from_secs(25)), Some(2));
    }

    #[test]
    fn backoff_doubles_to_a_second_and_resets() {
        let mut backoff = Backoff::new();
        let waits: Vec<_> = (0..10).map(|_| backoff.failed().as_millis()).collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        backoff.succeeded();
        assert_eq!(backoff.failed(), Duration::from_millis(10));
    }
}
