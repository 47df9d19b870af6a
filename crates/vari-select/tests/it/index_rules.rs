//! The version rules and the index's misbehaviour, on small releases served from 127.0.0.1:
//! yanked files, `requires-python`, pre-releases, missing, incomplete and corrupt variant
//! metadata, servers without ranges, failing, hanging or asking for credentials.

use std::path::Path;
use std::time::Duration;

use vari_client::{ClientError, IndexClient, NetrcSource};
use vari_select::{
    select, CandidateFate, ChosenBecause, IndexOptions, Outcome, Request, SelectError,
};

use crate::index_support::{
    chosen, chosen_because, client, considered, cpython_3_12, demo_release, facts, fate,
    level_target, profile_target, resolve, resolve_from, settings, FileAttrs, TestIndex,
};
use crate::test_wheels::{level_variants, one_variant, testdata, wheel};

/// `demo-{version}`: v4, v3 and null variant wheels plus a plain wheel, with `variants.json`.
fn demo_version(dir: &Path, version: &str) {
    demo_release(dir, version, &["v4", "v3", "null"], true);
}

async fn serve(dir: &Path) -> TestIndex {
    TestIndex::start(dir).await
}

/// Serves [`demo_version`] 1.0 and 2.0 from `dir`, every wheel of 2.0 listed with the
/// attributes `of_2_0`.
async fn serve_1_0_and_2_0(dir: &Path, of_2_0: FileAttrs) -> TestIndex {
    demo_version(dir, "1.0");
    demo_version(dir, "2.0");
    let server = serve(dir).await;
    for label in ["-v4", "-v3", "-null", ""] {
        server.attrs(&format!("demo-2.0-py3-none-any{label}.whl"), of_2_0.clone());
    }
    server
}

#[tokio::test]
async fn yanked_versions_are_skipped_unless_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let attrs = FileAttrs {
        yanked: Some(Some("broken build".into())),
        ..FileAttrs::default()
    };
    let server = serve_1_0_and_2_0(dir.path(), attrs).await;
    let target = level_target(dir.path(), 3);
    let client = client(&server.index_url());
    let options = IndexOptions::default();

    let resolution = resolve(&client, "demo", &target, &options).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert_eq!(considered(&resolution), ["2.0", "1.0"]);
    assert_eq!(
        fate(&resolution, "2.0", "demo-2.0-py3-none-any-v3.whl"),
        &CandidateFate::Yanked {
            reason: Some("broken build".into())
        }
    );

    let pinned = resolve(&client, "demo==2.0", &target, &options).await;
    assert_eq!(chosen(&pinned), Some("demo-2.0-py3-none-any-v3.whl"));
}

#[tokio::test]
async fn requires_python_is_checked_against_the_target_python() {
    let dir = tempfile::tempdir().unwrap();
    let attrs = FileAttrs {
        requires_python: Some(">=3.13".into()),
        ..FileAttrs::default()
    };
    let server = serve_1_0_and_2_0(dir.path(), attrs).await;
    let client = client(&server.index_url());
    let old = level_target(dir.path(), 3);
    let resolution = resolve(&client, "demo", &old, &IndexOptions::default()).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert_eq!(
        fate(&resolution, "2.0", "demo-2.0-py3-none-any.whl"),
        &CandidateFate::RequiresPython {
            requires: ">=3.13".into()
        }
    );
    let profile = facts(dir.path(), "v3.toml", "[x86_64]\nlevel = 3\n");
    let new = profile_target(&profile, "3.13");
    let resolution = resolve(&client, "demo", &new, &IndexOptions::default()).await;
    assert_eq!(chosen(&resolution), Some("demo-2.0-py3-none-any-v3.whl"));
}

#[tokio::test]
async fn pre_releases_only_when_asked_named_or_needed() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    demo_version(dir.path(), "2.0rc1");
    let server = serve(dir.path()).await;
    let target = level_target(dir.path(), 3);
    let client = client(&server.index_url());

    let resolution = resolve(&client, "demo", &target, &IndexOptions::default()).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert_eq!(considered(&resolution), ["1.0"]);
    assert_eq!(resolution.prereleases_ignored.len(), 1);

    let pre = IndexOptions {
        pre: true,
        ..IndexOptions::default()
    };
    let resolution = resolve(&client, "demo", &target, &pre).await;
    assert_eq!(chosen(&resolution), Some("demo-2.0rc1-py3-none-any-v3.whl"));

    let named = resolve(&client, "demo>=2.0rc1", &target, &IndexOptions::default()).await;
    assert_eq!(chosen(&named), Some("demo-2.0rc1-py3-none-any-v3.whl"));

    // Only Windows builds of the final release: the pre-release is the newest that fits.
    let dir = tempfile::tempdir().unwrap();
    wheel(dir.path(), "demo-1.0-cp312-cp312-win_amd64.whl", None, &[]);
    demo_version(dir.path(), "2.0rc1");
    let server = serve(dir.path()).await;
    let client = self::client_for(&server);
    let resolution = resolve(&client, "demo", &target, &IndexOptions::default()).await;
    assert_eq!(considered(&resolution), ["1.0", "2.0rc1"]);
    assert_eq!(chosen(&resolution), Some("demo-2.0rc1-py3-none-any-v3.whl"));
}

