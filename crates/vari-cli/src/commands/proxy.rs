//! `vari proxy`: the variant-aware simple index on this machine, in front of the indexes and
//! find-links sources the options name, until SIGINT (Ctrl-C) or SIGTERM (`docker stop`), which
//! stop it gracefully with status 0. Argument mapping only: serving is `vari-proxy`'s.
//!
//! The sources, the target and the selection are worked out exactly as for `vari select` (the
//! same options, vari.toml and the pip/uv index variables under them). One line on stdout says
//! what to give pip and uv: pip the `/simple/` alias, which does not change with the target;
//! uv the target's own URL (`/t/{fingerprint}/simple/`), which its cache needs. Each choice is
//! logged on stderr with its reason.
//!
//! With machine classes (`--target [NAME=]PROFILE`, repeatable, else `[proxy.targets]` in
//! vari.toml) one process serves each class under its own URLs, one line per class on stdout:
//! `NAME PIP_INDEX_URL=…/t/NAME/simple/ UV_DEFAULT_INDEX=…/t/NAME.FINGERPRINT/simple/`.

use std::net::SocketAddr;
use std::process::ExitCode;

use vari_client::ClientSettings;
use vari_proxy::{ProxyError, ProxySettings, RunningProxy, StopSignals, TargetClass};

use crate::classes::classes;
use crate::cli::ProxyArgs;
use crate::error::CliError;
use crate::output;
use crate::settings::{
    class_target, client_settings, load_config, selection_options, server_runtime, FamilySettings,
    Selecting,
};

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
    let classes = classes(&args.targets, "--target", &config)?;
    // Build families: a family's name is answered with a selector wheel requiring the build
    // chosen for each target (vari-proxy's `selector` module).
    let families = FamilySettings::resolve(&args.selection.families, &config)?
        .catalog()?
        .map(std::sync::Arc::new);
    let mut settings = match classes.is_empty() {
        true => {
            let selecting = Selecting::with_config(config, &args.target, &args.selection)?;
            ProxySettings {
                selection: selecting.selection,
                ..ProxySettings::new(client.clone(), selecting.target)
            }
        }
        false => {
            if args.target.profile.is_some() || args.target.sysroot.is_some() {
                output::warn(
                    "--profile and --sysroot are not used with machine classes: each class \
                     chooses for its own profile",
                );
            }
            let mut served = Vec::with_capacity(classes.len());
            for class in classes {
                let target = class_target(&class, &args.target)?;
                served.push(TargetClass {
                    name: class.name,
                    target,
                });
            }
            ProxySettings {
                selection: config.selection(selection_options(&args.selection)),
                ..ProxySettings::for_classes(client.clone(), served)?
            }
        }
    };
    settings.families = families;
    settings.bind = args.bind;
    settings.allow_remote = args.allow_remote;
    let choosing_for = match settings.classes.is_empty() {
        true => settings.target.hardware.source.to_string(),
        false => settings
            .classes
            .iter()
            .map(|class| format!("{} ({})", class.name, class.target.hardware.source))
            .collect::<Vec<_>>()
            .join(", "),
    };
    server_runtime()?.block_on(async {
        // Before the URL is announced: whoever reads it may stop the proxy at once (Ctrl-C,
        // `docker stop`), and that must be a graceful stop with status 0.
        let signals = StopSignals::listen()?;
        // The proxy stops gracefully on those signals; partial files are removed then.
        let held = vari_fs::interrupt::hold();
        let proxy = vari_proxy::start(settings).await.map_err(|e| match e {
            ProxyError::RemoteBind { .. } => CliError::Other(format!("{e} (--allow-remote)")),
            e => CliError::from(e),
        })?;
        tracing::info!(
            "upstream: {}; choosing for {choosing_for}",
            sources_text(&client)
        );
        announce(&proxy, args.json)?;
        let stopped = proxy.run_until(signals).await.map_err(CliError::from);
        held.stopped_gracefully();
        stopped
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Says where the proxy serves: the line of variables (one per class), or the JSON document.
fn announce(proxy: &RunningProxy, json: bool) -> Result<(), CliError> {
    let classes = proxy.classes();
    let (url, alias) = (proxy.index_url(), proxy.alias_url());
    if json {
        let document = match classes.is_empty() {
            true => serde_json::json!({
                "index_url": url.as_str(),
                "alias_url": alias.as_str(),
                "fingerprint": proxy.fingerprint(),
            }),
            false => serde_json::json!({ "classes": classes }),
        };
        return output::print_data(&format!("{document}\n"));
    }
    if classes.is_empty() {
        output::print_data(&format!("PIP_INDEX_URL={alias} UV_DEFAULT_INDEX={url}\n"))?;
        output::note(&format!(
            "give uv {url}: it names this target ({}), and uv reuses cached wheels by index URL, \
             so {alias} could get it another target's wheels after a change of hardware or \
             options; {alias} is for pip (it checks hashes) and a pip.conf",
            proxy.fingerprint()
        ));
        return Ok(());
    }
    let lines: String = classes
        .iter()
        .map(|class| {
            format!(
                "{} PIP_INDEX_URL={} UV_DEFAULT_INDEX={}\n",
                class.name, class.alias_url, class.index_url
            )
        })
        .collect();
    output::print_data(&lines)?;
    output::note(
        "give uv each class's UV_DEFAULT_INDEX: it names the class's facts, and uv reuses cached \
         wheels by index URL, so the PIP_INDEX_URL of a class whose profile changed could get \
         it the old choice; PIP_INDEX_URL stays the same across such changes, for pip (it \
         checks hashes) and a pip.conf; the proxy's root URL lists the classes",
    );
    Ok(())
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
