//! `build` on the fixture wheels and on generated ones.

use std::io::Read;
use std::path::Path;

use vari_core::metadata::{combine, read_json, write_json, SourceKind};
use vari_publish::{build, BuildError, BuildOptions, BuildStats, FilePlacement};

use crate::common::*;

fn build_dir(input: &Path, site: &Path) -> BuildStats {
    build(&BuildOptions::new(input, site)).unwrap_or_else(|e| panic!("build failed: {e}"))
}

fn page_file<'a>(page: &'a serde_json::Value, filename: &str) -> &'a serde_json::Value {
    page["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["filename"] == filename)
        .unwrap_or_else(|| panic!("{filename} not on the page: {page}"))
}

#[test]
fn fixture_wheels_make_one_project_with_its_variants_json() {
    let site = tempfile::tempdir().unwrap();
    let stats = build_dir(&fixture_wheels(), site.path());
    assert_eq!((stats.projects, stats.files, stats.read), (1, 7, 7));
    assert_eq!(stats.variants_json, ["test_package-0-variants.json"]);
    // The variants.json beside the fixtures matches the wheels: accepted without a word.
    assert_eq!(stats.skipped, []);
    assert_eq!(stats.warnings, Vec::<String>::new());

    let root = site_json(site.path(), "simple/index.json");
    assert_pep691_root(&root);
    assert_eq!(
        root["projects"],
        serde_json::json!([{"name": "test-package"}])
    );
    let page = site_json(site.path(), "simple/test-package/index.json");
    assert_pep691_project(&page);
    assert_eq!(page["name"], "test-package");
    assert_eq!(page["versions"], serde_json::json!(["0"]));
    assert_eq!(page["files"].as_array().unwrap().len(), 8);

    // Every wheel: its hash, size, requires-python from METADATA, and a PEP 658 file.
    for entry in std::fs::read_dir(fixture_wheels()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        if !name.ends_with(".whl") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let file = page_file(&page, name);
        assert_eq!(file["hashes"]["sha256"], sha256_hex(&bytes), "{name}");
        assert_eq!(file["size"], bytes.len(), "{name}");
        assert_eq!(file["url"], format!("../../files/{name}"));
        assert_eq!(file["requires-python"], ">=3.10", "{name}");
        assert_eq!(
            std::fs::read(site.path().join("files").join(name)).unwrap(),
            bytes
        );

        let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut metadata = Vec::new();
        archive
            .by_name("test_package-0.dist-info/METADATA")
            .unwrap()
            .read_to_end(&mut metadata)
            .unwrap();
        let published = std::fs::read(site.path().join(format!("files/{name}.metadata"))).unwrap();
        assert_eq!(published, metadata, "{name}.metadata");
        let hash = sha256_hex(&metadata);
        assert_eq!(file["core-metadata"]["sha256"], hash);
        assert_eq!(file["dist-info-metadata"]["sha256"], hash);
    }

    // The variants.json: linked with its hash, none of the attributes meaningless for it.
    let variants = std::fs::read(site.path().join("files/test_package-0-variants.json")).unwrap();
    let link = page_file(&page, "test_package-0-variants.json");
    assert_eq!(link["hashes"]["sha256"], sha256_hex(&variants));
    assert_eq!(link["size"], variants.len());
    for key in [
        "requires-python",
        "core-metadata",
        "dist-info-metadata",
        "yanked",
    ] {
        assert!(link.get(key).is_none(), "{key} on the variants.json link");
    }
    // It lists exactly what variantlib's own combined file for these wheels lists.
    let ours = read_json(
        std::str::from_utf8(&variants).unwrap(),
        SourceKind::IndexFile,
    )
    .unwrap();
    let reference =
        std::fs::read_to_string(fixture_wheels().join("test_package-0-variants.json")).unwrap();
    let reference = read_json(&reference, SourceKind::IndexFile).unwrap();
    assert_eq!(ours.variants, reference.variants);
    assert_eq!(ours.priorities, reference.priorities);
    assert_eq!(ours.providers, reference.providers);
}

