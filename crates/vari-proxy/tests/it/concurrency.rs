//! Fifty clients at once: one upstream fetch, identical answers.

use crate::support::*;
use crate::wheels::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn fifty_concurrent_clients_cause_one_upstream_fetch() {
    let (_dir, index) = upstream(&[torch_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
    let addr = proxy.local_addr();
    let mut clients = Vec::new();
    for i in 0..50 {
        clients.push(tokio::spawn(async move {
            // Half ask for JSON, half for HTML: both come from the same build.
            match i % 2 {
                0 => get_json(addr, "/simple/torch/").await,
                _ => request(addr, "GET", "/simple/torch/", &[]).await,
            }
        }));
    }
    let mut replies = Vec::new();
    for client in clients {
        replies.push(client.await.unwrap());
    }
    for (i, reply) in replies.iter().enumerate() {
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.body, replies[i % 2].body, "client {i}");
    }
    assert_ne!(replies[0].body, replies[1].body);
    assert!(replies[0].text().contains("torch-2.10.0-py3-none-any.whl"));
    assert_eq!(
        upstream_requests(&index, "/simple/torch/"),
        1,
        "{:#?}",
        index.seen()
    );
    // The variant metadata was read once too.
    let metadata_fetches = index
        .seen()
        .iter()
        .filter(|s| s.path.ends_with("-variants.json"))
        .count();
    assert_eq!(metadata_fetches, 1);
    // Later requests within the page's lifetime are answered from memory.
    let again = get_json(addr, "/simple/torch/").await;
    assert_eq!(again.body, replies[0].body);
    assert_eq!(upstream_requests(&index, "/simple/torch/"), 1);
    proxy.shutdown().await;
}
