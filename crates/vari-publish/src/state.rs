//! The build state: what an earlier build learned from each input, so that a rebuild opens only
//! new or changed files, and which site files it wrote, so that a rebuild removes the ones no
//! longer published.
//!
//! Kept in `SITE/.vari-index-state.json`. It is a cache: a missing, unreadable or foreign state
//! file only means every input is read again. What it learned from an input (its SHA-256, which
//! is published) is trusted while the input's [`Seal`] vouches for it, by the rule `vari sync`'s
//! records and the mirror's store follow ([`vari_fs::stamp`]): the input's stamp (size,
//! modification and change times, inode, device) is the one recorded, and its last change came
//! before the build that read it began. An input rewritten in place with its size and
//! modification time restored has a new change time, and is read again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vari_fs::Seal;

use crate::dist::DistFacts;
use crate::error::BuildError;
use crate::publish::{SiteStore, Stamps};
use crate::site::{CLASSES_DIR, FILES_DIR, SIMPLE_DIR};

/// The state file's name in the site directory.
pub(crate) const STATE_FILE: &str = ".vari-index-state.json";

/// Written into the file so that a future, different layout is recognised and ignored.
const FORMAT: &str = "vari-index-state/2";

/// The first format, whose inputs were trusted by size, modification time and inode alone (a
/// file rewritten in place with those kept was trusted, and its old hash published): its inputs
/// vouch for nothing and are read once more. Its outputs and stamps are still what the site
/// holds, and are kept, so that the first build of the new format still removes what it no
/// longer publishes and uploads only what changed.
const FORMAT_1: &str = "vari-index-state/1";

/// One input as last read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InputState {
    /// The input's seal when it was read: `"fingerprint"` and `"settled"`.
    #[serde(flatten)]
    pub(crate) seal: Seal,
    pub(crate) facts: DistFacts,
}

/// What is kept of a state file of [`FORMAT_1`].
#[derive(Debug, Deserialize)]
struct State1 {
    outputs: BTreeSet<String>,
    #[serde(default)]
    stamps: Stamps,
}

/// The format a state file declares.
#[derive(Debug, Deserialize)]
struct Header {
    format: String,
}

/// The whole state file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct State {
    format: String,
    /// By input file name.
    pub(crate) inputs: BTreeMap<String, InputState>,
    /// Site files this build wrote, relative to the site root, `/`-separated.
    pub(crate) outputs: BTreeSet<String>,
    /// What each output held when written (object stores compare it with their listing, so
    /// that unchanged objects are not uploaded again). Absent from older state files.
    #[serde(default)]
    pub(crate) stamps: Stamps,
}

impl Default for State {
    fn default() -> Self {
        Self {
            format: FORMAT.to_owned(),
            inputs: BTreeMap::new(),
            outputs: BTreeSet::new(),
            stamps: Stamps::new(),
        }
    }
}

impl State {
    /// The state of the site in `store`, or an empty one when there is none or it cannot be
    /// parsed (it is a cache). A state file that parses but names a path outside the site (or
    /// an input name that is not a plain file name), or is not a regular file, is an error: it
    /// was altered, and ignoring only the bad entries would still trust the rest of it (the
    /// hashes it remembers are published).
    pub(crate) fn load(store: &dyn SiteStore) -> Result<Self, BuildError> {
        let limit = vari_fs::InputKind::Metadata.limit();
        let Some(bytes) = store.read(STATE_FILE, limit)? else {
            return Ok(Self::default());
        };
        match parse(&bytes) {
            Ok(Some(state)) => Ok(state),
            Ok(None) => Ok(Self::default()),
            Err(StateProblem { key, problem }) => Err(BuildError::State {
                path: PathBuf::from(store.locate(STATE_FILE)),
                key,
                problem,
            }),
        }
    }

    /// Writes the state into `store`.
    pub(crate) fn save(&self, store: &dyn SiteStore) -> Result<(), BuildError> {
        // Serialising maps of strings and numbers cannot fail.
        let text = serde_json::to_vec(self).unwrap_or_default();
        store.write_private(STATE_FILE, &text)
    }
}

/// A state file entry that may not be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateProblem {
    /// The key path (`outputs[3]`, `inputs["…"]`).
    pub(crate) key: String,
    /// What is wrong with it.
    pub(crate) problem: String,
}

