//! The errors: [`ProxyError`] when the proxy cannot start or run, and [`ServeError`] for one
//! request that cannot be answered (it becomes a status code and a one-line body).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use hyper::StatusCode;
use vari_client::ClientError;

/// Why the proxy could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// A non-loopback address was asked for without allowing remote access.
    #[error(
        "refusing to listen on {addr}: it is not a loopback address, and remote access was \
         not allowed (the proxy serves whatever its indexes hold to anyone who can connect)"
    )]
    RemoteBind {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The cache directory for rewritten wheels could not be created.
    #[error("cannot use {} as the proxy's cache directory: {source}", path.display())]
    CacheDir {
        /// The directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The index client could not be built (netrc, TLS set-up).
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The threads that build pages could not be started.
    #[error("cannot start the proxy's page-build threads: {0}")]
    Threads(std::io::Error),
    /// Machine classes were asked for, but none was given.
    #[error("no machine class to serve")]
    NoClasses,
    /// Two machine classes have the same name.
    #[error("machine class {name} is given twice: each class needs its own name")]
    DuplicateClass {
        /// The name.
        name: String,
    },
    /// A union of targets was asked for, but none was given.
    #[error("no target to serve the union of")]
    NoUnionTargets,
    /// What a union proxy shows of a project could not be read.
    #[error("{project}: {message}")]
    Union {
        /// The project.
        project: String,
        /// Why (the page build's error, on one line).
        message: String,
    },
    /// The stop signals (SIGINT, SIGTERM) could not be listened for.
    #[error("cannot listen for SIGINT and SIGTERM: {0}")]
    Signal(std::io::Error),
}

/// Why one request could not be answered. Cloneable: one failed upstream fetch answers every
/// request that waited for it.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum ServeError {
    /// The upstream sources do not have the project.
    #[error("{0}")]
    ProjectNotFound(Arc<ClientError>),
    /// The upstream sources could not be read.
    #[error("upstream: {0}")]
    Upstream(Arc<ClientError>),
    /// A rewritten wheel could not be built.
    #[error("cannot serve {filename}: {message}")]
    Rewrite {
        /// The wheel's name as shown.
        filename: String,
        /// What failed.
        message: String,
    },
    /// A local file could not be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// A background task died (a bug): its result is lost.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServeError {
    pub(crate) fn client(error: ClientError) -> Self {
        match &error {
            ClientError::ProjectNotFound { .. } => Self::ProjectNotFound(Arc::new(error)),
            _ => Self::Upstream(Arc::new(error)),
        }
    }

    pub(crate) fn io(path: &std::path::Path, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }

    /// The status the request gets.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Self::ProjectNotFound(_) => StatusCode::NOT_FOUND,
            Self::Upstream(e) if e.is_not_found() => StatusCode::NOT_FOUND,
            Self::Upstream(_) | Self::Rewrite { .. } => StatusCode::BAD_GATEWAY,
            Self::Io { .. } | Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The message on one line (an error chain may hold line breaks).
    pub(crate) fn one_line(&self) -> String {
        self.to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_one_line_messages() {
        let url = url::Url::parse("http://127.0.0.1:9/simple/a/").unwrap();
        let down = ServeError::client(ClientError::Transport {
            url: url.clone(),
            message: "connection refused\n(os error 111)".into(),
        });
        assert_eq!(down.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(
            down.one_line(),
            "upstream: http://127.0.0.1:9/simple/a/: connection refused (os error 111)"
        );
        let missing = ServeError::client(ClientError::ProjectNotFound {
            name: "a".into(),
            tried: vec![url.to_string()],
        });
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    }
}
