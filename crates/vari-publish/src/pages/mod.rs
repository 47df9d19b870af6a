//! Rendering the simple pages: PEP 503 HTML and PEP 691 JSON, from the same [`ProjectPage`]s.
//!
//! Both forms are written because a static host cannot negotiate content types; the crate
//! documentation shows how a web server can answer `Accept: application/vnd.pypi.simple.v1+json`
//! with the JSON file. Output is deterministic: the caller sorts, nothing here adds a time.

mod html;
mod json;

pub(crate) use html::{project_html, root_html};
pub(crate) use json::{project_json, root_json};
