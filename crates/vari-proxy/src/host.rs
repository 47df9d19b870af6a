//! Which `Host` a request may name: the guard against DNS rebinding.
//!
//! A web page in a browser can reach a server on 127.0.0.1 through a name of its own whose DNS
//! answer it switches to 127.0.0.1 after the page loaded ("DNS rebinding"); the browser then
//! treats the proxy's answers as the page's own and lets its script read them (the project
//! lists and wheels of private indexes whose credentials the proxy holds). Such requests carry
//! the attacker's name in `Host`. So a proxy listening on loopback serves only requests whose
//! `Host` (and the authority of an absolute-form target) is `localhost`, a loopback address or
//! the address it listens on; others get `421 Misdirected Request`.
//!
//! The port is not compared: a browser's request names the attacker's host whatever the port,
//! and an SSH tunnel (`ssh -L 8000:127.0.0.1:3141`) rightly presents another one. A request
//! without `Host` (HTTP/1.0 tools) cannot come from a browser, which always sends one, and is
//! served.
//!
//! With remote access allowed (`--allow-remote`) the check is off: clients then reach the proxy
//! by names this machine cannot know (its DNS names, a load balancer's), and whoever can
//! connect may read it directly anyway.

use std::net::{IpAddr, SocketAddr};

use http::header::HOST;
use http::{HeaderMap, Uri};

/// The rule for one listening proxy.
#[derive(Debug, Clone)]
pub(crate) struct HostCheck {
    /// The address listened on; `None`: every host is served (remote access allowed).
    bound: Option<SocketAddr>,
}

impl HostCheck {
    /// The check for a proxy listening on `bound`; off when `allow_remote`.
    pub(crate) fn new(bound: SocketAddr, allow_remote: bool) -> Self {
        Self {
            bound: (!allow_remote).then_some(bound),
        }
    }

    /// `Err(host)`, the first host named that is not this proxy's, or `Ok`.
    pub(crate) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), String> {
        let Some(bound) = self.bound else {
            return Ok(());
        };
        if let Some(authority) = uri.authority() {
            if !names_this_machine(authority.as_str(), bound) {
                return Err(authority.as_str().to_owned());
            }
        }
        for value in headers.get_all(HOST) {
            let host = String::from_utf8_lossy(value.as_bytes());
            if !names_this_machine(&host, bound) {
                return Err(host.into_owned());
            }
        }
        Ok(())
    }

    /// What the refusal says is served, e.g. `127.0.0.1:3141 or localhost:3141`.
    pub(crate) fn served(&self) -> String {
        match self.bound {
            Some(bound) => format!("{bound} or localhost:{}", bound.port()),
            None => "any host".to_owned(),
        }
    }
}

/// Whether `authority` (`host`, `host:port`, `[v6]`, `[v6]:port`) names `localhost`, a loopback
/// address or `bound`'s address, with a valid port if any. No user info, no trailing dot (a
/// name with a trailing dot is looked up in DNS), nothing else.
fn names_this_machine(authority: &str, bound: SocketAddr) -> bool {
    let Some((host, port)) = split_port(authority) else {
        return false;
    };
    if port.is_some_and(|port| port.is_empty() || port.parse::<u16>().is_err()) {
        return false;
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6
            .parse::<IpAddr>()
            .is_ok_and(|ip| is_this_machine(ip, bound));
    }
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    // Only the dotted-decimal form: `2130706433` or `0x7f.1` are names to a resolver.
    host.parse::<std::net::Ipv4Addr>()
        .is_ok_and(|ip| is_this_machine(IpAddr::V4(ip), bound))
}

fn is_this_machine(ip: IpAddr, bound: SocketAddr) -> bool {
    let ip = ip.to_canonical();
    ip.is_loopback() || ip == bound.ip().to_canonical()
}

/// `host` and the port after the last colon outside brackets; `None` for a malformed value.
fn split_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        return match rest {
            "" => Some((host, None)),
            rest => Some((host, Some(rest.strip_prefix(':')?))),
        };
    }
    match authority.split_once(':') {
        None => Some((authority, None)),
        Some((_, port)) if port.contains(':') => None,
        Some((host, port)) => Some((host, Some(port))),
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn allowed(bound: &str, host: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        HostCheck::new(bound.parse().unwrap(), false)
            .check(&Uri::from_static("/simple/"), &headers)
            .is_ok()
    }

    #[test]
    fn the_proxys_own_names_are_served() {
        for host in [
            "127.0.0.1:3141",
            "127.0.0.1",
            "localhost",
            "localhost:3141",
            "LocalHost:3141",
            "[::1]",
            "[::1]:3141",
            "127.0.0.2:3141",
            // Another port: an SSH tunnel's.
            "localhost:8000",
        ] {
            assert!(allowed("127.0.0.1:3141", host), "{host}");
        }
        assert!(allowed("[::1]:3141", "[::1]:3141"));
        assert!(allowed("[::1]:3141", "localhost:3141"));
    }

    #[test]
    fn other_names_are_refused() {
        for host in [
            "evil.example",
            "evil.example:3141",
            "localhost.",
            "localhost.evil.example",
            "127.0.0.1.nip.io:3141",
            "2130706433",
            "0x7f.0.0.1",
            "10.0.0.5:3141",
            "[fe80::1]:3141",
            "localhost:",
            "localhost:99999",
            "localhost:31x1",
            "user@localhost",
            "[::1",
            "[::1]x",
            "a:b:c",
            "",
        ] {
            assert!(!allowed("127.0.0.1:3141", host), "{host}");
        }
    }

    #[test]
    fn the_bound_address_is_served_and_others_are_not() {
        // With remote access the check is off; a non-loopback bind without it names itself.
        assert!(allowed("192.168.1.4:3141", "192.168.1.4:3141"));
        assert!(!allowed("192.168.1.4:3141", "192.168.1.5:3141"));
    }

    #[test]
    fn every_host_header_and_an_absolute_target_are_checked() {
        let check = HostCheck::new("127.0.0.1:3141".parse().unwrap(), false);
        let mut headers = HeaderMap::new();
        headers.append(HOST, HeaderValue::from_static("127.0.0.1:3141"));
        headers.append(HOST, HeaderValue::from_static("evil.example"));
        let origin_form = Uri::from_static("/simple/");
        assert_eq!(
            check.check(&origin_form, &headers),
            Err("evil.example".to_owned())
        );
        let absolute = Uri::from_static("http://evil.example/simple/");
        assert_eq!(
            check.check(&absolute, &HeaderMap::new()),
            Err("evil.example".to_owned())
        );
        assert_eq!(check.check(&origin_form, &HeaderMap::new()), Ok(()));
    }

    #[test]
    fn remote_access_turns_the_check_off() {
        let check = HostCheck::new("0.0.0.0:3141".parse().unwrap(), true);
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_static("proxy.internal:3141"));
        assert_eq!(check.check(&Uri::from_static("/simple/"), &headers), Ok(()));
    }
}