fn client_for(server: &TestIndex) -> IndexClient {
    client(&server.index_url())
}

#[tokio::test]
async fn an_older_version_is_chosen_when_the_newest_has_no_build_for_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    // 2.0 has only an x86-64-v4 build and no fallback.
    demo_release(dir.path(), "2.0", &["v4"], false);
    let server = serve(dir.path()).await;
    let resolution = resolve_from(&server, "demo", &level_target(dir.path(), 3)).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    let passed = resolution.passed_over();
    assert_eq!(passed.len(), 1);
    assert_eq!(passed[0].version.to_string(), "2.0");
    let need = &passed[0].needs[0];
    assert_eq!(need.namespace.as_str(), "x86_64");
    assert!(
        need.rejection.to_string().contains("v4"),
        "{}",
        need.rejection
    );
}

#[tokio::test]
async fn a_label_missing_from_variants_json_makes_its_wheels_incompatible() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    // The index file forgets v3.
    std::fs::write(
        dir.path().join("demo-1.0-variants.json"),
        level_variants(&["v4", "null"]),
    )
    .unwrap();
    let server = serve(dir.path()).await;
    let resolution = resolve_from(&server, "demo", &level_target(dir.path(), 3)).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-null.whl"));
    assert_eq!(
        fate(&resolution, "1.0", "demo-1.0-py3-none-any-v3.whl"),
        &CandidateFate::LabelNotDescribed
    );
}

#[tokio::test]
async fn a_corrupt_variants_json_leaves_the_plain_wheels_and_other_versions_usable() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    demo_version(dir.path(), "2.0");
    std::fs::write(
        dir.path().join("demo-2.0-variants.json"),
        "{\"variants\": [",
    )
    .unwrap();
    let server = serve(dir.path()).await;
    let target = level_target(dir.path(), 3);
    let client = client_for(&server);
    let resolution = resolve(&client, "demo", &target, &IndexOptions::default()).await;
    // 2.0's variant wheels are unusable; its plain wheel still fits.
    assert_eq!(chosen(&resolution), Some("demo-2.0-py3-none-any.whl"));
    assert!(matches!(
        fate(&resolution, "2.0", "demo-2.0-py3-none-any-v3.whl"),
        CandidateFate::UnusableMetadata { why } if why.contains("demo-2.0-variants.json")
    ));
    assert!(resolution
        .warnings
        .iter()
        .any(|w| w.contains("unusable variant metadata")));
    // The other version's metadata is fine.
    let old = resolve(&client, "demo<2", &target, &IndexOptions::default()).await;
    assert_eq!(chosen(&old), Some("demo-1.0-py3-none-any-v3.whl"));
}

#[tokio::test]
async fn a_server_without_ranges_still_gives_the_wheels_metadata() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    std::fs::remove_file(dir.path().join("demo-1.0-variants.json")).unwrap();
    let server = serve(dir.path()).await;
    server.set(|k| k.ranges = false);
    let client = client_for(&server);
    let options = IndexOptions {
        dependencies: true,
        ..IndexOptions::default()
    };
    let resolution = resolve(&client, "demo", &level_target(dir.path(), 3), &options).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert_eq!(
        resolution.chosen.as_ref().unwrap().dependencies,
        Some(Vec::new())
    );
    let url = &resolution.chosen.as_ref().unwrap().file.url;
    assert!(client.server_ignores_ranges(url));
}

#[tokio::test]
async fn a_server_error_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    let server = serve(dir.path()).await;
    server.set(|k| k.fail_next = 1);
    let resolution = resolve_from(&server, "demo", &level_target(dir.path(), 3)).await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert_eq!(server.seen()[0].status, 500);
}

