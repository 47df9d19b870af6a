//! The indexes vari reads from pip's settings are the ones pip itself reads: each case writes
//! configuration files and variables, asks the real pip (`pip config list`, pip's own merge of
//! its files and variables, for the target environment through `--python`) and compares.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use vari_install::{installer_indexes, InstallerEnv, InstallerKind};

use crate::common::{bare_venv, clean_env, ok, test_venv};

/// pip's merged settings: `section.key` → value.
fn pip_config_list(vars: &[(String, String)], venv: &Path) -> BTreeMap<String, String> {
    let output = ok(Command::new(test_venv().join("bin/pip"))
        .env_clear()
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .arg("--python")
        .arg(venv.join("bin/python"))
        .args(["config", "list"]));
    let text = String::from_utf8(output.stdout).unwrap();
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            let value = value.strip_prefix('\'')?.strip_suffix('\'')?;
            // Python's repr of the value: the escapes pip's values can hold.
            let value = value.replace("\\n", "\n").replace("\\'", "'");
            Some((key.to_owned(), value))
        })
        .collect()
}

/// What `pip install` uses: the variable, else `[install]`, else `[global]`.
fn effective<'a>(config: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    [":env:", "install", "global"]
        .iter()
        .find_map(|section| config.get(&format!("{section}.{key}")))
        .map(String::as_str)
}

fn urls(value: Option<&str>) -> Vec<String> {
    value
        .map(|v| {
            v.split_whitespace()
                .map(|u| vari_client::IndexUrl::parse(u).unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

struct Case {
    name: &'static str,
    /// (path relative to the scratch directory, contents).
    files: Vec<(&'static str, &'static str)>,
    vars: Vec<(&'static str, &'static str)>,
}

#[test]
fn vari_reads_the_indexes_pip_reads() {
    let cases = [
        Case {
            name: "the newer user file wins over the legacy one",
            files: vec![
                (
                    "home/.pip/pip.conf",
                    "[global]\nindex-url = https://legacy.example/simple\n",
                ),
                (
                    "xdg/pip/pip.conf",
                    "[global]\nindex-url = https://user.example/simple\n",
                ),
            ],
            vars: vec![],
        },
        Case {
            name: "[install] in the environment's file over [global], extras on several lines",
            files: vec![
                (
                    "xdg/pip/pip.conf",
                    "[global]\nindex-url = https://user.example/simple\n",
                ),
                (
                    "venv/pip.conf",
                    "[install]\nindex-url = https://venv.example/simple\n[global]\n\
                     extra-index-url =\n  https://e1.example/s\n  https://e2.example/s\n\
                     find-links = /wheels\n",
                ),
            ],
            vars: vec![],
        },
        Case {
            name: "PIP_CONFIG_FILE hides the user files, not the environment's",
            files: vec![
                (
                    "xdg/pip/pip.conf",
                    "[global]\nextra-index-url = https://user.example/s\n",
                ),
                (
                    "own.conf",
                    "[global]\nindex-url = https://own.example/simple\n",
                ),
                ("venv/pip.conf", "[install]\nfind_links = /more-wheels\n"),
            ],
            vars: vec![("PIP_CONFIG_FILE", "own.conf")],
        },
        Case {
            name: "the variables win over every file",
            files: vec![(
                "venv/pip.conf",
                "[install]\nindex-url = https://venv.example/simple\n",
            )],
            vars: vec![
                ("PIP_INDEX_URL", "https://var.example/simple"),
                (
                    "PIP_EXTRA_INDEX_URL",
                    "https://x1.example/s https://x2.example/s",
                ),
            ],
        },
        Case {
            name: "XDG_CONFIG_DIRS holds machine-wide files",
            files: vec![(
                "etc-xdg/pip/pip.conf",
                "[install]\nindex-url = https://site.example/s\n",
            )],
            vars: vec![("XDG_CONFIG_DIRS", "etc-xdg")],
        },
    ];
    for case in cases {
        let dir = tempfile::tempdir().unwrap();
        let scratch = dir.path();
        let venv = scratch.join("venv");
        bare_venv(&venv);
        std::fs::create_dir_all(scratch.join("home")).unwrap();
        for (path, text) in &case.files {
            let path = scratch.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let mut vars = clean_env();
        vars.push(("HOME".into(), scratch.join("home").display().to_string()));
        vars.push((
            "XDG_CONFIG_HOME".into(),
            scratch.join("xdg").display().to_string(),
        ));
        for (key, value) in &case.vars {
            let value = match value.contains("://") || value.starts_with('/') {
                true => value.to_string(),
                // Relative values are files of the scratch directory.
                false => scratch.join(value).display().to_string(),
            };
            vars.push((key.to_string(), value));
        }
        let pip = pip_config_list(&vars, &venv);
        let found = installer_indexes(
            InstallerKind::Pip,
            &InstallerEnv::new(vars.clone(), Some(venv.clone())),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));

        let mut expected = urls(effective(&pip, "index-url"));
        if expected.is_empty() {
            expected.push("https://pypi.org/simple/".to_owned());
        }
        expected.extend(urls(effective(&pip, "extra-index-url")));
        let ours: Vec<String> = found.indexes.iter().map(|i| i.value.to_string()).collect();
        assert_eq!(ours, expected, "{}: pip says {pip:?}", case.name);
        let links: Vec<String> = effective(&pip, "find-links")
            .map(|v| {
                v.split_whitespace()
                    .map(|l| vari_client::FindLinks::parse(l).unwrap().location())
                    .collect()
            })
            .unwrap_or_default();
        let our_links: Vec<String> = found
            .find_links
            .iter()
            .map(|f| f.value.location())
            .collect();
        assert_eq!(our_links, links, "{}: pip says {pip:?}", case.name);
    }
}
