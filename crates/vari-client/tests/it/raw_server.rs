//! A server on raw sockets, for answers a well-behaved HTTP library would not send: endless,
//! dripping, truncated, mislabelled bodies. Shared with vari-cli's tests (`#[path]`).
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

/// What the raw server answers to one request (its path and `Range` header), on the socket.
type Answer = dyn Fn(&str, Option<&str>, &mut TcpStream) + Send + Sync;

/// A server on 127.0.0.1 that answers every request with `answer`, one thread per
/// connection, until the test ends.
pub fn raw_server(
    answer: impl Fn(&str, Option<&str>, &mut TcpStream) + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer: Arc<Answer> = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let answer = answer.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let path = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let mut range = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((key, value)) = line.split_once(':') {
                        if key.eq_ignore_ascii_case("range") {
                            range = Some(value.trim().to_owned());
                        }
                    }
                }
                answer(&path, range.as_deref(), &mut stream);
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

pub fn head(stream: &mut TcpStream, status: &str, headers: &[(&str, String)]) {
    let mut text = format!("HTTP/1.1 {status}\r\nconnection: close\r\n");
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    text.push_str("\r\n");
    let _ = stream.write_all(text.as_bytes());
}

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
