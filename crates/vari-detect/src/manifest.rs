//! `vari-snapshot.json`: the manifest at the root of a snapshot, and reading it strictly.
//!
//! The manifest keeps what a file tree cannot: the node's host name and date, its platform, the
//! variables that changed where providers looked, and the answers its driver libraries gave
//! ([`SnapshotManifest::recorded`]). A manifest that cannot be read is an error naming the key at
//! fault, never silently skipped: skipping it would drop the recorded GPU answers and make a GPU
//! node look CPU-only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use vari_core::{FeatureSupport, Namespace, Platform};

use crate::report::ProviderReport;

/// The manifest's file name, at the root of the snapshot.
pub const MANIFEST_FILE: &str = "vari-snapshot.json";

/// The value of the manifest's `schema` key.
pub const SNAPSHOT_SCHEMA: &str = "vari-snapshot/1";

/// A provider's answer on the snapshotted node, as kept in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedReport {
    /// The namespace.
    pub namespace: Namespace,
    /// Supported features, most preferred first; `None` when absent.
    pub features: Option<Vec<FeatureSupport>>,
    /// Where the facts came from on the node.
    pub source: String,
    /// Why the namespace was absent or degraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RecordedReport {
    pub(crate) fn from_report(r: &ProviderReport) -> Self {
        Self {
            namespace: r.namespace.clone(),
            features: r.features.clone(),
            source: r.source.clone(),
            note: r.note.clone(),
        }
    }

    /// The report, with its source marked as coming from the snapshot.
    pub fn to_report(&self, host: &str) -> ProviderReport {
        ProviderReport {
            namespace: self.namespace.clone(),
            features: self.features.clone(),
            source: format!("snapshot of {host}: {}", self.source),
            note: self.note.clone(),
            elapsed: std::time::Duration::ZERO,
        }
    }
}

/// The `vari-snapshot.json` manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotManifest {
    /// Always [`SNAPSHOT_SCHEMA`].
    pub schema: String,
    /// The node's host name.
    pub host: String,
    /// When the snapshot was taken (UTC, RFC 3339).
    pub created: String,
    /// The vari version that wrote it.
    pub vari_version: String,
    /// The operating system and CPU architecture vari ran on (`linux`, `x86_64`).
    pub os: String,
    /// See `os`.
    pub arch: String,
    /// The platform detected on the node (system, machine, C library); a file tree does not
    /// hold the C library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Files copied, as absolute host paths.
    pub copied: Vec<String>,
    /// Listed paths (or patterns) that did not exist on the node.
    pub missing: Vec<String>,
    /// Paths recorded as existence markers.
    pub markers: Vec<String>,
    /// The node's values of the variables a snapshot records.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// What the library-based providers reported on the node (nvidia, intel), which a file tree
    /// cannot reproduce.
    #[serde(default)]
    pub recorded: Vec<RecordedReport>,
}

impl SnapshotManifest {
    /// The report recorded on the node for `namespace`, if any.
    pub fn recorded(&self, namespace: &str) -> Option<ProviderReport> {
        self.recorded
            .iter()
            .find(|r| r.namespace.as_str() == namespace)
            .map(|r| r.to_report(&self.host))
    }
}

/// Why a snapshot's manifest cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}{message}", path.display(), if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct ManifestError {
    /// The manifest file.
    pub path: PathBuf,
    /// The key at fault (`recorded[0].features`), empty for the file as a whole.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// Reads the manifest of the snapshot at `root`; `Ok(None)` when the tree has none (a plain
/// sysroot or a hand-made fixture). `records_answer` says which namespaces' answers a snapshot
/// may record (the providers know; see `crate::sysroot_open::read_manifest`).
pub(crate) fn read_manifest_with(
    root: &Path,
    records_answer: &dyn Fn(&str) -> bool,
) -> Result<Option<SnapshotManifest>, ManifestError> {
    let path = root.join(MANIFEST_FILE);
    let error = |key: &str, message: String| ManifestError {
        path: path.clone(),
        key: key.to_owned(),
        message,
    };
    let text = match crate::system_file::read_system_file(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(error("", e.to_string())),
    };
    let value: Value = serde_json::from_str(vari_core::strip_bom(&text))
        .map_err(|e| error("", format!("not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(error("", "expected a JSON object".to_owned()));
    };
    match object.get("schema") {
        None => {
            return Err(error(
                "schema",
                format!("missing (expected {SNAPSHOT_SCHEMA:?})"),
            ))
        }
        Some(Value::String(s)) if s == SNAPSHOT_SCHEMA => {}
        Some(other) => {
            return Err(error(
                "schema",
                format!(
                    "unsupported snapshot version {other} (this vari reads {SNAPSHOT_SCHEMA:?}; \
                     take the snapshot again with this vari)"
                ),
            ))
        }
    }
    const KEYS: &[&str] = &[
        "schema",
        "host",
        "created",
        "vari_version",
        "os",
        "arch",
        "platform",
        "copied",
        "missing",
        "markers",
        "env",
        "recorded",
    ];
    if let Some(unknown) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(error(
            unknown,
            format!("unknown key (expected one of: {})", KEYS.join(", ")),
        ));
    }
    let mut take = |key: &str| object.remove(key);
    let manifest = SnapshotManifest {
        schema: SNAPSHOT_SCHEMA.to_owned(),
        host: required(take("host"), "host", &error)?,
        created: required(take("created"), "created", &error)?,
        vari_version: required(take("vari_version"), "vari_version", &error)?,
        os: required(take("os"), "os", &error)?,
        arch: required(take("arch"), "arch", &error)?,
        platform: optional(take("platform"), "platform", &error)?,
        copied: required(take("copied"), "copied", &error)?,
        missing: required(take("missing"), "missing", &error)?,
        markers: required(take("markers"), "markers", &error)?,
        env: optional(take("env"), "env", &error)?.unwrap_or_default(),
        recorded: recorded(take("recorded"), records_answer, &error)?,
    };
    Ok(Some(manifest))
}

type ErrorAt<'a> = dyn Fn(&str, String) -> ManifestError + 'a;

fn optional<T: DeserializeOwned>(
    value: Option<Value>,
    key: &str,
    error: &ErrorAt<'_>,
) -> Result<Option<T>, ManifestError> {
    value
        .map(|v| serde_json::from_value(v).map_err(|e| error(key, e.to_string())))
        .transpose()
}

fn required<T: DeserializeOwned>(
    value: Option<Value>,
    key: &str,
    error: &ErrorAt<'_>,
) -> Result<T, ManifestError> {
    optional(value, key, error)?.ok_or_else(|| error(key, "missing".to_owned()))
}

/// The recorded answers, each checked on its own so an error names its index, and each for a
/// provider that records its answers.
fn recorded(
    value: Option<Value>,
    records_answer: &dyn Fn(&str) -> bool,
    error: &ErrorAt<'_>,
) -> Result<Vec<RecordedReport>, ManifestError> {
    let items = match value {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(error(
                "recorded",
                format!(
                    "expected a list of provider answers, found {}",
                    kind(&other)
                ),
            ))
        }
    };
    let mut reports = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let key = format!("recorded[{i}]");
        if let Value::Object(fields) = &item {
            check_namespace(fields, &key, records_answer, error)?;
        }
        let report: RecordedReport =
            serde_json::from_value(item).map_err(|e| error(&key, e.to_string()))?;
        reports.push(report);
    }
    Ok(reports)
}

