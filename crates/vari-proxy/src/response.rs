//! Response bodies and the small answers every route gives (errors on one line, redirects).

use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, ETAG, LOCATION};
use http::HeaderValue;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::{Response, StatusCode};

use crate::pages::Rendered;

/// Every answer's body: bytes in memory or a stream (files).
pub(crate) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

pub(crate) fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed_unsync()
}

/// `status` with `message` on one line as plain text (pip shows the reason of an error page).
pub(crate) fn text(status: StatusCode, message: &str) -> Response<Body> {
    let body = format!("{message}\n");
    let length = body.len();
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CONTENT_LENGTH, http::HeaderValue::from(length));
    headers.insert(CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    response
}

/// `rendered` as `content_type`, or `304 Not Modified` when `if_none_match` names its entity
/// tag: the one rule for what an installer may keep of a page or a metadata file. `max_age`:
/// how long the client may use the answer without asking again (`None`, or under a second:
/// `no-cache`, it keeps the answer but revalidates it every time, cheaply, with the tag).
pub(crate) fn validated(
    rendered: &Rendered,
    content_type: HeaderValue,
    max_age: Option<Duration>,
    if_none_match: Option<&str>,
) -> Response<Body> {
    let unchanged =
        if_none_match.is_some_and(|tags| tags.split(',').any(|t| t.trim() == rendered.etag));
    let mut response = Response::new(match unchanged {
        true => empty(),
        false => full(rendered.body.clone()),
    });
    if unchanged {
        *response.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let out = response.headers_mut();
    out.insert(CONTENT_TYPE, content_type);
    let cache_control = max_age
        .map(|age| age.as_secs())
        .filter(|&secs| secs > 0)
        .and_then(|secs| HeaderValue::from_str(&format!("max-age={secs}")).ok())
        .unwrap_or(HeaderValue::from_static("no-cache"));
    out.insert(CACHE_CONTROL, cache_control);
    if let Ok(tag) = HeaderValue::from_str(&rendered.etag) {
        out.insert(ETAG, tag);
    }
    if !unchanged {
        out.insert(CONTENT_LENGTH, HeaderValue::from(rendered.body.len()));
    }
    response
}

/// A redirect to `location` (`301` for renamed pages, `302` for files served elsewhere).
pub(crate) fn redirect(status: StatusCode, location: &str) -> Response<Body> {
    let mut response = Response::new(empty());
    *response.status_mut() = status;
    if let Ok(value) = http::HeaderValue::from_str(location) {
        response.headers_mut().insert(LOCATION, value);
    }
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, http::HeaderValue::from(0));
    response
}

/// `response` without its body, its headers (`Content-Length` among them) kept: the answer to
/// a HEAD request, made in this one place from the GET answer ([`crate::server`] applies it),
/// so that no route needs to know the method. A streamed body is dropped unread.
pub(crate) fn without_body(response: Response<Body>) -> Response<Body> {
    response.map(|_| empty())
}
