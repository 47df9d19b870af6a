//! The link rule seen through the proxy: a remote index whose page links local files (`file:`
//! URLs) never makes the proxy list or serve them; only its http links are listed.

use vari_test_support::raw as raw_server;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_page_cannot_make_the_proxy_serve_local_files() {
    let json = r#"{"meta": {"api-version": "1.1"}, "files": [
        {"filename": "demo-1.0-py3-none-any.whl", "url": "file:///etc/passwd", "hashes": {}},
        {"filename": "demo-2.0-py3-none-any.whl", "url": "/files/demo-2.0-py3-none-any.whl", "hashes": {}}]}"#;
    let base = raw_server::raw_server(move |_, _, stream| {
        raw_server::page(stream, "application/vnd.pypi.simple.v1+json", json)
    });
    let (proxy, _scratch) = proxy_with(client(&[format!("{base}/simple/")], &[]), cpu_target).await;
    let page = get_json(proxy.local_addr(), "/simple/demo/").await;
    assert_eq!(page.status, 200, "{}", page.text());
    let text = page.text();
    assert!(
        !text.contains("passwd") && !text.contains("demo-1.0"),
        "{text}"
    );
    assert!(text.contains("demo-2.0-py3-none-any.whl"), "{text}");
    // Whatever file path is asked for, nothing of /etc/passwd comes back.
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let first_line = passwd.lines().next().unwrap_or("root:");
    for file in page.json()["files"].as_array().unwrap() {
        let url = file["url"].as_str().unwrap();
        if !url.starts_with('/') {
            continue;
        }
        let reply = request(proxy.local_addr(), "GET", &path_of(url), &[]).await;
        assert!(!reply.text().contains(first_line), "{url}");
    }
}
