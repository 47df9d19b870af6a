//! Variant metadata of a version: linked variants.json, range reads of wheels, servers
//! without ranges, missing labels, corrupt and unknown-schema files.

use vari_client::{MetadataOrigin, UnusableReason, VersionVariants};

use crate::server::TestIndex;
use crate::support::{client, copy_fixture_wheels, name, settings, variants_doc, write_wheel};

fn described(v: VersionVariants) -> vari_client::DescribedVariants {
    match v {
        VersionVariants::Described(d) => d,
        other => panic!("expected metadata, got {other:?}"),
    }
}

fn labels(d: &vari_client::DescribedVariants) -> Vec<String> {
    d.metadata
        .as_ref()
        .unwrap()
        .variants
        .keys()
        .map(ToString::to_string)
        .collect()
}

const FIXTURE_LABELS: [&str; 6] = ["5d8be4b9", "60567bd9", "bar", "fbe82642", "foo", "null"];

#[tokio::test]
async fn a_linked_variants_json_describes_the_version_without_touching_wheels() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), true);
    let server = TestIndex::start(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("test-package")).await.unwrap();
    server.clear_seen();
    let d = described(
        client
            .variant_metadata(&project, &"0".parse().unwrap())
            .await
            .unwrap(),
    );
    assert!(matches!(&d.origin, MetadataOrigin::IndexFiles(urls) if urls.len() == 1));
    assert_eq!(labels(&d), FIXTURE_LABELS);
    assert!(d.missing_labels.is_empty());
    let seen = server.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].path, "/files/test_package-0-variants.json");
}

#[tokio::test]
async fn without_variants_json_one_wheel_per_label_is_range_read() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), false);
    let server = TestIndex::start(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("test-package")).await.unwrap();
    assert!(project.variants_json.is_empty());
    server.clear_seen();
    let d = described(
        client
            .variant_metadata(&project, &"0".parse().unwrap())
            .await
            .unwrap(),
    );
    assert!(matches!(&d.origin, MetadataOrigin::Wheels(urls) if urls.len() == 6));
    assert_eq!(labels(&d), FIXTURE_LABELS);
    assert!(d.missing_labels.is_empty(), "{:?}", d.warnings);
    let seen = server.seen();
    assert!(!seen.is_empty());
    // The plain wheel has no label and is not read.
    assert!(seen
        .iter()
        .all(|s| s.path != "/files/test_package-0-py3-none-any.whl"));
    assert!(
        seen.iter().all(|s| s.range.is_some() && s.status == 206),
        "{seen:?}"
    );
}

#[tokio::test]
async fn range_reads_fetch_a_small_part_of_large_wheels() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |label: &str| variants_doc(&[label]);
    for label in ["x86_64_v2", "x86_64_v3"] {
        let filename = format!("big-1.0-py3-none-any-{label}.whl");
        write_wheel(dir.path(), &filename, Some(&doc(label)), 512 * 1024);
    }
    let server = TestIndex::start(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("big")).await.unwrap();
    server.clear_seen();
    let d = described(
        client
            .variant_metadata(&project, &"1.0".parse().unwrap())
            .await
            .unwrap(),
    );
    assert_eq!(labels(&d), ["x86_64_v2", "x86_64_v3"]);
    let served: usize = server.seen().iter().map(|s| s.body_len).sum();
    assert!(
        served < 64 * 1024 * 2 + 4096,
        "{served} bytes served for two metadata reads"
    );
}

#[tokio::test]
async fn a_server_without_ranges_sends_whole_wheels_and_is_remembered() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), false);
    let server = TestIndex::start(dir.path()).await;
    server.set(|k| k.ranges = false);
    let mut settings = settings(&[server.index_url()]);
    settings.concurrency = 1; // one wheel after the other, so the memory is observable
    let client = client(settings);
    let project = client.project(&name("test-package")).await.unwrap();
    server.clear_seen();
    let d = described(
        client
            .variant_metadata(&project, &"0".parse().unwrap())
            .await
            .unwrap(),
    );
    assert_eq!(labels(&d), FIXTURE_LABELS);
    let seen = server.seen();
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.iter().all(|s| s.status == 200));
    assert_eq!(
        seen.iter().filter(|s| s.range.is_some()).count(),
        1,
        "{seen:?}"
    );
    assert!(client.server_ignores_ranges(&project.files[0].url));
}

/// Version 1.0: three labelled wheels, a variants.json that omits `x86_64_v2`, a plain wheel.
/// Version 2.0: a corrupt variants.json. Version 3.0: an unknown major schema version.
async fn release_index(dir: &std::path::Path) -> TestIndex {
    for label in ["x86_64_v2", "x86_64_v3", "null"] {
        for version in ["1.0", "2.0", "3.0"] {
            write_wheel(
                dir,
                &format!("rel-{version}-py3-none-any-{label}.whl"),
                Some(&variants_doc(&[label])),
                0,
            );
        }
    }
    write_wheel(dir, "rel-2.0-py3-none-any.whl", None, 0);
    std::fs::write(
        dir.join("rel-1.0-variants.json"),
        variants_doc(&["x86_64_v3", "null"]),
    )
    .unwrap();
    std::fs::write(dir.join("rel-2.0-variants.json"), "{\"$schema\": oops").unwrap();
    std::fs::write(
        dir.join("rel-3.0-variants.json"),
        variants_doc(&["x86_64_v3"]).replace("peps/825/v0.1.1.json", "v1.0.0.json"),
    )
    .unwrap();
    TestIndex::start(dir).await
}

