//! The compatible tags of a target, in the order `packaging.tags.sys_tags()` yields them
//! (packaging 26.3): the interpreter's own tags (`cpython_tags` or `generic_tags`), then
//! `compatible_tags`. Platforms come first-best from [`platform_tags`].

use crate::abi::{Abi, Implementation};
use crate::platform::{Os, TargetPlatform};

/// Receives tags in priority order.
pub(crate) trait TagSink {
    fn push(&mut self, python: &str, abi: &str, platform: &str);
}

/// The platform tags of `platform`, best first (packaging's `platform_tags()`).
///
/// Linux: `linux_ARCH` first (packaging 26.3 puts it before manylinux), then manylinux from the
/// glibc version down to 2.17 (2.5 on x86), with the legacy aliases `manylinux2014`,
/// `manylinux2010` and `manylinux1` right after their versions, then musllinux from the musl
/// version down to `X.0`. An `armv8l` (32-bit userland on arm64) also accepts `armv7l`.
pub fn platform_tags(platform: &TargetPlatform) -> Vec<String> {
    match &platform.os {
        Os::Manylinux { .. } | Os::Musllinux { .. } | Os::Linux => linux_platforms(platform),
        Os::Macos { major, minor } => mac_platforms((*major, *minor), &platform.arch),
        Os::Windows => vec![match platform.arch.as_str() {
            "x86" => "win32".to_owned(),
            arch => format!("win_{arch}"),
        }],
        Os::Other { tag, .. } => vec![tag.clone()],
    }
}

fn linux_platforms(platform: &TargetPlatform) -> Vec<String> {
    let archs: Vec<&str> = match platform.arch.as_str() {
        "armv8l" => vec!["armv8l", "armv7l"],
        arch => vec![arch],
    };
    let mut tags: Vec<String> = archs.iter().map(|arch| format!("linux_{arch}")).collect();
    match platform.os {
        Os::Manylinux { major, minor } => manylinux(&archs, (major, minor), &mut tags),
        Os::Musllinux { major, minor } => {
            for arch in &archs {
                for m in (0..=minor).rev() {
                    tags.push(format!("musllinux_{major}_{m}_{arch}"));
                }
            }
        }
        _ => {}
    }
    tags
}

/// Architectures packaging accepts for manylinux without looking at the interpreter's ELF
/// header (i686 and armv7l need a check the interpreter query makes; a described target is
/// taken at its word).
const MANYLINUX_ARCHS: [&str; 9] = [
    "x86_64",
    "aarch64",
    "ppc64",
    "ppc64le",
    "s390x",
    "loongarch64",
    "riscv64",
    "i686",
    "armv7l",
];

/// The highest glibc minor version assumed for an older glibc major (packaging's guess).
const LAST_GLIBC_MINOR: u16 = 50;

fn manylinux(archs: &[&str], glibc: (u16, u16), tags: &mut Vec<String>) {
    if !archs.iter().any(|arch| MANYLINUX_ARCHS.contains(arch)) {
        return;
    }
    // The oldest glibc with a manylinux policy: 2.17 everywhere, 2.5 on x86.
    let too_old = if archs.iter().any(|a| matches!(*a, "x86_64" | "i686")) {
        (2, 4)
    } else {
        (2, 16)
    };
    let mut maxima = vec![glibc];
    for major in (2..glibc.0).rev() {
        maxima.push((major, LAST_GLIBC_MINOR));
    }
    for arch in archs {
        for &(major, max_minor) in &maxima {
            let lowest = if major == too_old.0 { too_old.1 + 1 } else { 0 };
            for minor in (lowest..=max_minor).rev() {
                tags.push(format!("manylinux_{major}_{minor}_{arch}"));
                let legacy = match (major, minor) {
                    (2, 17) => Some("manylinux2014"),
                    (2, 12) => Some("manylinux2010"),
                    (2, 5) => Some("manylinux1"),
                    _ => None,
                };
                if let Some(legacy) = legacy {
                    tags.push(format!("{legacy}_{arch}"));
                }
            }
        }
    }
}

/// packaging's `_mac_binary_formats`.
fn mac_binary_formats(version: (u16, u16), arch: &str) -> Vec<&str> {
    let mut formats = vec![arch];
    match arch {
        "x86_64" => {
            if version < (10, 4) {
                return Vec::new();
            }
            formats.extend(["intel", "fat64", "fat3"]);
        }
        "i386" => {
            if version < (10, 4) {
                return Vec::new();
            }
            formats.extend(["intel", "fat3", "fat"]);
        }
        "ppc64" => {
            if !((10, 4)..=(10, 5)).contains(&version) {
                return Vec::new();
            }
            formats.push("fat64");
        }
        "ppc" => {
            if version > (10, 6) {
                return Vec::new();
            }
            formats.extend(["fat3", "fat"]);
        }
        _ => {}
    }
    if matches!(arch, "arm64" | "x86_64") {
        formats.push("universal2");
    }
    if matches!(arch, "x86_64" | "i386" | "ppc64" | "ppc" | "intel") {
        formats.push("universal");
    }
    formats
}

