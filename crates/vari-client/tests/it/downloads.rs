//! Downloads: hash checked while streaming, nothing left behind on failure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use vari_client::{ClientError, IndexFile};

use crate::server::{FileAttrs, TestIndex};
use crate::support::{client, copy_fixture_wheels, entries, name, settings, write_wheel};
use vari_test_support::wheels::sha256_hex as sha256;

const WHEEL: &str = "test_package-0-py3-none-any-foo.whl";

async fn setup() -> (tempfile::TempDir, TestIndex) {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), true);
    // A plain wheel (a build tag tells it from the fixtures): a download is read as a wheel,
    // and a label without a `variant.json` would be refused.
    write_wheel(
        dir.path(),
        "test_package-0-1-py3-none-any.whl",
        None,
        300_000,
    );
    let server = TestIndex::start(dir.path()).await;
    (dir, server)
}

async fn file(server: &TestIndex, filename: &str) -> (vari_client::IndexClient, IndexFile) {
    let client = client(settings(&[server.index_url()]));
    let project = client.project(&name("test-package")).await.unwrap();
    let file = project
        .files
        .iter()
        .find(|f| f.filename == filename)
        .unwrap()
        .clone();
    (client, file)
}

#[tokio::test]
async fn a_download_is_verified_while_streaming() {
    let (dir, server) = setup().await;
    let big = "test_package-0-1-py3-none-any.whl";
    let (client, file) = file(&server, big).await;
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join(big);
    let last = Mutex::new((0, None));
    let calls = AtomicU64::new(0);
    let progress = |done: u64, total: Option<u64>| {
        calls.fetch_add(1, Ordering::Relaxed);
        *last.lock().unwrap() = (done, total);
    };
    let done = client.download(&file, &dest, &progress).await.unwrap();
    let expected = std::fs::read(dir.path().join(big)).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), expected);
    assert_eq!(done.sha256, sha256(&expected));
    assert_eq!(done.size, expected.len() as u64);
    assert_eq!(done.verified_with, Some("sha256"));
    let size = expected.len() as u64;
    assert_eq!(*last.lock().unwrap(), (size, Some(size)));
    assert!(calls.load(Ordering::Relaxed) >= 2);
}

#[tokio::test]
async fn without_an_index_hash_the_digest_is_computed() {
    let (dir, server) = setup().await;
    server.set(|k| k.hashes = false);
    let (client, file) = file(&server, WHEEL).await;
    assert!(file.hashes.is_empty());
    let out = tempfile::tempdir().unwrap();
    let done = client
        .download(&file, &out.path().join(WHEEL), &|_, _| {})
        .await
        .unwrap();
    assert_eq!(done.verified_with, None);
    assert_eq!(
        done.sha256,
        sha256(&std::fs::read(dir.path().join(WHEEL)).unwrap())
    );
}

#[tokio::test]
async fn a_hash_mismatch_leaves_nothing_behind() {
    let (_dir, server) = setup().await;
    server.attrs(
        WHEEL,
        FileAttrs {
            wrong_sha256: true,
            ..FileAttrs::default()
        },
    );
    let (client, file) = file(&server, WHEEL).await;
    let out = tempfile::tempdir().unwrap();
    let err = client
        .download(&file, &out.path().join(WHEEL), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::HashMismatch { .. }), "{err}");
    assert!(err.to_string().contains(WHEEL), "{err}");
    assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));

    // An existing file at the destination is left as it was.
    let dest = out.path().join(WHEEL);
    std::fs::write(&dest, b"previous").unwrap();
    client.download(&file, &dest, &|_, _| {}).await.unwrap_err();
    assert_eq!(std::fs::read(&dest).unwrap(), b"previous");
    assert_eq!(entries(out.path()), [WHEEL]);
}

#[tokio::test]
async fn a_broken_transfer_leaves_nothing_behind() {
    let (_dir, server) = setup().await;
    let big = "test_package-0-1-py3-none-any.whl";
    server.attrs(
        big,
        FileAttrs {
            truncate_after: Some(100_000),
            ..FileAttrs::default()
        },
    );
    let (client, file) = file(&server, big).await;
    let out = tempfile::tempdir().unwrap();
    let err = client
        .download(&file, &out.path().join(big), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
    assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));
}

/// An index that lies about a file's size (the hash is right): more bytes than declared stop
/// the transfer, fewer fail at the end; either way nothing is left behind, and the message
/// names the URL and both sizes.
#[tokio::test]
async fn a_size_the_index_lies_about_is_refused() {
    let (dir, server) = setup().await;
    let big = "test_package-0-1-py3-none-any.whl";
    let real = std::fs::metadata(dir.path().join(big)).unwrap().len();
    for declared in [real - 1000, real + 1000] {
        server.attrs(
            big,
            FileAttrs {
                declared_size: Some(declared),
                ..FileAttrs::default()
            },
        );
        let (client, file) = file(&server, big).await;
        assert_eq!(file.size, Some(declared));
        let out = tempfile::tempdir().unwrap();
        let err = client
            .download(&file, &out.path().join(big), &|_, _| {})
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ClientError::SizeMismatch(m) if m.declared == declared),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains(big), "{text}");
        assert!(
            text.contains(&format!("the index declares {declared}")),
            "{text}"
        );
        assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));
    }
}

/// Issue 33, item 11: a download is read as every reader reads a wheel before it is kept: one
/// with two `.dist-info` directories (its hash the index's) is refused with the message
/// `vari_wheel::inspect` gives, and nothing is left at the destination.
#[tokio::test]
async fn a_wheel_every_reader_refuses_is_not_kept() {
    let (dir, server) = setup().await;
    let two = "test_package-0-2-py3-none-any.whl";
    let path = write_wheel(dir.path(), two, None, 1000);
    vari_test_support::wheels::add_second_dist_info(&path, None);
    let (client, file) = file(&server, two).await;
    let out = tempfile::tempdir().unwrap();
    let err = client
        .download(&file, &out.path().join(two), &|_, _| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Archive { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(two), "{text}");
    assert!(
        text.contains("has more than one `.dist-info` directory"),
        "{text}"
    );
    assert!(entries(out.path()).is_empty(), "{:?}", entries(out.path()));
}
