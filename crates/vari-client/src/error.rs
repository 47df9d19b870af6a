//! The one error type of the client. Every variant names the URL or path at fault; URLs never
//! carry credentials (they are removed when settings are parsed).

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use crate::auth::NetrcError;
use crate::limits::Ceiling;
use crate::simple::PageError;

/// Why a request, a page, an archive or a download failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The netrc file could not be read.
    #[error(transparent)]
    Netrc(#[from] NetrcError),
    /// The HTTP client could not be built (TLS set-up).
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
    /// The server answered with an error status.
    #[error("{url}: the server answered {status}")]
    Status {
        /// The URL requested.
        url: Url,
        /// The HTTP status code.
        status: u16,
    },
    /// The connection failed or broke.
    #[error("{url}: {message}")]
    Transport {
        /// The URL requested.
        url: Url,
        /// What failed, with its causes.
        message: String,
    },
    /// The server did not connect or stopped sending for longer than allowed.
    #[error("{url}: no answer within {} s", timeout.as_secs_f64())]
    Timeout {
        /// The URL requested.
        url: Url,
        /// The time limit that ran out.
        timeout: Duration,
    },
    /// The whole response did not arrive within the request deadline (a server that sends
    /// slowly but never stops).
    #[error(
        "{url}: the response did not arrive in full within the {} s deadline (raise it with \
         `http-deadline` in vari.toml or {})",
        deadline.as_secs_f64(),
        crate::limits::HTTP_DEADLINE_ENV
    )]
    Deadline {
        /// The URL requested.
        url: Url,
        /// The deadline that ran out.
        deadline: Duration,
    },
    /// A streamed body (a download, a pass-through, a hash) arrived slower than the low-speed
    /// rule allows: fewer than `bytes` in the last `window`.
    #[error(
        "{url}: the transfer was too slow: {received} bytes in the last {} s, below the \
         low-speed limit of {bytes} bytes per {} s (change it with `low-speed-bytes` and \
         `low-speed-seconds` in vari.toml or {} and {})",
        window.as_secs_f64(),
        window.as_secs_f64(),
        crate::limits::LOW_SPEED_BYTES_ENV,
        crate::limits::LOW_SPEED_SECONDS_ENV
    )]
    TooSlow {
        /// The URL requested.
        url: Url,
        /// The bytes that arrived in the window.
        received: u64,
        /// The fewest bytes the rule asks for in a window.
        bytes: u64,
        /// The window.
        window: Duration,
    },
    /// A body is larger than the ceiling for its kind.
    #[error(
        "{url}: the {} is larger than the {limit}-byte limit (raise it with `{}` in vari.toml \
         or {})",
        names.what,
        names.key,
        names.env
    )]
    TooLarge {
        /// The URL requested.
        url: Url,
        /// The ceiling, in bytes.
        limit: u64,
        /// What the body is and the settings that raise the ceiling.
        names: &'static crate::limits::CeilingNames,
    },
    /// The URL leads where this client may not go: a local file when every source the user
    /// named is remote, or a scheme other than http, https and file.
    #[error("{url}: not fetched: {reason}")]
    Refused {
        /// The URL.
        url: Url,
        /// Why.
        reason: &'static str,
    },
    /// Offline, and the response is not in the cache.
    #[error("{url} is not in the cache, and offline mode forbids fetching it")]
    Offline {
        /// The URL that would have been fetched.
        url: Url,
    },
    /// A page could not be read.
    #[error(transparent)]
    Page(#[from] PageError),
    /// No source lists the project.
    #[error("no index or find-links source has a project named `{name}` (looked in: {})", tried.join(", "))]
    ProjectNotFound {
        /// The project, normalised.
        name: String,
        /// The pages and directories consulted.
        tried: Vec<String>,
    },
    /// The content does not have the hash the index gave.
    #[error(transparent)]
    HashMismatch(Box<HashMismatch>),
    /// The file is not the size the index (or the lock) declares: more bytes than it said
    /// (the transfer is stopped there), or fewer.
    #[error(transparent)]
    SizeMismatch(Box<SizeMismatch>),
    /// A wheel (zip archive) could not be read.
    #[error("{url}: {message}")]
    Archive {
        /// The wheel.
        url: Url,
        /// What is wrong with it.
        message: String,
    },
    /// The file is not a wheel, so it has no `.dist-info` to read.
    #[error("{url}: `{filename}` is not a wheel")]
    NotAWheel {
        /// The file.
        url: Url,
        /// Its name.
        filename: String,
    },
    /// A local file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A downloaded file could not be written.
    #[error(transparent)]
    Write(#[from] vari_fs::WriteError),
}

/// A file that is not the size declared for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {received} bytes arrived, the index declares {declared}")]
pub struct SizeMismatch {
    /// The file.
    pub url: Url,
    /// The size declared for it.
    pub declared: u64,
    /// What arrived (`more than N` for a longer file, stopped at the declared size).
    pub received: String,
}

impl ClientError {
    /// The error for a body at `url` past `ceiling` (the ceiling's names say which settings
    /// raise it).
    pub(crate) fn too_large(url: &Url, ceiling: Ceiling) -> Self {
        Self::TooLarge {
            url: url.clone(),
            limit: ceiling.bytes,
            names: ceiling.names,
        }
    }

    /// Whether the error says the server (or the cache) does not have what was asked for,
    /// as opposed to a failure to ask.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Self::Status {
                status: 404 | 410,
                ..
            }
        )
    }
}

/// A digest that differs from the one the index gave.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {algorithm} digest is {actual}, but the index says {expected}")]
pub struct HashMismatch {
    /// The file.
    pub url: Url,
    /// `sha256`, `sha384` or `sha512`.
    pub algorithm: String,
    /// The digest the index gave.
    pub expected: String,
    /// The digest of what was received.
    pub actual: String,
}

/// `error` and its causes as one line (reqwest's own text is just "error sending request").
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
