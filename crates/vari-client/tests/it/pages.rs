//! Project pages in both flavours, with every per-file attribute.

use vari_client::{CoreMetadata, FileKind, IndexFile};

use crate::server::{FileAttrs, Formats, MetadataSpelling, TestIndex};
use crate::support::{client, copy_fixture_wheels, name, settings};
use vari_test_support::wheels::sha256_hex as sha256;

const PLAIN: &str = "test_package-0-py3-none-any.whl";
const FOO: &str = "test_package-0-py3-none-any-foo.whl";
const BAR: &str = "test_package-0-py3-none-any-bar.whl";
const NULL: &str = "test_package-0-py3-none-any-null.whl";

/// Serves the fixture wheels with a yanked file (with and without reason), a
/// `requires-python`, and PEP 658 metadata in both spellings.
async fn fixture_index(dir: &std::path::Path) -> TestIndex {
    copy_fixture_wheels(dir, true);
    std::fs::write(
        dir.join(format!("{PLAIN}.metadata")),
        "Metadata-Version: 2.1\nName: test_package\nVersion: 0\nRequires-Dist: served-by-the-index\n",
    )
    .unwrap();
    let server = TestIndex::start(dir).await;
    server.attrs(
        PLAIN,
        FileAttrs {
            requires_python: Some(">=3.9, <4".into()),
            core_metadata: Some(MetadataSpelling::DistInfo),
            ..FileAttrs::default()
        },
    );
    server.attrs(
        FOO,
        FileAttrs {
            yanked: Some(Some("broken <build>".into())),
            core_metadata: Some(MetadataSpelling::Core),
            ..FileAttrs::default()
        },
    );
    server.attrs(
        BAR,
        FileAttrs {
            yanked: Some(None),
            ..FileAttrs::default()
        },
    );
    server
}

fn find<'a>(files: &'a [IndexFile], filename: &str) -> &'a IndexFile {
    files
        .iter()
        .find(|f| f.filename == filename)
        .unwrap_or_else(|| panic!("{filename} not listed"))
}

fn check_attributes(files: &[IndexFile], dir: &std::path::Path) {
    assert_eq!(files.len(), 7, "{files:#?}");
    let plain = find(files, PLAIN);
    assert_eq!(
        plain.requires_python.as_ref().unwrap().to_string(),
        ">=3.9, <4"
    );
    assert!(plain.yanked.is_none());
    let metadata_sha = sha256(&std::fs::read(dir.join(format!("{PLAIN}.metadata"))).unwrap());
    match &plain.core_metadata {
        CoreMetadata::Available(h) => assert_eq!(h.sha256(), Some(metadata_sha.as_str())),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        plain.hashes.sha256(),
        Some(sha256(&std::fs::read(dir.join(PLAIN)).unwrap()).as_str())
    );
    let yanked_with_reason = find(files, FOO);
    assert_eq!(
        yanked_with_reason
            .yanked
            .as_ref()
            .unwrap()
            .reason
            .as_deref(),
        Some("broken <build>")
    );
    assert!(matches!(
        yanked_with_reason.core_metadata,
        CoreMetadata::Available(_)
    ));
    assert_eq!(find(files, BAR).yanked.as_ref().unwrap().reason, None);
    let null = find(files, NULL);
    assert!(null.yanked.is_none() && null.requires_python.is_none());
    assert_eq!(null.core_metadata, CoreMetadata::Absent);
    assert!(null.wheel().unwrap().is_null_variant());
    assert!(null.url.path().ends_with(&format!("/files/{NULL}")));
}

