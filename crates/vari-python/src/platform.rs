//! The operating system, C library and CPU architecture a target runs: what decides its
//! platform tags (`manylinux_2_28_x86_64`, `macosx_14_0_arm64`, `win_amd64`, …).

use std::fmt;

/// The operating system of a target, with the version that bounds its wheel platform tags.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux with glibc `major.minor` (manylinux, PEP 600).
    Manylinux {
        /// glibc major version (2).
        major: u16,
        /// glibc minor version.
        minor: u16,
    },
    /// Linux with musl `major.minor` (musllinux, PEP 656).
    Musllinux {
        /// musl major version (1).
        major: u16,
        /// musl minor version.
        minor: u16,
    },
    /// Linux whose C library is unknown or not usable for manylinux wheels: only `linux_ARCH`.
    Linux,
    /// macOS `major.minor`.
    Macos {
        /// macOS major version (10, 11, 12, …).
        major: u16,
        /// macOS minor version.
        minor: u16,
    },
    /// Windows.
    Windows,
    /// Any other system: its one platform tag as `sysconfig.get_platform()` gives it,
    /// normalized (`freebsd_14_0_release_amd64`).
    Other {
        /// `platform.system()`, e.g. `FreeBSD`.
        system: String,
        /// The platform tag.
        tag: String,
    },
}

/// The platform a target Python runs on.
///
/// `arch` is spelled as the platform tags spell it: `x86_64`, `aarch64`, `i686`, `armv7l` on
/// Linux; `arm64`, `x86_64` on macOS; `amd64`, `x86`, `arm64` on Windows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TargetPlatform {
    /// The operating system and its C library or release.
    pub os: Os,
    /// The CPU architecture.
    pub arch: String,
}

impl TargetPlatform {
    /// `platform.system()` of this platform (`Linux`, `Darwin`, `Windows`, …).
    pub fn system(&self) -> &str {
        match &self.os {
            Os::Manylinux { .. } | Os::Musllinux { .. } | Os::Linux => "Linux",
            Os::Macos { .. } => "Darwin",
            Os::Windows => "Windows",
            Os::Other { system, .. } => system,
        }
    }

    /// `platform.machine()` as CPython reports it on this platform (`x86_64`, `arm64`, `AMD64`).
    pub fn machine(&self) -> &str {
        match (&self.os, self.arch.as_str()) {
            (Os::Windows, "amd64") => "AMD64",
            (Os::Windows, "arm64") => "ARM64",
            (Os::Windows, other) => other,
            (_, arch) => arch,
        }
    }

    /// The C library as a [`vari_core::Platform`] writes it: `glibc 2.36`, `musl 1.2`.
    pub fn libc(&self) -> Option<String> {
        match self.os {
            Os::Manylinux { major, minor } => Some(format!("glibc {major}.{minor}")),
            Os::Musllinux { major, minor } => Some(format!("musl {major}.{minor}")),
            _ => None,
        }
    }

    /// The profile form: system, machine and C library.
    pub fn to_core(&self) -> vari_core::Platform {
        vari_core::Platform {
            system: Some(self.system().to_owned()),
            machine: Some(self.machine().to_owned()),
            libc: self.libc(),
        }
    }

    /// The platform described by a profile's [`vari_core::Platform`] (the host, usually).
    ///
    /// `libc` `glibc X.Y` gives manylinux, `musl X.Y` musllinux; a macOS platform has no
    /// version in a profile, so `macos_default` is used (the caller's choice, e.g. 13.0).
    /// `None` when the system is missing.
    pub fn from_core(platform: &vari_core::Platform, macos_default: (u16, u16)) -> Option<Self> {
        let system = platform.system.as_deref()?;
        let machine = platform.machine.as_deref().unwrap_or("");
        let (os, arch) = match system {
            "Linux" => {
                let os = platform
                    .libc
                    .as_deref()
                    .and_then(parse_libc)
                    .unwrap_or(Os::Linux);
                let arch = match machine {
                    "arm64" => "aarch64",
                    other => other,
                };
                (os, arch.to_owned())
            }
            "Darwin" => {
                let arch = match machine {
                    "aarch64" => "arm64",
                    other => other,
                };
                let (major, minor) = macos_default;
                (Os::Macos { major, minor }, arch.to_owned())
            }
            "Windows" => {
                let arch = match machine.to_ascii_lowercase().as_str() {
                    "amd64" | "x86_64" => "amd64".to_owned(),
                    "arm64" | "aarch64" => "arm64".to_owned(),
                    "x86" | "i386" | "i686" => "x86".to_owned(),
                    other => other.to_owned(),
                };
                (Os::Windows, arch)
            }
            other => {
                let tag = normalize_tag(&format!("{}-{machine}", other.to_ascii_lowercase()));
                (
                    Os::Other {
                        system: other.to_owned(),
                        tag,
                    },
                    machine.to_owned(),
                )
            }
        };
        Some(Self { os, arch })
    }
}