#[test]
fn html_pages_carry_the_same_links_and_attributes() {
    let site = tempfile::tempdir().unwrap();
    build_dir(&fixture_wheels(), site.path());
    let root = std::fs::read_to_string(site.path().join("simple/index.html")).unwrap();
    assert!(
        root.contains("<a href=\"test-package/\">test-package</a>"),
        "{root}"
    );
    let html = std::fs::read_to_string(site.path().join("simple/test-package/index.html")).unwrap();
    let page = site_json(site.path(), "simple/test-package/index.json");
    for file in page["files"].as_array().unwrap() {
        let name = file["filename"].as_str().unwrap();
        let line = html
            .lines()
            .find(|l| l.contains(&format!(">{name}</a>")))
            .unwrap_or_else(|| panic!("{name} not linked:\n{html}"));
        let sha = file["hashes"]["sha256"].as_str().unwrap();
        assert!(
            line.contains(&format!("href=\"../../files/{name}#sha256={sha}\"")),
            "{line}"
        );
        if name.ends_with("-variants.json") {
            assert!(!line.contains("data-"), "{line}");
        } else {
            let meta = file["core-metadata"]["sha256"].as_str().unwrap();
            assert!(
                line.contains("data-requires-python=\"&gt;=3.10\""),
                "{line}"
            );
            assert!(
                line.contains(&format!("data-core-metadata=\"sha256={meta}\"")),
                "{line}"
            );
            assert!(
                line.contains(&format!("data-dist-info-metadata=\"sha256={meta}\"")),
                "{line}"
            );
        }
    }
}

#[test]
fn variants_json_is_the_combination_of_the_wheels() {
    let input = tempfile::tempdir().unwrap();
    let wheels: Vec<_> = ["v2", "v3", "v4"]
        .iter()
        .map(|level| WheelSpec::x86_64("fast_math", "1.2.0", level).write(input.path()))
        .collect();
    WheelSpec::plain("fast_math", "1.2.0").write(input.path());
    WheelSpec::plain("fast_math", "1.1.0").write(input.path());
    let site = tempfile::tempdir().unwrap();
    let stats = build_dir(input.path(), site.path());
    assert_eq!(stats.variants_json, ["fast_math-1.2.0-variants.json"]);

    let metas: Vec<_> = wheels
        .iter()
        .map(|w| vari_wheel::inspect(w).unwrap().metadata.unwrap())
        .collect();
    let names: Vec<String> = wheels.iter().map(|w| w.display().to_string()).collect();
    let expected = combine(names.iter().map(String::as_str).zip(&metas)).unwrap();
    let expected = write_json(&expected, expected.generation).unwrap().text;
    let written =
        std::fs::read_to_string(site.path().join("files/fast_math-1.2.0-variants.json")).unwrap();
    assert_eq!(written, expected);
    let page = site_json(site.path(), "simple/fast-math/index.json");
    assert_eq!(page["versions"], serde_json::json!(["1.1.0", "1.2.0"]));
    assert!(!site
        .path()
        .join("files/fast_math-1.1.0-variants.json")
        .exists());
}

