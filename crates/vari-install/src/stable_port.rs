//! A stable address for the proxy of `vari install`, so that the installer's caches are reused
//! from one run to the next.
//!
//! uv keeps everything it reads from an index — pages, metadata, unpacked wheels — under a
//! digest of the index URL, port included (`uv-cache`'s `WheelCache::Index`, through
//! `CanonicalUrl`, which strips only credentials and a trailing slash), and it reuses a cached
//! wheel by index URL and file name alone. A proxy on a new ephemeral port each run is a new
//! index to uv: every run downloaded and unpacked everything again, and its cache grew by the
//! whole download. pip's HTTP cache is keyed by URL as well.
//!
//! So the port is derived from the proxy's fingerprint ([`vari_proxy::fingerprint_of`]: the
//! target, the selection options and the upstream sources), which is also in the URL's path:
//! the same configuration gets the same URL, run after run. A few candidate ports are tried, in
//! a range below Linux's ephemeral ports (32768–60999) so that outgoing connections do not
//! hold them; when all are busy (another `vari install` of the same configuration running, or
//! another program), an ephemeral port is used: that run cannot reuse uv's cache, nothing
//! more. Safety does not rest on the port: the URL's path names the configuration, so a port
//! that another configuration used before gives another URL, and the proxy binds its port
//! before the installer is told about it, so no other program can answer in its place.

use std::net::SocketAddr;

use vari_proxy::{ProxyError, ProxySettings, RunningProxy};

/// The first port of the range stable ports are taken from.
pub const STABLE_PORT_FIRST: u16 = 20_000;

/// How many ports the range holds (20000–31999).
pub const STABLE_PORT_COUNT: u16 = 12_000;

/// How many ports derived from the fingerprint are tried before an ephemeral one.
pub const STABLE_PORT_TRIES: usize = 3;

/// The ports tried for a proxy whose fingerprint is `fingerprint` (hex digits), in order: each
/// from another part of the fingerprint, so that two configurations that meet on the first
/// rarely meet on the next.
pub fn stable_ports(fingerprint: &str) -> Vec<u16> {
    let digits: Vec<u32> = fingerprint.chars().filter_map(|c| c.to_digit(16)).collect();
    let mut ports = Vec::with_capacity(STABLE_PORT_TRIES);
    for attempt in 0..STABLE_PORT_TRIES {
        // Four hex digits (16 bits) per candidate, rotating through the fingerprint.
        let value = (0..4).fold(0u32, |acc, i| {
            let digit = digits
                .get((attempt * 4 + i) % digits.len().max(1))
                .copied()
                .unwrap_or(0);
            acc * 16 + digit
        });
        let offset = u16::try_from(value % u32::from(STABLE_PORT_COUNT)).unwrap_or(0);
        let port = STABLE_PORT_FIRST + offset;
        if !ports.contains(&port) {
            ports.push(port);
        }
    }
    ports
}

/// Starts the proxy on the first free stable port for `settings` when they ask for an
/// ephemeral port on loopback (`127.0.0.1:0`, [`ProxySettings::new`]'s default), else where
/// they say; falls back to an ephemeral port when every stable port is taken.
pub async fn start_stable(settings: ProxySettings) -> Result<RunningProxy, ProxyError> {
    if settings.bind.port() != 0 || !settings.bind.ip().is_loopback() {
        return vari_proxy::start(settings).await;
    }
    let ip = settings.bind.ip();
    let mut stable = Vec::new();
    let candidates = |fingerprint: &str| {
        stable = stable_ports(fingerprint);
        // Taken (or refused): the next candidate, and last an ephemeral port.
        let ports = stable.iter().copied().chain([0]);
        ports.map(|port| SocketAddr::new(ip, port)).collect()
    };
    let proxy = vari_proxy::start_first_free(settings, candidates).await?;
    if !stable.contains(&proxy.local_addr().port()) {
        tracing::info!(
            "the proxy's usual ports for this configuration are taken (another `vari install` \
             running?): using another port, so the installer's cache is not reused this time"
        );
    }
    Ok(proxy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stable_in_range_and_differ_between_fingerprints() {
        let a = stable_ports("0123456789ab");
        assert_eq!(a, stable_ports("0123456789ab"));
        assert_eq!(a.len(), STABLE_PORT_TRIES);
        let b = stable_ports("ba9876543210");
        assert_ne!(a[0], b[0]);
        let range = STABLE_PORT_FIRST..STABLE_PORT_FIRST + STABLE_PORT_COUNT;
        for port in a.iter().chain(&b) {
            assert!(range.contains(port));
        }
        // Whatever the text, a port in the range (no panic on odd input).
        for odd in ["", "zz", "ffffffffffff"] {
            assert!(stable_ports(odd).iter().all(|p| range.contains(p)));
        }
    }
}
