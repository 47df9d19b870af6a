//! Named target platforms, spelled as uv's `--python-platform` spells them, so that one name
//! means the same machine to vari and to uv.
//!
//! What each name implies follows uv (`uv-configuration`'s target triples): `*-unknown-linux-gnu`
//! and `linux` are glibc 2.28; `*-unknown-linux-musl` is musl 1.2; the macOS names are macOS
//! 13.0 unless `MACOSX_DEPLOYMENT_TARGET` says otherwise; `riscv64-unknown-linux` is glibc 2.39.

use std::fmt;
use std::str::FromStr;

use crate::error::PythonError;
use crate::platform::{parse_major_minor, Os, TargetPlatform};

/// The macOS version the macOS names imply without `MACOSX_DEPLOYMENT_TARGET` (the oldest
/// macOS release still supported, as uv assumes).
pub const DEFAULT_MACOS_VERSION: (u16, u16) = (13, 0);

/// The glibc minor versions (of glibc 2) that uv accepts in `ARCH-manylinux_2_N` names.
const MANYLINUX_MINORS: [u16; 12] = [17, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40];

/// A named target platform: `x86_64-manylinux_2_28`, `aarch64-apple-darwin`, `linux`, ….
///
/// ```
/// use vari_python::{PlatformName, Os};
/// let name: PlatformName = "aarch64-manylinux_2_28".parse().unwrap();
/// let platform = name.platform(None);
/// assert_eq!(platform.os, Os::Manylinux { major: 2, minor: 28 });
/// assert_eq!(platform.arch, "aarch64");
/// assert_eq!(name.to_string(), "aarch64-manylinux_2_28");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlatformName {
    /// The name as given (an alias such as `manylinux_2_28_x86_64` is kept as written).
    name: String,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// Linux with glibc 2.`minor`.
    Manylinux { arch: LinuxArch, minor: u16 },
    /// Linux with musl 1.2.
    Musl { arch: LinuxArch },
    /// macOS at the deployment target.
    Macos { arm: bool },
    /// Windows on `arch` (`amd64`, `arm64`, `x86`).
    Windows { arch: &'static str },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum LinuxArch {
    X86_64,
    Aarch64,
    Riscv64,
}

impl LinuxArch {
    fn as_str(self) -> &'static str {
        match self {
            Self::X86_64 => "x86_64",
            Self::Aarch64 => "aarch64",
            Self::Riscv64 => "riscv64",
        }
    }
}

