//! Which answer a request gets, by method and path. Which target the path names is
//! [`Targets::resolve`]'s: for a single target, every path is served under the target's prefix
//! `/t/{fingerprint}` (the index URL [`crate::RunningProxy::index_url`] gives) and without it
//! (the `/simple/` alias), and a prefix of another fingerprint is 404; for machine classes,
//! under `/t/{name}.{fingerprint}` and the alias `/t/{name}`. Below the prefix:
//!
//! - `/simple/`: the project list; `/simple/{project}/`: a project page (both negotiated:
//!   [`crate::negotiate`]); a name that is not normalised, or a missing trailing slash, is
//!   redirected (301) to the normalised URL, as PyPI does;
//! - `/files/{project}/{key}/{name}` and `….metadata`: [`crate::files`];
//! - GET and HEAD only (405 otherwise); anything else 404.

use std::sync::Arc;
use std::time::Duration;

use http::header::{ALLOW, IF_NONE_MATCH, RANGE, VARY};
use http::{HeaderMap, HeaderValue, Method};
use hyper::{Request, Response, StatusCode};
use tracing::Instrument;
use vari_client::ProjectName;

use crate::files::{self, FileRequest};
use crate::negotiate::{negotiate, Format, HTML_V1, JSON, TEXT_HTML};
use crate::pages::{Rendered, Want};
use crate::response::{redirect, text, validated, Body};
use crate::state::State;
use crate::targets::{Named, Resolved, Targets};

pub(crate) async fn handle<B>(targets: &Targets, request: Request<B>) -> Response<Body> {
    let head = match *request.method() {
        Method::GET => false,
        Method::HEAD => true,
        _ => {
            let mut response = text(
                StatusCode::METHOD_NOT_ALLOWED,
                "only GET and HEAD are served",
            );
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return response;
        }
    };
    let path = request.uri().path();
    let headers = request.headers();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let wants_json = headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"));
    let resolved = match targets.resolve(&segments, wants_json) {
        Named::Target(resolved) => resolved,
        Named::Answer(answer) => return answer,
    };
    let Resolved {
        state,
        base: prefix,
        own,
        rest,
    } = resolved;
    let span = state.span();
    route(&state, &prefix, own, rest, headers, head)
        .instrument(span)
        .await
}

/// The answer under a target's prefix (`prefix`; `own`: the target's own, fingerprinted one).
async fn route(
    state: &Arc<State>,
    prefix: &str,
    own: bool,
    rest: &[&str],
    headers: &HeaderMap,
    head: bool,
) -> Response<Body> {
    let state = state.clone();
    match rest {
        // A class's alias root names the class's own index URL: what a provisioning script
        // gives uv (`curl -w '%{redirect_url}' …/t/NAME/`), which changes with the class's
        // facts while the alias stays.
        [] | [""] if !own && state.class.is_some() => {
            redirect(StatusCode::FOUND, &format!("{}/simple/", state.prefix()))
        }
        [] | [""] => redirect(StatusCode::FOUND, &format!("{prefix}/simple/")),
        ["simple"] => redirect(StatusCode::MOVED_PERMANENTLY, &format!("{prefix}/simple/")),
        ["simple", ""] => root(&state, headers).await,
        ["simple", name] | ["simple", name, ""] => {
            let slash = rest.len() == 3;
            let decoded = decode(name);
            let Ok(project) = ProjectName::new(&decoded) else {
                return text(StatusCode::NOT_FOUND, "not a valid project name");
            };
            if !slash || decoded != project.as_str() {
                return redirect(
                    StatusCode::MOVED_PERMANENTLY,
                    &format!("{prefix}/simple/{project}/"),
                );
            }
            project_page(&state, &project, own, headers).await
        }
        ["files", project, key, name] => {
            let decoded = decode(project);
            let Some(project) = ProjectName::new(&decoded)
                .ok()
                .filter(|p| p.as_str() == decoded)
            else {
                return text(StatusCode::NOT_FOUND, "no such file");
            };
            let name = decode(name);
            let range = headers.get(RANGE).and_then(|v| v.to_str().ok());
            files::file(
                &state,
                FileRequest {
                    project,
                    key,
                    name: &name,
                    range,
                    head,
                    cacheable: own,
                    if_none_match: if_none_match(headers),
                },
            )
            .await
        }
        _ => text(StatusCode::NOT_FOUND, "not found"),
    }
}

