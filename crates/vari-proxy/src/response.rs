//! Response bodies and the small answers every route gives (errors on one line, redirects).

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::{Response, StatusCode};

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
pub(crate) fn text(status: StatusCode, message: &str, head: bool) -> Response<Body> {
    let body = format!("{message}\n");
    let mut response = Response::new(match head {
        true => empty(),
        false => full(body.clone()),
    });
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(CONTENT_LENGTH, http::HeaderValue::from(body.len()));
    headers.insert(CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
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
