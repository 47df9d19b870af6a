//! `vari select` and `vari download` against vari-client's test index on 127.0.0.1.

use std::path::Path;

use crate::common::{assert_output, run, vari, Run};

use vari_test_support::index::{FileAttrs, TestIndex};

/// A running index over `dir` (its runtime lives as long as the value).
struct Index {
    server: TestIndex,
    _runtime: tokio::runtime::Runtime,
}

fn serve(dir: &Path) -> Index {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(dir));
    Index {
        server,
        _runtime: runtime,
    }
}

/// A wheel in `dir` (with a RECORD, as every reader requires: the shared test helper) whose
/// dependencies depend on its variant.
fn wheel(dir: &Path, filename: &str, variant_json: Option<&str>) {
    vari_test_support::wheels::wheel(
        dir,
        filename,
        variant_json,
        &[
            "fast-math; \"x86_64 :: level :: v3\" in variant_properties",
            "slow-math; variant_label == \"\"",
        ],
    );
}

const DOCUMENT: &str = r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
  "default-priorities": {"namespace": ["x86_64"]},
  "variants": {"v4": {"x86_64": {"level": ["v4"]}}, "v3": {"x86_64": {"level": ["v3"]}}}}"#;

/// `demo 1.0`: x86-64-v4 and v3 builds and a plain wheel, with its variants.json; and a
/// profile supporting x86-64 up to v3 on Linux x86_64.
fn demo(dir: &Path) -> std::path::PathBuf {
    for label in ["v4", "v3"] {
        let mut doc: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap();
        doc["variants"]
            .as_object_mut()
            .unwrap()
            .retain(|l, _| l == label);
        wheel(
            dir,
            &format!("demo-1.0-py3-none-any-{label}.whl"),
            Some(&doc.to_string()),
        );
    }
    wheel(dir, "demo-1.0-py3-none-any.whl", None);
    std::fs::write(dir.join("demo-1.0-variants.json"), DOCUMENT).unwrap();
    crate::common::v3_profile(dir)
}

fn select(index: &Index, profile: &Path, args: &[&str]) -> Run {
    let mut cmd = vari();
    cmd.arg("select")
        .args(args)
        .arg("--index-url")
        .arg(index.server.index_url())
        .arg("--profile")
        .arg(profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    run(&mut cmd)
}

#[test]
fn select_prints_one_line_per_requirement_with_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo"]).expect_code(0);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("demo 1.0  demo-1.0-py3-none-any-v3.whl  v3  the only variant that fits"),
        "{first}"
    );
    assert!(
        run.stdout.contains("requires: fast-math\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_variants_json_with_a_wrong_hash_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    index.server.attrs(
        "demo-1.0-variants.json",
        FileAttrs {
            wrong_sha256: true,
            ..FileAttrs::default()
        },
    );
    let run = select(&index, &profile, &["demo"]).expect_code(0);
    // The variant wheels lose their metadata; the plain wheel still counts.
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("demo 1.0  demo-1.0-py3-none-any.whl "),
        "{first}"
    );
    assert!(
        run.stderr.lines().any(|l| l.starts_with("warning:")
            && l.contains("/demo-1.0-variants.json")
            && l.contains("sha256")),
        "{}",
        run.stderr
    );
}

#[test]
fn select_json_has_the_contract_fields() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo>=1", "--json"]).expect_code(0);
    let json = run.json();
    crate::common::assert_json_schema("select", &json);
    let selection = &json["selections"][0];
    for key in [
        "requirement",
        "name",
        "version",
        "filename",
        "url",
        "label",
        "sha256",
        "reason",
    ] {
        assert!(selection.get(key).is_some(), "{key} missing: {selection}");
    }
    assert_eq!(selection["requirement"], "demo>=1");
    assert_eq!(selection["label"], "v3");
    let sha = selection["sha256"].as_str().unwrap();
    let bytes = std::fs::read(dir.path().join("demo-1.0-py3-none-any-v3.whl")).unwrap();
    assert_eq!(sha, vari_test_support::wheels::sha256_hex(&bytes));
}

