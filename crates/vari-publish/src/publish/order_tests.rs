//! A build that shrinks a site, stopped after each single write or removal on a real directory
//! destination (as a kill would stop it): whatever the step, every page a client can request
//! names only files the site holds, as `index validate` checks them.

use std::sync::atomic::{AtomicUsize, Ordering};

use vari_test_support::wheels::TestWheel;

use super::*;
use crate::build::{build_into, BuildOptions, KnownHashes, NoProgress};
use crate::inputs::discover;
use crate::place::FilePlacement;
use crate::{validate, LocalSite};

/// A directory site that performs `budget` writes or removals, one at a time in the order
/// asked, and then stops.
struct Stopping {
    inner: DirectoryStore,
    budget: AtomicUsize,
}

impl Stopping {
    fn step(&self) -> Result<(), BuildError> {
        self.budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .map(|_| ())
            .map_err(|_| BuildError::Store {
                location: "site".to_owned(),
                problem: "stopped".to_owned(),
            })
    }
}

impl SiteStore for Stopping {
    fn locate(&self, path: &str) -> String {
        self.inner.locate(path)
    }
    fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, BuildError> {
        self.inner.read(path, limit)
    }
    fn contains(&self, path: &str) -> bool {
        self.inner.contains(path)
    }
    fn put_all(
        &self,
        files: &[&SiteFile],
        previous: &Stamps,
        done: &Done<'_>,
    ) -> Result<Vec<Put>, BuildError> {
        let mut puts = Vec::new();
        for file in files {
            self.step()?;
            puts.extend(self.inner.put_all(&[*file], previous, done)?);
        }
        Ok(puts)
    }
    fn remove_all(&self, paths: &[&str]) -> Result<usize, BuildError> {
        let mut removed = 0;
        for path in paths {
            self.step()?;
            removed += self.inner.remove_all(&[*path])?;
        }
        Ok(removed)
    }
    fn write_private(&self, path: &str, bytes: &[u8]) -> Result<(), BuildError> {
        self.inner.write_private(path, bytes)
    }
}

#[test]
fn a_shrinking_build_stopped_at_any_step_leaves_no_page_naming_a_missing_file() {
    let mut stop_after = 0;
    loop {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        std::fs::create_dir_all(&input).unwrap();
        TestWheel::new("a_pkg-1.0-py3-none-any.whl").write(&input);
        TestWheel::new("b_pkg-1.0-py3-none-any.whl").write(&input);
        TestWheel::new("b_pkg-2.0-py3-none-any.whl").write(&input);
        let site = dir.path().join("site");
        let options = BuildOptions {
            input: input.clone(),
            destination: Destination::Directory(site.clone()),
            placement: FilePlacement::Copy,
            progress: &NoProgress,
        };
        crate::build(&options).unwrap();
        // b-pkg goes: its pages and its files are removed.
        std::fs::remove_file(input.join("b_pkg-1.0-py3-none-any.whl")).unwrap();
        std::fs::remove_file(input.join("b_pkg-2.0-py3-none-any.whl")).unwrap();
        let store = Stopping {
            inner: DirectoryStore::new(&site, FilePlacement::Copy),
            budget: AtomicUsize::new(stop_after),
        };
        let finished = build_into(
            &options,
            discover(&input).unwrap(),
            &store,
            &KnownHashes::new(),
            &[],
        )
        .is_ok();
        let report = validate(&LocalSite::new(&site).unwrap()).unwrap();
        let errors: Vec<String> = report
            .problems
            .iter()
            .filter(|p| p.severity == crate::Severity::Error)
            .map(|p| format!("{}: {}", p.file, p.message))
            .collect();
        assert!(
            errors.is_empty(),
            "stopped after {stop_after} steps: {errors:?}"
        );
        if finished {
            assert!(!site.join("simple/b-pkg/index.json").exists());
            assert!(!site.join("files/b_pkg-1.0-py3-none-any.whl").exists());
            break;
        }
        stop_after += 1;
        assert!(stop_after < 100, "the build never finished");
    }
}
