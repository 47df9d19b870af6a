//! The PEP 508 marker environment of the *target* (the machine and interpreter being installed
//! for), which is not necessarily the machine vari runs on.

use std::fmt;

use pep508_rs::{MarkerEnvironment, MarkerEnvironmentBuilder};

use super::error::MarkerError;
use crate::profile::Platform;

/// The names of the standard PEP 508 environment markers, in the order
/// [`TargetEnvironment::values`] lists them.
pub const MARKER_NAMES: [&str; 11] = [
    "implementation_name",
    "implementation_version",
    "os_name",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_system",
    "platform_version",
    "python_full_version",
    "python_version",
    "sys_platform",
];

/// The standard PEP 508 marker values of the target environment.
///
/// `enable-if` markers of providers and the standard half of `Requires-Dist` markers are
/// evaluated against it. Build one from a profile's [`Platform`] and a Python version with
/// [`TargetEnvironment::from_platform`], then adjust single values with
/// [`TargetEnvironment::with_value`].
///
/// ```
/// use vari_core::markers::TargetEnvironment;
/// use vari_core::Platform;
/// let platform = Platform { system: Some("Linux".into()), machine: Some("x86_64".into()), libc: None };
/// let env = TargetEnvironment::from_platform(Some(&platform), "3.12").unwrap()
///     .with_value("platform_release", "6.1.0").unwrap();
/// assert_eq!(env.get("sys_platform"), Some("linux"));
/// assert_eq!(env.get("python_full_version"), Some("3.12.0"));
/// assert_eq!(env.get("platform_release"), Some("6.1.0"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetEnvironment {
    env: MarkerEnvironment,
}

/// `sys.platform` and `os.name` as CPython reports them for a `platform.system()` value.
fn platform_names(system: &str) -> (String, &'static str) {
    match system {
        "Linux" => ("linux".to_owned(), "posix"),
        "Windows" => ("win32".to_owned(), "nt"),
        "Darwin" => ("darwin".to_owned(), "posix"),
        "" => (String::new(), ""),
        // Other Unixes (FreeBSD, AIX, …) report a lowercase `sys.platform` and are POSIX.
        other => (other.to_ascii_lowercase(), "posix"),
    }
}

/// Splits a Python version into `(python_version, python_full_version)`:
/// `3.12` → (`3.12`, `3.12.0`), `3.12.4` → (`3.12`, `3.12.4`).
fn split_python_version(version: &str) -> Result<(String, String), MarkerError> {
    let invalid = |message: &str| MarkerError::Environment {
        field: "python_version".to_owned(),
        value: version.to_owned(),
        message: message.to_owned(),
    };
    let version = version.trim();
    let mut parts = version.splitn(3, '.');
    let major = parts.next().unwrap_or_default();
    let minor = parts
        .next()
        .ok_or_else(|| invalid("expected MAJOR.MINOR, e.g. 3.12"))?;
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !numeric(major) || !numeric(minor) {
        return Err(invalid("expected MAJOR.MINOR, e.g. 3.12"));
    }
    let short = format!("{major}.{minor}");
    let full = match parts.next() {
        Some(rest) if !rest.is_empty() => version.to_owned(),
        _ => format!("{short}.0"),
    };
    Ok((short, full))
}

impl TargetEnvironment {
    /// Builds the environment of a CPython `python_version` (`3.12` or `3.12.4`) on `platform`.
    ///
    /// `sys_platform` and `os_name` are derived from the system (`Linux` → `linux`/`posix`,
    /// `Windows` → `win32`/`nt`, `Darwin` → `darwin`/`posix`); the implementation is CPython of
    /// the same version. Values that cannot be derived (an unknown platform, the kernel release
    /// and version) are empty strings, so markers testing them are false rather than guessed.
    pub fn from_platform(
        platform: Option<&Platform>,
        python_version: &str,
    ) -> Result<Self, MarkerError> {
        let (short, full) = split_python_version(python_version)?;
        let system = platform.and_then(|p| p.system.as_deref()).unwrap_or("");
        let machine = platform.and_then(|p| p.machine.as_deref()).unwrap_or("");
        let (sys_platform, os_name) = platform_names(system);
        let builder = MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: &full,
            os_name,
            platform_machine: machine,
            platform_python_implementation: "CPython",
            platform_release: "",
            platform_system: system,
            platform_version: "",
            python_full_version: &full,
            python_version: &short,
            sys_platform: &sys_platform,
        };
        let env = MarkerEnvironment::try_from(builder).map_err(|e| MarkerError::Environment {
            field: "python_version".to_owned(),
            value: python_version.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Self { env })
    }

    /// Wraps an already built PEP 508 environment.
    pub fn from_marker_environment(env: MarkerEnvironment) -> Self {
        Self { env }
    }

    /// The underlying PEP 508 environment.
    pub fn marker_environment(&self) -> &MarkerEnvironment {
        &self.env
    }