#[test]
fn explain_groups_the_files_by_fate() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    for n in 0..40 {
        std::fs::copy(
            dir.path().join("demo-1.0-py3-none-any.whl"),
            dir.path()
                .join(format!("demo-1.0-cp3{n}-cp3{n}-win_amd64.whl")),
        )
        .unwrap();
    }
    let index = serve(dir.path());
    let run = select(&index, &profile, &["demo", "--explain"]).expect_code(0);
    // The chosen file, the rejected variant with its reason, and forty wrong-tag wheels as one
    // line with a count and examples.
    assert_output(
        &run.stdout,
        r#"demo 1.0  demo-1.0-py3-none-any-v3.whl  v3  the only variant that fits facts [DIR]/v3.toml
  requires: fast-math

  demo 1.0 (43 files):
    ✓ chosen   demo-1.0-py3-none-any-v3.whl
     1 next   demo-1.0-py3-none-any.whl
    ✗ demo-1.0-py3-none-any-v4.whl: no supported value for `x86_64 :: level`: the wheel has v4; the target supports v3, v2, v1
    ✗ 40 files (cp30-cp30-win_amd64, cp31-cp31-win_amd64, cp310-cp310-win_amd64, … (40 in all)): tags for another Python or platform than 3.12 on Linux x86_64 glibc 2.28
"#,
        &[(dir.path(), "[DIR]")],
    );
}

#[test]
fn nothing_fits_is_one_error_naming_what_would() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    std::fs::remove_file(dir.path().join("demo-1.0-py3-none-any.whl")).unwrap();
    let old = dir.path().join("old.toml");
    std::fs::write(
        &old,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 2\n",
    )
    .unwrap();
    drop(profile);
    let index = serve(dir.path());
    select(&index, &old, &["demo"]).expect_one_error(&[
        "demo 1.0 has no build for facts",
        "builds for x86-64 CPUs (v3, v4)",
        "the wheel has v3",
    ]);
}

#[test]
fn no_variants_fetches_no_variant_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let out = select(&index, &profile, &["demo", "--no-variants"]).expect_code(0);
    assert!(
        out.stdout.contains("demo-1.0-py3-none-any.whl"),
        "{}",
        out.stdout
    );
    let seen: Vec<String> = index.server.seen().into_iter().map(|s| s.path).collect();
    // Neither the variants.json nor a variant wheel's own variant.json (range reads) can
    // change the answer, so neither is fetched.
    assert!(
        !seen.iter().any(|p| p.ends_with("-variants.json")
            || p.ends_with("-v3.whl")
            || p.ends_with("-v4.whl")),
        "{seen:?}"
    );
    // With variants on, the same run reads the variants.json (the test can fail).
    index.server.clear_seen();
    select(&index, &profile, &["demo"]).expect_code(0);
    let seen: Vec<String> = index.server.seen().into_iter().map(|s| s.path).collect();
    assert!(
        seen.iter().any(|p| p.ends_with("-variants.json")),
        "{seen:?}"
    );
}

/// `vari COMMAND ARGS` with no index named anywhere: no pip/uv index variables (unless
/// `extra` sets one), and every proxy variable pointing at a closed port on 127.0.0.1, so a
/// request to PyPI fails at once without reaching the network.
fn unnamed(args: &[&str], extra: &[(&str, &str)]) -> Run {
    let mut cmd = vari();
    cmd.args(args)
        .env_remove("UV_INDEX_URL")
        .env_remove("UV_DEFAULT_INDEX")
        .env_remove("PIP_INDEX_URL")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for variable in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        cmd.env(variable, "http://127.0.0.1:1");
    }
    cmd.envs(extra.iter().copied());
    run(&mut cmd)
}

