//! `vari mirror` to destinations other than a directory, and its store: the fleet's lock
//! (`crate::mirror`'s upstream) mirrored to a real S3 object store (SeaweedFS, or Garage where
//! `VARI_GARAGE` names one, started by the test;
//! skipped without it except under CI), read back through the bucket's website endpoint by
//! `vari index validate`, pip, uv and vari; a re-run that uploads nothing; a download that fails
//! and publishes nothing; `--keep` and removals. And two runs on one store taking turns.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use vari_test_support::fleet;
use vari_test_support::installers::Installer;
use vari_test_support::s3_store::S3Store;
use vari_test_support::site::{get, head};
use vari_test_support::venv::{bare_venv, uv};

use crate::common::{run, vari};
use crate::mirror::{
    assert_plain_install, fleet_lock, mirror_command, set, upstream, write_lock, A100_EXTRA,
    CPU_FILES,
};
use crate::sync::listed;

const BUCKET: &str = "vari-mirror";
const PREFIX: &str = "fleet";

fn s3_url() -> String {
    format!("s3://{BUCKET}/{PREFIX}")
}

/// [`mirror_command`] to `s3://BUCKET/PREFIX` with `store`'s credentials and vari's cache
/// (which holds the store) in `dir/cache`.
fn mirror_to_s3(store: &S3Store, dir: &Path, lock: &Path, classes: &[&str]) -> Command {
    let mut command = mirror_command(dir, lock, Path::new(&s3_url()), classes);
    store.client_env(&mut command);
    command
        .env("HOME", dir.join("no-home"))
        .env("VARI_CACHE_DIR", dir.join("cache"));
    command
}

/// The distribution files the site at `site` (a website URL) links, from its project pages
/// (PEP 691 JSON), without `.metadata` and `*-variants.json`.
fn linked(site: &str) -> BTreeSet<String> {
    let root: serde_json::Value =
        serde_json::from_slice(&get(&format!("{site}/simple/index.json"))).unwrap();
    let mut files = BTreeSet::new();
    for project in root["projects"].as_array().unwrap() {
        let name = project["name"].as_str().unwrap();
        let page: serde_json::Value =
            serde_json::from_slice(&get(&format!("{site}/simple/{name}/index.json"))).unwrap();
        for file in page["files"].as_array().unwrap() {
            let filename = file["filename"].as_str().unwrap();
            if !filename.ends_with("-variants.json") {
                files.insert(filename.to_owned());
            }
        }
    }
    files
}

/// The status of `files/{name}` on the website `site` (the name percent-encoded as the pages
/// link it).
fn file_status(site: &str, name: &str) -> u16 {
    head(&format!("{site}/files/{}", name.replace('+', "%2B")), None).status
}