    /// Replaces one value, named by its marker variable (one of [`MARKER_NAMES`]).
    ///
    /// Setting `python_version` alone keeps `python_full_version`; set both when they must agree.
    pub fn with_value(self, name: &str, value: &str) -> Result<Self, MarkerError> {
        let invalid = |message: String| MarkerError::Environment {
            field: name.to_owned(),
            value: value.to_owned(),
            message,
        };
        let version = |v: &str| {
            v.parse::<pep508_rs::StringVersion>()
                .map_err(|e| invalid(e.to_string()))
        };
        let env = self.env;
        let env = match name {
            "implementation_name" => env.with_implementation_name(value),
            "implementation_version" => env.with_implementation_version(version(value)?),
            "os_name" => env.with_os_name(value),
            "platform_machine" => env.with_platform_machine(value),
            "platform_python_implementation" => env.with_platform_python_implementation(value),
            "platform_release" => env.with_platform_release(value),
            "platform_system" => env.with_platform_system(value),
            "platform_version" => env.with_platform_version(value),
            "python_full_version" => env.with_python_full_version(version(value)?),
            "python_version" => env.with_python_version(version(value)?),
            "sys_platform" => env.with_sys_platform(value),
            _ => {
                return Err(invalid(format!(
                    "unknown marker variable; expected one of {}",
                    MARKER_NAMES.join(", ")
                )))
            }
        };
        Ok(Self { env })
    }

    /// The value of one standard marker variable, or `None` for an unknown name.
    pub fn get(&self, name: &str) -> Option<&str> {
        let env = &self.env;
        Some(match name {
            "implementation_name" => env.implementation_name(),
            "implementation_version" => &env.implementation_version().string,
            "os_name" => env.os_name(),
            "platform_machine" => env.platform_machine(),
            "platform_python_implementation" => env.platform_python_implementation(),
            "platform_release" => env.platform_release(),
            "platform_system" => env.platform_system(),
            "platform_version" => env.platform_version(),
            "python_full_version" => &env.python_full_version().string,
            "python_version" => &env.python_version().string,
            "sys_platform" => env.sys_platform(),
            _ => return None,
        })
    }

    /// Every standard marker variable with its value, in [`MARKER_NAMES`] order.
    pub fn values(&self) -> impl Iterator<Item = (&'static str, &str)> + '_ {
        // Every name of MARKER_NAMES is known to `get`.
        MARKER_NAMES
            .iter()
            .map(move |name| (*name, self.get(name).unwrap_or_default()))
    }
}

impl fmt::Display for TargetEnvironment {
    /// One `name = "value"` pair per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, value) in self.values() {
            writeln!(f, "{name} = {value:?}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn platform(system: &str, machine: &str) -> Platform {
        Platform {
            system: Some(system.into()),
            machine: Some(machine.into()),
            libc: None,
        }
    }

    #[test]
    fn platform_defaults() {
        let cases = [
            ("Linux", "linux", "posix"),
            ("Windows", "win32", "nt"),
            ("Darwin", "darwin", "posix"),
            ("FreeBSD", "freebsd", "posix"),
        ];
        for (system, sys_platform, os_name) in cases {
            let env =
                TargetEnvironment::from_platform(Some(&platform(system, "x")), "3.11").unwrap();
            assert_eq!(env.get("sys_platform"), Some(sys_platform));
            assert_eq!(env.get("os_name"), Some(os_name));
            assert_eq!(env.get("platform_system"), Some(system));
            assert_eq!(env.get("platform_machine"), Some("x"));
            assert_eq!(env.get("implementation_name"), Some("cpython"));
            assert_eq!(env.get("platform_python_implementation"), Some("CPython"));
        }
        let unknown = TargetEnvironment::from_platform(None, "3.11").unwrap();
        assert_eq!(unknown.get("sys_platform"), Some(""));
        assert_eq!(unknown.get("platform_machine"), Some(""));
    }

    #[test]
    fn python_versions() {
        let env = TargetEnvironment::from_platform(None, "3.12.4").unwrap();
        assert_eq!(env.get("python_version"), Some("3.12"));
        assert_eq!(env.get("python_full_version"), Some("3.12.4"));
        assert_eq!(env.get("implementation_version"), Some("3.12.4"));
        let env = TargetEnvironment::from_platform(None, " 3.9 ").unwrap();
        assert_eq!(env.get("python_full_version"), Some("3.9.0"));
        for bad in ["3", "", "three.1", "3.x", "3..1"] {
            let err = TargetEnvironment::from_platform(None, bad).unwrap_err();
            assert!(
                matches!(&err, MarkerError::Environment { field, .. } if field == "python_version"),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn with_value_sets_and_validates() {
        let env = TargetEnvironment::from_platform(None, "3.12").unwrap();
        let env = env
            .with_value("platform_machine", "aarch64")
            .unwrap()
            .with_value("python_full_version", "3.12.7")
            .unwrap();
        assert_eq!(env.get("platform_machine"), Some("aarch64"));
        assert_eq!(env.get("python_full_version"), Some("3.12.7"));
        assert!(env
            .clone()
            .with_value("python_version", "not a version")
            .is_err());
        let err = env.with_value("platform", "x").unwrap_err();
        assert!(err.to_string().contains("unknown marker variable"), "{err}");
    }

    #[test]
    fn values_and_display_list_every_name() {
        let env =
            TargetEnvironment::from_platform(Some(&platform("Linux", "x86_64")), "3.12").unwrap();
        assert_eq!(env.values().count(), MARKER_NAMES.len());
        let text = env.to_string();
        assert!(text.contains("sys_platform = \"linux\"\n"), "{text}");
        assert_eq!(env.get("nope"), None);
    }
}
