//! The CLI's failures, each rendered as the one-line reason `vari` prints after `error: `, and
//! the other one-line diagnostics on stderr (`warning:`, `note:`): everything a command says on
//! stderr, so that any module can report without reaching for the stdout writers.
//!
//! The stable contract (`docs/reference/output.md`) is one line naming the file, the key path inside it when
//! there is one, and what is wrong: `error: <file>: <key path>: <message>`.

use std::io;
use std::path::{Path, PathBuf};

use owo_colors::OwoColorize;
use vari_core::Located;

/// Why a command failed (exit status 1).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file at fault.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// A file's content is wrong at a key path: the workspace's one located error, which the
    /// configuration, input and lock readers return too.
    #[error("{0}")]
    Invalid(#[from] Located),
    /// A library's error passed on as the library words it: it names its own file, URL or
    /// subject (`<url>: the server answered 404`, `<file>: is not UTF-8`, `invalid requirement
    /// `x`: …`) and the command has nothing to add; see `library_errors!`.
    #[error("{0}")]
    Library(Box<dyn std::error::Error + Send + Sync>),
    /// A failure that is not about one file (detection, nothing to do, …).
    #[error("{0}")]
    Other(String),
}

/// `From` for the library errors that are complete reasons on their own (they name the file,
/// URL, requirement or setting they are about), so that a command passes them on with `?` and
/// the user reads the library's own line. Where a command adds to a library's words (a flag that
/// would help, the file the library did not know), it says so itself: `CliError::Invalid` when
/// the reason is about one file, `CliError::Other` when it is about none. A reader that does not
/// know its file (`vari_lock::LockError`, the core's `Diagnostic`) is located by its caller with
/// `Diagnostic::in_file`, never passed on here.
macro_rules! library_errors {
    ($($error:ty),* $(,)?) => {
        $(impl From<$error> for CliError {
            fn from(e: $error) -> Self {
                Self::Library(Box::new(e))
            }
        })*
    };
}

library_errors!(
    vari_client::ClientError,
    vari_config::InvalidIndexVariable,
    vari_core::metadata::CombineError,
    vari_fs::InputError,
    vari_fs::UnsafePath,
    vari_fs::WriteError,
    vari_install::EnvironmentRuleError,
    vari_install::InstallError,
    vari_install::InstallerError,
    vari_lockmaker::LockingError,
    vari_install::RequirementsFileError,
    vari_install::sync::LoadError,
    vari_install::sync::SyncError,
    vari_lock::BuildError,
    vari_proxy::ProxyError,
    vari_publish::BuildError,
    vari_publish::DestinationError,
    vari_publish::ValidateError,
    vari_publish::mirror::MirrorError,
    vari_select::FamilyError,
    vari_select::RequestError,
    vari_select::TargetError,
);

impl From<vari_lockmaker::LockMakeError> for CliError {
    fn from(e: vari_lockmaker::LockMakeError) -> Self {
        use vari_lockmaker::LockMakeError;
        match e {
            LockMakeError::Input(e) => e.into(),
            // The front-end's own target error, back as it raised it.
            LockMakeError::Targets(e) => match e.downcast::<CliError>() {
                Ok(e) => *e,
                Err(e) => Self::Other(e.to_string()),
            },
            other => Self::Other(other.to_string()),
        }
    }
}

impl CliError {
    /// An I/O failure on `path`.
    pub(crate) fn io(path: impl AsRef<Path>, source: io::Error) -> Self {
        Self::Io {
            path: path.as_ref().to_owned(),
            source,
        }
    }

    /// A content problem in `path` at `key`.
    pub(crate) fn invalid(
        path: impl AsRef<Path>,
        key: impl Into<Option<String>>,
        message: impl Into<String>,
    ) -> Self {
        let key: Option<String> = key.into();
        Self::Invalid(Located::at(path, key.unwrap_or_default(), message))
    }

    /// The reason as exactly one line (messages from libraries may span lines).
    pub(crate) fn one_line(&self) -> String {
        one_line(&self.to_string())
    }
}

/// Joins lines of `text` with `; ` so that a reason always fits one line, and hides the user
/// information of every URL in it (`vari_core::redact`): whatever a library put in a message,
/// no password reaches the terminal.
pub(crate) fn one_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    vari_core::redact::redact_credentials(&joined).into_owned()
}

/// Prints `warning: <message>` on stderr (one line).
pub(crate) fn warn(message: &str) {
    stderr_line("warning:".yellow().bold(), message);
}

/// Prints `note: <message>` on stderr (one line): a decision the user may want to know about.
pub(crate) fn note(message: &str) {
    stderr_line("note:".cyan().bold(), message);
}

/// Prints `error: <message>` on stderr (one line), as a failing command's error is printed, for
/// errors a command reports and goes on (exiting with another status).
pub(crate) fn error_line(message: &str) {
    stderr_line("error:".red().bold(), message);
}

fn stderr_line(prefix: impl std::fmt::Display, message: &str) {
    use std::io::Write;
    let mut err = anstream::stderr().lock();
    // stderr is best effort: there is nowhere left to report a failure to write to it.
    let _ = writeln!(err, "{prefix} {}", one_line(message));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_names_file_key_and_message() {
        let e = CliError::invalid("a/b.json", Some("variants.x".to_owned()), "bad");
        assert_eq!(e.to_string(), "a/b.json: variants.x: bad");
        let e = CliError::invalid("a/b.json", None, "bad");
        assert_eq!(e.to_string(), "a/b.json: bad");
        let e = CliError::invalid("a/b.json", Some(String::new()), "bad");
        assert_eq!(e.to_string(), "a/b.json: bad");
    }

    #[test]
    fn no_line_shows_the_credentials_of_a_url() {
        let e = CliError::Other(
            "https://alice:s3cret@dav.example/site: upload failed: PUT \
             https://alice:s3cret@dav.example/site/index.html"
                .to_owned(),
        );
        let line = e.one_line();
        assert!(
            !line.contains("s3cret") && !line.contains("alice"),
            "{line}"
        );
        assert!(
            line.contains("https://****@dav.example/site/index.html"),
            "{line}"
        );
    }

    #[test]
    fn reasons_are_one_line() {
        let e = CliError::invalid("f", None, "first\n  second\n");
        assert_eq!(e.one_line(), "f: first; second");
    }
}
