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
}
