//! `/files/{project}/{key}/{name}` and `{name}.metadata`: the bytes of a listed file, as its
//! [`Delivery`] says — a redirect to the upstream, a local file or a rewritten copy read from
//! disk with ranges (206, 416, HEAD), or the upstream streamed through — and its PEP 658
//! metadata. A download (a GET without `Range`) is journalled.

use std::io::SeekFrom;
use std::path::Path;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::header::{ACCEPT_RANGES, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE};
use http::HeaderValue;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::{Response, StatusCode};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use vari_client::ProjectName;

use crate::error::ServeError;
use crate::pages::{Delivery, Entry, MetadataDelivery, Rendered, Want};
use crate::range::{ranged, Ranged};
use crate::response::{empty, redirect, text, validated, Body};
use crate::rewrite::RewriteJob;
use crate::state::State;

/// One request for a file or its metadata.
pub(crate) struct FileRequest<'a> {
    pub(crate) project: ProjectName,
    pub(crate) key: &'a str,
    /// The last path segment, percent-decoded.
    pub(crate) name: &'a str,
    pub(crate) range: Option<&'a str>,
    /// A HEAD request: nothing is downloaded, so nothing is journalled or built ahead (the
    /// server removes the answer's body: [`crate::response::without_body`]).
    pub(crate) head: bool,
    /// Asked for under the target's own prefix, whose URL changes with the target: metadata
    /// may then be kept as long as the page that lists the file ([`metadata_of`]).
    pub(crate) cacheable: bool,
    /// The request's `If-None-Match`.
    pub(crate) if_none_match: Option<&'a str>,
}

const OCTETS: &str = "application/octet-stream";

/// How much of a file one chunk of the body holds.
const CHUNK: usize = 256 * 1024;

pub(crate) async fn file(state: &Arc<State>, request: FileRequest<'_>) -> Response<Body> {
    let page = match state.page(&request.project, Want::Entries).await {
        Ok(page) => page,
        Err(e) => {
            if e.status() != StatusCode::NOT_FOUND {
                state.upstream_failed(&format!("{} (file {})", request.project, request.name), &e);
            }
            return text(e.status(), &e.one_line());
        }
    };
    let Some(entry) = page.entry(request.key) else {
        return text(StatusCode::NOT_FOUND, "no such file");
    };
    if entry.listed.filename == request.name {
        return bytes_of(state, &request, entry).await;
    }
    match request.name.strip_suffix(".metadata") {
        Some(wheel) if wheel == entry.listed.filename => {
            let max_age = request
                .cacheable
                .then(|| page.client_max_age(state.page_ttl));
            metadata_of(state, &request, entry, max_age).await
        }
        _ => text(StatusCode::NOT_FOUND, "no such file"),
    }
}

async fn bytes_of(state: &Arc<State>, request: &FileRequest<'_>, entry: &Entry) -> Response<Body> {
    if !request.head && request.range.is_none() {
        state
            .journal
            .downloaded(&entry.served.project, &entry.served.original, || {
                entry.served.clone()
            });
        tracing::debug!(
            "{}: downloading {} as {}",
            entry.served.project,
            entry.served.original,
            entry.served.shown_as
        );
    }
    let result = match &entry.delivery {
        Delivery::Redirect(url) => return redirect(StatusCode::FOUND, url.as_str()),
        Delivery::Local(path) => from_disk(path, request).await,
        Delivery::Stream(url) => streamed(state, url).await,
        Delivery::Rewrite(job) => rewritten(state, request, job).await,
        Delivery::Bytes(bytes) => Ok(validated(
            &Rendered::new(bytes.clone(), "selector"),
            HeaderValue::from_static(OCTETS),
            None,
            request.if_none_match,
        )),
    };
    result.unwrap_or_else(|e| {
        state.upstream_failed(&entry.served.shown_as, &e);
        text(e.status(), &e.one_line())
    })
}

/// The rewritten copy of `job`, built when missing. A copy removed between the check that it
/// exists and the open (`vari cache clean` while serving) is built again, once.
async fn rewritten(
    state: &Arc<State>,
    request: &FileRequest<'_>,
    job: &Arc<RewriteJob>,
) -> Result<Response<Body>, ServeError> {
    let mut tries = 2;
    loop {
        tries -= 1;
        let built = state
            .rewrites
            .get(state.client.clone(), job.clone())
            .await?;
        state.refresh_hash(&request.project, request.key);
        match from_disk(&built.path, request).await {
            Err(_) if tries > 0 && !built.path.exists() => continue,
            served => return served,
        }
    }
}