fn check_namespace(
    fields: &Map<String, Value>,
    key: &str,
    records_answer: &dyn Fn(&str) -> bool,
    error: &ErrorAt<'_>,
) -> Result<(), ManifestError> {
    let Some(Value::String(namespace)) = fields.get("namespace") else {
        return Ok(()); // serde names the problem
    };
    if records_answer(namespace) {
        return Ok(());
    }
    Err(error(
        &format!("{key}.namespace"),
        format!("{namespace:?} is not a provider whose answer a snapshot records"),
    ))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysroot_open::read_manifest;

    fn valid() -> Value {
        serde_json::json!({
            "schema": SNAPSHOT_SCHEMA,
            "host": "gpu-node-7",
            "created": "2026-11-21T12:00:00Z",
            "vari_version": "0.1.0",
            "os": "linux",
            "arch": "x86_64",
            "copied": ["/proc/cpuinfo"],
            "missing": [],
            "markers": [],
            "env": {"ROCM_PATH": "/opt/rocm-6.4.0"},
            "recorded": [{
                "namespace": "nvidia",
                "features": [{"name": "sm_arch", "values": ["90_real"], "multi_value": true}],
                "source": "NVML 580.65.06"
            }]
        })
    }

    fn read(value: &str) -> Result<Option<SnapshotManifest>, ManifestError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MANIFEST_FILE), value).unwrap();
        read_manifest(dir.path())
    }

    fn key_of(value: &str) -> String {
        match read(value) {
            Err(e) => {
                assert!(e.to_string().contains(MANIFEST_FILE), "{e}");
                e.key
            }
            Ok(m) => panic!("accepted: {m:?}"),
        }
    }

    #[test]
    fn a_valid_manifest_reads_back() {
        let m = read(&valid().to_string()).unwrap().unwrap();
        assert_eq!(m.host, "gpu-node-7");
        assert_eq!(
            m.recorded("nvidia").unwrap().source,
            "snapshot of gpu-node-7: NVML 580.65.06"
        );
        assert!(read_manifest(tempfile::tempdir().unwrap().path())
            .unwrap()
            .is_none());
    }

    #[test]
    fn every_problem_names_its_key() {
        let with = |key: &str, value: Value| {
            let mut v = valid();
            v[key] = value;
            v.to_string()
        };
        assert_eq!(key_of(&with("recorded", "oops".into())), "recorded");
        assert_eq!(key_of(&with("schema", "vari-snapshot/2".into())), "schema");
        assert!(read(&with("schema", "vari-snapshot/2".into()))
            .unwrap_err()
            .message
            .contains("unsupported snapshot version"));
        assert_eq!(key_of(&with("copied", 3.into())), "copied");
        assert_eq!(key_of(&with("extra", 3.into())), "extra");
        assert_eq!(
            key_of(&with(
                "recorded",
                serde_json::json!([{"namespace": "nvidia", "source": "x", "features": 1}])
            )),
            "recorded[0]"
        );
        assert_eq!(
            key_of(&with(
                "recorded",
                serde_json::json!([{"namespace": "x86_64", "source": "x", "features": null}])
            )),
            "recorded[0].namespace"
        );
        let mut no_host = valid();
        no_host.as_object_mut().unwrap().remove("host");
        assert_eq!(key_of(&no_host.to_string()), "host");
        let mut no_schema = valid();
        no_schema.as_object_mut().unwrap().remove("schema");
        assert_eq!(key_of(&no_schema.to_string()), "schema");
        assert_eq!(key_of("{not json"), "");
        assert_eq!(key_of("[]"), "");
    }
}
