//! Work done while uv resolves: uv takes tens of milliseconds, during which vari would wait
//! and then list the pinned releases' files one after another. So while uv runs, each
//! requirement's files are listed for the version uv most likely pins (the existing lock's pin
//! when there is one, which uv prefers; else the highest its specifiers allow, pre-releases
//! only when asked for, one with a file some target can use),
//! and for a release with variants the proxy builds its union page; when uv is done, a pin
//! whose release was listed this way takes that listing, and only the others are listed then.
//!
//! A listing is the same function of the release whenever it is made ([`locked_release_of`]:
//! the targets that pinned it are filled in afterwards), so taking it changes nothing in the
//! lock. A wrong guess costs the work and nothing more; the guessing stops (whatever is under
//! way is dropped) the moment uv is done, so it never makes the resolution wait, and its
//! errors are left for the listing after uv to meet and report.
//!
//! A wheel's METADATA is taken ahead only when the proxy keeps it or the index offers it as
//! `.metadata`: one that needs range reads of the wheel is left for after uv, which has the
//! proxy read the wheel it picks ([`Texts::Ahead`]), so that no wheel is read twice.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Mutex;

use futures_util::StreamExt;
use pep440_rs::Version;
use vari_client::IndexClient;
use vari_core::ordering::SelectionOptions;
use vari_lock::LockedRelease;
use vari_proxy::RunningProxy;
use vari_select::Request;

use crate::lock_files::{locked_release_of, LockFilesError, LockFilesTarget, PinnedRelease, Texts};

/// Releases listed ahead, by normalised name and version.
#[derive(Default)]
pub(super) struct Prefetched(Mutex<HashMap<(String, Version), LockedRelease>>);

impl Prefetched {
    /// The listing of `pin`'s release, when it was made ahead: with the pin's own name,
    /// version text and targets, as a listing made now would have them.
    pub(super) fn take(&self, pin: &PinnedRelease) -> Option<LockedRelease> {
        let version: Version = pin.version.parse().ok()?;
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut release = map.remove(&(pin.name.clone(), version.clone()))?;
        release.name = pin.name.clone();
        release.version = version;
        release.targets = pin.targets.clone();
        Some(release)
    }

    fn put(&self, name: String, version: Version, release: LockedRelease) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.insert((name, version), release);
    }
}

/// What the guesses need.
pub(super) struct Guessing<'a> {
    pub(super) client: &'a IndexClient,
    /// The union proxy, asked to build the union page of a release with variants.
    pub(super) proxy: &'a RunningProxy,
    pub(super) requirements: &'a [String],
    /// The pins uv is told to prefer (an existing lock's): name to version.
    pub(super) preferences: &'a std::collections::BTreeMap<String, String>,
    pub(super) pre: bool,
    /// The Python uv resolves for (a universal resolution's lowest): a version whose files all
    /// require another is not uv's pick. `None`: the Python uv finds.
    pub(super) python: Option<Version>,
    pub(super) targets: &'a [LockFilesTarget],
    pub(super) selection: &'a SelectionOptions,
}

/// Runs `until` (uv) and, meanwhile, lists ahead into `into`; returns `until`'s output as
/// soon as it is ready.
pub(super) async fn while_running<T>(
    until: impl Future<Output = T>,
    guessing: &Guessing<'_>,
    into: &Prefetched,
) -> T {
    let guesses = async {
        let concurrency = guessing.client.settings().concurrency.max(1);
        futures_util::stream::iter(guessing.requirements)
            .for_each_concurrent(concurrency, |text| guess(guessing, text, into))
            .await;
        // Done early: wait for uv.
        std::future::pending::<()>().await
    };
    tokio::pin!(until, guesses);
    tokio::select! {
        biased;
        output = &mut until => output,
        () = &mut guesses => unreachable!("the guesses never finish on their own"),
    }
}

/// The versions to try, most likely first, two at most: `preferred` (an existing lock's pin)
/// when the project lists it and the requirement allows it, then the highest the
/// requirement allows (pre-releases only with `pre`).
fn candidates(
    versions: &BTreeSet<&Version>,
    request: &Request,
    pre: bool,
    preferred: Option<Version>,
) -> Vec<Version> {
    let preferred = preferred.filter(|v| versions.contains(v) && request.specifiers().contains(v));
    let highest = versions
        .iter()
        .rev()
        .filter(|v| request.specifiers().contains(v) && (pre || !v.any_prerelease()))
        .filter(|v| Some(**v) != preferred.as_ref())
        .map(|v| (*v).clone());
    preferred
        .clone()
        .into_iter()
        .chain(highest)
        .take(2)
        .collect()
}

/// Whether one of a version's `files` can be used on `python` (its `Requires-Python`, when
/// the index gives one, allows it); any version when `python` is not known.
fn admits<'a>(
    mut files: impl Iterator<Item = &'a vari_client::IndexFile>,
    python: Option<&Version>,
) -> bool {
    let Some(python) = python else {
        return true;
    };
    files.any(|file| {
        file.requires_python
            .as_ref()
            .is_none_or(|specifiers| specifiers.contains(python))
    })
}

