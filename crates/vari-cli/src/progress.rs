//! Progress on stderr, for every command that can take more than a second: what it is doing
//! and how far, drawn only when stderr is a terminal (logs, pipes and tests see nothing, so the
//! output of a command is the same with or without it).
//!
//! - [`Bytes`]: a transfer of a known or unknown number of bytes (`mirror`, `download`). A
//!   total that is not known is not shown: the bar shows what arrived and the rate, never
//!   `110 MiB/0 B`; a total found too small (the sizes an index gives were not all there)
//!   turns into the same unknown-total form.
//! - [`Count`]: steps of a known number (`index build` reading files, `wheel split` per family).
//! - [`Spinner`]: a phase whose length nobody knows (`lock` while uv resolves), with what it is
//!   doing and the time spent.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a spinner moves.
const TICK: Duration = Duration::from_millis(120);

/// Whether progress is drawn at all: stderr is a terminal.
pub(crate) fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// The template of a byte bar: with the total when it is known, else what arrived and the rate.
pub(crate) fn bytes_template(total_known: bool) -> &'static str {
    if total_known {
        "{msg:>12} {wide_bar} {bytes:>10}/{total_bytes:10} {bytes_per_sec:>12} {eta}"
    } else {
        "{msg:>12} {spinner} {bytes:>10} {bytes_per_sec:>12} {elapsed}"
    }
}

/// The template of a counted bar: `what pos/len`.
const COUNT_TEMPLATE: &str = "{spinner} {msg} {pos}/{len} {wide_bar} {elapsed}";

/// The template of a spinner: what is being done, and for how long.
const SPINNER_TEMPLATE: &str = "{spinner} {msg} ({elapsed})";

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A bar drawn on stderr when it is a terminal, hidden otherwise.
fn bar(len: Option<u64>) -> ProgressBar {
    let bar = match len {
        Some(len) => ProgressBar::new(len),
        None => ProgressBar::no_length(),
    };
    bar.set_draw_target(match on_terminal() {
        true => ProgressDrawTarget::stderr(),
        false => ProgressDrawTarget::hidden(),
    });
    bar
}

/// A transfer of bytes (see the module docs).
pub(crate) struct Bytes {
    bar: ProgressBar,
}

impl Bytes {
    /// A bar not drawn yet: [`Self::start`] draws it.
    pub(crate) fn hidden() -> Self {
        Self {
            bar: ProgressBar::hidden(),
        }
    }

    /// Starts drawing, for `total` bytes when it is known.
    pub(crate) fn start(&self, total: Option<u64>) {
        if !on_terminal() {
            return;
        }
        self.bar.set_style(style(bytes_template(total.is_some())));
        match total {
            Some(total) => self.bar.set_length(total),
            None => self.bar.unset_length(),
        }
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
    }

    /// A bar for one file among several (`download`), in `group`.
    pub(crate) fn in_group(group: &MultiProgress, name: &str, total: Option<u64>) -> Self {
        let bar = group.add(ProgressBar::no_length());
        let this = Self { bar };
        this.bar.set_style(style(bytes_template(total.is_some())));
        if let Some(total) = total {
            this.bar.set_length(total);
        }
        this.bar.set_message(name.to_owned());
        this
    }

    /// The total is known now (a response said it).
    pub(crate) fn set_total(&self, total: u64) {
        if self.bar.length() != Some(total) {
            self.bar.set_style(style(bytes_template(true)));
            self.bar.set_length(total);
        }
    }

    /// `n` more bytes arrived.
    pub(crate) fn inc(&self, n: u64) {
        self.set_position(self.bar.position().saturating_add(n));
    }

    /// `done` bytes have arrived in all.
    pub(crate) fn set_position(&self, done: u64) {
        if self.bar.length().is_some_and(|total| done > total) {
            // The total was a guess, and too small: say nothing rather than something wrong.
            self.bar.set_style(style(bytes_template(false)));
            self.bar.unset_length();
        }
        self.bar.set_position(done);
    }

    /// What is shown before the bytes (`3/10 files`).
    pub(crate) fn set_message(&self, message: String) {
        self.bar.set_message(message);
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A group of bars drawn together on stderr when it is a terminal (one per download).
pub(crate) fn group() -> MultiProgress {
    MultiProgress::with_draw_target(match on_terminal() {
        true => ProgressDrawTarget::stderr(),
        false => ProgressDrawTarget::hidden(),
    })
}

/// Steps of a known number (see the module docs).
pub(crate) struct Count {
    bar: ProgressBar,
}

impl Count {
    /// A bar not drawn yet: [`Self::start`] draws it.
    pub(crate) fn hidden() -> Self {
        Self {
            bar: ProgressBar::hidden(),
        }
    }

    /// `total` steps of `what` (`reading … files`).
    pub(crate) fn new(what: &str, total: u64) -> Self {
        let this = Self::hidden();
        this.start(what, total);
        this
    }

    /// Starts drawing `total` steps of `what`.
    pub(crate) fn start(&self, what: &str, total: u64) {
        if !on_terminal() || total == 0 {
            return;
        }
        self.bar.set_style(style(COUNT_TEMPLATE));
        self.bar.set_length(total);
        self.bar.set_message(what.to_owned());
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
        self.bar.enable_steady_tick(TICK);
    }

    /// What the current step is.
    pub(crate) fn set_message(&self, what: String) {
        self.bar.set_message(what);
    }

    /// One more step is done.
    pub(crate) fn inc(&self) {
        self.bar.inc(1);
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A phase of unknown length (see the module docs); removed when dropped.
pub(crate) struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    /// Shows `what` is being done (`resolving 2 targets with uv`).
    pub(crate) fn new(what: impl Into<String>) -> Self {
        let bar = bar(None);
        bar.set_style(style(SPINNER_TEMPLATE));
        bar.set_message(what.into());
        if on_terminal() {
            bar.enable_steady_tick(TICK);
        }
        Self { bar }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_total_is_not_shown() {
        // `110 MiB/0 B` was a bar given 0 for a total nobody knew.
        let unknown = bytes_template(false);
        assert!(!unknown.contains("total_bytes") && !unknown.contains("eta"));
        assert!(!unknown.contains("bar}") && unknown.contains("{bytes"));
        let known = bytes_template(true);
        assert!(known.contains("{bytes:>10}/{total_bytes:10}") && known.contains("eta"));
        for template in [unknown, known, COUNT_TEMPLATE, SPINNER_TEMPLATE] {
            assert!(ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }

    #[test]
    fn a_total_found_too_small_becomes_unknown() {
        let bytes = Bytes {
            bar: ProgressBar::hidden(),
        };
        bytes.bar.set_length(100);
        bytes.inc(60);
        assert_eq!(bytes.bar.length(), Some(100));
        bytes.inc(60);
        assert_eq!(bytes.bar.length(), None);
        assert_eq!(bytes.bar.position(), 120);
        bytes.set_total(500);
        assert_eq!(bytes.bar.length(), Some(500));
    }
}
