//! A server on raw sockets, for answers a well-behaved HTTP library would not send: endless,
//! dripping, truncated, mislabelled bodies, slow pages, counted downloads. The accept loop and
//! the reading of the request head are here once; each test scripts only the answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// One request as a raw server read it: the request line's method and target, and the headers
/// (names as sent). The body, if any, is left unread.
#[derive(Debug, Clone)]
pub struct RawRequest {
    /// `GET`, `HEAD`, …
    pub method: String,
    /// The request target, as sent (`/simple/demo/`).
    pub path: String,
    /// Every header line, split at the first colon, values trimmed.
    pub headers: Vec<(String, String)>,
}

impl RawRequest {
    /// The first header called `name` (ASCII case ignored).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// Whether the client accepts PEP 691 JSON.
    pub fn wants_json(&self) -> bool {
        self.header("accept")
            .is_some_and(|accept| accept.contains("application/vnd.pypi.simple.v1+json"))
    }
}

/// What a raw server answers to one request, on the socket.
type Answer = dyn Fn(&RawRequest, &mut TcpStream) + Send + Sync;

/// A server on 127.0.0.1 that reads each request's head and lets `answer` write whatever it
/// likes on the socket (one thread per connection, one request per connection), until the
/// test process ends. Returns the address it listens on.
pub fn raw_server_with(
    answer: impl Fn(&RawRequest, &mut TcpStream) + Send + Sync + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local address");
    let answer: Arc<Answer> = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let Ok(reading) = stream.try_clone() else {
                    return;
                };
                let mut reader = BufReader::new(reading);
                let Some(request) = read_head(&mut reader) else {
                    return;
                };
                answer(&request, &mut stream);
                // Read what the client may still send, so that closing does not reset the
                // connection under an answer it has not read yet.
                let _ = stream.flush();
                let _ = stream.shutdown(Shutdown::Write);
                let _ = reader.read(&mut [0; 64]);
            });
        }
    });
    addr
}

/// [`raw_server_with`] for answers that need only the path and the `Range` header; returns
/// the base URL (`http://127.0.0.1:PORT`).
pub fn raw_server(
    answer: impl Fn(&str, Option<&str>, &mut TcpStream) + Send + Sync + 'static,
) -> String {
    let addr = raw_server_with(move |request, stream| {
        answer(&request.path, request.header("range"), stream)
    });
    format!("http://{addr}")
}

/// A port on 127.0.0.1 that nothing listens on (bound, and let go at once).
pub fn unused_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    listener.local_addr().expect("local address").port()
}

/// Reads a request line and the headers up to the blank line.
fn read_head(reader: &mut impl BufRead) -> Option<RawRequest> {
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut words = first.split_whitespace();
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or("/").to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            headers.push((key.trim().to_owned(), value.trim().to_owned()));
        }
    }
    Some(RawRequest {
        method,
        path,
        headers,
    })
}

/// Where a `Range` header (`bytes=A-…` or `bytes=-N`) asks a `total`-byte file to start; 0
/// without one.
pub fn range_start(range: Option<&str>, total: usize) -> usize {
    match range.and_then(|r| r.strip_prefix("bytes=")) {
        Some(suffix) if suffix.starts_with('-') => {
            total.saturating_sub(suffix[1..].parse().unwrap_or(0))
        }
        Some(span) => span
            .split('-')
            .next()
            .and_then(|start| start.parse().ok())
            .unwrap_or(0),
        None => 0,
    }
}

/// Writes a response head: `status`, `connection: close` and `headers`.
pub fn head(stream: &mut TcpStream, status: &str, headers: &[(&str, String)]) {
    let mut text = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    text.push_str("\r\n");
    let _ = stream.write_all(text.as_bytes());
}

/// Writes a whole `200 OK` answer with `body` as `content_type`.
pub fn page(stream: &mut TcpStream, content_type: &str, body: &str) {
    head(
        stream,
        "200 OK",
        &[
            ("content-type", content_type.to_owned()),
            ("content-length", body.len().to_string()),
        ],
    );
    let _ = stream.write_all(body.as_bytes());
}

/// A `200 OK` of `content_type` that promises 100,000 bytes, then sends `byte` once every
/// `interval` until the client hangs up (or all were sent): a body that never quite arrives.
pub fn drip(stream: &mut TcpStream, content_type: &str, byte: u8, interval: Duration) {
    head(
        stream,
        "200 OK",
        &[
            ("content-type", content_type.to_owned()),
            ("content-length", "100000".to_owned()),
        ],
    );
    for _ in 0..100_000 {
        if stream.write_all(&[byte]).is_err() {
            return;
        }
        std::thread::sleep(interval);
    }
}

/// Sends chunks of `chunk` until the client hangs up.
pub fn endless_chunked(stream: &mut TcpStream, chunk: &[u8]) {
    head(
        stream,
        "200 OK",
        &[
            ("content-type", "text/html".to_owned()),
            ("transfer-encoding", "chunked".to_owned()),
        ],
    );
    let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
    while stream.write_all(&framed).is_ok() {}
}

/// Frames `bytes` as one HTTP/1.1 chunk.
pub fn chunk(bytes: &[u8]) -> Vec<u8> {
    [format!("{:x}\r\n", bytes.len()).as_bytes(), bytes, b"\r\n"].concat()
}
