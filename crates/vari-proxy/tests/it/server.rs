//! The proxy as a server: the `Host` check (DNS rebinding), and idle connections that cannot
//! starve the clients that ask for something.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::support::*;
use crate::wheels::*;

/// A safety net for waits that end at once when the proxy behaves (never a timing assertion).
const SAFETY_NET: Duration = Duration::from_secs(60);

/// `GET path` with `Host: host`, one request per connection.
async fn get_with_host(addr: SocketAddr, path: &str, host: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn requests_naming_another_host_are_refused_with_one_log_line() {
    let (_dir, index) = upstream(&[torch_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
    let addr = proxy.local_addr();
    let port = addr.port();
    // What installers and people send: the address itself, localhost, with or without port.
    for host in [
        addr.to_string(),
        "127.0.0.1".to_owned(),
        format!("localhost:{port}"),
        "localhost".to_owned(),
    ] {
        let (status, body) = get_with_host(addr, "/simple/torch/", &host).await;
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    // A web page's request through DNS rebinding names the page's host.
    for _ in 0..50 {
        let (status, body) =
            get_with_host(addr, "/simple/torch/", &format!("rebound.example:{port}")).await;
        assert_eq!(status, 421, "{body}");
        assert_eq!(
            body,
            format!("this proxy serves requests for {addr} or localhost:{port} only\n")
        );
        assert!(!body.contains("torch-2.10"));
    }
    // An absolute-form target names its host too.
    let (status, _) = get_with_host(
        addr,
        "http://rebound.example/simple/torch/",
        &addr.to_string(),
    )
    .await;
    assert_eq!(status, 421);
    // Fifty-one refusals, one line (the next one is due ten seconds later at the earliest).
    let lines: Vec<_> = logs()
        .lines()
        .filter(|l| l.contains("rebound.example"))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("refused 1 request(s) naming another host")
            && lines[0].contains(&format!("Host \"rebound.example:{port}\""))
            && lines[0].contains("DNS rebinding"),
        "{}",
        lines[0]
    );
    proxy.shutdown().await;
}

/// One keep-alive connection asking for `path` `times` times; every answer must be a 200 with
/// the whole body.
async fn keep_alive_client(addr: SocketAddr, path: &str, times: usize) -> Vec<u8> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let mut reader = BufReader::new(stream);
    let mut last = Vec::new();
    for i in 0..times {
        let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        reader.get_mut().write_all(head.as_bytes()).await.unwrap();
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "request {i}: {line:?}");
        let mut length = None;
        loop {
            line.clear();
            reader.read_line(&mut line).await.unwrap();
            if line.trim_end().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let mut body = vec![0; length.expect("pages have a Content-Length")];
        reader.read_exact(&mut body).await.unwrap();
        last = body;
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_connections_make_room_for_clients_that_ask() {
    let (_dir, index) = upstream(&[torch_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let mut settings = settings(
        client(&[index.index_url()], &[]),
        cuda_12_8_target(scratch.path()),
        scratch.path(),
    );
    settings.max_connections = 64;
    // Only the cap may close the idle connections here, not the idle timeout.
    settings.header_timeout = Duration::from_secs(600);
    let proxy = start(settings).await;
    let addr = proxy.local_addr();
    // The page is built once, then served from memory.
    let first = keep_alive_client(addr, "/simple/torch/", 1).await;

    // A hundred connections that never send anything, opened first (accepted in that order).
    // Plain sockets, read without blocking below: whether one is closed is asked of the kernel.
    let mut idle = Vec::new();
    for _ in 0..100 {
        let stream = TcpStream::connect(addr).await.unwrap().into_std().unwrap();
        idle.push(stream);
    }
    // Fifty clients at once, twenty requests each on one connection. However the machine
    // schedules them (all connected at once, or one after another), none may wait behind the
    // idle connections: each gets every answer.
    let clients: Vec<_> = (0..50)
        .map(|_| tokio::spawn(async move { keep_alive_client(addr, "/simple/torch/", 20).await }))
        .collect();
    for client in clients {
        let body = tokio::time::timeout(SAFETY_NET, client)
            .await
            .expect("a client waited behind idle connections")
            .unwrap();
        assert_eq!(body, first);
    }
    // The rule, not a count reached by timing: the idle connections closed to make room were
    // the ones idle the longest. A hundred idle connections through a cap of 64 closed at
    // least 36 of them whatever the timing; the clients may have closed more. Every
    // connection older than the newest one found closed must be closed too (waited for: its
    // end of file may still be on its way).
    let idle = tokio::task::spawn_blocking(move || {
        let newest_closed = idle
            .iter()
            .rposition(closed_now)
            .expect("no idle connection was closed");
        let at_least = 100 - 64 - 1;
        for (i, stream) in idle
            .iter()
            .enumerate()
            .take(newest_closed.max(at_least) + 1)
        {
            assert!(
                closed_eventually(stream),
                "idle connection {i} is still open although a newer one was closed"
            );
        }
        idle
    })
    .await
    .unwrap();
    drop(idle);
    proxy.shutdown().await;
}

/// Whether the peer has closed `stream` (end of file or reset) by now, without waiting.
fn closed_now(stream: &std::net::TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut byte = [0; 1];
    match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => panic!("an idle connection received data"),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

/// Whether the peer closes `stream` within the safety net.
fn closed_eventually(stream: &std::net::TcpStream) -> bool {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(SAFETY_NET)).unwrap();
    let mut byte = [0; 1];
    match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => panic!("an idle connection received data"),
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// `start_first_free` listens on the first candidate address that is free (a busy one is
/// skipped), derives the candidates from the fingerprint the proxy's URLs then carry, refuses
/// a remote address as `start` does, and with every candidate busy says which address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_free_candidate_address_is_listened_on() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_addr = busy.local_addr().unwrap();
    let free: SocketAddr = format!("127.0.0.1:{}", unused_port()).parse().unwrap();
    let make = || {
        settings(
            client(&[index.index_url()], &[]),
            cpu_target(scratch.path()),
            scratch.path(),
        )
    };
    let expected = vari_proxy::fingerprint_of(&make());
    let mut given = String::new();
    let proxy = vari_proxy::start_first_free(make(), |fingerprint| {
        given = fingerprint.to_owned();
        vec![busy_addr, free]
    })
    .await
    .unwrap();
    assert_eq!(given, expected);
    assert_eq!(proxy.fingerprint(), expected);
    assert_eq!(proxy.local_addr(), free);
    assert!(proxy.index_url().as_str().contains(&expected));
    let page = format!("{}plainpkg/", proxy.index_url().path());
    assert_eq!(get_json(proxy.local_addr(), &page).await.status, 200);
    proxy.shutdown().await;

    let remote: SocketAddr = "192.0.2.1:3141".parse().unwrap();
    let refused = vari_proxy::start_first_free(make(), |_| vec![remote]).await;
    assert!(matches!(refused, Err(vari_proxy::ProxyError::RemoteBind { addr }) if addr == remote));
    let taken = vari_proxy::start_first_free(make(), |_| vec![busy_addr]).await;
    match taken {
        Err(vari_proxy::ProxyError::Bind { addr, .. }) => assert_eq!(addr, busy_addr),
        other => panic!("{other:?}"),
    }
    drop(busy);
}