#[tokio::test]
async fn a_label_missing_from_variants_json_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let server = release_index(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("rel")).await.unwrap();
    let d = described(
        client
            .variant_metadata(&project, &"1.0".parse().unwrap())
            .await
            .unwrap(),
    );
    assert_eq!(labels(&d), ["null", "x86_64_v3"]);
    let missing: Vec<String> = d.missing_labels.iter().map(ToString::to_string).collect();
    assert_eq!(missing, ["x86_64_v2"]);
}

#[tokio::test]
async fn a_corrupt_variants_json_makes_only_that_versions_variants_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let server = release_index(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("rel")).await.unwrap();
    let two = "2.0".parse().unwrap();
    let VersionVariants::Unusable(unusable) =
        client.variant_metadata(&project, &two).await.unwrap()
    else {
        panic!("a corrupt variants.json must be unusable")
    };
    assert!(matches!(unusable.reason, UnusableReason::Corrupt(_)));
    assert!(unusable.url.path().ends_with("/rel-2.0-variants.json"));
    assert!(unusable.to_string().contains("invalid JSON"), "{unusable}");
    // The version's non-variant wheel is still listed, and other versions still work.
    assert!(project
        .files_of(&two)
        .any(|f| f.wheel().is_some_and(|w| !w.is_variant())));
    described(
        client
            .variant_metadata(&project, &"1.0".parse().unwrap())
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn an_unknown_major_schema_version_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let server = release_index(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("rel")).await.unwrap();
    let VersionVariants::Unusable(unusable) = client
        .variant_metadata(&project, &"3.0".parse().unwrap())
        .await
        .unwrap()
    else {
        panic!("an unknown major version must be unusable")
    };
    let UnusableReason::UnknownSchema(error) = &unusable.reason else {
        panic!("{unusable:?}")
    };
    assert_eq!(error.path, "$schema");
    assert!(error.message.contains("1.0.0"), "{error}");
}

#[tokio::test]
async fn a_wheel_without_variant_json_leaves_its_label_undescribed() {
    let dir = tempfile::tempdir().unwrap();
    write_wheel(
        dir.path(),
        "odd-1.0-py3-none-any-x86_64_v3.whl",
        Some(&variants_doc(&["x86_64_v3"])),
        0,
    );
    write_wheel(dir.path(), "odd-1.0-py3-none-any-x86_64_v4.whl", None, 0);
    let server = TestIndex::start(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("odd")).await.unwrap();
    let d = described(
        client
            .variant_metadata(&project, &"1.0".parse().unwrap())
            .await
            .unwrap(),
    );
    let missing: Vec<String> = d.missing_labels.iter().map(ToString::to_string).collect();
    assert_eq!(missing, ["x86_64_v4"]);
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains("x86_64_v4.whl") && w.contains("variant.json")),
        "{:?}",
        d.warnings
    );
}

/// PEP 825 lets a publisher add variants to a release: the index then lists a new hash for its
/// `variants.json`. A cached copy that is still fresh by its `Cache-Control` but has the old
/// hash is fetched again, not taken as a corrupt file (which made every variant wheel
/// unusable and fell back to the plain wheel).
#[tokio::test]
async fn a_variants_json_published_again_with_another_hash_is_fetched_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let publish = |labels: &[&str]| {
        for label in labels {
            let filename = format!("big-1.0-py3-none-any-{label}.whl");
            write_wheel(dir.path(), &filename, Some(&variants_doc(&[label])), 64);
        }
        std::fs::write(
            dir.path().join("big-1.0-variants.json"),
            variants_doc(labels),
        )
        .unwrap();
    };
    publish(&["x86_64_v2"]);
    let server = TestIndex::start(dir.path()).await;
    // Files fresh for a day, as PyPI serves them; pages asked for every time.
    server.set(|k| k.files_cache_control = Some("max-age=86400".to_owned()));
    let mut settings = settings(&[server.index_url()]);
    settings.cache_dir = Some(cache.path().to_owned());
    let version = "1.0".parse().unwrap();

    let first = client(settings.clone());
    let project = first.project(&name("big")).await.unwrap();
    let d = described(first.variant_metadata(&project, &version).await.unwrap());
    assert_eq!(labels(&d), ["x86_64_v2"]);

    publish(&["x86_64_v2", "x86_64_v3"]);
    let second = client(settings);
    let project = second.project(&name("big")).await.unwrap();
    server.clear_seen();
    let d = described(second.variant_metadata(&project, &version).await.unwrap());
    assert!(matches!(&d.origin, MetadataOrigin::IndexFiles(_)), "{d:?}");
    assert_eq!(labels(&d), ["x86_64_v2", "x86_64_v3"]);
    assert!(d.missing_labels.is_empty(), "{d:?}");
    let fetched: Vec<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.path == "/files/big-1.0-variants.json")
        .collect();
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert_eq!(fetched[0].status, 200);
}
