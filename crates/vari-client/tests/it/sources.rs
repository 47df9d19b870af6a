//! Several indexes (first-index and unsafe-best-match) and find-links sources.

use vari_client::{FileSource, FindLinks, IndexStrategy, MetadataOrigin, VersionVariants};

use crate::server::TestIndex;
use crate::support::{client, name, settings, testdata, write_wheel};

async fn server_with(wheels: &[&str]) -> (tempfile::TempDir, TestIndex) {
    let dir = tempfile::tempdir().unwrap();
    for wheel in wheels {
        write_wheel(dir.path(), wheel, None, 0);
    }
    let server = TestIndex::start(dir.path()).await;
    (dir, server)
}

fn versions(project: &vari_client::Project) -> Vec<String> {
    project.versions().iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn the_first_index_with_the_project_wins_unless_merging() {
    let (_a, first) = server_with(&["foo-1.0-py3-none-any.whl"]).await;
    let (_b, second) = server_with(&["foo-2.0-py3-none-any.whl", "bar-1.0-py3-none-any.whl"]).await;
    let indexes = [first.index_url(), second.index_url()];

    let client_first = client(settings(&indexes));
    let first_only = client_first.project(&name("foo")).await.unwrap();
    assert_eq!(versions(&first_only), ["1.0"]);
    assert!(second.seen().is_empty(), "later indexes are not asked");
    assert_eq!(
        first_only.files[0].source,
        FileSource::Index(url::Url::parse(&first.index_url()).unwrap())
    );
    // A project the first index lacks comes from the next one.
    let bar = client_first.project(&name("bar")).await.unwrap();
    assert_eq!(versions(&bar), ["1.0"]);

    let mut s = settings(&indexes);
    s.strategy = IndexStrategy::UnsafeBestMatch;
    let merged = client(s).project(&name("foo")).await.unwrap();
    assert_eq!(versions(&merged), ["1.0", "2.0"]);
}

#[tokio::test]
async fn a_find_links_directory_lists_local_files() {
    let mut s = settings(&[]);
    s.find_links = vec![FindLinks::Directory(testdata().join("wheels"))];
    let client = client(s);
    let project = client.project(&name("test-package")).await.unwrap();
    assert_eq!(project.files.len(), 7);
    assert!(project.files.iter().all(|f| f.url.scheme() == "file"));
    let VersionVariants::Described(d) = client
        .variant_metadata(&project, &"0".parse().unwrap())
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(matches!(d.origin, MetadataOrigin::IndexFiles(_)));
    assert!(d.missing_labels.is_empty());
    // Local wheels are read too (range reads on the file).
    let null = project
        .files
        .iter()
        .find(|f| f.filename.ends_with("-null.whl"))
        .unwrap();
    assert!(client
        .core_metadata(null)
        .await
        .unwrap()
        .contains("Name: test-package"));
}

#[tokio::test]
async fn a_flat_page_gives_only_the_projects_links() {
    let (_dir, server) = server_with(&[
        "foo-1.0-py3-none-any.whl",
        "foo-1.1-py3-none-any-x86_64_v3.whl",
        "foobar-1.0-py3-none-any.whl",
        "bar-1.0-py3-none-any.whl",
    ])
    .await;
    let mut s = settings(&[]);
    s.find_links = vec![FindLinks::parse(&format!("{}/flat.html", server.base())).unwrap()];
    let client = client(s);
    let flat = client.project(&name("foo")).await.unwrap();
    let names: Vec<&str> = flat.files.iter().map(|f| f.filename.as_str()).collect();
    assert_eq!(
        names,
        [
            "foo-1.0-py3-none-any.whl",
            "foo-1.1-py3-none-any-x86_64_v3.whl"
        ]
    );
    assert!(flat.files[0].hashes.sha256().is_some());
    // The page is read once per client.
    client.project(&name("bar")).await.unwrap();
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_project_source_is_the_project_unparsed_with_a_digest_of_its_pages() {
    let (dir, first) = server_with(&["foo-1.0-py3-none-any.whl"]).await;
    let (_b, second) = server_with(&["foo-2.0-py3-none-any.whl"]).await;
    let indexes = [first.index_url(), second.index_url()];
    let mut s = settings(&indexes);
    s.strategy = IndexStrategy::UnsafeBestMatch;
    let client = client(s.clone());

    let source = client.project_source(&name("foo")).await.unwrap().unwrap();
    assert_eq!(source.name().as_str(), "foo");
    let digest = source.digest().to_owned();
    assert_eq!(digest.len(), 64);
    let parsed = client.project_from_source(source).unwrap();
    let read = client.project(&name("foo")).await.unwrap();
    assert_eq!(versions(&parsed), ["1.0", "2.0"]);
    assert_eq!(parsed.files, read.files);

    // The same pages again: the same digest; a page that changed: another.
    let again = client.project_source(&name("foo")).await.unwrap().unwrap();
    assert_eq!(again.digest(), digest);
    write_wheel(dir.path(), "foo-1.1-py3-none-any.whl", None, 0);
    let changed = client.project_source(&name("foo")).await.unwrap().unwrap();
    assert_ne!(changed.digest(), digest);

    // A project no index has: not found, naming where it was looked for.
    let missing = client.project_source(&name("nothing")).await.unwrap_err();
    assert!(
        matches!(&missing, vari_client::ClientError::ProjectNotFound { tried, .. } if tried.len() == 2),
        "{missing:?}"
    );
    // Find-links sources hold no page of the project: no source; `project` is the way.
    s.find_links = vec![FindLinks::Directory(testdata().join("wheels"))];
    assert!(vari_client::IndexClient::new(s)
        .unwrap()
        .project_source(&name("foo"))
        .await
        .unwrap()
        .is_none());
}
