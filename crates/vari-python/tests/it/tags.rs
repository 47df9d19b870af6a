//! Tag lists equal to `packaging.tags` (26.3) for every interpreter here and for described
//! targets, and lookups that agree with the list order.

use std::path::Path;
use std::process::Command;

use serde_json::json;
use vari_core::filename::WheelFilename;
use vari_python::{Abi, Implementation, Os, PlatformName, PythonRequest, Tags, TargetPlatform};

use crate::support::{
    assert_same_tags, interpreters, packaging_tags, resolve, tag_strings, venv_python,
};

/// `(major, minor)` and the ABI an old interpreter reports through `sys.abiflags` (or, on
/// Python 2, its pymalloc and UCS-4 build): a source independent of vari's query.
fn old_interpreter_abi(python: &Path) -> ((u8, u8), String) {
    let code = "import sys\n\
                flags = getattr(sys, 'abiflags', None)\n\
                if flags is None: flags = 'm' + ('u' if sys.maxunicode == 0x10FFFF else '')\n\
                print('%d %d cp%d%d%s' % (sys.version_info[0], sys.version_info[1], \
                sys.version_info[0], sys.version_info[1], flags))";
    let out = Command::new(python).args(["-c", code]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let words: Vec<&str> = text.split_whitespace().collect();
    (
        (words[0].parse().unwrap(), words[1].parse().unwrap()),
        words[2].to_owned(),
    )
}

#[test]
fn tags_equal_packaging_sys_tags_for_every_interpreter_here() {
    let cache = tempfile::tempdir().unwrap();
    let mut checked = Vec::new();
    for python in interpreters() {
        let request = PythonRequest {
            python: Some(python.clone()),
            ..PythonRequest::default()
        };
        let target = resolve(
            &request,
            &vari_python::DiscoveryEnv::default(),
            cache.path(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
        let ours = tag_strings(&target);
        let theirs = if (target.version.major, target.version.minor) >= (3, 9) {
            // packaging 26.3 runs on 3.9 and later: ask the interpreter itself.
            packaging_tags(&python, &json!({"mode": "sys"}))
        } else {
            // Older interpreters: packaging's generators, run by the venv's Python on this
            // same machine, with the version and ABI the old interpreter reports.
            let (version, abi) = old_interpreter_abi(&python);
            let nodot = format!("cp{}{}", version.0, version.1);
            packaging_tags(
                &venv_python(),
                &json!({"mode": "described", "implementation": "cpython",
                        "version": [version.0, version.1], "interpreter": nodot,
                        "abis": [abi], "compat_interpreter": nodot,
                        "platform": {"os": "host"}}),
            )
        };
        assert_same_tags(&ours, &theirs, &python.display().to_string());
        checked.push(format!("{} ({} tags)", target.version, ours.len()));
    }
    eprintln!("checked: {}", checked.join(", "));
}

#[test]
fn every_tag_of_packaging_is_found_at_its_first_position() {
    let theirs = packaging_tags(&venv_python(), &json!({"mode": "sys"}));
    let cache = tempfile::tempdir().unwrap();
    let request = PythonRequest {
        python: Some(venv_python()),
        ..PythonRequest::default()
    };
    let target = resolve(
        &request,
        &vari_python::DiscoveryEnv::default(),
        cache.path(),
    )
    .unwrap();
    let tags = target.tags();
    for (index, tag) in theirs.iter().enumerate() {
        let first = theirs.iter().position(|t| t == tag).unwrap() as u32;
        let wheel = WheelFilename::parse(&format!("demo-1.0-{tag}.whl")).unwrap();
        assert_eq!(tags.wheel_priority(&wheel), Some(first), "{tag} (#{index})");
    }
    for foreign in [
        "demo-1.0-cp27-cp27m-win32.whl",
        "demo-1.0-cp311-cp311-macosx_11_0_arm64.whl",
        "demo-1.0-cp311-cp311-manylinux_2_99_x86_64.whl",
        "demo-1.0-pp310-pypy310_pp73-manylinux_2_17_x86_64.whl",
    ] {
        let wheel = WheelFilename::parse(foreign).unwrap();
        assert_eq!(tags.wheel_priority(&wheel), None, "{foreign}");
    }
}

/// packaging's description of a platform, from vari's.
fn packaging_platform(platform: &TargetPlatform) -> serde_json::Value {
    match &platform.os {
        Os::Manylinux { major, minor } => {
            json!({"os": "manylinux", "arch": platform.arch, "version": [major, minor]})
        }
        Os::Musllinux { major, minor } => {
            json!({"os": "musllinux", "arch": platform.arch, "version": [major, minor]})
        }
        Os::Macos { major, minor } => {
            json!({"os": "macos", "arch": platform.arch, "version": [major, minor]})
        }
        Os::Windows => {
            let tag = match platform.arch.as_str() {
                "x86" => "win32".to_owned(),
                arch => format!("win_{arch}"),
            };
            json!({"os": "windows", "tag": tag})
        }
        other => panic!("no packaging description for {other:?}"),
    }
}

#[test]
fn described_targets_equal_packaging() {
    let cache = tempfile::tempdir().unwrap();
    let cases = [
        ("3.12", "x86_64-manylinux_2_28"),
        ("3.9", "aarch64-manylinux_2_17"),
        ("3.11", "aarch64-manylinux_2_40"),
        ("3.13", "x86_64-manylinux2014"),
        ("3.7", "x86_64-unknown-linux-gnu"),
        ("3.13t", "x86_64-unknown-linux-musl"),
        ("3.12", "aarch64-unknown-linux-musl"),
        ("3.13", "riscv64-unknown-linux"),
        ("3.12", "aarch64-apple-darwin"),
        ("3.8", "x86_64-apple-darwin"),
        ("3.11", "windows"),
        ("3.10", "i686-pc-windows-msvc"),
        ("3.14t", "aarch64-pc-windows-msvc"),
        ("2.7", "linux"),
    ];
    for (version, name) in cases {
        let request = PythonRequest {
            version: Some(version.parse().unwrap()),
            platform: Some(name.parse().unwrap()),
            ..PythonRequest::default()
        };
        let target = resolve(
            &request,
            &vari_python::DiscoveryEnv::default(),
            cache.path(),
        )
        .unwrap();
        assert!(
            target.interpreter.is_none(),
            "{name}: a described target runs nothing"
        );
        let abi = &target.abi;
        let theirs = packaging_tags(
            &venv_python(),
            &json!({"mode": "described", "implementation": "cpython",
                    "version": [abi.language_version.0, abi.language_version.1],
                    "interpreter": abi.interpreter, "abis": abi.abis,
                    "compat_interpreter": abi.interpreter,
                    "platform": packaging_platform(&target.platform)}),
        );
        assert_same_tags(
            &tag_strings(&target),
            &theirs,
            &format!("{version} on {name}"),
        );
    }
}

#[test]
fn pypy_and_graalpy_follow_generic_tags() {
    let platform = "x86_64-manylinux_2_28"
        .parse::<PlatformName>()
        .unwrap()
        .platform(None);
    let cases = [
        (Implementation::PyPy, "pp310", "pypy310_pp73", Some("pp3")),
        (
            Implementation::GraalPy,
            "graalpy311",
            "graalpy242_311_native",
            None,
        ),
    ];
    for (implementation, interpreter, abi_tag, compat) in cases {
        let abi = Abi {
            implementation: implementation.clone(),
            language_version: (3, if interpreter == "pp310" { 10 } else { 11 }),
            interpreter: interpreter.to_owned(),
            abis: vec![abi_tag.to_owned()],
        };
        let ours: Vec<String> = Tags::new(&abi, &platform)
            .iter()
            .map(|t| t.to_string())
            .collect();
        let theirs = packaging_tags(
            &venv_python(),
            &json!({"mode": "described", "implementation": implementation.name(),
                    "version": [abi.language_version.0, abi.language_version.1],
                    "interpreter": interpreter, "abis": [abi_tag],
                    "compat_interpreter": compat,
                    "platform": packaging_platform(&platform)}),
        );
        assert_same_tags(&ours, &theirs, interpreter);
    }
}
