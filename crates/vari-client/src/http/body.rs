//! Reading response bodies into memory without trusting the server: a whole body within its
//! ceiling (decoding the `Content-Encoding` the client asked for, counted after decoding so a
//! gzip bomb stops at the ceiling), or only a window of a file for range reads (whatever the
//! server sends, the bytes outside the window are never kept and the connection is dropped as
//! soon as the window is complete).
//!
//! A body that breaks off is reported as cut off, with how much arrived; an encoding the client
//! cannot decode is reported as such, never parsed as if it were text.

use std::io::Write;
use std::time::Duration;

use http::header::CONTENT_ENCODING;
use http::HeaderMap;
use url::Url;

use super::failure::Failure;
use crate::error::{chain, ClientError};
use crate::limits::Ceiling;

/// The `Accept-Encoding` of requests whose body is read whole: the encodings
/// [`read_whole`] decodes.
pub(super) const ACCEPT_ENCODING_WHOLE: &str = "gzip, deflate";

/// How a body is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Identity,
    Gzip,
    /// HTTP's `deflate` is zlib-wrapped (RFC 9110 §8.4.1.2).
    Deflate,
}

fn encoding_of(url: &Url, headers: &HeaderMap) -> Result<Encoding, ClientError> {
    let Some(value) = headers.get(CONTENT_ENCODING) else {
        return Ok(Encoding::Identity);
    };
    let text = value.to_str().unwrap_or("(not text)").trim();
    match text.to_ascii_lowercase().as_str() {
        "" | "identity" => Ok(Encoding::Identity),
        "gzip" | "x-gzip" => Ok(Encoding::Gzip),
        "deflate" => Ok(Encoding::Deflate),
        _ => Err(ClientError::Transport {
            url: url.clone(),
            message: format!(
                "the server sent the body with Content-Encoding `{text}`, which vari did not ask \
                 for and cannot decode (it asks for {ACCEPT_ENCODING_WHOLE})"
            ),
        }),
    }
}

/// A buffer that refuses to grow past its ceiling and remembers that it did.
///
/// Bytes are kept in fixed blocks rather than one growing vector: growing by doubling copies
/// the body again and again and leaves the old copies in the heap, which cost three times the
/// ceiling in resident memory on an endless body. The blocks are joined once, at the end,
/// each freed as soon as it is copied.
struct Bounded {
    blocks: Vec<Vec<u8>>,
    len: u64,
    limit: u64,
    over: bool,
}

/// 256 KiB: large enough that the block list stays short, above the allocator's threshold
/// for giving freed memory straight back.
const BLOCK: usize = 256 * 1024;

impl Bounded {
    fn new(limit: u64) -> Self {
        Self {
            blocks: Vec::new(),
            len: 0,
            limit,
            over: false,
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        for block in self.blocks {
            bytes.extend_from_slice(&block);
        }
        bytes
    }
}

impl Write for Bounded {
    fn write(&mut self, mut data: &[u8]) -> std::io::Result<usize> {
        if self.len + data.len() as u64 > self.limit {
            self.over = true;
            return Err(std::io::Error::other("over the ceiling"));
        }
        let written = data.len();
        self.len += written as u64;
        while !data.is_empty() {
            let room = self.blocks.last().map_or(0, |b| b.capacity() - b.len());
            if room == 0 {
                self.blocks.push(Vec::with_capacity(BLOCK));
                continue;
            }
            let (now, rest) = data.split_at(room.min(data.len()));
            if let Some(block) = self.blocks.last_mut() {
                block.extend_from_slice(now);
            }
            data = rest;
        }
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where received bytes go: straight into the buffer, or through a decoder into it.
enum Sink {
    Plain(Bounded),
    Gzip(flate2::write::MultiGzDecoder<Bounded>),
    Deflate(flate2::write::ZlibDecoder<Bounded>),
}

impl Sink {
    fn new(encoding: Encoding, limit: u64) -> Self {
        let buffer = Bounded::new(limit);
        match encoding {
            Encoding::Identity => Self::Plain(buffer),
            Encoding::Gzip => Self::Gzip(flate2::write::MultiGzDecoder::new(buffer)),
            Encoding::Deflate => Self::Deflate(flate2::write::ZlibDecoder::new(buffer)),
        }
    }

    fn buffer(&self) -> &Bounded {
        match self {
            Self::Plain(b) => b,
            Self::Gzip(d) => d.get_ref(),
            Self::Deflate(d) => d.get_ref(),
        }
    }

    fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Plain(b) => b.write_all(data),
            Self::Gzip(d) => d.write_all(data),
            Self::Deflate(d) => d.write_all(data),
        }
    }

