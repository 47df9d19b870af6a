//! The signals that end a proxy run from the command line: SIGINT (Ctrl-C) and SIGTERM
//! (`docker stop`, service managers) on Unix, Ctrl-C on Windows.
//!
//! Listening starts when [`StopSignals::listen`] returns, before the front-end announces the
//! URL: from then on those signals no longer end the process at once, they are kept until
//! [`RunningProxy::run_until`](crate::RunningProxy::run_until) sees them and shuts the proxy
//! down gracefully (a signal that came in earlier stops it as soon as it runs).

use crate::error::ProxyError;

/// SIGINT and SIGTERM (Ctrl-C on Windows), listened for from [`StopSignals::listen`] on: they
/// no longer end the process at once but stop the proxy gracefully in
/// [`RunningProxy::run_until`](crate::RunningProxy::run_until), even when they came in before
/// it ran.
#[derive(Debug)]
pub struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(windows)]
    ctrl_c: tokio::signal::windows::CtrlC,
}

impl StopSignals {
    /// Starts listening. Call it inside the tokio runtime that will serve the proxy.
    ///
    /// ```no_run
    /// # fn run() -> Result<(), vari_proxy::ProxyError> {
    /// let runtime = tokio::runtime::Runtime::new().unwrap();
    /// let signals = runtime.block_on(async { vari_proxy::StopSignals::listen() })?;
    /// # Ok(()) }
    /// ```
    pub fn listen() -> Result<Self, ProxyError> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt()).map_err(ProxyError::Signal)?,
                terminate: signal(SignalKind::terminate()).map_err(ProxyError::Signal)?,
            })
        }
        #[cfg(windows)]
        {
            Ok(Self {
                ctrl_c: tokio::signal::windows::ctrl_c().map_err(ProxyError::Signal)?,
            })
        }
    }

    /// Waits for the next signal; returns its name.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(windows)]
        {
            self.ctrl_c.recv().await;
            "Ctrl-C"
        }
    }
}
