//! The build state: what an earlier build learned from each input, so that a rebuild opens only
//! new or changed files, and which site files it wrote, so that a rebuild removes the ones no
//! longer published.
//!
//! Kept in `SITE/.vari-index-state.json`. It is a cache: a missing, unreadable or foreign state
//! file only means every input is read again. An input counts as unchanged while its size,
//! modification time and inode are those recorded; tools that rewrite a file in place within
//! the same nanosecond and size are not a concern for release artefacts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::dist::DistFacts;
use crate::error::BuildError;
use crate::inputs::Fingerprint;
use crate::publish::{SiteStore, Stamps};
use crate::site::{CLASSES_DIR, FILES_DIR, SIMPLE_DIR};

/// The state file's name in the site directory.
pub(crate) const STATE_FILE: &str = ".vari-index-state.json";

/// Written into the file so that a future, different layout is recognised and ignored.
const FORMAT: &str = "vari-index-state/1";

/// One input as last read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct InputState {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) facts: DistFacts,
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
/// cache is), an error for one whose entries name paths the build must never touch.
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<State>, StateProblem> {
    let Some(state) = serde_json::from_slice::<State>(bytes)
        .ok()
        .filter(|state| state.format == FORMAT)
    else {
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
                "fingerprint": {"size": 1, "mtime_ns": 1, "inode": 1},
                "facts": {"sha256": "00", "size": 1}
            }},
            "outputs": [],
        });
        let err = parse(&serde_json::to_vec(&text).unwrap()).unwrap_err();
        assert!(err.key.starts_with("inputs["), "{err:?}");
    }
}