async fn root(state: &Arc<State>, headers: &HeaderMap) -> Response<Body> {
    let Some(format) = format_of(headers) else {
        return not_acceptable();
    };
    match state.root().await {
        Ok(page) => page_answer(pick(format, &page.json, &page.html), format, None, headers),
        Err(e) => {
            state.upstream_failed("the project list", &e);
            text(e.status(), &e.one_line())
        }
    }
}

/// A project's page. `cacheable`: asked for under the target's own prefix, whose URL changes
/// with the target, so a client may keep the page as long as it stays fresh; under the
/// `/simple/` alias a kept page could be another target's choice, so it is always revalidated.
async fn project_page(
    state: &Arc<State>,
    project: &ProjectName,
    cacheable: bool,
    headers: &HeaderMap,
) -> Response<Body> {
    let Some(format) = format_of(headers) else {
        return not_acceptable();
    };
    match state.page(project, Want::format(format)).await {
        Ok(page) => match page.rendered(format) {
            Some(rendered) => page_answer(
                rendered,
                format,
                cacheable.then(|| page.client_max_age(state.page_ttl)),
                headers,
            ),
            None => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("the page of {project} lacks the format asked for"),
            ),
        },
        Err(e) => {
            if e.status() != StatusCode::NOT_FOUND {
                state.upstream_failed(project.as_str(), &e);
            }
            text(e.status(), &e.one_line())
        }
    }
}

fn format_of(headers: &HeaderMap) -> Option<Format> {
    negotiate(
        headers
            .get(http::header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    )
}

fn pick<'a>(format: Format, json: &'a Rendered, html: &'a Rendered) -> &'a Rendered {
    match format {
        Format::Json => json,
        Format::Html(_) => html,
    }
}

fn not_acceptable() -> Response<Body> {
    text(
        StatusCode::NOT_ACCEPTABLE,
        &format!("pages are served as {JSON}, {HTML_V1} or {TEXT_HTML}"),
    )
}

/// A rendered page, or 304 when the client holds it already ([`validated`]). `max_age`: how
/// long the client may keep it without asking again (`None`: ask every time). Without a
/// max-age, clients keep the page but ask again each time (cheaply, with the entity tag): what
/// the proxy shows follows the upstream and the copies it has built. With one, no longer than
/// both the upstream and the proxy's page TTL allow.
fn page_answer(
    page: &Rendered,
    format: Format,
    max_age: Option<Duration>,
    headers: &HeaderMap,
) -> Response<Body> {
    let mut response = validated(
        page,
        HeaderValue::from_static(format.content_type()),
        max_age,
        if_none_match(headers),
    );
    response
        .headers_mut()
        .insert(VARY, HeaderValue::from_static("Accept"));
    response
}

/// The request's `If-None-Match`, when it is text.
fn if_none_match(headers: &HeaderMap) -> Option<&str> {
    headers.get(IF_NONE_MATCH).and_then(|v| v.to_str().ok())
}

/// Percent-decodes a path segment (invalid escapes are kept as they are, bytes that are not
/// UTF-8 replaced).
fn decode(segment: &str) -> String {
    vari_simple::decode_segment_lossy(segment).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_decoded() {
        assert_eq!(decode("a%2Bb%20c"), "a+b c");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%zz%4"), "%zz%4");
        assert_eq!(decode("x%41"), "xA");
    }
}