/// A release of variant wheels only, with neither a plain wheel nor a null variant, is built
/// with a warning naming it; with a plain wheel it is not.
#[test]
fn a_release_without_a_fallback_is_warned_about() {
    let input = tempfile::tempdir().unwrap();
    for level in ["v3", "v4"] {
        WheelSpec::x86_64("fast_math", "1.2.0", level).write(input.path());
    }
    let site = tempfile::tempdir().unwrap();
    let stats = build_dir(input.path(), site.path());
    let warned: Vec<&String> = stats
        .warnings
        .iter()
        .filter(|w| w.contains("no plain wheel and no null variant"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", stats.warnings);
    assert!(warned[0].contains("1.2.0: no plain wheel"), "{}", warned[0]);

    WheelSpec::plain("fast_math", "1.2.0").write(input.path());
    let stats = build_dir(input.path(), site.path());
    assert!(
        stats.warnings.iter().all(|w| !w.contains("no plain wheel")),
        "{:?}",
        stats.warnings
    );
}

/// A `*-variants.json` in the input that is not variant metadata is a warning naming it (the
/// index publishes the one combined from the wheels); one for a release without variant wheels
/// in the input is reported as not published.
#[test]
fn a_variants_json_that_is_not_the_wheels_is_named() {
    let input = tempfile::tempdir().unwrap();
    WheelSpec::x86_64("fast_math", "1.2.0", "v3").write(input.path());
    WheelSpec::plain("fast_math", "1.2.0").write(input.path());
    std::fs::write(input.path().join("fast_math-1.2.0-variants.json"), "{").unwrap();
    std::fs::write(input.path().join("other-1.0-variants.json"), "{}").unwrap();
    let site = tempfile::tempdir().unwrap();
    let stats = build_dir(input.path(), site.path());
    assert_eq!(stats.warnings.len(), 1, "{:?}", stats.warnings);
    assert!(
        stats.warnings[0].contains("fast_math-1.2.0-variants.json: does not match the wheels")
            && stats.warnings[0].contains("not valid variant metadata"),
        "{}",
        stats.warnings[0]
    );
    assert_eq!(stats.skipped.len(), 1, "{:?}", stats.skipped);
    assert!(stats.skipped[0].path.ends_with("other-1.0-variants.json"));
    assert!(stats.skipped[0]
        .reason
        .contains("no variant wheel of this release"));
    assert!(!site.path().join("files/other-1.0-variants.json").exists());
}

#[test]
fn a_conflict_fails_naming_both_wheels_and_leaves_the_site_alone() {
    let input = tempfile::tempdir().unwrap();
    WheelSpec::x86_64("pkg", "1.0", "v3").write(input.path());
    let site = tempfile::tempdir().unwrap();
    build_dir(input.path(), site.path());
    let before = tree(site.path());

    // Another wheel of the release (another platform tag) whose label `v3` claims level v4.
    let scratch = tempfile::tempdir().unwrap();
    let made = WheelSpec {
        variant_json: Some(variant_json(
            &["x86_64"],
            "v3",
            &[("x86_64", "level", "v4")],
        )),
        ..WheelSpec::x86_64("pkg", "1.0", "v3")
    }
    .write(scratch.path());
    // The platform tag is only in the file name; the wheel's content does not repeat it.
    let other = input
        .path()
        .join("pkg-1.0-py3-none-manylinux_2_28_x86_64-v3.whl");
    std::fs::copy(&made, &other).unwrap();

    let error = build(&BuildOptions::new(input.path(), site.path())).unwrap_err();
    assert!(matches!(error, BuildError::Combine { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("pkg-1.0-variants.json"), "{message}");
    assert!(message.contains("pkg-1.0-py3-none-any-v3.whl"), "{message}");
    assert!(
        message.contains("pkg-1.0-py3-none-manylinux_2_28_x86_64-v3.whl"),
        "{message}"
    );
    assert!(message.contains("variants.v3"), "{message}");
    assert_eq!(tree(site.path()), before, "a failed build changes nothing");
}

#[test]
fn a_broken_wheel_fails_the_build_naming_it() {
    let input = tempfile::tempdir().unwrap();
    WheelSpec::plain("pkg", "1.0").write(input.path());
    std::fs::write(input.path().join("pkg-2.0-py3-none-any.whl"), b"not a zip").unwrap();
    let site = tempfile::tempdir().unwrap();
    let error = build(&BuildOptions::new(input.path(), site.path())).unwrap_err();
    assert!(
        error.to_string().contains("pkg-2.0-py3-none-any.whl"),
        "{error}"
    );
    assert!(!site.path().join("simple").exists(), "nothing written");
}

/// Waits until the inputs' last change is in the past on any clock tick: a build trusts later
/// what it read only from inputs whose last change came before it began (`vari_fs::stamp`),
/// and no call sets a file's change time into the past.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(50));
}

/// The SHA-256 the site publishes for `filename` of project `project`.
fn published_sha256(site: &Path, project: &str, filename: &str) -> String {
    let page = site_json(site, &format!("simple/{project}/index.json"));
    page_file(&page, filename)["hashes"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn an_input_rewritten_in_place_with_its_size_and_modification_time_kept_is_read_again() {
    let input = tempfile::tempdir().unwrap();
    let sdist = input.path().join("pkg-1.0.tar.gz");
    std::fs::write(&sdist, b"the first bytes").unwrap();
    settle();
    let site = tempfile::tempdir().unwrap();
    build_dir(input.path(), site.path());
    let first = published_sha256(site.path(), "pkg", "pkg-1.0.tar.gz");
    assert_eq!(first, sha256_hex(b"the first bytes"));
    let again = build_dir(input.path(), site.path());
    assert_eq!(
        (again.read, again.reused),
        (0, 1),
        "trusted while unchanged"
    );

    // The same size, inode and modification time; only the change time tells.
    let before = std::fs::metadata(&sdist).unwrap();
    let file = std::fs::File::options().write(true).open(&sdist).unwrap();
    std::io::Write::write_all(&mut &file, b"the other bytes").unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(&sdist).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (before.len(), before.modified().unwrap())
    );

    let rebuilt = build_dir(input.path(), site.path());
    assert_eq!((rebuilt.read, rebuilt.reused), (1, 0));
    assert_eq!(
        published_sha256(site.path(), "pkg", "pkg-1.0.tar.gz"),
        sha256_hex(b"the other bytes")
    );
}

#[test]
fn a_state_of_the_first_format_has_every_input_read_once_more_and_its_stale_files_removed() {
    let input = tempfile::tempdir().unwrap();
    std::fs::write(input.path().join("pkg-1.0.tar.gz"), b"kept").unwrap();
    std::fs::write(input.path().join("gone-1.0.tar.gz"), b"dropped").unwrap();
    settle();
    let site = tempfile::tempdir().unwrap();
    build_dir(input.path(), site.path());
    // The state as the first format wrote it: inputs trusted by size, modification time and
    // inode (here, all of them matching).
    let state_path = site.path().join(".vari-index-state.json");
    let mut state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["format"] = "vari-index-state/1".into();
    for known in state["inputs"].as_object_mut().unwrap().values_mut() {
        let fingerprint = known["fingerprint"].as_object_mut().unwrap();
        fingerprint.remove("ctime_ns");
        fingerprint.remove("device");
        known.as_object_mut().unwrap().remove("settled");
    }
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    std::fs::remove_file(input.path().join("gone-1.0.tar.gz")).unwrap();

    let upgraded = build_dir(input.path(), site.path());
    assert_eq!((upgraded.read, upgraded.reused), (1, 0));
    assert_eq!(upgraded.removed, 3, "the sdist and its project's two pages");
    assert!(!site.path().join("files/gone-1.0.tar.gz").exists());
    let again = build_dir(input.path(), site.path());
    assert_eq!((again.read, again.reused), (0, 1));
}

#[test]
fn a_rebuild_reads_only_new_or_changed_inputs_and_removes_stale_files() {
    let input = tempfile::tempdir().unwrap();
    for level in ["v2", "v3"] {
        WheelSpec::x86_64("pkg", "1.0", level).write(input.path());
    }
    WheelSpec::plain("pkg", "1.0").write(input.path());
    settle();
    let site = tempfile::tempdir().unwrap();
    let first = build_dir(input.path(), site.path());
    assert_eq!((first.read, first.reused), (3, 0));

    let again = build_dir(input.path(), site.path());
    assert_eq!(
        (again.read, again.reused, again.written, again.removed),
        (0, 3, 0, 0)
    );

    WheelSpec::x86_64("pkg", "1.0", "v4").write(input.path());
    settle();
    let added = build_dir(input.path(), site.path());
    assert_eq!((added.read, added.reused), (1, 3));
    let combined = site_json(site.path(), "files/pkg-1.0-variants.json");
    let labels: Vec<_> = combined["variants"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(labels, ["v2", "v3", "v4"]);

    // An incremental build gives exactly what a build from scratch gives.
    // Copied, not linked: a new hard link to an input sets its change time, and the next
    // build of `site` would read it again (the pages are the same either way).
    let fresh = tempfile::tempdir().unwrap();
    let copied = BuildOptions {
        placement: FilePlacement::Copy,
        ..BuildOptions::new(input.path(), fresh.path())
    };
    build(&copied).unwrap();
    let pages = |root: &Path| -> Vec<_> {
        tree(root)
            .into_iter()
            .filter(|(p, _)| !p.starts_with('.'))
            .collect()
    };
    assert_eq!(pages(site.path()), pages(fresh.path()));

    std::fs::remove_file(input.path().join("pkg-1.0-py3-none-any-v2.whl")).unwrap();
    let removed = build_dir(input.path(), site.path());
    assert_eq!((removed.read, removed.reused), (0, 3));
    assert_eq!(removed.removed, 2, "the wheel and its .metadata");
    assert!(!site
        .path()
        .join("files/pkg-1.0-py3-none-any-v2.whl")
        .exists());
    assert!(!site
        .path()
        .join("files/pkg-1.0-py3-none-any-v2.whl.metadata")
        .exists());

    // A deleted .metadata file is rewritten from the wheel, which is then read again.
    std::fs::remove_file(
        site.path()
            .join("files/pkg-1.0-py3-none-any-v3.whl.metadata"),
    )
    .unwrap();
    let repaired = build_dir(input.path(), site.path());
    assert_eq!(repaired.read, 1);
    assert!(site
        .path()
        .join("files/pkg-1.0-py3-none-any-v3.whl.metadata")
        .is_file());

    // A project that disappears takes its pages and directory with it.
    WheelSpec::plain("gone", "1.0").write(input.path());
    build_dir(input.path(), site.path());
    assert!(site.path().join("simple/gone/index.json").is_file());
    std::fs::remove_file(input.path().join("gone-1.0-py3-none-any.whl")).unwrap();
    build_dir(input.path(), site.path());
    assert!(!site.path().join("simple/gone").exists());
}

#[test]
fn two_builds_of_the_same_inputs_are_byte_identical() {
    let input = tempfile::tempdir().unwrap();
    for (name, version) in [("alpha", "1.0"), ("alpha", "2.0"), ("Beta.Pkg", "0.1")] {
        for level in ["v1", "v3"] {
            WheelSpec::x86_64(name, version, level).write(input.path());
        }
        WheelSpec {
            requires_python: Some(">=3.9,<4"),
            ..WheelSpec::plain(name, version)
        }
        .write(input.path());
    }
    std::fs::write(input.path().join("alpha-2.0.tar.gz"), b"an sdist").unwrap();
    settle();
    let one = tempfile::tempdir().unwrap();
    let two = tempfile::tempdir().unwrap();
    build_dir(input.path(), one.path());
    // The first build's hard links set the inputs' change time: settled before the second.
    settle();
    let options = BuildOptions {
        placement: FilePlacement::Copy,
        ..BuildOptions::new(input.path(), two.path())
    };
    build(&options).unwrap();
    assert_eq!(tree(one.path()), tree(two.path()));

    let root = site_json(one.path(), "simple/index.json");
    assert_eq!(
        root["projects"],
        serde_json::json!([{"name": "alpha"}, {"name": "beta-pkg"}])
    );
    let alpha = site_json(one.path(), "simple/alpha/index.json");
    assert_pep691_project(&alpha);
    let sdist = page_file(&alpha, "alpha-2.0.tar.gz");
    assert_eq!(sdist["hashes"]["sha256"], sha256_hex(b"an sdist"));
    assert!(sdist.get("core-metadata").is_none());
    let plain = page_file(&alpha, "alpha-2.0-py3-none-any.whl");
    assert_eq!(plain["requires-python"], ">=3.9,<4");
}

#[test]
fn files_linked_by_base_url_are_not_copied() {
    let input = tempfile::tempdir().unwrap();
    WheelSpec::x86_64("pkg", "1.0+cpu", "v3").write(input.path());
    let site = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        placement: FilePlacement::External {
            base_url: "https://downloads.example.org/wheels/".to_owned(),
        },
        ..BuildOptions::new(input.path(), site.path())
    };
    build(&options).unwrap();
    let page = site_json(site.path(), "simple/pkg/index.json");
    let wheel = page_file(&page, "pkg-1.0+cpu-py3-none-any-v3.whl");
    assert_eq!(
        wheel["url"],
        "https://downloads.example.org/wheels/pkg-1.0%2Bcpu-py3-none-any-v3.whl"
    );
    assert!(!site
        .path()
        .join("files/pkg-1.0+cpu-py3-none-any-v3.whl")
        .exists());
    assert!(site
        .path()
        .join("files/pkg-1.0+cpu-py3-none-any-v3.whl.metadata")
        .is_file());
    let variants = page_file(&page, "pkg-1.0+cpu-variants.json");
    assert_eq!(variants["url"], "../../files/pkg-1.0%2Bcpu-variants.json");
}