/// The labels the published `*-variants.json` keeps.
fn kept_labels(site: &str, file: &str) -> Vec<String> {
    let value: serde_json::Value =
        serde_json::from_slice(&get(&format!("{site}/files/{file}"))).unwrap();
    value["variants"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn mirrors_two_classes_to_s3_and_installers_install_from_its_website() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let site = format!("{}/{PREFIX}", store.website(BUCKET));
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));

    let first = run(&mut mirror_to_s3(
        &store,
        dir.path(),
        &lock,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    assert!(
        first.stdout.starts_with("mirrored 10 files (")
            && first.stdout.contains("saved 6 files, ")
            && first.stdout.contains("downloaded 10 file(s)"),
        "{}",
        first.stdout
    );
    let mut expected = set(&CPU_FILES);
    expected.extend(set(&A100_EXTRA));
    assert_eq!(linked(&site), expected);
    for name in &expected {
        assert_eq!(file_status(&site, name), 200, "{name}");
        assert_eq!(
            file_status(&site, &format!("{name}.metadata")),
            200,
            "{name}"
        );
    }
    // A variant no class selects is neither linked nor uploaded.
    assert_eq!(
        file_status(&site, "vari_demo-1.0.0-py3-none-any-cu130.whl"),
        404
    );
    assert_eq!(
        kept_labels(&site, "vari_demo-1.0.0-variants.json"),
        ["cu128", "null"]
    );
    // The store is vari's cache, under a name made from the destination.
    let stores: Vec<_> = std::fs::read_dir(dir.path().join("cache/mirror"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        // Beside it, the lock that keeps two runs with different stores from racing.
        .filter(|name| !name.ends_with(".lock"))
        .collect();
    assert!(
        stores.len() == 1 && stores[0].starts_with("s3-vari-mirror-"),
        "{stores:?}"
    );
    run(vari()
        .args(["index", "validate"])
        .arg(format!("{site}/simple/")))
    .expect_code(0);

    // Nothing changed: nothing is downloaded, nothing uploaded.
    up.server.clear_seen();
    let again = run(&mut mirror_to_s3(
        &store,
        dir.path(),
        &lock,
        &["cpu", "a100"],
    ))
    .expect_code(0);
    assert!(
        again
            .stdout
            .contains("downloaded 0 file(s) (0 B); published 0 new or changed site file(s)"),
        "{}",
        again.stdout
    );
    assert!(up.downloads().is_empty(), "{:?}", up.downloads());

    // The upstream stops; the installers read the bucket's website only.
    drop(up.runtime);
    let index = format!("{site}/simple/");
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    for class in ["cpu", "a100"] {
        let (_, profile) = profiles.iter().find(|(name, _)| name == class).unwrap();
        let venv = dir.path().join(format!("venv-{class}"));
        bare_venv(&venv);
        run(vari()
            .args(["install", "app-like", "--index-url", &index, "--installer"])
            .arg(uv())
            .arg("--python")
            .arg(&venv)
            .arg("--profile")
            .arg(profile)
            .env("UV_CACHE_DIR", dir.path().join("uv-cache")))
        .expect_code(0);
        assert_eq!(listed(&venv), fleet::installed(class), "{class}");
    }
    // Plain pip, which knows no variants, installs the plain wheels (from a class's own index
    // too, whose JSON pages are served as PEP 691's).
    assert_plain_install(Installer::NewestPip, &index);
    assert_plain_install(Installer::NewestPip, &format!("{site}/t/a100/simple/"));
    assert_eq!(
        head(&format!("{site}/t/a100/simple/vari-demo/index.json"), None).header("content-type"),
        Some("application/vnd.pypi.simple.v1+json")
    );

    // A class dropped with --keep stays published; without it, its files go, after the pages.
    let kept = run(mirror_to_s3(&store, dir.path(), &lock, &["cpu"]).arg("--keep")).expect_code(0);
    assert!(kept.stdout.contains("kept 2 file(s)"), "{}", kept.stdout);
    assert_eq!(file_status(&site, A100_EXTRA[0]), 200);
    let dropped = run(&mut mirror_to_s3(&store, dir.path(), &lock, &["cpu"])).expect_code(0);
    assert!(
        dropped.stdout.contains("removed 2 file(s)"),
        "{}",
        dropped.stdout
    );
    assert_eq!(linked(&site), set(&CPU_FILES));
    for name in A100_EXTRA {
        assert_eq!(file_status(&site, name), 404, "{name}");
    }
    // The dropped class's index goes with it.
    assert_eq!(
        head(&format!("{site}/t/a100/simple/index.html"), None).status,
        404
    );
    assert_eq!(
        head(&format!("{site}/t/cpu/simple/index.html"), None).status,
        200
    );
    assert_eq!(
        kept_labels(&site, "vari_demo-1.0.0-variants.json"),
        ["null"]
    );
    run(vari().args(["index", "validate"]).arg(&index)).expect_code(0);

    // The store and the destination's lock beside it are the cache's `mirror` area: counted
    // by `vari cache info`, removed by name, and what was published stays.
    let cache = |args: &[&str]| {
        run(vari()
            .arg("cache")
            .args(args)
            .env("VARI_CACHE_DIR", dir.path().join("cache")))
    };
    let info = cache(&["info", "--json"]).expect_code(0).json();
    let area = info["areas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["area"] == "mirror")
        .unwrap()
        .clone();
    assert_eq!(area["entries"], 2, "{info}");
    assert!(area["bytes"].as_u64().unwrap() > 0, "{info}");
    let cleaned = cache(&["clean", "mirror", "--json"]).expect_code(0).json();
    assert_eq!(cleaned["removed"], serde_json::json!([area]));
    assert_eq!(
        std::fs::read_dir(dir.path().join("cache/mirror"))
            .unwrap()
            .count(),
        0
    );
    assert_eq!(linked(&site), set(&CPU_FILES));
}

#[test]
fn a_download_that_fails_publishes_nothing_to_the_object_store() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    store.create_bucket(BUCKET);
    let site = format!("{}/{PREFIX}", store.website(BUCKET));
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    run(&mut mirror_to_s3(&store, dir.path(), &lock, &["cpu"])).expect_code(0);
    let root = get(&format!("{site}/simple/index.html"));
    let page = get(&format!("{site}/simple/vari-demo/index.html"));

    // The upstream serves other bytes under the name the lock pins for a100.
    let tampered = A100_EXTRA[0];
    std::fs::write(up.dir.join(tampered), b"not the wheel the lock pins").unwrap();
    let refused = run(&mut mirror_to_s3(
        &store,
        dir.path(),
        &lock,
        &["cpu", "a100"],
    ))
    .expect_code(1);
    assert!(
        refused.stderr.contains(&format!(
            "error: {}: nothing was published; the files that arrived are kept for the next run",
            s3_url()
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(get(&format!("{site}/simple/index.html")), root);
    assert_eq!(get(&format!("{site}/simple/vari-demo/index.html")), page);
    for name in A100_EXTRA {
        assert_eq!(file_status(&site, name), 404, "{name}");
    }
    assert_eq!(linked(&site), set(&CPU_FILES));
}

#[test]
fn an_unreachable_store_fails_before_anything_is_downloaded() {
    let Some(store) = S3Store::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    // No bucket was created.
    let refused = run(&mut mirror_to_s3(&store, dir.path(), &lock, &["cpu"])).expect_code(1);
    assert!(
        refused.stderr.starts_with(&format!(
            "error: {}: listing failed: not found (HTTP 404)",
            s3_url()
        )),
        "{}",
        refused.stderr
    );
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(up.downloads().is_empty(), "{:?}", up.downloads());
}

#[test]
fn a_second_run_on_the_same_store_waits_for_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let site = dir.path().join("site");

    // The first run holds the store while the upstream keeps it waiting.
    up.server.set(|knobs| knobs.hang = true);
    let mut first = mirror_command(dir.path(), &lock, &site, &["cpu"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while up.downloads().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never asked for a file"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let mut second = mirror_command(dir.path(), &lock, &site, &["cpu"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(second.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let lock_file = site.join(".vari-mirror/lock");
    assert_eq!(
        line,
        format!(
            "note: blocking: waiting for the lock {} (another `vari mirror` is using this store)\n",
            lock_file.display()
        )
    );
    // It waits; the first run's end lets it through. (The first run's requests stay
    // unanswered whatever the knob says now, so it cannot finish before it is killed.)
    assert!(second.try_wait().unwrap().is_none());
    up.server.set(|knobs| knobs.hang = false);
    first.kill().unwrap();
    first.wait().unwrap();
    let output = second.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(output.status.success(), "{rest}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("mirrored 8 files ("), "{stdout}");
    run(vari().args(["index", "validate"]).arg(&site)).expect_code(0);
}

/// The fleet mirrored to a SeaweedFS cluster (one master, three volume servers, every object on
/// two of them) that loses a volume server in the middle of a publish and again between two
/// runs: no page ever names an object that is not there, the re-run completes without
/// downloading again, and pip and uv install from the site read back.
#[test]
fn a_cluster_losing_a_volume_server_never_serves_a_page_naming_a_missing_file() {
    let Some(binary) = vari_test_support::seaweed::binary_or_skip() else {
        return;
    };
    let mut cluster = vari_test_support::seaweed::Cluster::start(&binary);
    cluster.create_bucket(BUCKET);
    let site = format!("{}/{PREFIX}", cluster.website(BUCKET));
    let endpoint = cluster.s3_endpoint();
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = write_lock(dir.path(), &fleet_lock(&up));
    let mirror = |classes: &[&str]| {
        let mut command = mirror_command(dir.path(), &lock, Path::new(&s3_url()), classes);
        vari_test_support::s3_store::set_client_env(&mut command, &endpoint);
        command
            .env("HOME", dir.path().join("no-home"))
            .env("VARI_CACHE_DIR", dir.path().join("cache"));
        command
    };
    // Every file a page links is there.
    let consistent = |when: &str| {
        for name in linked(&site) {
            assert_eq!(
                file_status(&site, &name),
                200,
                "{when}: {name} is linked but missing"
            );
        }
    };
    let mut both = set(&CPU_FILES);
    both.extend(set(&A100_EXTRA));

    run(&mut mirror(&["cpu"])).expect_code(0);
    assert_eq!(linked(&site), set(&CPU_FILES));
    consistent("first publish");

    // A second class's files go up; once the first of them has landed, a volume server fails.
    let mut publish = mirror(&["cpu", "a100"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while file_status(&site, A100_EXTRA[0]) != 200 && publish.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "no file was uploaded");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    cluster.stop_volume(1);
    let interrupted = publish.wait_with_output().unwrap();
    eprintln!(
        "publish with a volume server lost: {}\n{}{}",
        interrupted.status,
        String::from_utf8_lossy(&interrupted.stdout),
        String::from_utf8_lossy(&interrupted.stderr)
    );
    consistent("a volume server lost during the publish");

    // The server comes back; the re-run completes without downloading anything again.
    cluster.start_volume(1);
    up.server.clear_seen();
    let again = run(&mut mirror(&["cpu", "a100"])).expect_code(0);
    eprintln!("re-run: {}", again.stdout);
    assert!(up.downloads().is_empty(), "{:?}", up.downloads());
    assert_eq!(linked(&site), both);
    consistent("the re-run");

    // Another server fails between two runs: nothing is uploaded, everything is still read.
    cluster.stop_volume(2);
    let unchanged = run(&mut mirror(&["cpu", "a100"])).expect_code(0);
    assert!(
        unchanged
            .stdout
            .contains("published 0 new or changed site file(s)"),
        "{}",
        unchanged.stdout
    );
    consistent("a volume server lost between two runs");
    let index = format!("{site}/simple/");
    run(vari().args(["index", "validate"]).arg(&index)).expect_code(0);

    // pip and uv install from the site read back from the cluster.
    assert_plain_install(Installer::NewestPip, &index);
    let profiles = fleet::write_profiles(&dir.path().join("profiles"));
    let (_, profile) = profiles.iter().find(|(name, _)| name == "a100").unwrap();
    let venv = dir.path().join("venv-a100");
    bare_venv(&venv);
    run(vari()
        .args(["install", "app-like", "--index-url", &index, "--installer"])
        .arg(uv())
        .arg("--python")
        .arg(&venv)
        .arg("--profile")
        .arg(profile)
        .env("UV_CACHE_DIR", dir.path().join("uv-cache")))
    .expect_code(0);
    assert_eq!(listed(&venv), fleet::installed("a100"));
    drop(cluster);
}
