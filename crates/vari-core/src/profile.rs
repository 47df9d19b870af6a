//! Supported properties of a target: the `vari-profile/1` document (`docs/reference/output.md`).
//!
//! A [`Profile`] is what detection produces and what ordering consumes: for each supported
//! namespace, its features in preference order and, per feature, its values in preference order.
//! A namespace that is not listed is not supported.

use serde::{Deserialize, Serialize};

use crate::diagnostic::{json_syntax, strip_bom, Diagnostic};
use crate::names::{FeatureName, FeatureValue, Namespace};

/// The value of the `schema` key.
pub const PROFILE_SCHEMA: &str = "vari-profile/1";

/// Why a profile document could not be read (the shape [`Profile::from_json`] has always
/// returned; [`Profile::read_json`] returns the same as a [`Diagnostic`]).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Not JSON, or a key has the wrong type or an invalid name.
    #[error("{}", Diagnostic::new(path.as_str(), message.as_str()))]
    Invalid {
        /// Key path in the document, e.g. `namespaces[1].features[0].values[2]`.
        path: String,
        /// What is wrong there.
        message: String,
    },
}

impl From<Diagnostic> for ProfileError {
    fn from(d: Diagnostic) -> Self {
        ProfileError::Invalid {
            path: d.path,
            message: d.message,
        }
    }
}

impl From<ProfileError> for Diagnostic {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Invalid { path, message } => Diagnostic::new(path, message),
        }
    }
}

/// The platform a profile describes (informational; markers may use it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// `platform.system()`, e.g. `Linux`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// `platform.machine()`, e.g. `x86_64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The C library and its version, e.g. `glibc 2.36`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libc: Option<String>,
}

/// One supported feature and its supported values, most preferred first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureSupport {
    /// The feature name.
    pub name: FeatureName,
    /// Supported values, most preferred first.
    pub values: Vec<FeatureValue>,
    /// Whether a wheel may declare several values of this feature.
    #[serde(default)]
    pub multi_value: bool,
}

/// The supported features of one namespace, most preferred first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceSupport {
    /// The namespace.
    pub namespace: Namespace,
    /// Where the facts came from (`NVML 570.86.15`, `/proc/cpuinfo: haswell`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Supported features, most preferred first.
    pub features: Vec<FeatureSupport>,
}

impl NamespaceSupport {
    /// The support entry of `feature`, if the namespace supports it.
    pub fn feature(&self, feature: &str) -> Option<&FeatureSupport> {
        self.features.iter().find(|f| f.name.as_str() == feature)
    }
}

/// A target's supported properties (`vari-profile/1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Always [`PROFILE_SCHEMA`].
    pub schema: String,
    /// The platform, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Supported namespaces, in the order detection produced them.
    #[serde(default)]
    pub namespaces: Vec<NamespaceSupport>,
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            schema: PROFILE_SCHEMA.to_owned(),
            platform: None,
            namespaces: Vec::new(),
        }
    }
}

impl Profile {
    /// A profile that supports nothing.
    pub fn empty() -> Self {
        Self::default()
    }

    /// The support entry of `namespace`, if supported.
    pub fn namespace(&self, namespace: &str) -> Option<&NamespaceSupport> {
        self.namespaces
            .iter()
            .find(|n| n.namespace.as_str() == namespace)
    }

    /// Parses a `vari-profile/1` JSON document (a leading UTF-8 byte order mark is ignored).
    ///
    /// ```
    /// let p = vari_core::Profile::from_json(r#"{"schema": "vari-profile/1", "namespaces": [
    ///   {"namespace": "x86_64", "features": [{"name": "level", "values": ["v3", "v2"]}]}]}"#).unwrap();
    /// assert_eq!(p.namespace("x86_64").unwrap().features[0].values.len(), 2);
    /// ```
    pub fn from_json(text: &str) -> Result<Self, ProfileError> {
        Self::read_json(text).map_err(ProfileError::from)
    }