#[tokio::test]
async fn json_and_html_pages_give_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture_index(dir.path()).await;
    let index = vec![server.index_url()];

    let json = client(settings(&index))
        .project(&name("Test.Package"))
        .await
        .unwrap();
    let first = &server.seen()[0];
    assert_eq!(first.path, "/simple/test-package/");
    assert_eq!(
        first.accept.as_deref(),
        Some(
            "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, \
             text/html;q=0.01"
        )
    );
    // Only the JSON flavour gives sizes: proof that JSON was negotiated and read.
    assert!(json.files.iter().all(|f| f.size.is_some()));
    check_attributes(&json.files, dir.path());

    server.set(|k| k.formats = Formats::HtmlOnly);
    let html = client(settings(&index))
        .project(&name("test_package"))
        .await
        .unwrap();
    assert!(html.files.iter().all(|f| f.size.is_none()));
    check_attributes(&html.files, dir.path());

    for (j, h) in json.files.iter().zip(&html.files) {
        assert_eq!(j.filename, h.filename);
        assert_eq!(j.url, h.url);
        assert_eq!(j.hashes, h.hashes);
        assert_eq!(j.requires_python, h.requires_python);
        assert_eq!(j.yanked, h.yanked);
        assert_eq!(j.core_metadata, h.core_metadata);
    }
    for project in [&json, &html] {
        let version = "0".parse().unwrap();
        assert_eq!(project.variants_json[&version].len(), 1);
        assert!(matches!(
            project.variants_json[&version][0].kind,
            FileKind::VariantsJson { .. }
        ));
        assert!(project.warnings.is_empty(), "{:?}", project.warnings);
    }
}

#[tokio::test]
async fn core_metadata_comes_from_the_index_or_from_the_wheel() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture_index(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("test-package")).await.unwrap();

    server.clear_seen();
    let served = client
        .core_metadata(find(&project.files, PLAIN))
        .await
        .unwrap();
    assert!(
        served.contains("Requires-Dist: served-by-the-index"),
        "{served}"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, format!("/files/{PLAIN}.metadata"));

    server.clear_seen();
    let from_wheel = client
        .core_metadata(find(&project.files, NULL))
        .await
        .unwrap();
    assert!(from_wheel.starts_with("Metadata-Version:"), "{from_wheel}");
    assert!(from_wheel.contains("Name: test-package"), "{from_wheel}");
    assert!(!from_wheel.contains("served-by-the-index"));
    assert!(server
        .seen()
        .iter()
        .all(|s| s.path == format!("/files/{NULL}") && s.range.is_some() && s.status == 206));
}

#[tokio::test]
async fn a_missing_project_names_every_place_looked() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture_index(dir.path()).await;
    let err = client(settings(&[server.index_url()]))
        .project(&name("nope"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`nope`"), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("{}nope/", server.index_url())),
        "{err}"
    );
}

/// Clients made from settings that keep listings read each project once: an index that
/// answers a second request with other hashes is not asked again, and every client gets the
/// first answer. Without kept listings the second answer is read.
#[tokio::test]
async fn kept_listings_give_every_client_the_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = fixture_index(dir.path()).await;
    server.set(|k| k.other_hashes_after_pages = Some(1));
    let real = sha256(&std::fs::read(dir.path().join(PLAIN)).unwrap());
    let kept = vari_client::ClientSettings {
        listings: vari_client::Listings::kept(),
        ..settings(&[server.index_url()])
    };
    let first = client(kept.clone());
    let second = client(kept.clone());
    for c in [&first, &second, &first] {
        let project = c.project(&name("test-package")).await.unwrap();
        assert_eq!(
            find(&project.files, PLAIN).hashes.sha256(),
            Some(real.as_str())
        );
    }
    let pages = |server: &TestIndex| {
        server
            .seen()
            .iter()
            .filter(|s| s.path.starts_with("/simple/"))
            .count()
    };
    assert_eq!(pages(&server), 1);
    assert_eq!(kept.listings.len(), 1);
    // Not kept: the second request is answered otherwise.
    let fresh = client(settings(&[server.index_url()]));
    let project = fresh.project(&name("test-package")).await.unwrap();
    assert_ne!(
        find(&project.files, PLAIN).hashes.sha256(),
        Some(real.as_str())
    );
}