#[test]
fn without_an_index_select_uses_the_index_config_show_reports() {
    for (extra, expected) in [
        (&[][..], "https://pypi.org/simple/"),
        (
            &[("PIP_INDEX_URL", "http://127.0.0.1:1/pip")][..],
            "http://127.0.0.1:1/pip/",
        ),
    ] {
        let shown = unnamed(&["config", "show", "--json"], extra)
            .expect_code(0)
            .json();
        assert_eq!(shown["settings"]["index-url"]["value"], expected, "{shown}");
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["select", "demo", "--python-version", "3.12", "--refresh"];
        let cache = dir.path().to_str().unwrap().to_owned();
        let mut extra = extra.to_vec();
        extra.push(("VARI_CACHE_DIR", &cache));
        args.extend(["--python-platform", "x86_64-manylinux_2_28"]);
        unnamed(&args, &extra).expect_one_error(&[&format!("{expected}demo/")]);
    }
}

fn download(index: &Index, profile: &Path, dest: &Path) -> Run {
    let mut cmd = vari();
    cmd.args(["download", "demo", "-d"])
        .arg(dest)
        .arg("--index-url")
        .arg(index.server.index_url())
        .arg("--profile")
        .arg(profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    run(&mut cmd)
}

#[test]
fn download_writes_the_chosen_wheel_and_prints_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let dest = tempfile::tempdir().unwrap();
    let run = download(&index, &profile, &dest.path().join("wheels")).expect_code(0);
    let path = dest.path().join("wheels/demo-1.0-py3-none-any-v3.whl");
    assert_eq!(run.stdout.trim(), path.display().to_string());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(dir.path().join("demo-1.0-py3-none-any-v3.whl")).unwrap()
    );
}

#[test]
fn a_hash_mismatch_leaves_nothing_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    index.server.attrs(
        "demo-1.0-py3-none-any-v3.whl",
        FileAttrs {
            wrong_sha256: true,
            ..FileAttrs::default()
        },
    );
    let dest = tempfile::tempdir().unwrap();
    download(&index, &profile, dest.path())
        .expect_one_error(&["demo-1.0-py3-none-any-v3.whl", "sha256"]);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

#[test]
fn a_broken_transfer_leaves_nothing_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    index.server.attrs(
        "demo-1.0-py3-none-any-v3.whl",
        FileAttrs {
            truncate_after: Some(100),
            ..FileAttrs::default()
        },
    );
    let dest = tempfile::tempdir().unwrap();
    download(&index, &profile, dest.path()).expect_one_error(&["demo-1.0-py3-none-any-v3.whl"]);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

/// A PyTorch-sized project page: `torch` 2.6.0 to 2.10.0 and 2.11.0rc1, each with wheels for
/// 4 CPython versions x 5 platforms x the 7 labels of the real PyTorch 2.10 `variants.json`
/// plus a plain wheel, an sdist and its `variants.json` (972 files). 2.10.0 is yanked, so
/// 2.9.0 is chosen. Only the chosen wheel is read (for its dependencies) and is a real wheel;
/// the other files are listed but never fetched, so they are empty.
fn torch_page(dir: &Path) -> (Vec<String>, std::path::PathBuf) {
    let document = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/variants-json/torch-2.10.0-variants.json"),
    )
    .unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&document).unwrap();
    let mut labels: Vec<Option<String>> = parsed["variants"]
        .as_object()
        .unwrap()
        .keys()
        .map(|l| Some(l.clone()))
        .collect();
    labels.push(None);
    let chosen = "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl";
    let mut yanked = Vec::new();
    for version in ["2.6.0", "2.7.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0rc1"] {
        let mut names = vec![format!("torch-{version}.tar.gz")];
        for py in ["cp310", "cp311", "cp312", "cp313"] {
            for platform in [
                "manylinux_2_28_x86_64",
                "manylinux_2_28_aarch64",
                "win_amd64",
                "macosx_11_0_arm64",
                "musllinux_1_2_x86_64",
            ] {
                for label in &labels {
                    let suffix = label.as_ref().map(|l| format!("-{l}")).unwrap_or_default();
                    names.push(format!("torch-{version}-{py}-{py}-{platform}{suffix}.whl"));
                }
            }
        }
        for name in &names {
            if name == chosen {
                let mut doc = parsed.clone();
                doc["variants"]
                    .as_object_mut()
                    .unwrap()
                    .retain(|l, _| l == "cuda12.8");
                wheel(dir, name, Some(&doc.to_string()));
            } else {
                std::fs::write(dir.join(name), b"").unwrap();
            }
        }
        std::fs::write(
            dir.join(format!("torch-{version}-variants.json")),
            &document,
        )
        .unwrap();
        if version == "2.10.0" {
            yanked = names;
        }
    }
    let profile = dir.join("gpu.toml");
    std::fs::write(
        &profile,
        "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.6\"\n",
    )
    .unwrap();
    (yanked, profile)
}