#[tokio::test]
async fn a_hanging_server_is_a_timeout_naming_the_page() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    let server = serve(dir.path()).await;
    server.set(|k| k.hang = true);
    let mut settings = settings(&server.index_url());
    settings.read_timeout = Duration::from_millis(300);
    let client = IndexClient::new(settings).unwrap();
    let request = Request::parse("demo").unwrap();
    let err = select(
        &client,
        &request,
        &level_target(dir.path(), 3),
        &IndexOptions::default(),
    )
    .await
    .unwrap_err();
    let SelectError::Index(ClientError::Timeout { url, .. }) = &err else {
        panic!("{err:?}")
    };
    assert!(url.as_str().ends_with("/simple/demo/"), "{url}");
}

#[tokio::test]
async fn netrc_credentials_reach_the_index() {
    let dir = tempfile::tempdir().unwrap();
    demo_version(dir.path(), "1.0");
    let server = serve(dir.path()).await;
    server.set(|k| k.basic_auth = Some(("alice".into(), "wonderland".into())));
    let netrc = dir.path().join("netrc");
    std::fs::write(
        &netrc,
        "machine 127.0.0.1 login alice password wonderland\n",
    )
    .unwrap();
    let mut settings = settings(&server.index_url());
    settings.netrc = NetrcSource::File(netrc);
    let client = IndexClient::new(settings).unwrap();
    let resolution = resolve(
        &client,
        "demo",
        &level_target(dir.path(), 3),
        &IndexOptions::default(),
    )
    .await;
    assert_eq!(chosen(&resolution), Some("demo-1.0-py3-none-any-v3.whl"));
    assert!(server.seen().iter().all(|s| s.status != 401));
}

#[tokio::test]
async fn a_false_marker_skips_the_requirement() {
    let dir = tempfile::tempdir().unwrap();
    let target = level_target(dir.path(), 3);
    // No server is needed: nothing is fetched.
    let client = client("http://127.0.0.1:9/simple/");
    let request = Request::parse("demo; sys_platform == 'win32'").unwrap();
    let outcome = select(&client, &request, &target, &IndexOptions::default())
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Skipped { marker } if marker.contains("win32")));
}

#[tokio::test]
async fn the_variantlib_fixture_wheels_rank_as_their_metadata_says() {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(testdata("wheels")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let server = serve(dir.path()).await;
    server.set(|k| k.formats = crate::index_support::server::Formats::HtmlOnly);
    let client = client_for(&server);
    let profile = dir.path().join("plugin.json");
    std::fs::write(
        &profile,
        r#"{"schema": "vari-profile/1", "namespaces": [{"namespace": "installable_plugin",
            "features": [{"name": "feat1", "values": ["val1c"]},
                         {"name": "feat2", "values": ["val2b"]}]}]}"#,
    )
    .unwrap();
    let with_plugin = profile_target(&profile, "3.12");
    let resolution = resolve(
        &client,
        "test-package",
        &with_plugin,
        &IndexOptions::default(),
    )
    .await;
    // Both features supported: the variant with both properties is the best.
    assert_eq!(
        chosen(&resolution),
        Some("test_package-0-py3-none-any-5d8be4b9.whl")
    );

    // Without the plugin's namespace the null variant is chosen, and the report says which
    // namespace would have made the others fit and that no built-in provider detects it.
    let without = cpython_3_12("x86_64-manylinux_2_28", &[]);
    let resolution = resolve(&client, "test-package", &without, &IndexOptions::default()).await;
    assert_eq!(
        chosen(&resolution),
        Some("test_package-0-py3-none-any-null.whl")
    );
    assert_eq!(chosen_because(&resolution), &ChosenBecause::NullVariant);
    let needs = &resolution.versions[0].needs;
    assert_eq!(needs[0].namespace.as_str(), "installable_plugin");
    assert!(!needs[0].builtin_provider);
    assert_eq!(needs[0].labels.len(), 5);
}

#[tokio::test]
async fn upstream_names_need_not_be_canonical() {
    // Old uploads keep the project's spelling (`PyYAML-6.0-….whl`); the choice and the report
    // follow the file as listed, not the canonical rendering of its parsed name.
    let dir = tempfile::tempdir().unwrap();
    let document = level_variants(&["v4", "v3", "null"]);
    for label in ["v4", "v3", "null"] {
        let json = one_variant(&document, label);
        wheel(
            dir.path(),
            &format!("Demo-1.0-py3-none-any-{label}.whl"),
            Some(&json),
            &[],
        );
    }
    std::fs::write(dir.path().join("demo-1.0-variants.json"), &document).unwrap();
    let server = serve(dir.path()).await;
    let resolution = resolve_from(&server, "demo", &level_target(dir.path(), 3)).await;
    assert_eq!(chosen(&resolution), Some("Demo-1.0-py3-none-any-v3.whl"));
    let files: Vec<&str> = resolution.versions[0]
        .files
        .iter()
        .map(|f| f.filename.as_str())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
}