impl fmt::Display for TargetPlatform {
    /// `Linux x86_64 glibc 2.36`, `macOS 14.0 arm64`, `Windows amd64`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.os {
            Os::Manylinux { major, minor } => {
                write!(f, "Linux {} glibc {major}.{minor}", self.arch)
            }
            Os::Musllinux { major, minor } => write!(f, "Linux {} musl {major}.{minor}", self.arch),
            Os::Linux => write!(f, "Linux {}", self.arch),
            Os::Macos { major, minor } => write!(f, "macOS {major}.{minor} {}", self.arch),
            Os::Windows => write!(f, "Windows {}", self.arch),
            Os::Other { system, tag } => write!(f, "{system} ({tag})"),
        }
    }
}

/// `glibc 2.36` → manylinux 2.36, `musl 1.2` → musllinux 1.2.
fn parse_libc(libc: &str) -> Option<Os> {
    let (name, version) = libc.trim().split_once(char::is_whitespace)?;
    let (major, minor) = parse_major_minor(version.trim())?;
    match name {
        "glibc" => Some(Os::Manylinux { major, minor }),
        "musl" => Some(Os::Musllinux { major, minor }),
        _ => None,
    }
}

/// The leading `MAJOR.MINOR` of a version string (`2.36`, `2.20-2014.11`, `14.5.1`).
pub(crate) fn parse_major_minor(version: &str) -> Option<(u16, u16)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor_text: String = parts
        .next()
        .unwrap_or("0")
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let minor = if minor_text.is_empty() {
        0
    } else {
        minor_text.parse().ok()?
    };
    Some((major, minor))
}

/// A platform string as a tag: `.`, `-` and spaces become `_` (packaging's normalization).
pub(crate) fn normalize_tag(text: &str) -> String {
    text.replace(['.', '-', ' '], "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(system: &str, machine: &str, libc: Option<&str>) -> vari_core::Platform {
        vari_core::Platform {
            system: Some(system.into()),
            machine: Some(machine.into()),
            libc: libc.map(str::to_owned),
        }
    }

    #[test]
    fn host_platforms_map_to_tag_platforms() {
        let p = TargetPlatform::from_core(&core("Linux", "x86_64", Some("glibc 2.36")), (13, 0))
            .unwrap();
        assert_eq!(
            p.os,
            Os::Manylinux {
                major: 2,
                minor: 36
            }
        );
        assert_eq!(p.to_core(), core("Linux", "x86_64", Some("glibc 2.36")));
        let p = TargetPlatform::from_core(&core("Linux", "aarch64", Some("musl 1.2")), (13, 0))
            .unwrap();
        assert_eq!(p.os, Os::Musllinux { major: 1, minor: 2 });
        let p = TargetPlatform::from_core(&core("Linux", "riscv64", None), (13, 0)).unwrap();
        assert_eq!(p.os, Os::Linux);
        let p = TargetPlatform::from_core(&core("Darwin", "arm64", None), (14, 0)).unwrap();
        assert_eq!(
            (p.os.clone(), p.arch.as_str()),
            (
                Os::Macos {
                    major: 14,
                    minor: 0
                },
                "arm64"
            )
        );
        let p = TargetPlatform::from_core(&core("Windows", "AMD64", None), (13, 0)).unwrap();
        assert_eq!((p.arch.as_str(), p.machine()), ("amd64", "AMD64"));
        assert!(TargetPlatform::from_core(&vari_core::Platform::default(), (13, 0)).is_none());
    }

    #[test]
    fn versions_and_tags() {
        assert_eq!(parse_major_minor("2.20-2014.11"), Some((2, 20)));
        assert_eq!(parse_major_minor("14"), Some((14, 0)));
        assert_eq!(parse_major_minor("x"), None);
        assert_eq!(normalize_tag("macosx-10.9 x"), "macosx_10_9_x");
    }
}