    fn finish(self) -> std::io::Result<Vec<u8>> {
        Ok(match self {
            Self::Plain(b) => b.into_bytes(),
            Self::Gzip(d) => d.finish()?.into_bytes(),
            Self::Deflate(d) => d.finish()?.into_bytes(),
        })
    }
}

fn too_large(url: &Url, ceiling: Ceiling) -> Failure {
    Failure {
        error: ClientError::too_large(url, ceiling),
        retry: false,
    }
}

/// A body that broke off: how much arrived, of how much announced, and why. Retried (the
/// next attempt may get through), unless the server stopped sending for longer than the read
/// timeout (a server that hangs once usually hangs again).
fn cut_off(
    url: &Url,
    received: u64,
    announced: Option<u64>,
    cause: Option<reqwest::Error>,
    read_timeout: Duration,
) -> Failure {
    if cause.as_ref().is_some_and(reqwest::Error::is_timeout) {
        return Failure {
            error: ClientError::Timeout {
                url: url.clone(),
                timeout: read_timeout,
            },
            retry: false,
        };
    }
    let of = announced
        .map(|n| format!(" of the {n} announced"))
        .unwrap_or_default();
    let why = cause
        .map(|e| format!(": {}", chain(&e.without_url())))
        .unwrap_or_default();
    Failure {
        error: ClientError::Transport {
            url: url.clone(),
            message: format!("the response was cut off after {received} bytes{of}{why}"),
        },
        retry: true,
    }
}

/// The whole body of `response`, decoded, refused as soon as it passes `ceiling` (announced,
/// received on the wire, or decoded).
pub(super) async fn read_whole(
    url: &Url,
    mut response: reqwest::Response,
    ceiling: Ceiling,
    read_timeout: Duration,
) -> Result<Vec<u8>, Failure> {
    let encoding = encoding_of(url, response.headers()).map_err(|error| Failure {
        error,
        retry: false,
    })?;
    let announced = response.content_length();
    if announced.is_some_and(|n| n > ceiling.bytes) {
        return Err(too_large(url, ceiling));
    }
    let mut sink = Sink::new(encoding, ceiling.bytes);
    let mut received = 0u64;
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return Err(cut_off(url, received, announced, Some(e), read_timeout)),
        };
        received += chunk.len() as u64;
        if received > ceiling.bytes {
            return Err(too_large(url, ceiling));
        }
        if let Err(e) = sink.write(&chunk) {
            return Err(match sink.buffer().over {
                true => too_large(url, ceiling),
                false => corrupt(url, encoding, &e),
            });
        }
    }
    if announced.is_some_and(|n| received < n) {
        return Err(cut_off(url, received, announced, None, read_timeout));
    }
    match sink.finish() {
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(corrupt(url, encoding, &e)),
    }
}

fn corrupt(url: &Url, encoding: Encoding, error: &std::io::Error) -> Failure {
    let name = match encoding {
        Encoding::Gzip => "gzip",
        Encoding::Deflate => "deflate",
        Encoding::Identity => "plain",
    };
    Failure {
        error: ClientError::Transport {
            url: url.clone(),
            message: format!("the {name}-encoded body is truncated or corrupt: {error}"),
        },
        retry: false,
    }
}

/// The bytes of a file a range read wants, as offsets in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Window {
    /// `[from, to)`.
    Span { from: u64, to: u64 },
    /// The last `n` bytes of a body whose length is not known in advance.
    Tail(u64),
}