    /// Reads a profile from an already parsed JSON value, naming the key path of any error.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ProfileError> {
        Self::read_value(value).map_err(ProfileError::from)
    }

    /// [`Profile::from_json`] reporting the crate's one problem type, [`Diagnostic`].
    ///
    /// ```
    /// let e = vari_core::Profile::read_json(
    ///     r#"{"schema": "vari-profile/1", "platform": {"extra": "x"}}"#).unwrap_err();
    /// assert_eq!(e.path, "platform.extra");
    /// ```
    pub fn read_json(text: &str) -> Result<Self, Diagnostic> {
        let text = strip_bom(text);
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| json_syntax("not valid JSON", text, &e))?;
        Self::read_value(&value)
    }

    /// [`Profile::from_value`] reporting the crate's one problem type, [`Diagnostic`].
    pub fn read_value(value: &serde_json::Value) -> Result<Self, Diagnostic> {
        let invalid = |path: &str, message: String| Diagnostic::new(path, message);
        let obj = value.as_object().ok_or_else(|| {
            invalid(
                "",
                format!("expected a JSON object, found {}", kind_of(value)),
            )
        })?;
        match obj.get("schema").and_then(|s| s.as_str()) {
            Some(PROFILE_SCHEMA) => {}
            Some(other) => {
                return Err(invalid(
                    "schema",
                    format!("unsupported profile schema {other:?} (expected {PROFILE_SCHEMA:?})"),
                ))
            }
            None => {
                return Err(invalid(
                    "schema",
                    format!("missing; expected {PROFILE_SCHEMA:?}"),
                ))
            }
        }
        for key in obj.keys() {
            if !matches!(key.as_str(), "schema" | "platform" | "namespaces") {
                return Err(invalid(
                    key,
                    "unknown key (expected one of: schema, platform, namespaces)".into(),
                ));
            }
        }
        let platform = match obj.get("platform") {
            None | Some(serde_json::Value::Null) => None,
            Some(p) => Some(read_platform(p)?),
        };
        let mut namespaces = Vec::new();
        if let Some(list) = obj.get("namespaces") {
            let list = list.as_array().ok_or_else(|| {
                invalid(
                    "namespaces",
                    format!("expected a list, found {}", kind_of(list)),
                )
            })?;
            for (i, ns) in list.iter().enumerate() {
                let path = format!("namespaces[{i}]");
                let support = read_namespace(ns, &path)?;
                if namespaces
                    .iter()
                    .any(|n: &NamespaceSupport| n.namespace == support.namespace)
                {
                    return Err(invalid(
                        &format!("{path}.namespace"),
                        format!("namespace {:?} is listed twice", support.namespace.as_str()),
                    ));
                }
                namespaces.push(support);
            }
        }
        Ok(Self {
            schema: PROFILE_SCHEMA.to_owned(),
            platform,
            namespaces,
        })
    }

    /// Writes the profile as pretty JSON (2-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        // Serialising plain strings, lists and bools cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// What a JSON value is, for "expected …, found …" messages.
fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "a list",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The keys of a profile's `platform` (every one optional).
pub const PLATFORM_KEYS: [&str; 3] = ["system", "machine", "libc"];

/// `platform`: optional strings, each error at its own key (`platform.extra`), worded like the
/// rest of the profile's errors rather than serde's.
fn read_platform(value: &serde_json::Value) -> Result<Platform, Diagnostic> {
    const KEYS: [&str; 3] = PLATFORM_KEYS;
    let obj = value.as_object().ok_or_else(|| {
        Diagnostic::new(
            "platform",
            format!("expected an object, found {}", kind_of(value)),
        )
    })?;
    if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(Diagnostic::new(
            format!("platform.{key}"),
            format!("unknown key (expected one of: {})", KEYS.join(", ")),
        ));
    }
    let text = |key: &str| match obj.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(Diagnostic::new(
            format!("platform.{key}"),
            format!("expected a string, found {}", kind_of(other)),
        )),
    };
    Ok(Platform {
        system: text("system")?,
        machine: text("machine")?,
        libc: text("libc")?,
    })
}