#[test]
fn explain_stays_readable_on_a_thousand_file_page() {
    let dir = tempfile::tempdir().unwrap();
    let (yanked, profile) = torch_page(dir.path());
    assert!(std::fs::read_dir(dir.path()).unwrap().count() > 950);
    let index = serve(dir.path());
    for name in yanked {
        index.server.attrs(
            &name,
            FileAttrs {
                yanked: Some(Some("broken CUDA builds".to_owned())),
                ..FileAttrs::default()
            },
        );
    }
    let run = select(&index, &profile, &["torch", "--explain"]).expect_code(0);
    let out = &run.stdout;
    print!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() < 60, "{} lines:\n{out}", lines.len());
    // The answer, and why the newest version was passed over.
    assert!(
        lines[0].starts_with(
            "torch 2.9.0  torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl  cuda12.8"
        ),
        "{out}"
    );
    assert!(lines[0].contains("torch 2.10.0 is yanked"), "{out}");
    // Grouped by version, newest first; the pre-release is only counted.
    let headers: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("  torch "))
        .copied()
        .collect();
    assert_eq!(
        headers,
        ["  torch 2.10.0 (161 files):", "  torch 2.9.0 (161 files):"],
        "{out}"
    );
    assert!(
        out.contains("not considered: 1 pre-release (2.11.0rc1)"),
        "{out}"
    );
    // The chosen file, and the reason for the best rejected ones: the other CUDA builds, each
    // with what it needs.
    assert!(
        out.contains("✓ chosen   torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl"),
        "{out}"
    );
    let rejected_variants: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("-cuda13.0.whl") || l.contains("-rocm7.1.whl"))
        .copied()
        .collect();
    assert!(!rejected_variants.is_empty(), "{out}");
    // Runs of files with the same fate are one line with a count and examples.
    let wrong_tags: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("tags for another Python or platform"))
        .copied()
        .collect();
    assert!(!wrong_tags.is_empty(), "{out}");
    for line in &wrong_tags {
        // Examples without the name and version the header gives.
        assert!(line.contains(" files (cp310-cp310-"), "{line}");
        assert!(line.contains("in all)"), "{line}");
    }
    let yanked_line = lines
        .iter()
        .find(|l| l.contains("yanked: broken CUDA builds"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        yanked_line.contains("161 files") || yanked_line.contains("160 files"),
        "{out}"
    );
    // No line is a wall of filenames.
    assert!(lines.iter().all(|l| l.chars().count() < 240), "{out}");
}

/// A wheel with a second `.dist-info` directory (first in the archive, with its own
/// `variant.json`): installers refuse it, and a reader taking the first `variant.json` it meets
/// would read the wrong one. Every command holds it to the same rule: `rank` and `select` from a
/// find-links directory skip it with a warning naming it.
#[test]
fn a_wheel_with_two_dist_info_directories_is_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    std::fs::remove_file(dir.path().join("demo-1.0-variants.json")).unwrap();
    let two = "demo-1.0-py3-none-any-v3.whl";
    vari_test_support::wheels::add_second_dist_info(&dir.path().join(two), Some(DOCUMENT));

    let ranked = run(vari()
        .arg("rank")
        .arg(dir.path())
        .arg("--profile")
        .arg(&profile));
    assert!(
        ranked
            .stderr
            .lines()
            .any(|l| l.contains(two) && l.contains("more than one `.dist-info` directory")),
        "{}",
        ranked.stderr
    );

    let selected = run(vari()
        .args(["select", "demo", "--find-links"])
        .arg(dir.path())
        .arg("--profile")
        .arg(&profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]));
    assert!(
        selected
            .stderr
            .lines()
            .any(|l| l.contains(two) && l.contains("more than one `.dist-info` directory")),
        "{}\n{}",
        selected.stdout,
        selected.stderr
    );
    assert!(
        !selected.stdout.contains(two),
        "{}\n{}",
        selected.stdout,
        selected.stderr
    );
}