/// What a windowed read kept.
pub(super) struct Kept {
    /// The file offset of `bytes[0]`.
    pub(super) start: u64,
    pub(super) bytes: Vec<u8>,
    /// How many bytes of the body went by (all of it, unless the read stopped at the window's
    /// end).
    pub(super) seen: u64,
}

/// Reads `response`, whose first byte is at file offset `origin`, keeping only the bytes in
/// `window`; stops (dropping the connection) once a span is complete. Bounded by the window's
/// size whatever the server sends.
pub(super) async fn read_window(
    url: &Url,
    mut response: reqwest::Response,
    origin: u64,
    window: Window,
    read_to_end: bool,
    read_timeout: Duration,
) -> Result<Kept, Failure> {
    let announced = response.content_length();
    let mut at = origin;
    let mut kept = Vec::new();
    loop {
        if let Window::Span { to, .. } = window {
            if at >= to && !read_to_end {
                break;
            }
        }
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return Err(cut_off(url, at - origin, announced, Some(e), read_timeout)),
        };
        let chunk_start = at;
        at += chunk.len() as u64;
        match window {
            Window::Span { from, to } => {
                let lo = from.max(chunk_start);
                let hi = to.min(at);
                if lo < hi {
                    kept.extend_from_slice(
                        &chunk[(lo - chunk_start) as usize..(hi - chunk_start) as usize],
                    );
                }
            }
            Window::Tail(n) => {
                kept.extend_from_slice(&chunk);
                // Trimmed once the excess is as large as the tail, so each byte is moved at
                // most a few times and no more than twice the tail is ever held.
                if kept.len() as u64 > n.saturating_mul(2).max(64 * 1024) {
                    let excess = kept.len() - n as usize;
                    kept.drain(..excess);
                }
            }
        }
    }
    if announced.is_some_and(|n| at - origin < n) && (read_to_end || at < window_end(window)) {
        return Err(cut_off(url, at - origin, announced, None, read_timeout));
    }
    if let Window::Tail(n) = window {
        if kept.len() as u64 > n {
            let excess = kept.len() - n as usize;
            kept.drain(..excess);
        }
    }
    let start = match window {
        Window::Span { from, .. } => from.max(origin),
        Window::Tail(_) => at - kept.len() as u64,
    };
    Ok(Kept {
        start,
        bytes: kept,
        seen: at - origin,
    })
}

fn window_end(window: Window) -> u64 {
    match window {
        Window::Span { to, .. } => to,
        Window::Tail(_) => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_buffers_refuse_and_remember() {
        let mut sink = Sink::new(Encoding::Identity, 4);
        sink.write(b"abc").unwrap();
        assert!(sink.write(b"de").is_err());
        assert!(sink.buffer().over);
        // Blocks join back into the bytes written, in order, across block boundaries.
        let mut sink = Sink::new(Encoding::Identity, 1 << 20);
        let data: Vec<u8> = (0..BLOCK * 2 + 17).map(|i| (i % 253) as u8).collect();
        for piece in data.chunks(1000) {
            sink.write(piece).unwrap();
        }
        assert_eq!(sink.finish().unwrap(), data);
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_ceiling() {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..16 {
            encoder.write_all(&zeros).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let mut sink = Sink::new(Encoding::Gzip, 1024 * 1024);
        let result = bomb.chunks(4096).try_for_each(|c| sink.write(c));
        assert!(result.is_err());
        assert!(sink.buffer().over);
        assert!(sink.buffer().len <= 1024 * 1024);
    }

    #[test]
    fn encodings() {
        let url = Url::parse("https://example.com/simple/a/").unwrap();
        let headers = |value: &str| {
            let mut h = HeaderMap::new();
            h.insert(CONTENT_ENCODING, value.parse().unwrap());
            h
        };
        assert_eq!(
            encoding_of(&url, &HeaderMap::new()).unwrap(),
            Encoding::Identity
        );
        assert_eq!(encoding_of(&url, &headers("GZIP")).unwrap(), Encoding::Gzip);
        let err = encoding_of(&url, &headers("br")).unwrap_err().to_string();
        assert!(err.contains("`br`") && err.contains("example.com"), "{err}");
    }
}
