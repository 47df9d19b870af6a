//! Progress on stderr, for every command that can take more than a second: what it is doing
//! and how far, drawn only when stderr is a terminal and the command was not asked for quiet
//! (`--quiet`) or machine-readable output (`--json`): logs, pipes, scripts and tests see
//! nothing, so the output of a command is the same with or without it. That rule is
//! [`shown`], and this module the only place that asks it.
//!
//! - [`Bytes`]: a transfer of a known or unknown number of bytes (`mirror`, `download`). A
//!   total that is not known is not shown: the bar shows what arrived and the rate, never
//!   `110 MiB/0 B`; a total found too small (the sizes an index gives were not all there)
//!   turns into the same unknown-total form.
//! - [`Count`]: steps of a known number (`index build` reading files, `wheel split` per family).
//! - [`Spinner`]: a phase whose length nobody knows (`lock` while uv resolves), with what it is
//!   doing and the time spent.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a spinner moves.
const TICK: Duration = Duration::from_millis(120);

/// Whether `--quiet` or `--json` was given ([`configure`]).
static QUIET: AtomicBool = AtomicBool::new(false);

/// The rule: progress is drawn on a terminal, unless the command was asked to be quiet or to
/// print JSON (whose readers are programs).
pub(crate) fn shown(terminal: bool, quiet: bool, json: bool) -> bool {
    terminal && !quiet && !json
}

/// Records what the command line asked for, once, before the command runs.
pub(crate) fn configure(quiet: bool, json: bool) {
    QUIET.store(!shown(true, quiet, json), Ordering::Relaxed);
}

/// Whether progress is drawn at all ([`shown`] for stderr and the command line).
pub(crate) fn on_terminal() -> bool {
    shown(
        std::io::stderr().is_terminal(),
        QUIET.load(Ordering::Relaxed),
        false,
    )
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
        // Drawn now, before the first bytes arrive (a slow first response).
        self.bar.tick();
    }

    /// A bar drawn now for files of `sizes` (`sync` and `export` fetching a lock's files),
    /// with `what` before it: with their total when the lock gives every size, else bytes
    /// received only ([`total_of`]).
    /// No files, no bar.
    pub(crate) fn for_files(what: String, sizes: impl IntoIterator<Item = Option<u64>>) -> Self {
        let this = Self::hidden();
        let sizes: Vec<Option<u64>> = sizes.into_iter().collect();
        if !sizes.is_empty() {
            this.set_message(what);
            this.start(total_of(sizes));
        }
        this
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

/// The total of `sizes` when every one is known and the sum is not zero: a sum of the known
/// ones would be a total found too small, and a zero total reads `X/0 B`.
pub(crate) fn total_of(sizes: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
    sizes
        .into_iter()
        .try_fold(0u64, |sum, size| Some(sum.saturating_add(size?)))
        .filter(|&total| total > 0)
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

    /// Starts drawing `total` steps of `what`; again for the next phase (from step 0).
    pub(crate) fn start(&self, what: &str, total: u64) {
        if !on_terminal() || total == 0 {
            return;
        }
        self.bar.set_style(style(COUNT_TEMPLATE));
        self.bar.set_message(what.to_owned());
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.set_draw_target(ProgressDrawTarget::stderr());
        // Drawn now: a phase that ends before the first tick was still shown.
        self.bar.tick();
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

/// `lock` and `mirror` resolving requirements ([`vari_lockmaker::LockingProgress`]): how many
/// resolutions are done (one per target, or per group of alike targets), then how many pinned
/// releases' files are listed, each phase a [`Count`] naming the last one done.
pub(crate) struct Resolving {
    bar: Count,
    /// Listing has started: a resolution done now (another group of targets, resolved at
    /// the same time) is not a step of the listing.
    listing: AtomicBool,
}

impl Resolving {
    /// Drawn once resolving starts.
    pub(crate) fn new() -> Self {
        Self {
            bar: Count::hidden(),
            listing: AtomicBool::new(false),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.bar.finish();
    }
}

impl vari_lockmaker::LockingProgress for Resolving {
    fn resolving(&self, total: usize) {
        self.listing.store(false, Ordering::Relaxed);
        self.bar
            .start("resolving with uv through vari's proxy", total as u64);
    }

    fn resolved(&self, name: &str) {
        if self.listing.load(Ordering::Relaxed) {
            return;
        }
        self.bar.inc();
        self.bar
            .set_message(format!("resolving with uv: {name} resolved"));
    }

    fn listing(&self, total: usize) {
        self.listing.store(true, Ordering::Relaxed);
        self.bar
            .start("listing the files of each pinned release", total as u64);
    }

    fn listed(&self, name: &str) {
        self.bar.inc();
        self.bar
            .set_message(format!("listing the files of each pinned release: {name}"));
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

/// What `sync`, `install -r` and `export` show while a lock's files are fetched and installed
/// (`vari_install::sync`'s events): on a terminal, the bytes fetched and checked of the lock's
/// sizes (the installer's own output follows); the environment named just before it changes;
/// a note while another run holds it.
pub(crate) struct LockFiles<'a> {
    environment: Option<&'a vari_install::ChangedEnvironment>,
    bar: std::sync::OnceLock<Bytes>,
}

impl<'a> LockFiles<'a> {
    /// For a run that changes `environment` (`None`: one that changes none, or names none).
    pub(crate) fn new(environment: Option<&'a vari_install::ChangedEnvironment>) -> Self {
        Self {
            environment,
            bar: std::sync::OnceLock::new(),
        }
    }
}

impl vari_install::sync::SyncEvents for LockFiles<'_> {
    fn waiting(&self, lock: &std::path::Path) {
        eprintln!("{}", vari_install::sync::waiting_note(lock));
    }

    fn fetching(&self, files: &[&vari_install::sync::LockedFile]) {
        let what = format!("fetching {}", crate::table::count(files.len(), "file"));
        // Set once per run: a run fetches once.
        let _ = self
            .bar
            .set(Bytes::for_files(what, files.iter().map(|f| f.size)));
    }

    fn fetched(&self, bytes: u64) {
        if let Some(bar) = self.bar.get() {
            bar.inc(bytes);
        }
    }

    fn fetch_done(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish();
        }
    }

    fn changing(&self) {
        if let Some(environment) = self.environment {
            crate::error::note(&environment.to_string());
        }
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
    fn progress_is_drawn_on_a_terminal_unless_quiet_or_json() {
        assert!(shown(true, false, false));
        assert!(!shown(false, false, false));
        assert!(!shown(true, true, false));
        assert!(!shown(true, false, true));
        assert!(!shown(false, true, true));
    }

    #[test]
    fn a_total_is_known_only_when_every_size_is() {
        assert_eq!(total_of([Some(10), Some(32)]), Some(42));
        // One file without a size: bytes received only, never a total found too small.
        assert_eq!(total_of([Some(10), None, Some(32)]), None);
        // Nothing to count is no total either (`X/0 B`).
        assert_eq!(total_of([]), None);
        assert_eq!(total_of([Some(0)]), None);
        assert_eq!(total_of([Some(u64::MAX), Some(1)]), Some(u64::MAX));
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
