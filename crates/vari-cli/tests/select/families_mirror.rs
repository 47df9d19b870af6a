//! `vari mirror` from requirements through the build-family catalog (issue 35): `torch numpy`
//! resolved by the lock maker for a CPU and an A100 class against stand-ins of PyTorch's
//! per-line indexes on 127.0.0.1. The site holds each class's torch build and nothing of the
//! cu130 line; from the mirror alone each class syncs the mirror's lock offline, and plain pip
//! and plain uv install its build from the class's own index.

use std::collections::BTreeSet;
use std::path::Path;

use vari_test_support::installers::{install_into_target, Installer};
use vari_test_support::site::{SiteOptions, StaticSite};
use vari_test_support::venv::{bare_venv, python, test_venv, uv};

use crate::common::{files_in, run, vari};
use crate::families::{cpu, gpu, installed_names, pytorch_site};

#[test]
fn requirements_mirrored_through_the_catalog_hold_each_class_s_torch_build() {
    let site = pytorch_site(
        &[
            ("torch", "cu130", "2.9.0", ">=3.10"),
            ("torch", "cu128", "2.9.0", ">=3.10"),
            ("torch", "cpu", "2.9.0", ">=3.10"),
        ],
        "py3-none-any",
    );
    let dir = site.dir.path();
    let classes = [
        ("cpu", cpu(dir), "cpu"),
        ("a100", gpu(dir, "a100", "12.8", "8.0"), "cu128"),
    ];
    let mirror = dir.join("mirror");
    let lock = dir.join("pylock.toml");
    let mut command = vari();
    command
        .current_dir(dir)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", test_venv().join("bin").display()),
        )
        .env("UV_CACHE_DIR", dir.join("uv-cache"))
        .env("VARI_PYTHON", python())
        .args(["mirror", "torch", "numpy", "--index-url", &site.pypi])
        .arg("--families")
        .arg(site.catalog())
        .arg("-o")
        .arg(&mirror)
        .arg("--lock-output")
        .arg(&lock);
    for (name, profile, _) in &classes {
        command
            .arg("--target")
            .arg(format!("{name}={}", profile.display()));
    }
    let out = run(&mut command).expect_code(0);
    let published: BTreeSet<String> = files_in(&mirror.join("files"))
        .into_iter()
        .filter(|f| f.ends_with(".whl"))
        .collect();
    assert_eq!(
        published,
        BTreeSet::from([
            "numpy-1.26.0-py3-none-any.whl".to_owned(),
            "torch-2.9.0+cpu-py3-none-any.whl".to_owned(),
            "torch-2.9.0+cu128-py3-none-any.whl".to_owned(),
        ])
    );
    // The torch entries count as the lock lists them (their own indexes are not the sources
    // given), so every build of these releases is what was mirrored.
    assert!(
        out.stdout.starts_with("mirrored 3 files (")
            && out
                .stdout
                .contains("every variant of these releases would be 3 files (")
            && out.stdout.contains(
                "\n  cpu: t/cpu/simple/ (torch build cpu)\n  a100: t/a100/simple/ (torch build \
                 cu128)\n"
            ),
        "{}",
        out.stdout
    );

    // From the mirror only: its files for `vari sync`, its class indexes for pip and uv.
    let host = StaticSite::serve(&mirror, SiteOptions::default());
    for (name, profile, line) in &classes {
        let venv = dir.join(format!("venv-{name}"));
        bare_venv(&venv);
        run(vari()
            .env("VARI_CACHE_DIR", dir.join("cache"))
            .env("UV_CACHE_DIR", dir.join("uv-cache"))
            .env("UV_NO_CONFIG", "1")
            .arg("sync")
            .arg(&lock)
            .arg("--offline")
            .arg("--find-links")
            .arg(mirror.join("files"))
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(profile)
            .arg("--installer")
            .arg(uv()))
        .expect_code(0);
        let torch = format!("torch-2.9.0+{line}");
        assert_eq!(
            installed_names(&venv, |n| n.ends_with(".dist-info")),
            [
                "numpy-1.26.0.dist-info".to_owned(),
                format!("{torch}.dist-info")
            ],
            "class {name}"
        );
        let index = format!("{}/t/{name}/simple/", host.base);
        for installer in [Installer::NewestPip, Installer::Uv] {
            install_into_target(
                installer,
                Path::new(env!("CARGO_TARGET_TMPDIR")),
                &index,
                &["torch".to_owned()],
                None,
            )
            .assert_installed(&[torch.as_str()]);
        }
    }
}