/// Lists the release of `requirement` that uv most likely pins.
async fn guess(guessing: &Guessing<'_>, requirement: &str, into: &Prefetched) {
    let Ok(request) = Request::parse(requirement) else {
        return;
    };
    let Ok(project) = guessing.client.project(request.name()).await else {
        return;
    };
    let preferred: Option<Version> = guessing
        .preferences
        .get(request.name().as_str())
        .and_then(|v| v.parse().ok());
    let versions: BTreeSet<&Version> = project
        .versions()
        .into_iter()
        .filter(|v| admits(project.files_of(v), guessing.python.as_ref()))
        .collect();
    for version in candidates(&versions, &request, guessing.pre, preferred) {
        let pin = PinnedRelease {
            name: request.name().to_string(),
            version: version.to_string(),
            targets: Vec::new(),
        };
        let listed = locked_release_of(
            guessing.client,
            Texts::Ahead(guessing.proxy),
            &project,
            &pin,
            guessing.targets,
            guessing.selection,
        )
        .await;
        let release = match listed {
            Ok(release) => release,
            // Left for after uv, which has the proxy read the wheel it picks; the page (a
            // union page reads its variants' METADATA) is built now all the same.
            Err(LockFilesError::Deferred { .. }) => {
                let _ = guessing.proxy.union_view(request.name().as_str()).await;
                return;
            }
            // A version none of the targets can use is not uv's pick: the next one down.
            Err(_) => continue,
        };
        if release.variants_json.is_some() {
            // Built now, the page is at hand when the resolution is verified.
            let _ = guessing.proxy.union_view(request.name().as_str()).await;
        }
        into.put(pin.name, version, release);
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(name: &str, version: &str) -> LockedRelease {
        LockedRelease {
            name: name.into(),
            version: version.parse().unwrap(),
            index: Some("https://example.com/simple/".into()),
            wheels: Vec::new(),
            sdist: None,
            variants_json: None,
            requires_dist: vec!["b>=1".into()],
            requires_python: None,
            targets: Vec::new(),
        }
    }

    fn pin(name: &str, version: &str, targets: &[&str]) -> PinnedRelease {
        PinnedRelease {
            name: name.into(),
            version: version.into(),
            targets: targets.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn the_preferred_pin_is_tried_first_then_the_highest_allowed() {
        let parsed: Vec<Version> = ["1.0", "1.5", "2.0", "3.0rc1"]
            .iter()
            .map(|v| v.parse().unwrap())
            .collect();
        let versions: BTreeSet<&Version> = parsed.iter().collect();
        let texts = |found: Vec<Version>| -> Vec<String> {
            found.iter().map(ToString::to_string).collect()
        };
        let any = Request::parse("a").unwrap();
        assert_eq!(
            texts(candidates(&versions, &any, false, None)),
            ["2.0", "1.5"]
        );
        assert_eq!(
            texts(candidates(&versions, &any, true, None)),
            ["3.0rc1", "2.0"]
        );
        let kept = Some("1.0".parse().unwrap());
        assert_eq!(
            texts(candidates(&versions, &any, false, kept)),
            ["1.0", "2.0"]
        );
        let highest = Some("2.0".parse().unwrap());
        assert_eq!(
            texts(candidates(&versions, &any, false, highest)),
            ["2.0", "1.5"]
        );
        // A preference the project does not list, or the requirement excludes, is not tried.
        let below = Request::parse("a>=1.5,<2").unwrap();
        let kept = Some("1.0".parse().unwrap());
        assert_eq!(texts(candidates(&versions, &below, false, kept)), ["1.5"]);
        let gone = Some("0.9".parse().unwrap());
        assert_eq!(
            texts(candidates(&versions, &any, false, gone)),
            ["2.0", "1.5"]
        );
    }

    #[test]
    fn a_version_whose_files_all_require_another_python_is_not_guessed() {
        let file = |name: &str, requires: Option<&str>| {
            let url = url::Url::parse(&format!("https://files.example/{name}")).unwrap();
            vari_client::IndexFile {
                filename: name.to_owned(),
                kind: vari_client::FileKind::Wheel(name.parse().unwrap()),
                url: url.clone(),
                hashes: vari_client::Hashes::default(),
                requires_python: requires.map(|r| r.parse().unwrap()),
                yanked: None,
                core_metadata: vari_client::CoreMetadata::Absent,
                size: None,
                upload_time: None,
                source: vari_client::FileSource::Index(url),
            }
        };
        let newest = [file("numpylike-2.5-cp312-cp312-any.whl", Some(">=3.11"))];
        let older = [
            file("numpylike-2.2-cp310-cp310-any.whl", Some(">=3.10")),
            file("numpylike-2.2-cp312-cp312-any.whl", None),
        ];
        let py310: Version = "3.10".parse().unwrap();
        assert!(!admits(newest.iter(), Some(&py310)));
        assert!(admits(older.iter(), Some(&py310)));
        assert!(admits(newest.iter(), Some(&"3.12".parse().unwrap())));
        assert!(admits(newest.iter(), None));
    }

    #[test]
    fn a_release_listed_ahead_is_taken_once_as_the_pin_names_it() {
        let prefetched = Prefetched::default();
        prefetched.put("a".into(), "2.0.0".parse().unwrap(), listed("a", "2.0.0"));
        assert!(prefetched.take(&pin("a", "1.0", &["cpu"])).is_none());
        assert!(prefetched.take(&pin("b", "2.0", &["cpu"])).is_none());
        // The same version however uv writes it; the lock gets uv's text and the targets.
        let taken = prefetched.take(&pin("a", "2.0", &["cpu", "a100"])).unwrap();
        assert_eq!(taken.version.to_string(), "2.0");
        assert_eq!(taken.targets, ["cpu", "a100"]);
        assert_eq!(taken.requires_dist, ["b>=1"]);
        assert!(prefetched.take(&pin("a", "2.0", &["cpu"])).is_none());
        assert!(prefetched.take(&pin("a", "not a version", &[])).is_none());
    }
}
