//! `vari proxy` as a server under the limits of a small machine: a 1 GiB address space
//! (`ulimit -v`) while a hundred page builds run at once, and 64 open files while hundreds of
//! connections sit idle. The real binary, a hand-written slow upstream on 127.0.0.1, plain
//! HTTP/1.1 clients.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use vari_test_support::raw::raw_server_with;

use crate::common::vari;

/// How long the upstream takes for each page: long enough that a hundred builds overlap.
const UPSTREAM_DELAY: Duration = Duration::from_millis(300);

/// A safety net for reads: the old proxy kept idle connections for 30 s while others waited.
const READ_TIMEOUT: Duration = Duration::from_secs(15);

/// An upstream index answering every `/simple/{name}/` after [`UPSTREAM_DELAY`] with a PEP
/// 691 page listing one wheel; a thread per connection, one request each.
fn slow_upstream() -> SocketAddr {
    raw_server_with(|request, stream| {
        let name = request
            .path
            .strip_prefix("/simple/")
            .map(|rest| rest.trim_end_matches('/').to_owned())
            .unwrap_or_default();
        answer_page(stream, &name);
    })
}

fn answer_page(stream: &mut TcpStream, name: &str) {
    std::thread::sleep(UPSTREAM_DELAY);
    let body = format!(
        r#"{{"meta": {{"api-version": "1.1"}}, "name": "{name}", "files": [{{"filename": "{name}-1.0-py3-none-any.whl", "url": "{name}-1.0-py3-none-any.whl", "hashes": {{"sha256": "{}"}}}}]}}"#,
        "0".repeat(64)
    );
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

/// `vari proxy` over `upstream` on a free port, under the shell `limits` (`ulimit …`): the
/// process (the shell `exec`s it) and its address.
fn limited_proxy(limits: &str, upstream: SocketAddr, cache: &std::path::Path) -> (Child, String) {
    let base = vari();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{limits} && exec \"$0\" \"$@\""))
        .arg(base.get_program())
        .args(["proxy", "--bind", "127.0.0.1:0", "--index-url"])
        .arg(format!("http://{upstream}/simple/"));
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let mut child = command
        .env("VARI_CACHE_DIR", cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line = crate::common::first_stdout_line(&mut child);
    let addr = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("PIP_INDEX_URL=http://"))
        .and_then(|rest| rest.strip_suffix("/simple/"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_owned();
    (child, addr)
}

/// `requests` GETs of `/simple/{name}/` on one keep-alive connection to `addr`: each must be
/// a 200 listing the project's wheel.
fn ask(addr: &str, name: &str, requests: usize) -> Result<(), String> {
    let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    let mut reader = BufReader::new(stream);
    for _ in 0..requests {
        let head = format!(
            "GET /simple/{name}/ HTTP/1.1\r\nHost: {addr}\r\n\
             Accept: application/vnd.pypi.simple.v1+json\r\n\r\n"
        );
        reader
            .get_mut()
            .write_all(head.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("{name}: {e}"))?;
        if !line.starts_with("HTTP/1.1 200") {
            return Err(format!("{name}: {line:?}"));
        }
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).map_err(|e| e.to_string())?;
            if line.trim_end().is_empty() {
                break;
            }
            if let Some((key, value)) = line.split_once(':') {
                if key.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        reader
            .read_exact(&mut body)
            .map_err(|e| format!("{name}: {e}"))?;
        if !String::from_utf8_lossy(&body).contains(&format!("{name}-1.0-py3-none-any.whl")) {
            return Err(format!("{name}: {}", String::from_utf8_lossy(&body)));
        }
    }
    Ok(())
}

/// `clients` threads at once, client `i` asking `requests` times for `name(i)`: every error.
fn in_parallel(
    addr: &str,
    clients: usize,
    requests: usize,
    name: fn(usize) -> String,
) -> Vec<String> {
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let addr = addr.to_owned();
            std::thread::spawn(move || ask(&addr, &name(i), requests))
        })
        .collect();
    threads
        .into_iter()
        .filter_map(|t| t.join().unwrap().err())
        .collect()
}

/// `VmPeak`, `VmHWM` (KiB) and `Threads` of `pid`.
fn proc_status(pid: u32) -> (u64, u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {status}"))
    };
    (field("VmPeak:"), field("VmHWM:"), field("Threads:"))
}

/// SIGTERM, then the log.
fn stop(mut child: Child) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let _ = child.wait();
    log
}

#[test]
fn a_hundred_page_builds_at_once_fit_in_a_1_gib_address_space() {
    let upstream = slow_upstream();
    let cache = tempfile::tempdir().unwrap();
    let (mut child, addr) = limited_proxy("ulimit -v 1048576", upstream, cache.path());
    // A hundred projects at once: a hundred page builds under way together (each used to take
    // a thread of its own, with its stack and its allocator heap).
    let errors = in_parallel(&addr, 100, 1, |i| format!("p{i}"));
    assert!(errors.is_empty(), "{errors:#?}");
    // Then the cached pages, twenty times each on a hundred keep-alive connections.
    let errors = in_parallel(&addr, 100, 20, |i| format!("p{i}"));
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the proxy died: {}",
        stop(child)
    );
    let (peak_kib, resident_kib, threads) = proc_status(child.id());
    eprintln!("vari proxy: VmPeak {peak_kib} KiB, VmHWM {resident_kib} KiB, {threads} threads");
    assert!(peak_kib < 1024 * 1024, "VmPeak {peak_kib} KiB");
    // The main thread, the workers, the page builders, the blocking pool: bounded, whatever
    // the number of builds.
    let most =
        1 + 2 * vari_proxy::MAX_WORKER_THREADS as u64 + vari_proxy::MAX_BLOCKING_THREADS as u64;
    assert!(threads <= most, "{threads} threads");
    let log = stop(child);
    assert!(!log.contains("memory allocation"), "{log}");
}

#[test]
fn idle_connections_do_not_starve_clients_under_a_low_open_file_limit() {
    let upstream = slow_upstream();
    let cache = tempfile::tempdir().unwrap();
    let (child, addr) = limited_proxy("ulimit -n 64", upstream, cache.path());
    // Three times the open files the proxy may have, connected and silent.
    let idle: Vec<_> = (0..200)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    // Clients that ask are answered (each read waits at most READ_TIMEOUT, less than the
    // 30 s the idle connections used to hold their descriptors).
    let errors = in_parallel(&addr, 10, 5, |i| format!("q{i}"));
    assert!(errors.is_empty(), "{errors:#?}");
    drop(idle);
    let log = stop(child);
    // Failed accepts, if any, are reported once per 10 s, not once per attempt.
    let failed_accepts = log
        .lines()
        .filter(|l| l.contains("cannot accept connections"))
        .count();
    assert!(failed_accepts <= 2, "{log}");
}
