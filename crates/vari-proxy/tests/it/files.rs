//! Files: local find-links files and rewritten copies served from disk with ranges (206,
//! 416, HEAD), files of an upstream that needs credentials streamed through, and unknown
//! files.

use crate::support::*;
use crate::wheels::*;

/// The URL path of `name` on the JSON page of `project`.
async fn href(addr: std::net::SocketAddr, project: &str, name: &str) -> String {
    let page = get_json(addr, &format!("/simple/{project}/")).await.json();
    let file = page["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["filename"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {page}"));
    path_of(file["url"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_files_are_served_with_ranges() {
    let flat = tempfile::tempdir().unwrap();
    plainpkg_release(flat.path());
    let (proxy, _scratch) = proxy_with(client(&[], &[flat.path()]), cpu_target).await;
    let addr = proxy.local_addr();
    let name = "plainpkg-2.0-py3-none-any.whl";
    let bytes = std::fs::read(flat.path().join(name)).unwrap();
    let length = bytes.len();
    let url = href(addr, "plainpkg", name).await;

    let whole = request(addr, "GET", &url, &[]).await;
    assert_eq!(whole.status, 200);
    assert_eq!(whole.body, bytes);
    assert_eq!(whole.header("accept-ranges"), Some("bytes"));

    let part = request(addr, "GET", &url, &[("Range", "bytes=10-19")]).await;
    assert_eq!(part.status, 206);
    assert_eq!(part.body, &bytes[10..20]);
    assert_eq!(
        part.header("content-range").unwrap(),
        format!("bytes 10-19/{length}")
    );
    let tail = request(addr, "GET", &url, &[("Range", "bytes=-22")]).await;
    assert_eq!(tail.status, 206);
    assert_eq!(tail.body, &bytes[length - 22..]);
    let open = request(
        addr,
        "GET",
        &url,
        &[("Range", &format!("bytes={}-", length - 3))],
    )
    .await;
    assert_eq!(open.body, &bytes[length - 3..]);

    let past = request(addr, "GET", &url, &[("Range", &format!("bytes={length}-"))]).await;
    assert_eq!(past.status, 416);
    assert_eq!(
        past.header("content-range").unwrap(),
        format!("bytes */{length}")
    );

    let head = request(addr, "HEAD", &url, &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("content-length").unwrap(), length.to_string());
    let head_part = request(addr, "HEAD", &url, &[("Range", "bytes=0-9")]).await;
    assert_eq!(head_part.status, 206);
    assert_eq!(head_part.header("content-length"), Some("10"));

    // Find-links files have no PEP 658 metadata; unknown keys and names are 404.
    assert_eq!(
        request(addr, "GET", &format!("{url}.metadata"), &[])
            .await
            .status,
        404
    );
    let wrong_key = url.replacen("/plainpkg/", "/plainpkg/0000/", 1);
    assert_eq!(request(addr, "GET", &wrong_key, &[]).await.status, 404);
    let other_name = url.replace(name, "plainpkg-9.9-py3-none-any.whl");
    assert_eq!(request(addr, "GET", &other_name, &[]).await.status, 404);

    // Only a whole GET counts as a download.
    let journal = proxy.journal();
    assert_eq!(journal.len(), 1, "{journal:?}");
    assert_eq!(journal[0].original, name);
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rewritten_copies_are_served_with_ranges_and_built_once() {
    let flat = tempfile::tempdir().unwrap();
    torch_release(flat.path());
    let (proxy, scratch) = proxy_with(client(&[], &[flat.path()]), cuda_13_target).await;
    let addr = proxy.local_addr();
    let url = href(addr, "torch", "torch-2.10.0-py3-none-any.whl").await;
    // Ranges before anything else: the copy is built for them.
    let (tail, head, whole) = tokio::join!(
        request(addr, "GET", &url, &[("Range", "bytes=-100")]),
        request(addr, "HEAD", &url, &[]),
        request(addr, "GET", &url, &[]),
    );
    assert_eq!(whole.status, 200);
    let length = whole.body.len();
    assert_eq!(tail.status, 206);
    assert_eq!(tail.body, &whole.body[length - 100..]);
    assert_eq!(head.header("content-length").unwrap(), length.to_string());
    let metadata = metadata_of(&whole.body);
    assert!(
        metadata.contains("Requires-Dist: nvidia-cuda-runtime==13.0.96\n"),
        "{metadata}"
    );
    assert!(!metadata.contains("cu12"), "{metadata}");
    // One copy in the cache, named as served.
    let copies: Vec<_> = walk(&scratch.path().join("wheels"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(copies[0].ends_with("torch-2.10.0-py3-none-any.whl"));
    // Three requests at once, one build.
    let built = "torch-2.10.0-py3-none-any.whl: rewritten copy of torch-2.10.0-py3-none-any-cuda13.0.whl ready";
    assert_eq!(logs().matches(built).count(), 1, "{}", logs());
    proxy.shutdown().await;

    // A new proxy on the same cache lists the copy's hash at once.
    let proxy = start(settings(
        client(&[], &[flat.path()]),
        cuda_13_target(scratch.path()),
        scratch.path(),
    ))
    .await;
    let page = get_json(proxy.local_addr(), "/simple/torch/").await.json();
    let wheel = page["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["filename"] == "torch-2.10.0-py3-none-any.whl")
        .unwrap();
    assert_eq!(wheel["hashes"]["sha256"], sha256_hex(&whole.body).as_str());
    proxy.shutdown().await;
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_of_an_upstream_with_credentials_are_streamed_through() {
    let (dir, index) = upstream(&[plainpkg_release]).await;
    index.set(|k| k.basic_auth = Some(("user".into(), "secret".into())));
    let with_credentials = index.index_url().replace("http://", "http://user:secret@");
    let (proxy, _scratch) = proxy_with(client(&[with_credentials], &[]), cpu_target).await;
    let addr = proxy.local_addr();
    let name = "plainpkg-1.0-py3-none-any.whl";
    let url = href(addr, "plainpkg", name).await;
    let reply = request(addr, "GET", &url, &[]).await;
    // Not a redirect: the installer could not authenticate at the upstream.
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body, std::fs::read(dir.path().join(name)).unwrap());
    assert_eq!(reply.header("accept-ranges"), Some("none"));
    assert!(reply.header("location").is_none());
    proxy.shutdown().await;
}