impl PlatformName {
    /// Every accepted name (aliases of the `ARCH-manylinux…` names, `manylinux_2_28_x86_64`,
    /// are accepted too but not listed).
    pub fn names() -> Vec<String> {
        let mut names: Vec<String> = [
            "linux",
            "macos",
            "windows",
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "riscv64-unknown-linux",
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
            "aarch64-pc-windows-msvc",
            "i686-pc-windows-msvc",
            "x86_64-manylinux2014",
            "aarch64-manylinux2014",
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        for arch in ["x86_64", "aarch64"] {
            for minor in MANYLINUX_MINORS {
                names.push(format!("{arch}-manylinux_2_{minor}"));
            }
        }
        names
    }

    /// The platform this name describes. `macos_deployment_target` is the value of
    /// `MACOSX_DEPLOYMENT_TARGET` (`14.0`), which sets the macOS version of the macOS names;
    /// without it (or when it is not a version) they mean [`DEFAULT_MACOS_VERSION`].
    pub fn platform(&self, macos_deployment_target: Option<&str>) -> TargetPlatform {
        match self.kind {
            Kind::Manylinux { arch, minor } => TargetPlatform {
                os: Os::Manylinux { major: 2, minor },
                arch: arch.as_str().to_owned(),
            },
            Kind::Musl { arch } => TargetPlatform {
                os: Os::Musllinux { major: 1, minor: 2 },
                arch: arch.as_str().to_owned(),
            },
            Kind::Macos { arm } => {
                let (major, minor) = macos_deployment_target
                    .and_then(|v| parse_major_minor(v.trim()))
                    .unwrap_or(DEFAULT_MACOS_VERSION);
                TargetPlatform {
                    os: Os::Macos { major, minor },
                    arch: if arm { "arm64" } else { "x86_64" }.to_owned(),
                }
            }
            Kind::Windows { arch } => TargetPlatform {
                os: Os::Windows,
                arch: arch.to_owned(),
            },
        }
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for PlatformName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl FromStr for PlatformName {
    type Err = PythonError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim();
        let kind = match name {
            "linux" | "x86_64-unknown-linux-gnu" => Kind::Manylinux {
                arch: LinuxArch::X86_64,
                minor: 28,
            },
            "aarch64-unknown-linux-gnu" => Kind::Manylinux {
                arch: LinuxArch::Aarch64,
                minor: 28,
            },
            "riscv64-unknown-linux" => Kind::Manylinux {
                arch: LinuxArch::Riscv64,
                minor: 39,
            },
            "x86_64-unknown-linux-musl" => Kind::Musl {
                arch: LinuxArch::X86_64,
            },
            "aarch64-unknown-linux-musl" => Kind::Musl {
                arch: LinuxArch::Aarch64,
            },
            "macos" | "aarch64-apple-darwin" => Kind::Macos { arm: true },
            "x86_64-apple-darwin" => Kind::Macos { arm: false },
            "windows" | "x86_64-pc-windows-msvc" => Kind::Windows { arch: "amd64" },
            "aarch64-pc-windows-msvc" | "arm64-pc-windows-msvc" => Kind::Windows { arch: "arm64" },
            "i686-pc-windows-msvc" => Kind::Windows { arch: "x86" },
            other => parse_manylinux(other).ok_or_else(|| PythonError::UnknownPlatform {
                name: text.to_owned(),
                known: Self::names(),
            })?,
        };
        Ok(Self {
            name: name.to_owned(),
            kind,
        })
    }
}

/// The glibc level a profile's Linux platform means when it names no C library: uv's
/// `ARCH-unknown-linux-gnu` (glibc 2.28), what current manylinux wheels are built for.
pub const PROFILE_BASELINE_GLIBC_MINOR: u16 = 28;

/// Why a profile's platform names no target platform uv and vari know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProfilePlatformError(pub String);

/// `x86_64`, `aarch64` as platform tags spell them for Linux, from `platform.machine()`
/// spellings (`AMD64`, `arm64`).
fn linux_arch(machine: &str) -> Option<LinuxArch> {
    match machine.to_ascii_lowercase().as_str() {
        "x86_64" | "amd64" | "x64" => Some(LinuxArch::X86_64),
        "aarch64" | "arm64" => Some(LinuxArch::Aarch64),
        "riscv64" => Some(LinuxArch::Riscv64),
        _ => None,
    }
}

impl PlatformName {
    /// The platform a profile's `platform` table names (`system`, `machine`, `libc`), as a
    /// name uv knows: Linux (the default system) with `glibc 2.N` is `ARCH-manylinux_2_M` for
    /// the highest level uv accepts that is at most N, with `musl …` `ARCH-unknown-linux-musl`,
    /// with no C library the baseline `ARCH-manylinux_2_28` ([`PROFILE_BASELINE_GLIBC_MINOR`]);
    /// `Darwin` and `Windows` their `ARCH-apple-darwin` and `ARCH-pc-windows-msvc`. `Ok(None)`
    /// when the profile names no machine (its platform is then the Python's own).
    pub fn for_profile(
        platform: &vari_core::Platform,
    ) -> Result<Option<PlatformName>, ProfilePlatformError> {
        let Some(machine) = platform.machine.as_deref().map(str::trim) else {
            return Ok(None);
        };
        let system = platform.system.as_deref().unwrap_or("Linux").trim();
        let unknown = || {
            ProfilePlatformError(format!(
                "{system} on {machine} is not a platform vari can lock or select for \
                 (known: Linux on x86_64, aarch64 or riscv64; Darwin and Windows on x86_64 or arm64)"
            ))
        };
        let name = match system.to_ascii_lowercase().as_str() {
            "linux" => {
                let arch = linux_arch(machine).ok_or_else(unknown)?;
                let libc = platform.libc.as_deref().map(str::trim).unwrap_or("");
                match (arch, libc.split_once(' ')) {
                    (LinuxArch::Riscv64, _) => "riscv64-unknown-linux".to_owned(),
                    (_, Some((kind, _))) if kind.eq_ignore_ascii_case("musl") => {
                        format!("{}-unknown-linux-musl", arch.as_str())
                    }
                    (_, Some((kind, version))) if kind.eq_ignore_ascii_case("glibc") => {
                        let minor = version
                            .trim()
                            .strip_prefix("2.")
                            .and_then(|m| m.split('.').next())
                            .and_then(|m| m.parse::<u16>().ok())
                            .ok_or_else(|| {
                                ProfilePlatformError(format!(
                                    "libc {libc:?} is not `glibc 2.N` or `musl 1.N`"
                                ))
                            })?;
                        let level = MANYLINUX_MINORS
                            .iter()
                            .copied()
                            .filter(|&m| m <= minor)
                            .max()
                            .ok_or_else(|| {
                                ProfilePlatformError(format!(
                                    "libc {libc:?} is older than glibc 2.17, the oldest \
                                     manylinux level"
                                ))
                            })?;
                        format!("{}-manylinux_2_{level}", arch.as_str())
                    }
                    (_, _) if libc.is_empty() => format!(
                        "{}-manylinux_2_{PROFILE_BASELINE_GLIBC_MINOR}",
                        arch.as_str()
                    ),
                    _ => {
                        return Err(ProfilePlatformError(format!(
                            "libc {libc:?} is not `glibc 2.N` or `musl 1.N`"
                        )))
                    }
                }
            }
            "darwin" | "macos" => match linux_arch(machine) {
                Some(LinuxArch::Aarch64) => "aarch64-apple-darwin".to_owned(),
                Some(LinuxArch::X86_64) => "x86_64-apple-darwin".to_owned(),
                _ => return Err(unknown()),
            },
            "windows" => match linux_arch(machine) {
                Some(LinuxArch::Aarch64) => "aarch64-pc-windows-msvc".to_owned(),
                Some(LinuxArch::X86_64) => "x86_64-pc-windows-msvc".to_owned(),
                _ => return Err(unknown()),
            },
            _ => return Err(unknown()),
        };
        name.parse()
            .map(Some)
            .map_err(|e: PythonError| ProfilePlatformError(e.to_string()))
    }

    /// Whether this name and a profile's platform table describe the same system and machine
    /// (the C library is not compared: a name's level is the more precise).
    pub fn agrees_with(&self, platform: &vari_core::Platform) -> bool {
        let Ok(Some(profile)) = Self::for_profile(&vari_core::Platform {
            libc: None,
            ..platform.clone()
        }) else {
            // No machine named: nothing to contradict. An unknown one cannot agree.
            return platform.machine.is_none();
        };
        let mine = self.platform(None);
        let theirs = profile.platform(None);
        mine.arch == theirs.arch && mine.system() == theirs.system()
    }
}

/// `x86_64-manylinux_2_28`, `manylinux_2_28_x86_64`, `x86_64-manylinux2014`,
/// `manylinux2014_x86_64` (for the architectures and versions uv accepts).
fn parse_manylinux(name: &str) -> Option<Kind> {
    let (arch, policy) = ["x86_64", "aarch64"].iter().find_map(|arch| {
        name.strip_prefix(arch)
            .and_then(|rest| rest.strip_prefix('-'))
            .or_else(|| {
                name.strip_suffix(arch)
                    .and_then(|rest| rest.strip_suffix('_'))
            })
            .map(|policy| (*arch, policy))
    })?;
    let minor = if policy == "manylinux2014" {
        17
    } else {
        policy.strip_prefix("manylinux_2_")?.parse().ok()?
    };
    if !MANYLINUX_MINORS.contains(&minor) {
        return None;
    }
    let arch = if arch == "x86_64" {
        LinuxArch::X86_64
    } else {
        LinuxArch::Aarch64
    };
    Some(Kind::Manylinux { arch, minor })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn platform(name: &str) -> TargetPlatform {
        name.parse::<PlatformName>().unwrap().platform(None)
    }

    #[test]
    fn every_listed_name_parses() {
        for name in PlatformName::names() {
            let parsed: PlatformName = name.parse().unwrap();
            assert_eq!(parsed.as_str(), name);
        }
    }

    #[test]
    fn names_imply_uvs_platforms() {
        let gnu = Os::Manylinux {
            major: 2,
            minor: 28,
        };
        assert_eq!(platform("x86_64-unknown-linux-gnu").os, gnu);
        assert_eq!(platform("linux"), platform("x86_64-manylinux_2_28"));
        assert_eq!(
            platform("manylinux_2_28_x86_64"),
            platform("x86_64-manylinux_2_28")
        );
        assert_eq!(
            platform("x86_64-manylinux2014").os,
            Os::Manylinux {
                major: 2,
                minor: 17
            }
        );
        assert_eq!(
            platform("aarch64-unknown-linux-musl").os,
            Os::Musllinux { major: 1, minor: 2 }
        );
        assert_eq!(
            platform("riscv64-unknown-linux").os,
            Os::Manylinux {
                major: 2,
                minor: 39
            }
        );
        let mac = platform("macos");
        assert_eq!(
            (mac.os, mac.arch.as_str()),
            (
                Os::Macos {
                    major: 13,
                    minor: 0
                },
                "arm64"
            )
        );
        let mac = "x86_64-apple-darwin"
            .parse::<PlatformName>()
            .unwrap()
            .platform(Some("11.5"));
        assert_eq!(
            (mac.os, mac.arch.as_str()),
            (
                Os::Macos {
                    major: 11,
                    minor: 5
                },
                "x86_64"
            )
        );
        assert_eq!(platform("windows").machine(), "AMD64");
        assert_eq!(platform("i686-pc-windows-msvc").arch, "x86");
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        for bad in [
            "x86_64-manylinux_2_29",
            "sparc-sun-solaris",
            "",
            "manylinux_2_28",
        ] {
            let err = bad.parse::<PlatformName>().unwrap_err().to_string();
            assert!(err.contains("x86_64-manylinux_2_28"), "{bad}: {err}");
        }
    }
    fn profile(system: Option<&str>, machine: &str, libc: Option<&str>) -> vari_core::Platform {
        vari_core::Platform {
            system: system.map(str::to_owned),
            machine: Some(machine.to_owned()),
            libc: libc.map(str::to_owned),
        }
    }

    #[test]
    fn a_profiles_platform_is_a_name_uv_knows() {
        let name = |p: vari_core::Platform| {
            PlatformName::for_profile(&p)
                .unwrap()
                .map(|n| n.to_string())
        };
        assert_eq!(
            name(profile(Some("Linux"), "aarch64", None)).as_deref(),
            Some("aarch64-manylinux_2_28")
        );
        assert_eq!(
            name(profile(None, "x86_64", Some("glibc 2.39"))).as_deref(),
            Some("x86_64-manylinux_2_39")
        );
        // The highest level uv accepts at or below the profile's glibc.
        assert_eq!(
            name(profile(Some("Linux"), "aarch64", Some("glibc 2.30"))).as_deref(),
            Some("aarch64-manylinux_2_28")
        );
        assert_eq!(
            name(profile(Some("Linux"), "aarch64", Some("glibc 2.45"))).as_deref(),
            Some("aarch64-manylinux_2_40")
        );
        assert_eq!(
            name(profile(Some("Linux"), "x86_64", Some("musl 1.2"))).as_deref(),
            Some("x86_64-unknown-linux-musl")
        );
        assert_eq!(
            name(profile(Some("Darwin"), "arm64", None)).as_deref(),
            Some("aarch64-apple-darwin")
        );
        assert_eq!(
            name(profile(Some("Windows"), "AMD64", None)).as_deref(),
            Some("x86_64-pc-windows-msvc")
        );
        let no_machine = vari_core::Platform {
            system: Some("Linux".to_owned()),
            machine: None,
            libc: None,
        };
        assert_eq!(name(no_machine), None);
        for bad in [
            profile(Some("Linux"), "sparc", None),
            profile(Some("Linux"), "x86_64", Some("glibc 2.5")),
            profile(Some("Linux"), "x86_64", Some("bionic")),
            profile(Some("Plan9"), "x86_64", None),
        ] {
            assert!(PlatformName::for_profile(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_named_platform_agrees_with_a_profile_of_the_same_machine_only() {
        let x86: PlatformName = "x86_64-manylinux_2_28".parse().unwrap();
        assert!(x86.agrees_with(&profile(Some("Linux"), "x86_64", Some("glibc 2.39"))));
        assert!(!x86.agrees_with(&profile(Some("Linux"), "aarch64", None)));
        assert!(!x86.agrees_with(&profile(Some("Darwin"), "x86_64", None)));
        let mac: PlatformName = "aarch64-apple-darwin".parse().unwrap();
        assert!(mac.agrees_with(&profile(Some("Darwin"), "arm64", None)));
    }
}
