//! A failed attempt at a request, and whether trying again may help: what the body readers
//! (`body.rs`) return and the retry loop (`mod.rs`) decides on.

use http::StatusCode;
use url::Url;

use crate::error::ClientError;

/// A failed attempt, and whether trying again may help.
pub(super) struct Failure {
    pub(super) error: ClientError,
    pub(super) retry: bool,
}

impl Failure {
    /// An error status from the server; a 5xx may be gone on the next try.
    pub(super) fn status(url: &Url, status: StatusCode) -> Self {
        Self {
            error: ClientError::Status {
                url: url.clone(),
                status: status.as_u16(),
            },
            retry: status.is_server_error(),
        }
    }
}
