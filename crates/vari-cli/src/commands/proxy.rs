//! `vari proxy`: the variant-aware simple index on this machine, in front of the indexes and
//! find-links sources the options name, until SIGINT (Ctrl-C) or SIGTERM (`docker stop`), which
//! stop it gracefully with status 0. Argument mapping only: serving is `vari-proxy`'s.
//!
//! The sources, the target and the selection are worked out exactly as for `vari select` (the
//! same options, vari.toml and the pip/uv index variables under them). One line on stdout says
//! what to give pip and uv: pip the `/simple/` alias, which does not change with the target;
//! uv the target's own URL (`/t/{fingerprint}/simple/`), which its cache needs. Each choice is
//! logged on stderr with its reason.

use std::net::SocketAddr;
use std::process::ExitCode;

use vari_client::ClientSettings;
use vari_proxy::{ProxyError, ProxySettings, StopSignals};

use crate::cli::ProxyArgs;
use crate::error::CliError;
use crate::output;
use crate::settings::{client_settings, load_config, server_runtime, Selecting};

/// Serves until SIGINT or SIGTERM.
pub(super) fn run(args: &ProxyArgs) -> Result<ExitCode, CliError> {
    if args.index.pre {
        output::warn(
            "--pre has no effect on the proxy: it shows every version, and the installer \
             decides about pre-releases (pip --pre, uv --prerelease allow)",
        );
    }
    let config = load_config()?;
    let client = client_settings(&args.index, &config)?;
    refuse_itself(&client, args.bind)?;
    let selecting = Selecting::with_config(config, &args.target, &args.selection)?;
    let settings = ProxySettings {
        selection: selecting.selection,
        bind: args.bind,
        allow_remote: args.allow_remote,
        ..ProxySettings::new(client.clone(), selecting.target)
    };
    let choosing_for = settings.target.hardware.source.to_string();
    server_runtime()?.block_on(async {
        // Before the URL is announced: whoever reads it may stop the proxy at once (Ctrl-C,
        // `docker stop`), and that must be a graceful stop with status 0.
        let signals = StopSignals::listen().map_err(|e| CliError::Other(e.to_string()))?;
        // The proxy stops gracefully on those signals; partial files are removed then.
        let held = vari_fs::interrupt::hold();
        let proxy = vari_proxy::start(settings).await.map_err(|e| match e {
            ProxyError::RemoteBind { .. } => CliError::Other(format!("{e} (--allow-remote)")),
            e => CliError::Other(e.to_string()),
        })?;
        tracing::info!(
            "upstream: {}; choosing for {choosing_for}",
            sources_text(&client)
        );
        let (url, alias) = (proxy.index_url(), proxy.alias_url());
        output::print_data(&format!("PIP_INDEX_URL={alias} UV_DEFAULT_INDEX={url}\n"))?;
        output::note(&format!(
            "give uv {url}: it names this target ({}), and uv reuses cached wheels by index URL, \
             so {alias} could get it another target's wheels after a change of hardware or \
             options; {alias} is for pip (it checks hashes) and a pip.conf",
            proxy.fingerprint()
        ));
        let stopped = proxy
            .run_until(signals)
            .await
            .map_err(|e| CliError::Other(e.to_string()));
        held.stopped_gracefully();
        stopped
    })?;
    Ok(ExitCode::SUCCESS)
}

/// A proxy whose upstream is its own address would ask itself forever: that happens when
/// `PIP_INDEX_URL` already names it (the line it prints, exported in a shell profile).
fn refuse_itself(client: &ClientSettings, bind: SocketAddr) -> Result<(), CliError> {
    for index in &client.indexes {
        let url = index.url();
        let port = url.port_or_known_default();
        let local = match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip.is_unspecified(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        };
        let same_ip = bind.ip().is_unspecified() || bind.ip().is_loopback();
        if local && same_ip && port == Some(bind.port()) && bind.port() != 0 {
            return Err(CliError::Other(format!(
                "the upstream index {url} is this proxy's own address ({bind}): give the real \
                 index with --index-url (PIP_INDEX_URL or UV_INDEX_URL may name the proxy), or \
                 another --bind"
            )));
        }
    }
    Ok(())
}

/// The sources, for the log.
fn sources_text(client: &ClientSettings) -> String {
    client
        .indexes
        .iter()
        .map(ToString::to_string)
        .chain(client.find_links.iter().map(|f| f.location()))
        .collect::<Vec<_>>()
        .join(", ")
}