fn read_namespace(value: &serde_json::Value, path: &str) -> Result<NamespaceSupport, Diagnostic> {
    let invalid = |p: String, message: String| Diagnostic::new(p, message);
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(path.to_owned(), "expected an object".into()))?;
    for key in obj.keys() {
        if !matches!(key.as_str(), "namespace" | "source" | "features") {
            return Err(invalid(format!("{path}.{key}"), "unknown key".into()));
        }
    }
    let namespace = obj
        .get("namespace")
        .and_then(|v| v.as_str())
        .ok_or_else(|| {
            invalid(
                format!("{path}.namespace"),
                "missing or not a string".into(),
            )
        })?;
    let namespace = Namespace::new(namespace)
        .map_err(|e| invalid(format!("{path}.namespace"), e.to_string()))?;
    let source = match obj.get("source") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(invalid(
                format!("{path}.source"),
                "expected a string".into(),
            ))
        }
    };
    let features_value = obj
        .get("features")
        .ok_or_else(|| invalid(format!("{path}.features"), "missing".into()))?;
    let list = features_value
        .as_array()
        .ok_or_else(|| invalid(format!("{path}.features"), "expected a list".into()))?;
    let mut features: Vec<FeatureSupport> = Vec::with_capacity(list.len());
    for (j, f) in list.iter().enumerate() {
        let fpath = format!("{path}.features[{j}]");
        let fobj = f
            .as_object()
            .ok_or_else(|| invalid(fpath.clone(), "expected an object".into()))?;
        for key in fobj.keys() {
            if !matches!(key.as_str(), "name" | "values" | "multi_value") {
                return Err(invalid(format!("{fpath}.{key}"), "unknown key".into()));
            }
        }
        let name = fobj
            .get("name")
            .and_then(|v| v.as_str())
            .ok_or_else(|| invalid(format!("{fpath}.name"), "missing or not a string".into()))?;
        let name =
            FeatureName::new(name).map_err(|e| invalid(format!("{fpath}.name"), e.to_string()))?;
        if features.iter().any(|x| x.name == name) {
            return Err(invalid(
                format!("{fpath}.name"),
                format!("feature {:?} is listed twice", name.as_str()),
            ));
        }
        let values_list = fobj
            .get("values")
            .and_then(|v| v.as_array())
            .ok_or_else(|| invalid(format!("{fpath}.values"), "missing or not a list".into()))?;
        let mut values: Vec<FeatureValue> = Vec::with_capacity(values_list.len());
        for (k, v) in values_list.iter().enumerate() {
            let vpath = format!("{fpath}.values[{k}]");
            let s = v
                .as_str()
                .ok_or_else(|| invalid(vpath.clone(), "expected a string".into()))?;
            let value = FeatureValue::new(s).map_err(|e| invalid(vpath.clone(), e.to_string()))?;
            if !values.contains(&value) {
                values.push(value);
            }
        }
        let multi_value = match fobj.get("multi_value") {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(_) => {
                return Err(invalid(
                    format!("{fpath}.multi_value"),
                    "expected true or false".into(),
                ))
            }
        };
        features.push(FeatureSupport {
            name,
            values,
            multi_value,
        });
    }
    Ok(NamespaceSupport {
        namespace,
        source,
        features,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let text = r#"{"schema":"vari-profile/1","platform":{"system":"Linux","machine":"x86_64"},
          "namespaces":[{"namespace":"nvidia","source":"NVML","features":[
            {"name":"sm_arch","values":["86_real","80_real"],"multi_value":true}]}]}"#;
        let p = Profile::from_json(text).unwrap();
        let again = Profile::from_json(&p.to_json()).unwrap();
        assert_eq!(p, again);
        assert!(
            p.namespace("nvidia")
                .unwrap()
                .feature("sm_arch")
                .unwrap()
                .multi_value
        );
        assert!(p.namespace("amd").is_none());
    }

    #[test]
    fn platform_errors_name_the_key_in_our_words() {
        let e = Profile::read_json(
            r#"{"schema": "vari-profile/1", "platform": {"system": "Linux", "extra": 1}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "platform.extra");
        assert_eq!(
            e.message,
            "unknown key (expected one of: system, machine, libc)"
        );
        let e = Profile::read_json(r#"{"schema": "vari-profile/1", "platform": {"libc": 2}}"#)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "platform.libc: expected a string, found a number"
        );
        let e = Profile::read_json(r#"{"schema": "vari-profile/1", "platform": []}"#).unwrap_err();
        assert_eq!(e.to_string(), "platform: expected an object, found a list");
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        let p = Profile::from_json("\u{feff}{\"schema\": \"vari-profile/1\"}").unwrap();
        assert!(p.namespaces.is_empty());
    }

    #[test]
    fn an_empty_file_says_so_once() {
        let e = Profile::read_json("").unwrap_err();
        assert_eq!(e.path, "");
        assert_eq!(
            e.message,
            "not valid JSON: the file is empty (expected a JSON object)"
        );
        let e = Profile::from_json("{").unwrap_err().to_string();
        assert_eq!(e.matches("line 1").count(), 1, "{e}");
        assert!(!e.starts_with(':'), "{e}");
    }

    #[test]
    fn errors_name_the_key_path() {
        let cases = [
            (r#"{"namespaces": []}"#, "schema"),
            (r#"{"schema": "vari-profile/2"}"#, "schema"),
            (
                r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "Bad", "features": []}]}"#,
                "namespaces[0].namespace",
            ),
            (
                r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "a", "features": [{"name": "f", "values": ["ok", "B"]}]}]}"#,
                "namespaces[0].features[0].values[1]",
            ),
            (
                r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "a", "features": [{"name": "f", "values": [], "multi_value": "yes"}]}]}"#,
                "namespaces[0].features[0].multi_value",
            ),
            (
                r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "a", "features": []}, {"namespace": "a", "features": []}]}"#,
                "namespaces[1].namespace",
            ),
        ];
        for (text, path) in cases {
            match Profile::from_json(text) {
                Err(ProfileError::Invalid { path: p, .. }) => assert_eq!(p, path, "{text}"),
                Ok(_) => panic!("{text} should fail"),
            }
        }
    }
}
