//! The property of the `lock` fuzz target, also run by vari-lock's stable round-trip test
//! (`crates/vari-lock/tests/round_trip.rs`). The lock reader (`vari_lock::read_lock`) on
//! arbitrary text: never panic; whatever it accepts, the writer writes and the reader reads
//! back the same (one set of limits on both sides); and no string naming a file holds a line
//! break, a control character, whitespace or `#`, so nothing read from a lock can add a line
//! to an exported requirements file.

use vari_lock::limits::is_forbidden_char;

/// The property on one input: panics when it does not hold.
pub(crate) fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(lock) = vari_lock::read_lock(text) else {
        return;
    };
    for package in &lock.packages {
        for artifact in package.wheels.iter().chain(&package.sdist) {
            let named = [&artifact.name, &artifact.url, &artifact.path];
            for value in named.into_iter().flatten() {
                assert!(
                    !value
                        .chars()
                        .any(|c| is_forbidden_char(c) || c.is_whitespace()),
                    "{value:?} was read"
                );
            }
            for value in [&artifact.name, &artifact.path].into_iter().flatten() {
                assert!(!value.contains('#'), "{value:?} was read");
            }
        }
    }
    let written = vari_lock::write_lock(&lock)
        .unwrap_or_else(|e| panic!("a lock that was read is not written: {e}"));
    let again = vari_lock::read_lock(&written)
        .unwrap_or_else(|e| panic!("a written lock is not read: {e}\n{written}"));
    assert_eq!(again, lock, "{written}");
}
