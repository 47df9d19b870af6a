//! Files read as they are, for callers that check an index rather than install from it (an
//! index validator): a body fetched whole, a file's SHA-256 computed while it streams, and one
//! member of a remote wheel read with range requests.

use std::io::Read;

use sha2::{Digest, Sha256};
use url::Url;

use crate::error::ClientError;
use crate::http::Http;
use crate::limits::BodyKind;

/// A response body read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedBody {
    /// The URL after redirects, against which relative links in the body resolve.
    pub url: Url,
    /// The `Content-Type` the server gave, when it gave one.
    pub content_type: Option<String>,
    /// The bytes.
    pub body: Vec<u8>,
}

pub(crate) async fn fetch(
    http: &Http,
    url: &Url,
    accept: &str,
) -> Result<Option<FetchedBody>, ClientError> {
    Ok(http
        .get(url, accept, BodyKind::of_url(url))
        .await?
        .map(|fetched| FetchedBody {
            url: fetched.url,
            content_type: fetched.content_type,
            body: fetched.body,
        }))
}

/// Whether a status means "nothing there" rather than a failure.
fn is_absent(error: &ClientError) -> bool {
    matches!(
        error,
        ClientError::Status {
            status: 404 | 410,
            ..
        }
    )
}

pub(crate) async fn sha256(http: &Http, url: &Url) -> Result<Option<String>, ClientError> {
    http.check_reach(url)?;
    if url.scheme() == "file" {
        return sha256_local(url);
    }
    let mut streaming = match http.open(url).await {
        Ok(streaming) => streaming,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let announced = streaming.content_length();
    let mut hasher = Sha256::new();
    let mut received = 0u64;
    while let Some(chunk) = streaming.chunk().await? {
        hasher.update(&chunk);
        received += chunk.len() as u64;
    }
    // A digest of a cut-off body would be reported as a hash mismatch, which it is not.
    if let Some(total) = announced.filter(|total| *total != received) {
        return Err(ClientError::Transport {
            url: url.clone(),
            message: format!("the connection closed after {received} of {total} bytes"),
        });
    }
    Ok(Some(hex::encode(hasher.finalize())))
}

fn sha256_local(url: &Url) -> Result<Option<String>, ClientError> {
    let path = url.to_file_path().map_err(|()| ClientError::Transport {
        url: url.clone(),
        message: "not a local path".to_owned(),
    })?;
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ClientError::Io { path, source }),
    };
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => return Err(ClientError::Io { path, source }),
        }
    }
    Ok(Some(hex::encode(hasher.finalize())))
}
