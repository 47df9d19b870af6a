//! What the proxy presented and served, for a front-end that reports it (`vari install`
//! prints which variant it installed and why): one [`Served`] per presented choice and per
//! downloaded file, one [`HiddenVersion`] per version no wheel of which was shown, and one
//! [`UpstreamFailure`] per distinct upstream failure that answered a request with an error.

use std::collections::HashMap;
use std::sync::Mutex;

use vari_select::{ShownBecause, VersionReport};

/// A wheel the proxy presented in place of others, or a file downloaded through it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The project, normalised.
    pub project: String,
    /// The version.
    pub version: String,
    /// The file name the installer saw (a variant wheel's name without its label).
    pub shown_as: String,
    /// The file's name upstream.
    pub original: String,
    /// The variant label; `None` for a non-variant file.
    pub label: Option<String>,
    /// Why this file was presented, as data: what a front-end words (`vari install` with its
    /// own vocabulary, without selecting again).
    pub because: ShownBecause,
    /// Why this file was presented, in the proxy's few words (its log line's).
    pub why: String,
    /// Whether an installer downloaded it through the proxy.
    pub downloaded: bool,
}

/// A version none of whose files was shown, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenVersion {
    /// The project, normalised.
    pub project: String,
    /// The version.
    pub version: String,
    /// Why no wheel fits the target, as data: the selector's report of the version (every
    /// file's fate, and what the variants need).
    pub report: VersionReport,
    /// Why no wheel fits the target, worded to follow "{project} {version}": when hardware
    /// would change that, which hardware its variants are built for and why the target lacks
    /// it, as `vari select` says it ("has no build for this machine: builds for NVIDIA GPUs
    /// (cu128), and this machine has no NVIDIA driver (…)").
    pub why: String,
}

/// An upstream source that could not be read while answering an installer: the request got
/// an error status, and the installer says only that nothing matched; a front-end names the
/// cause from this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamFailure {
    /// What was asked for: a project, a file, the project list.
    pub what: String,
    /// What failed, on one line, naming the upstream URL.
    pub message: String,
}

/// How many distinct upstream failures are kept: an installer retrying against a dead index
/// repeats the same few, and a hostile or broken one must not grow the journal without end.
const MAX_FAILURES: usize = 64;

/// Every entry once, in the order first seen; a later entry for the same file updates it.
#[derive(Default)]
pub(crate) struct Journal {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    served: Vec<Served>,
    by_file: HashMap<(String, String), usize>,
    hidden: Vec<HiddenVersion>,
    hidden_by_version: HashMap<(String, String), usize>,
    failures: Vec<UpstreamFailure>,
}

impl Journal {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a presented choice; true when it is new or differs from the last one recorded
    /// for the file (worth logging at `info`). A file already downloaded stays downloaded.
    pub(crate) fn choice(&self, mut served: Served) -> bool {
        let mut inner = self.lock();
        let key = (served.project.clone(), served.original.clone());
        match inner.by_file.get(&key).copied() {
            Some(at) => {
                let known = &mut inner.served[at];
                served.downloaded |= known.downloaded;
                let changed = *known != served;
                *known = served;
                changed
            }
            None => {
                let at = inner.served.len();
                inner.served.push(served);
                inner.by_file.insert(key, at);
                true
            }
        }
    }

    /// Marks a file downloaded, recording `entry()` first when the file was not a choice.
    pub(crate) fn downloaded(&self, project: &str, original: &str, entry: impl FnOnce() -> Served) {
        let mut inner = self.lock();
        let key = (project.to_owned(), original.to_owned());
        match inner.by_file.get(&key).copied() {
            Some(at) => inner.served[at].downloaded = true,
            None => {
                let at = inner.served.len();
                let mut served = entry();
                served.downloaded = true;
                inner.served.push(served);
                inner.by_file.insert(key, at);
            }
        }
    }

    /// Records a hidden version; true when new or changed.
    pub(crate) fn hidden(&self, hidden: HiddenVersion) -> bool {
        let mut inner = self.lock();
        let key = (hidden.project.clone(), hidden.version.clone());
        match inner.hidden_by_version.get(&key).copied() {
            Some(at) => {
                let changed = inner.hidden[at] != hidden;
                inner.hidden[at] = hidden;
                changed
            }
            None => {
                let at = inner.hidden.len();
                inner.hidden.push(hidden);
                inner.hidden_by_version.insert(key, at);
                true
            }
        }
    }

    /// Records an upstream failure, once however often it repeats; beyond [`MAX_FAILURES`]
    /// distinct ones, the rest are dropped (the log has them).
    pub(crate) fn upstream_failed(&self, failure: UpstreamFailure) {
        let mut inner = self.lock();
        if inner.failures.len() < MAX_FAILURES && !inner.failures.contains(&failure) {
            inner.failures.push(failure);
        }
    }

    pub(crate) fn upstream_failures(&self) -> Vec<UpstreamFailure> {
        self.lock().failures.clone()
    }

    pub(crate) fn served(&self) -> Vec<Served> {
        self.lock().served.clone()
    }

    pub(crate) fn hidden_versions(&self) -> Vec<HiddenVersion> {
        self.lock().hidden.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(original: &str, label: Option<&str>) -> Served {
        Served {
            project: "p".into(),
            version: "1.0".into(),
            shown_as: "p-1.0-py3-none-any.whl".into(),
            original: original.into(),
            label: label.map(str::to_owned),
            because: ShownBecause::NoVariantsForTags,
            why: "best".into(),
            downloaded: false,
        }
    }

    #[test]
    fn choices_are_kept_once_and_downloads_stick() {
        let journal = Journal::default();
        assert!(journal.choice(entry("p-1.0-py3-none-any-a.whl", Some("a"))));
        assert!(!journal.choice(entry("p-1.0-py3-none-any-a.whl", Some("a"))));
        journal.downloaded("p", "p-1.0-py3-none-any-a.whl", || unreachable!());
        // A later presentation of the same choice keeps the download.
        assert!(!journal.choice(entry("p-1.0-py3-none-any-a.whl", Some("a"))));
        journal.downloaded("p", "p-1.0.tar.gz", || entry("p-1.0.tar.gz", None));
        let served = journal.served();
        assert_eq!(served.len(), 2);
        assert!(served.iter().all(|s| s.downloaded));
        assert_eq!(served[1].original, "p-1.0.tar.gz");
    }

    #[test]
    fn upstream_failures_are_kept_once_and_bounded() {
        let journal = Journal::default();
        let failure = |n: usize| UpstreamFailure {
            what: format!("p{n}"),
            message: "upstream: http://127.0.0.1:9/simple/p/: connection refused".into(),
        };
        journal.upstream_failed(failure(0));
        journal.upstream_failed(failure(0));
        assert_eq!(journal.upstream_failures(), [failure(0)]);
        for n in 0..MAX_FAILURES * 2 {
            journal.upstream_failed(failure(n));
        }
        assert_eq!(journal.upstream_failures().len(), MAX_FAILURES);
    }

    #[test]
    fn hidden_versions_update_in_place() {
        let journal = Journal::default();
        let hidden = |why: &str| HiddenVersion {
            project: "p".into(),
            version: "2.0".into(),
            report: VersionReport {
                version: "2.0".parse().unwrap(),
                files: Vec::new(),
                variants: Vec::new(),
                needs: Vec::new(),
                metadata_from: None,
            },
            why: why.into(),
        };
        assert!(journal.hidden(hidden("a")));
        assert!(!journal.hidden(hidden("a")));
        assert!(journal.hidden(hidden("b")));
        assert_eq!(journal.hidden_versions(), [hidden("b")]);
    }
}
