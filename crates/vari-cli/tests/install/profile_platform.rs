//! A profile's `[platform]` decides the target's platform: an aarch64 class locked and
//! exported from an x86_64 machine gets aarch64 wheels, and uv resolves its markers for
//! aarch64 (real uv, an index on 127.0.0.1 with stand-in wheels for both architectures).

use std::path::Path;
use std::process::Command;

use vari_test_support::index::TestIndex;
use vari_test_support::venv;
use vari_test_support::wheels::wheel;

use crate::common::{run, vari};

/// `app` needs `armlib` (one wheel per architecture) and, on x86_64 only, `x86only`.
fn upstream(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    wheel(
        dir,
        "app-1.0-py3-none-any.whl",
        None,
        &["armlib", "x86only ; platform_machine == \"x86_64\""],
    );
    wheel(
        dir,
        "armlib-1.0-py3-none-manylinux_2_17_x86_64.whl",
        None,
        &[],
    );
    wheel(
        dir,
        "armlib-1.0-py3-none-manylinux_2_17_aarch64.whl",
        None,
        &[],
    );
    wheel(dir, "x86only-1.0-py3-none-any.whl", None, &[]);
}

const ARM_PROFILE: &str =
    "schema = \"vari-facts/1\"\n[platform]\nsystem = \"Linux\"\nmachine = \"aarch64\"\n";

#[test]
fn an_aarch64_profile_locks_and_exports_aarch64_wheels_only() {
    let dir = tempfile::tempdir().unwrap();
    upstream(&dir.path().join("upstream"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&dir.path().join("upstream")));
    let profile = dir.path().join("arm.toml");
    std::fs::write(&profile, ARM_PROFILE).unwrap();
    let path = format!("{}:/usr/bin:/bin", venv::test_venv().join("bin").display());
    let lock = |extra: &[&str]| {
        let mut command: Command = vari();
        command
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .args(["lock", "--index-url", &server.index_url(), "--target"])
            .arg(&profile)
            .args(extra)
            .arg("app");
        run(&mut command)
    };

    let locked = lock(&[]).expect_code(0);
    let text = std::fs::read_to_string(dir.path().join("pylock.toml")).unwrap();
    assert!(
        text.contains("armlib-1.0-py3-none-manylinux_2_17_aarch64.whl"),
        "{text}"
    );
    assert!(!text.contains("x86_64.whl"), "{text}");
    // uv resolved for aarch64: the x86_64-only dependency is not locked.
    assert!(!text.contains("x86only"), "{}\n{text}", locked.stdout);

    // Exported for the class: the aarch64 wheel.
    let exported = run(vari()
        .current_dir(dir.path())
        .args(["export", "pylock.toml", "--format", "pylock", "--profile"])
        .arg(&profile))
    .expect_code(0);
    assert!(
        exported.stdout.contains("manylinux_2_17_aarch64.whl")
            && !exported.stdout.contains("x86_64.whl"),
        "{}",
        exported.stdout
    );

    // A profile that contradicts --python-platform is an error naming both; nothing written.
    std::fs::remove_file(dir.path().join("pylock.toml")).unwrap();
    let contradicted = lock(&["--python-platform", "x86_64-manylinux_2_28"]);
    assert_ne!(contradicted.code, 0, "{}", contradicted.stderr);
    assert!(
        contradicted.stderr.contains("arm.toml")
            && contradicted
                .stderr
                .contains("contradicts --python-platform x86_64-manylinux_2_28"),
        "{}",
        contradicted.stderr
    );
    assert!(!dir.path().join("pylock.toml").exists());
    // One that agrees is fine.
    lock(&["--python-platform", "aarch64-manylinux_2_28"]).expect_code(0);
}