/// The same wheel when the release's `variants.json` describes it (from a find-links directory
/// and from an index): the metadata never opens the wheel, so the choice fell on it and reading
/// its dependencies only warned. The wheel is refused as `rank` and installers refuse it (the
/// reason named on stderr), and the next candidate, the plain wheel, is chosen.
#[test]
fn a_wheel_with_two_dist_info_directories_is_refused_when_variants_json_describes_it() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let two = "demo-1.0-py3-none-any-v3.whl";
    vari_test_support::wheels::add_second_dist_info(&dir.path().join(two), None);
    let index = serve(dir.path());
    let target = [
        "--python-version",
        "3.12",
        "--python-platform",
        "x86_64-manylinux_2_28",
    ];
    let from_dir = run(vari()
        .args(["select", "demo", "--find-links"])
        .arg(dir.path())
        .arg("--profile")
        .arg(&profile)
        .args(target));
    let from_index = select(&index, &profile, &["demo"]);
    for selected in [from_dir, from_index] {
        let context = format!("{}\n{}", selected.stdout, selected.stderr);
        assert!(
            selected
                .stderr
                .lines()
                .any(|l| l.contains(two) && l.contains("more than one `.dist-info` directory")),
            "{context}"
        );
        assert!(!selected.stdout.contains(two), "{context}");
        assert!(
            selected.stdout.contains("demo-1.0-py3-none-any.whl"),
            "{context}"
        );
    }
}

/// Issue 33, item 11: where `select` never opens the wheel (the index serves its PEP 658
/// metadata), the commands that do open it refuse it with the one message every reader gives:
/// `download` (nothing written), `wheel inspect`, `rank`. Before, `download` wrote it.
#[test]
fn a_wheel_with_two_dist_info_directories_is_refused_by_every_command_that_opens_it() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let two = "demo-1.0-py3-none-any-v3.whl";
    let path = dir.path().join(two);
    let metadata = vari_test_support::wheels::member_text(
        &std::fs::read(&path).unwrap(),
        ".dist-info/METADATA",
    );
    std::fs::write(dir.path().join(format!("{two}.metadata")), metadata).unwrap();
    vari_test_support::wheels::add_second_dist_info(&path, None);
    let index = serve(dir.path());
    index.server.attrs(
        two,
        FileAttrs {
            core_metadata: Some(vari_test_support::index::MetadataSpelling::Core),
            ..FileAttrs::default()
        },
    );
    let message = "has more than one `.dist-info` directory (aaa-1.0.dist-info, \
                   demo-1.0.dist-info): a wheel has exactly one";
    let dest = tempfile::tempdir().unwrap();
    let downloaded = download(&index, &profile, dest.path());
    downloaded.expect_one_error(&[two, message]);
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
    // `wheel inspect` shows its report of the wheel, and fails with the same one line.
    let inspected = run(vari().args(["wheel", "inspect"]).arg(&path)).expect_code(1);
    assert!(
        inspected
            .stderr
            .lines()
            .any(|l| l.starts_with("error: ") && l.contains(two) && l.contains(message)),
        "{}",
        inspected.stderr
    );
    let ranked = run(vari().arg("rank").arg(&path).arg("--profile").arg(&profile));
    assert!(
        ranked
            .stderr
            .lines()
            .any(|l| l.contains(two) && l.contains(message)),
        "{}",
        ranked.stderr
    );
}