/// A file's PEP 658 metadata. What the proxy serves itself (rewritten, or fetched through the
/// client) carries an entity tag (its digest) and, under the target's own prefix, the page's
/// `max_age`: the text is derived from the file the page lists (its URL is in the path, the
/// target in the prefix), so it is as fresh as the page, and an installer with a warm cache
/// neither asks again while the page is fresh nor downloads it again when it revalidates.
async fn metadata_of(
    state: &Arc<State>,
    request: &FileRequest<'_>,
    entry: &Entry,
    max_age: Option<std::time::Duration>,
) -> Response<Body> {
    // An installer reads the metadata of the file it is about to choose: start building the
    // copy now, so that the download (after dependency resolution) waits less, or not at all.
    if let (Delivery::Rewrite(job), false) = (&entry.delivery, request.head) {
        let (state, job) = (state.clone(), job.clone());
        let (project, key) = (request.project.clone(), request.key.to_owned());
        tokio::spawn(async move {
            match state.rewrites.get(state.client.clone(), job).await {
                Ok(_) => state.refresh_hash(&project, &key),
                Err(e) => tracing::debug!("building ahead failed: {}", e.one_line()),
            }
        });
    }
    let bytes = match &entry.metadata {
        MetadataDelivery::None => return text(StatusCode::NOT_FOUND, "no metadata for this file"),
        MetadataDelivery::Redirect(url) => return redirect(StatusCode::FOUND, url.as_str()),
        MetadataDelivery::Text(bytes) => bytes.clone(),
        MetadataDelivery::Fetch => match state.core_metadata(&entry.file).await {
            Ok(text) => Bytes::copy_from_slice(text.as_bytes()),
            Err(e) => {
                let e = ServeError::client(e);
                state.upstream_failed(&format!("{}.metadata", entry.listed.filename), &e);
                return text(e.status(), &e.one_line());
            }
        },
    };
    validated(
        &Rendered::new(bytes, "metadata"),
        HeaderValue::from_static(OCTETS),
        max_age,
        request.if_none_match,
    )
}

/// A file on disk, whole or the range asked for.
async fn from_disk(path: &Path, request: &FileRequest<'_>) -> Result<Response<Body>, ServeError> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| ServeError::io(path, &e))?;
    let length = file
        .metadata()
        .await
        .map_err(|e| ServeError::io(path, &e))?
        .len();
    let mut response = Response::new(empty());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(OCTETS));
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    let (start, count) = match ranged(request.range, length) {
        Ranged::Whole => (0, length),
        Ranged::Part { start, end } => {
            *response.status_mut() = StatusCode::PARTIAL_CONTENT;
            if let Ok(value) = HeaderValue::from_str(&format!("bytes {start}-{end}/{length}")) {
                response.headers_mut().insert(CONTENT_RANGE, value);
            }
            (start, end - start + 1)
        }
        Ranged::Unsatisfiable => {
            let mut response = text(
                StatusCode::RANGE_NOT_SATISFIABLE,
                &format!("the file has {length} bytes"),
            );
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{length}")) {
                response.headers_mut().insert(CONTENT_RANGE, value);
            }
            return Ok(response);
        }
    };
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(count));
    if count == 0 {
        return Ok(response);
    }
    if start > 0 {
        file.seek(SeekFrom::Start(start))
            .await
            .map_err(|e| ServeError::io(path, &e))?;
    }
    let chunks = futures_util::stream::unfold((file, count), |(mut file, left)| async move {
        if left == 0 {
            return None;
        }
        let want = usize::try_from(left).unwrap_or(usize::MAX).min(CHUNK);
        let mut buffer = BytesMut::zeroed(want);
        match file.read(&mut buffer).await {
            Ok(0) => Some((
                Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file became shorter while it was sent",
                )),
                (file, 0),
            )),
            Ok(n) => {
                buffer.truncate(n);
                Some((Ok(Frame::data(buffer.freeze())), (file, left - n as u64)))
            }
            Err(e) => Some((Err(e), (file, 0))),
        }
    });
    *response.body_mut() = StreamBody::new(chunks).boxed_unsync();
    Ok(response)
}

/// The upstream file streamed through (the client holds the credentials). Ranges are not
/// offered: the answer is the whole file, which HTTP allows.
async fn streamed(state: &Arc<State>, url: &url::Url) -> Result<Response<Body>, ServeError> {
    let stream = state
        .client
        .open_file(url)
        .await
        .map_err(ServeError::client)?;
    let mut response = Response::new(empty());
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(OCTETS));
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("none"));
    if let Some(length) = stream.len() {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    }
    let chunks = futures_util::stream::unfold(Some(stream), |stream| async move {
        let mut stream = stream?;
        match stream.chunk().await {
            Ok(Some(chunk)) => Some((Ok(Frame::data(Bytes::from(chunk))), Some(stream))),
            Ok(None) => None,
            Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
        }
    })
    .boxed();
    *response.body_mut() = StreamBody::new(chunks).boxed_unsync();
    Ok(response)
}
