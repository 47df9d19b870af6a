//! What `vari proxy`'s log names as the target: the source `vari select` names (a profile's
//! path, a facts file, a snapshot), and, for this machine, the override variables that decide
//! rather than "this machine" alone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use vari_test_support::paths::demo;

use crate::common::{first_stdout_line, vari};

/// A safety net against a proxy that never logs the line: the test fails instead of hanging.
const LOG_TIMEOUT: Duration = Duration::from_secs(60);

/// Stops the proxy when the test ends, however it ends.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_log_names_the_override_variables_that_decide() {
    let dir = tempfile::tempdir().unwrap();
    // CUDA 12.8 builds only; the override says the driver is CUDA 12.6.
    for name in [
        "vari_demo-1.0.0-py3-none-any-cu128.whl",
        "vari_demo-1.0.0-variants.json",
    ] {
        std::fs::copy(demo().join(name), dir.path().join(name)).unwrap();
    }
    let mut child = vari()
        .args(["proxy", "--bind", "127.0.0.1:0", "--find-links"])
        .arg(dir.path())
        .arg("--python")
        .arg(vari_test_support::venv::test_venv())
        .env("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", "12.6")
        .env("NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "8.6")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let first = first_stdout_line(&mut child);
    let proxy = Proxy(child);
    let (lines, log) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let url = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("UV_DEFAULT_INDEX=http://"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"));
    let (addr, path) = url.split_once('/').unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /{path}vari-demo/ HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    let source = "this machine with overrides \
                  NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION=12.6, \
                  NV_VARIANT_PROVIDER_FORCE_SM_ARCH=8.6";
    let mut seen = Vec::new();
    let mut wanted = vec![
        format!("choosing for {source}"),
        format!("has no build for {source}: builds for NVIDIA GPUs (cu128)"),
    ];
    while !wanted.is_empty() {
        let line = log
            .recv_timeout(LOG_TIMEOUT)
            .unwrap_or_else(|_| panic!("missing {wanted:?} in the log:\n{}", seen.join("\n")));
        wanted.retain(|w| !line.contains(w.as_str()));
        seen.push(line);
    }
    drop(proxy);
}
