//! HTTP behaviour: retries, time limits, credentials, the cache and its modes.

use std::time::Duration;

use vari_client::{CacheMode, ClientError, IndexUrl, NetrcSource};

use crate::server::TestIndex;
use crate::support::{client, copy_fixture_wheels, name, settings};

async fn fixture_server() -> (tempfile::TempDir, TestIndex) {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_wheels(dir.path(), true);
    let server = TestIndex::start(dir.path()).await;
    (dir, server)
}

#[tokio::test]
async fn server_errors_are_retried_then_succeed() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| k.fail_next = 2);
    let mut s = settings(&[server.index_url()]);
    s.retries = 3;
    let project = client(s).project(&name("test-package")).await.unwrap();
    assert_eq!(project.files.len(), 7);
    let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
    assert_eq!(statuses, [500, 500, 200]);
}

#[tokio::test]
async fn retries_are_bounded() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| k.fail_next = 5);
    let mut s = settings(&[server.index_url()]);
    s.retries = 1;
    let err = client(s).project(&name("test-package")).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 500, .. }),
        "{err}"
    );
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| k.hang = true);
    let mut s = settings(&[server.index_url()]);
    s.read_timeout = Duration::from_millis(300);
    s.retries = 2;
    let err = client(s).project(&name("test-package")).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
    assert!(err.to_string().contains(&server.index_url()), "{err}");
    // A time-out is not retried.
    assert_eq!(server.seen().len(), 1);
}

fn netrc_file(dir: &std::path::Path, host: &str) -> std::path::PathBuf {
    let path = dir.join("netrc");
    std::fs::write(
        &path,
        format!("machine {host}\n  login alice\n  password wonderland\n"),
    )
    .unwrap();
    path
}

#[tokio::test]
async fn netrc_credentials_are_sent_to_their_host() {
    let (dir, server) = fixture_server().await;
    server.set(|k| k.basic_auth = Some(("alice".into(), "wonderland".into())));

    let mut s = settings(&[server.index_url()]);
    s.netrc = NetrcSource::File(netrc_file(dir.path(), "127.0.0.1"));
    let project = client(s).project(&name("test-package")).await.unwrap();
    assert_eq!(project.files.len(), 7);

    // Credentials for another host are not sent.
    let mut s = settings(&[server.index_url()]);
    s.netrc = NetrcSource::File(netrc_file(dir.path(), "localhost"));
    let err = client(s).project(&name("test-package")).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Status { status: 401, .. }),
        "{err}"
    );
    assert!(!err.to_string().contains("wonderland"));
    assert!(!format!("{err:?}").contains("wonderland"));
}

#[tokio::test]
async fn url_credentials_go_only_to_their_realm_and_are_never_shown() {
    let (_dir, private) = fixture_server().await;
    let (_dir2, public) = fixture_server().await;
    private.set(|k| k.basic_auth = Some(("bob".into(), "s3cret".into())));
    let with_auth = private.index_url().replace("http://", "http://bob:s3cret@");
    let mut s = settings(&[with_auth, public.index_url()]);
    s.strategy = vari_client::IndexStrategy::UnsafeBestMatch;
    let client = client(s);
    assert!(!format!("{:?}", client.settings()).contains("s3cret"));
    let project = client.project(&name("test-package")).await.unwrap();
    assert_eq!(project.files.len(), 14);
    assert!(private.seen().iter().all(|s| s.authorization.is_some()));
    assert!(public.seen().iter().all(|s| s.authorization.is_none()));
    for file in &project.files {
        assert!(!file.url.as_str().contains("s3cret"));
    }
    let index =
        IndexUrl::parse(&private.index_url().replace("http://", "http://bob:s3cret@")).unwrap();
    assert!(!index.to_string().contains("s3cret"));
}

#[tokio::test]
async fn the_cache_revalidates_with_etags_and_serves_offline() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| k.etag = true);
    let cache = tempfile::tempdir().unwrap();
    let cached = |mode| {
        let mut s = settings(&[server.index_url()]);
        s.cache_dir = Some(cache.path().to_path_buf());
        s.cache_mode = mode;
        client(s)
    };
    let first = cached(CacheMode::Normal)
        .project(&name("test-package"))
        .await
        .unwrap();
    let second = cached(CacheMode::Normal)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(first.files, second.files);
    let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
    assert_eq!(statuses, [200, 304]);

    server.clear_seen();
    let offline = cached(CacheMode::Offline)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(offline.files, first.files);
    assert!(server.seen().is_empty());

    let err = cached(CacheMode::Offline)
        .project(&name("other"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Offline { .. }), "{err}");
    assert!(err.to_string().contains("/simple/other/"), "{err}");
    assert!(server.seen().is_empty());
}

/// Python's `http.server` answers `If-Modified-Since` with a 304 that repeats no validator;
/// it still confirms the one stored response the request was made from, so the page is not
/// fetched a second time.
#[tokio::test]
async fn a_304_without_validators_confirms_the_stored_page() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| {
        k.last_modified = true;
        k.bare_not_modified = true;
        // Revalidate every time (a 2015 Last-Modified alone would make the page fresh).
        k.cache_control = Some("no-cache".into());
    });
    let cache = tempfile::tempdir().unwrap();
    let cached = || {
        let mut s = settings(&[server.index_url()]);
        s.cache_dir = Some(cache.path().to_path_buf());
        client(s)
    };
    let first = cached().project(&name("test-package")).await.unwrap();
    for _ in 0..2 {
        let again = cached().project(&name("test-package")).await.unwrap();
        assert_eq!(again.files, first.files);
    }
    let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
    assert_eq!(statuses, [200, 304, 304]);

    // An ETag-only server that drops the ETag from its 304s, likewise.
    server.set(|k| {
        k.last_modified = false;
        k.etag = true;
    });
    server.clear_seen();
    let other = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let mut s = settings(&[server.index_url()]);
        s.cache_dir = Some(other.path().to_path_buf());
        client(s).project(&name("test-package")).await.unwrap();
    }
    let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
    assert_eq!(statuses, [200, 304]);
}

#[tokio::test]
async fn fresh_entries_are_used_until_refresh_revalidates_them() {
    let (_dir, server) = fixture_server().await;
    server.set(|k| {
        k.last_modified = true;
        k.cache_control = Some("max-age=3600".into());
    });
    let cache = tempfile::tempdir().unwrap();
    let cached = |mode| {
        let mut s = settings(&[server.index_url()]);
        s.cache_dir = Some(cache.path().to_path_buf());
        s.cache_mode = mode;
        client(s)
    };
    cached(CacheMode::Normal)
        .project(&name("test-package"))
        .await
        .unwrap();
    cached(CacheMode::Normal)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(server.seen().len(), 1, "a fresh entry needs no request");

    server.clear_seen();
    let refreshed = cached(CacheMode::Refresh)
        .project(&name("test-package"))
        .await
        .unwrap();
    assert_eq!(refreshed.files.len(), 7);
    let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [304],
        "refresh revalidates with If-Modified-Since"
    );
}
