//! What one proxy serves: a single target (`/t/{fingerprint}/` and the `/simple/` alias), or
//! several machine classes, each under `/t/{name}.{fingerprint}/` and the alias `/t/{name}/`.
//! Which target a request path names is decided here ([`Targets::resolve`]), once for every
//! route; the routes then answer with that target's state as for a single target.

use std::sync::Arc;

use hyper::{Response, StatusCode};

use crate::response::{full, text, Body};
use crate::state::State;

/// The targets of one proxy.
pub(crate) enum Targets {
    /// One target (the default).
    One(Arc<State>),
    /// Machine classes, in the order given (each state has its class name).
    Classes(Vec<Arc<State>>),
}

/// What a request path names: a target (with the rest of the path to route), or nothing this
/// proxy serves (the answer already made: a 404, or the list of classes).
pub(crate) enum Named<'p> {
    Target(Resolved<'p>),
    Answer(Response<Body>),
}

/// The target a request names and the rest of its path.
pub(crate) struct Resolved<'p> {
    pub(crate) state: Arc<State>,
    /// The path prefix the request used (`/t/{segment}`, `/t/{name}`, or empty for the
    /// `/simple/` alias): redirects stay under it.
    pub(crate) base: String,
    /// Whether the prefix is the target's own, fingerprinted one: its pages may be kept by
    /// clients (an alias's could be another target's choice after a change, so they are
    /// revalidated every time).
    pub(crate) own: bool,
    pub(crate) rest: &'p [&'p str],
}

/// The longest part of a request's path segment quoted back in an answer or a log line.
const QUOTED: usize = 60;

impl Targets {
    /// Every target's state, in order.
    pub(crate) fn states(&self) -> &[Arc<State>] {
        match self {
            Self::One(state) => std::slice::from_ref(state),
            Self::Classes(states) => states,
        }
    }

    /// The target `segments` (the request path split at `/`, without the leading empty one)
    /// names, or the answer when it names none.
    /// `wants_json`: whether the request's `Accept` names `application/json` (for the list of
    /// classes at `/`).
    pub(crate) fn resolve<'p>(&self, segments: &'p [&'p str], wants_json: bool) -> Named<'p> {
        match self {
            Self::One(state) => one(state, segments),
            Self::Classes(states) => classes(states, segments, wants_json),
        }
    }
}

fn one<'p>(state: &Arc<State>, segments: &'p [&'p str]) -> Named<'p> {
    match segments {
        ["t", segment, rest @ ..] if *segment == state.segment => Named::Target(Resolved {
            state: state.clone(),
            base: state.prefix(),
            own: true,
            rest,
        }),
        ["t", other, ..] if looks_like_fingerprint(other) => {
            Named::Answer(another_target(state, other))
        }
        ["t", ..] => Named::Answer(text(StatusCode::NOT_FOUND, "not found")),
        rest => Named::Target(Resolved {
            state: state.clone(),
            base: String::new(),
            own: false,
            rest,
        }),
    }
}

fn classes<'p>(states: &[Arc<State>], segments: &'p [&'p str], wants_json: bool) -> Named<'p> {
    let ["t", segment, rest @ ..] = segments else {
        return Named::Answer(match segments {
            [] | [""] => listing(states, wants_json),
            _ => not_a_class(states, None),
        });
    };
    if let Some(state) = states.iter().find(|s| s.segment == *segment) {
        return Named::Target(Resolved {
            state: state.clone(),
            base: state.prefix(),
            own: true,
            rest,
        });
    }
    let named = |name: &str| {
        states
            .iter()
            .find(|s| s.class.as_ref().is_some_and(|c| c.as_str() == name))
    };
    if let Some(state) = named(segment) {
        return Named::Target(Resolved {
            state: state.clone(),
            base: format!("/t/{segment}"),
            own: false,
            rest,
        });
    }
    // `{name}.{old fingerprint}`: an index URL kept from before the class's facts changed.
    if let Some(state) = segment.split_once('.').and_then(|(name, _)| named(name)) {
        return Named::Answer(another_target(state, segment));
    }
    Named::Answer(not_a_class(states, Some(segment)))
}

/// Whether a path segment has a fingerprint's form (anything else is not worth a log line).
fn looks_like_fingerprint(segment: &str) -> bool {
    segment.len() == 12
        && segment
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A URL of another fingerprint of this target (an index URL kept from an earlier run for
/// other hardware or options): 404, never this target's wheels under that URL, which an
/// installer caching by index URL would mix with the other target's.
fn another_target(state: &State, segment: &str) -> Response<Body> {
    let message = match &state.class {
        // A fingerprint's form, checked: quoted as it is.
        None => format!(
            "the index URL names target {segment}, and this proxy chooses for target {} now \
             (other hardware or options): use {}/simple/",
            state.fingerprint,
            state.prefix()
        ),
        Some(name) => format!(
            "the index URL names machine class {name} as {}, and the class is {} now (its \
             facts or options changed): use {}/simple/ (or /t/{name}/simple/ with pip)",
            quote(segment),
            state.segment,
            state.prefix()
        ),
    };
    state.log_once(tracing::Level::WARN, message.clone());
    text(StatusCode::NOT_FOUND, &message)
}

/// 404 for a path that names no class (`None`: a path outside `/t/`), listing the classes.
fn not_a_class(states: &[Arc<State>], segment: Option<&str>) -> Response<Body> {
    let served = states
        .iter()
        .filter_map(|s| Some(format!("{} (/t/{}/simple/)", s.class.as_ref()?, s.segment)))
        .collect::<Vec<_>>()
        .join(", ");
    let what = match segment {
        Some(segment) => format!("no machine class {} here", quote(segment)),
        None => "this proxy serves machine classes only, each under its own URL".to_owned(),
    };
    text(
        StatusCode::NOT_FOUND,
        &format!("{what}; the classes served: {served}"),
    )
}

/// `/` of a proxy serving classes: each class with its URLs (paths: the host a client used is
/// its own business), as text, or JSON for a client that asks for `application/json`.
fn listing(states: &[Arc<State>], wants_json: bool) -> Response<Body> {
    let rows: Vec<(String, String, String)> = states
        .iter()
        .filter_map(|s| {
            let name = s.class.as_ref()?.to_string();
            let alias = format!("/t/{name}/simple/");
            Some((name, format!("{}/simple/", s.prefix()), alias))
        })
        .collect();
    let (body, content_type) = match wants_json {
        true => {
            let classes: Vec<_> = rows
                .iter()
                .map(|(name, own, alias)| {
                    serde_json::json!({"name": name, "index_path": own, "alias_path": alias})
                })
                .collect();
            let json = serde_json::json!({ "classes": classes });
            (format!("{json}\n"), "application/json")
        }
        false => {
            let mut body = String::from(
                "machine classes served here (name, index path for uv: it changes with the \
                 class's facts, alias path for pip):\n",
            );
            for (name, own, alias) in &rows {
                body.push_str(&format!("{name} {own} {alias}\n"));
            }
            (body, "text/plain; charset=utf-8")
        }
    };
    let mut response = Response::new(full(body.clone()));
    let headers = response.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    headers.insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
    headers.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    headers.insert(
        http::header::CONTENT_LENGTH,
        http::HeaderValue::from(body.len()),
    );
    response
}

/// A request's path segment as quoted in an answer: bounded, control characters escaped.
fn quote(segment: &str) -> String {
    let short: String = segment.chars().take(QUOTED).collect();
    format!("{short:?}")
}