/// packaging's `mac_platforms(version, arch)`.
fn mac_platforms(version: (u16, u16), arch: &str) -> Vec<String> {
    let mut tags = Vec::new();
    let mut push_formats = |major: u16, minor: u16| {
        for format in mac_binary_formats((major, minor), arch) {
            tags.push(format!("macosx_{major}_{minor}_{format}"));
        }
    };
    if ((10, 0)..(11, 0)).contains(&version) {
        for minor in (0..=version.1).rev() {
            push_formats(10, minor);
        }
    }
    if version >= (11, 0) {
        for major in (11..=version.0).rev() {
            push_formats(major, 0);
        }
        if arch == "x86_64" {
            for minor in (4..=16).rev() {
                push_formats(10, minor);
            }
        } else {
            for minor in (4..=16).rev() {
                tags.push(format!("macosx_10_{minor}_universal2"));
            }
        }
    }
    tags
}

/// Every compatible tag of `abi` on `platforms`, best first (packaging's `sys_tags()`).
pub(crate) fn sys_tags(abi: &Abi, platforms: &[String], sink: &mut impl TagSink) {
    match abi.implementation {
        Implementation::CPython => cpython_tags(abi, platforms, sink),
        _ => generic_tags(abi, platforms, sink),
    }
    let interpreter = match abi.implementation {
        Implementation::CPython => Some(abi.interpreter.as_str()),
        Implementation::PyPy => Some("pp3"),
        _ => None,
    };
    compatible_tags(abi.language_version, interpreter, platforms, sink);
}

/// packaging's `cpython_tags`.
fn cpython_tags(abi: &Abi, platforms: &[String], sink: &mut impl TagSink) {
    let threading = abi.is_free_threaded();
    let explicit: &[&str] = if threading {
        &["abi3", "abi3t", "none"]
    } else {
        &["abi3", "none"]
    };
    let interpreter = abi.interpreter.as_str();
    for own in abi.abis.iter().filter(|a| !explicit.contains(&a.as_str())) {
        for platform in platforms {
            sink.push(interpreter, own, platform);
        }
    }
    let (major, minor) = abi.language_version;
    let stable = (major, minor) >= (3, 2);
    let stable_abi = if threading { "abi3t" } else { "abi3" };
    if stable {
        for platform in platforms {
            sink.push(interpreter, stable_abi, platform);
        }
    }
    for platform in platforms {
        sink.push(interpreter, "none", platform);
    }
    if stable {
        for older in (2..minor).rev() {
            let older_interpreter = format!("cp{major}{older}");
            for platform in platforms {
                sink.push(&older_interpreter, stable_abi, platform);
            }
        }
    }
}

/// packaging's `generic_tags` (PyPy, GraalPy and others).
fn generic_tags(abi: &Abi, platforms: &[String], sink: &mut impl TagSink) {
    let none = "none".to_owned();
    let mut abis: Vec<&String> = abi.abis.iter().collect();
    if !abi.abis.contains(&none) {
        abis.push(&none);
    }
    for own in abis {
        for platform in platforms {
            sink.push(&abi.interpreter, own, platform);
        }
    }
}

/// packaging's `compatible_tags`: `py*-none-PLATFORM`, `INTERPRETER-none-any`, `py*-none-any`.
fn compatible_tags(
    (major, minor): (u8, u8),
    interpreter: Option<&str>,
    platforms: &[String],
    sink: &mut impl TagSink,
) {
    let mut versions = vec![format!("py{major}{minor}"), format!("py{major}")];
    versions.extend((0..minor).rev().map(|m| format!("py{major}{m}")));
    for version in &versions {
        for platform in platforms {
            sink.push(version, "none", platform);
        }
    }
    if let Some(interpreter) = interpreter {
        sink.push(interpreter, "none", "any");
    }
    for version in &versions {
        sink.push(version, "none", "any");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux(glibc: (u16, u16), arch: &str) -> TargetPlatform {
        TargetPlatform {
            os: Os::Manylinux {
                major: glibc.0,
                minor: glibc.1,
            },
            arch: arch.to_owned(),
        }
    }

    #[test]
    fn manylinux_runs_down_with_legacy_aliases() {
        let tags = platform_tags(&linux((2, 28), "x86_64"));
        assert_eq!(tags[0], "linux_x86_64");
        assert_eq!(tags[1], "manylinux_2_28_x86_64");
        let at = |t: &str| tags.iter().position(|x| x == t).unwrap();
        assert_eq!(at("manylinux2014_x86_64"), at("manylinux_2_17_x86_64") + 1);
        assert_eq!(tags.last().unwrap(), "manylinux1_x86_64");
        let arm = platform_tags(&linux((2, 28), "aarch64"));
        assert_eq!(arm.last().unwrap(), "manylinux2014_aarch64");
        // An arch without manylinux support gets only linux_ARCH.
        assert_eq!(platform_tags(&linux((2, 28), "sparc")), ["linux_sparc"]);
    }

    #[test]
    fn armv8l_also_accepts_armv7l() {
        let tags = platform_tags(&linux((2, 17), "armv8l"));
        assert_eq!(
            &tags[..4],
            [
                "linux_armv8l",
                "linux_armv7l",
                "manylinux_2_17_armv8l",
                "manylinux2014_armv8l"
            ]
        );
        assert!(tags.contains(&"manylinux2014_armv7l".to_owned()));
    }

    #[test]
    fn windows_tags() {
        for (arch, tag) in [
            ("amd64", "win_amd64"),
            ("x86", "win32"),
            ("arm64", "win_arm64"),
        ] {
            let p = TargetPlatform {
                os: Os::Windows,
                arch: arch.into(),
            };
            assert_eq!(platform_tags(&p), [tag]);
        }
    }
}