/// Parses a state file: `Ok(None)` for one that is not JSON or not this format (ignored, as a
/// cache is), an error for one whose entries name paths the build must never touch. One of the
/// first format gives its outputs and stamps, and no inputs.
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<State>, StateProblem> {
    let Ok(Header { format }) = serde_json::from_slice::<Header>(bytes) else {
        return Ok(None);
    };
    let state = match format.as_str() {
        FORMAT => serde_json::from_slice::<State>(bytes).ok(),
        FORMAT_1 => serde_json::from_slice::<State1>(bytes)
            .ok()
            .map(|old| State {
                outputs: old.outputs,
                stamps: old.stamps,
                ..State::default()
            }),
        _ => None,
    };
    let Some(state) = state else {
        return Ok(None);
    };
    for (index, output) in state.outputs.iter().enumerate() {
        check_output(output).map_err(|problem| StateProblem {
            key: format!("outputs[{index}] {:?}", output),
            problem,
        })?;
    }
    for output in state.stamps.keys() {
        check_output(output).map_err(|problem| StateProblem {
            key: format!("stamps[{output:?}]"),
            problem,
        })?;
    }
    for name in state.inputs.keys() {
        vari_fs::check_name(name).map_err(|e| StateProblem {
            key: format!("inputs[{name:?}]"),
            problem: e.to_string(),
        })?;
    }
    Ok(Some(state))
}

/// An output the build can have written: a plain relative path under `files/`, `simple/` or
/// (a mirror's classes) `t/`.
pub(crate) fn check_output(output: &str) -> Result<(), String> {
    vari_fs::check_relative(output).map_err(|e| e.to_string())?;
    let top = output.split('/').next().unwrap_or_default();
    if ![FILES_DIR, SIMPLE_DIR, CLASSES_DIR].contains(&top) {
        return Err(format!(
            "`{}` is not under `{FILES_DIR}/`, `{SIMPLE_DIR}/` or `{CLASSES_DIR}/`, where the \
             build writes",
            output.escape_debug()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_outputs(outputs: &[&str]) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "format": FORMAT, "inputs": {}, "outputs": outputs,
        }))
        .unwrap()
    }

    #[test]
    fn outputs_outside_the_site_make_the_file_untrusted() {
        let good = with_outputs(&[
            "files/a-1.0.tar.gz",
            "simple/a/index.html",
            "t/cpu/simple/a/index.html",
        ]);
        assert_eq!(parse(&good).unwrap().unwrap().outputs.len(), 3);
        for bad in [
            "../outside",
            "/etc/passwd",
            "files/../../x",
            "simple//x",
            "files/a\nb",
            ".vari-index-state.json",
            "other/x",
        ] {
            let err = parse(&with_outputs(&["files/ok", bad])).unwrap_err();
            assert!(err.key.starts_with("outputs["), "{err:?}");
        }
    }

    #[test]
    fn unparseable_or_foreign_files_are_ignored() {
        assert_eq!(parse(b"not json").unwrap().map(|_| ()), None);
        assert_eq!(
            parse(br#"{"format":"other","inputs":{},"outputs":["../x"]}"#)
                .unwrap()
                .map(|_| ()),
            None
        );
    }

    #[test]
    fn input_names_must_be_plain_names() {
        let text = serde_json::json!({
            "format": FORMAT,
            "inputs": {"../a-1.0.tar.gz": {
                "fingerprint": {"size": 1, "mtime_ns": 1, "ctime_ns": 1, "inode": 1, "device": 1},
                "settled": true,
                "facts": {"sha256": "00", "size": 1}
            }},
            "outputs": [],
        });
        let err = parse(&serde_json::to_vec(&text).unwrap()).unwrap_err();
        assert!(err.key.starts_with("inputs["), "{err:?}");
    }

    #[test]
    fn a_state_of_the_first_format_keeps_its_outputs_and_forgets_its_inputs() {
        let text = serde_json::json!({
            "format": FORMAT_1,
            "inputs": {"a-1.0.tar.gz": {
                "fingerprint": {"size": 1, "mtime_ns": 1, "inode": 1},
                "facts": {"sha256": "00", "size": 1}
            }},
            "outputs": ["files/a-1.0.tar.gz", "simple/a/index.html"],
            "stamps": {"files/a-1.0.tar.gz": {"sha256": "00", "size": 1}},
        });
        let state = parse(&serde_json::to_vec(&text).unwrap()).unwrap().unwrap();
        assert!(
            state.inputs.is_empty(),
            "its fingerprints vouch for nothing"
        );
        assert_eq!(state.outputs.len(), 2);
        assert_eq!(state.stamps.len(), 1);
        assert_eq!(state.format, FORMAT, "saved again in the new format");
        // Its outputs are checked as the new format's are.
        let text = serde_json::json!({"format": FORMAT_1, "inputs": {}, "outputs": ["../x"]});
        let err = parse(&serde_json::to_vec(&text).unwrap()).unwrap_err();
        assert!(err.key.starts_with("outputs["), "{err:?}");
    }

    #[test]
    fn an_input_without_a_change_time_makes_a_new_format_state_unreadable() {
        // The first format's fingerprint under the new format's name: nothing in it is trusted.
        let text = serde_json::json!({
            "format": FORMAT,
            "inputs": {"a-1.0.tar.gz": {
                "fingerprint": {"size": 1, "mtime_ns": 1, "inode": 1},
                "facts": {"sha256": "00", "size": 1}
            }},
            "outputs": [],
        });
        assert_eq!(
            parse(&serde_json::to_vec(&text).unwrap())
                .unwrap()
                .map(|_| ()),
            None
        );
    }
}