/// A wheel whose central directory is larger than the first range read (16 KiB): the
/// directory's part before that tail is asked for alone, never the tail again, and the
/// METADATA member is read from the wheel; no byte is sent twice.
#[tokio::test]
async fn a_large_central_directory_is_completed_without_reading_the_tail_again() {
    let dir = tempfile::tempdir().unwrap();
    let name_of = "many_files-1.0-py3-none-any.whl";
    let dist_info = "many_files-1.0.dist-info";
    // 600 members of 60-byte names: a directory of about 65 KiB.
    let mut members: Vec<(String, Vec<u8>)> = (0..600)
        .map(|i| (format!("many_files/{i:0>49}.py"), b"".to_vec()))
        .collect();
    members.push((
        format!("{dist_info}/METADATA"),
        b"Metadata-Version: 2.1\nName: many-files\nVersion: 1.0\nRequires-Dist: other\n".to_vec(),
    ));
    members.push((
        format!("{dist_info}/WHEEL"),
        b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
    ));
    let mut record: String = members
        .iter()
        .map(|(n, b)| vari_test_support::wheels::record_row(n, b))
        .collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    members.push((format!("{dist_info}/RECORD"), record.into_bytes()));
    let path = vari_test_support::wheels::write_zip(&dir.path().join(name_of), &members);
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    let server = TestIndex::start(dir.path()).await;
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("many-files")).await.unwrap();
    server.clear_seen();

    let text = client
        .core_metadata(find(&project.files, name_of))
        .await
        .unwrap();
    assert!(text.contains("Requires-Dist: other"), "{text}");
    let seen = server.seen();
    assert!(
        seen.iter().all(|s| s.status == 206),
        "ranges only: {seen:?}"
    );
    // The tail, the rest of the directory, then the METADATA member written just before it:
    // three ranges, none overlapping another.
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0].range.as_deref(), Some("bytes=-16384"));
    let mut spans: Vec<(usize, usize)> = seen
        .iter()
        .map(|s| {
            let spec = s.range.as_deref().unwrap().strip_prefix("bytes=").unwrap();
            match spec.split_once('-').unwrap() {
                ("", n) => (size - n.parse::<usize>().unwrap(), size),
                (a, b) => (a.parse().unwrap(), b.parse::<usize>().unwrap() + 1),
            }
        })
        .collect();
    spans.sort_unstable();
    assert!(
        spans.windows(2).all(|pair| pair[0].1 <= pair[1].0),
        "overlapping ranges: {seen:?}"
    );
}

/// Kept listings are kept per sources: a client for another index (a build family's own, as
/// PyTorch's `cu128` beside the default index) sharing the run's listings reads that index's
/// answer for the same name, and does not hand its own to the first.
#[tokio::test]
async fn kept_listings_are_kept_per_sources() {
    let one = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let first_index = fixture_index(one.path()).await;
    let second_index = fixture_index(other.path()).await;
    // The second index answers with other hashes from its first page on.
    second_index.set(|k| k.other_hashes_after_pages = Some(0));
    let real = sha256(&std::fs::read(one.path().join(PLAIN)).unwrap());
    let listings = vari_client::Listings::kept();
    let on = |index: &TestIndex| {
        client(vari_client::ClientSettings {
            listings: listings.clone(),
            ..settings(&[index.index_url()])
        })
    };
    let hash = |project: &vari_client::Project| {
        find(&project.files, PLAIN)
            .hashes
            .sha256()
            .map(str::to_owned)
    };
    let first = on(&first_index)
        .project(&name("test-package"))
        .await
        .unwrap();
    let second = on(&second_index)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(hash(&first).as_deref(), Some(real.as_str()));
    assert_ne!(hash(&second).as_deref(), Some(real.as_str()));
    let again = on(&first_index)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(hash(&again).as_deref(), Some(real.as_str()));
    assert_eq!(listings.len(), 2);
}