/// `--python-platform` for the other architecture, no profile: this machine's CPU does not
/// describe the target, so its baseline decides (x86-64-v2, or Armv8.0-A), and `--explain` and
/// `-v` say so. Before, an x86-64-v3 machine chose the v3 build for an aarch64 target.
#[test]
fn another_architecture_gets_its_baseline_cpu_not_this_machines() {
    let dir = tempfile::tempdir().unwrap();
    demo(dir.path());
    let index = serve(dir.path());
    let other = if std::env::consts::ARCH == "x86_64" {
        "aarch64-manylinux_2_28"
    } else {
        "x86_64-manylinux_2_28"
    };
    let mut cmd = vari();
    cmd.args(["-v", "select", "demo", "--explain", "--index-url"])
        .arg(index.server.index_url())
        .args(["--python-version", "3.12", "--python-platform", other]);
    let run = run(&mut cmd).expect_code(0);
    let note = format!("--python-platform {other} is not this machine's architecture");
    assert!(
        run.stdout.contains("✓ chosen   demo-1.0-py3-none-any.whl"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("target: {note}")),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains(&note), "{}", run.stderr);
}

/// One requirement failing hides neither the others' choices nor the other failures: each
/// failure gets its own `error:` line, in the order given, and the command fails.
#[test]
fn every_requirement_gets_its_line_and_any_failure_fails_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let requirements = ["--no-deps", "demo>=2", "demo", "absent"];
    let run = select(&index, &profile, &requirements).expect_code(1);
    assert_output(
        &run.stdout,
        "demo 1.0  demo-1.0-py3-none-any-v3.whl  v3  the only variant that fits facts \
         [DIR]/v3.toml\n",
        &[(dir.path(), "[DIR]")],
    );
    assert_output(
        &run.stderr,
        "error: demo>=2: none of the 1 version of demo satisfies the requirement\n\
         error: no index or find-links source has a project named `absent` (looked in: \
         http://127.0.0.1:[PORT]/simple/absent/)\n",
        &[],
    );
    // The same, as data: the failures carry their error.
    let mut args = vec!["--json"];
    args.extend(requirements);
    let run = select(&index, &profile, &args).expect_code(1);
    let selections = &run.json()["selections"];
    assert_eq!(selections.as_array().unwrap().len(), 3);
    assert!(selections[0]["error"].as_str().unwrap().contains("demo>=2"));
    assert!(selections[0]["filename"].is_null());
    assert_eq!(selections[1]["filename"], "demo-1.0-py3-none-any-v3.whl");
    assert!(selections[1].get("error").is_none());
    assert!(selections[2]["error"].as_str().unwrap().contains("absent"));
}

/// `download` fetches what was chosen, names each failure, fails, and with `--json` says
/// `select --json`'s fields with the path of each written wheel.
#[test]
fn download_keeps_going_past_a_failure_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let profile = demo(dir.path());
    let index = serve(dir.path());
    let dest = tempfile::tempdir().unwrap();
    let mut cmd = vari();
    cmd.args(["download", "--json", "absent", "demo", "-d"])
        .arg(dest.path())
        .arg("--index-url")
        .arg(index.server.index_url())
        .arg("--profile")
        .arg(&profile)
        .args([
            "--python-version",
            "3.12",
            "--python-platform",
            "x86_64-manylinux_2_28",
        ]);
    let run = run(&mut cmd).expect_code(1);
    assert_output(
        &run.stderr,
        "error: no index or find-links source has a project named `absent` (looked in: \
         http://127.0.0.1:[PORT]/simple/absent/)\n",
        &[],
    );
    crate::common::assert_json_schema("download", &run.json());
    let selections = &run.json()["selections"];
    assert!(selections[0]["error"].as_str().unwrap().contains("absent"));
    assert!(selections[0]["path"].is_null());
    let path = dest.path().join("demo-1.0-py3-none-any-v3.whl");
    assert_eq!(selections[1]["path"], path.display().to_string());
    assert_eq!(selections[1]["label"], "v3");
    assert!(path.is_file());
}
