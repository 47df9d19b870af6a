//! Credentials: taken out of URLs as soon as they are parsed, looked up per host, and never
//! printed.
//!
//! Every URL vari keeps (in settings, files, errors, logs) has its user name and password
//! removed; the credentials live in a [`CredentialStore`] keyed by [`Realm`] (scheme, host,
//! port), so they can only be sent to the server they were given for. `~/.netrc` (or the file
//! `NETRC` names) is consulted by host name when a URL carried none, as pip and uv do.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use url::Url;

/// A user name and optional password. `Debug` prints neither.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub(crate) username: String,
    pub(crate) password: Option<String>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credentials(****)")
    }
}

/// Where credentials may be sent: the scheme, host and port of the URL they came with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Realm {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Realm {
    pub(crate) fn of(url: &Url) -> Self {
        Self {
            scheme: url.scheme().to_owned(),
            host: url.host_str().unwrap_or_default().to_ascii_lowercase(),
            port: url.port_or_known_default(),
        }
    }
}

/// Removes the user name and password from `url`, returning them separately.
///
/// Percent-escapes in the user info are decoded (`user%40corp` is `user@corp`).
pub(crate) fn split_credentials(mut url: Url) -> (Url, Option<Credentials>) {
    if url.username().is_empty() && url.password().is_none() {
        return (url, None);
    }
    let decode =
        |s: &str| vari_simple::decode_segment(s).map_or_else(|| s.to_owned(), |s| s.into_owned());
    let credentials = Credentials {
        username: decode(url.username()),
        password: url.password().map(decode),
    };
    // Cannot fail for URLs with a host, which are the only ones that carry user info.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    (url, Some(credentials))
}

/// A URL as it may be shown: without user name and password.
pub(crate) fn redact(url: &Url) -> Url {
    split_credentials(url.clone()).0
}

/// Where to read netrc credentials from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NetrcSource {
    /// The file `NETRC` names, else `~/.netrc` (a missing file means no credentials).
    #[default]
    Default,
    /// This file (it must exist).
    File(PathBuf),
    /// Do not read netrc.
    Disabled,
}

/// A netrc file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read netrc file {}: {message}", path.display())]
pub struct NetrcError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong (never a password: the parser reports positions and tokens kinds).
    pub message: String,
}

/// The parser quotes the offending token (`bad follower token 'hunter2'`), which may be a
/// password: keep the message and line number, drop the quoted text.
fn without_tokens(message: &str) -> String {
    match (message.find('\''), message.rfind('\'')) {
        (Some(start), Some(end)) if start < end => {
            format!("{}'…'{}", &message[..start], &message[end + 1..])
        }
        _ => message.to_owned(),
    }
}

/// Credentials per realm (from URLs) and per host (from netrc).
#[derive(Debug, Default)]
pub(crate) struct CredentialStore {
    /// Behind a lock: links on pages may bring credentials while the client is shared.
    by_realm: Mutex<HashMap<Realm, Credentials>>,
    /// Host name → credentials, from netrc.
    netrc: HashMap<String, Credentials>,
    /// netrc's `default` entry, used for hosts it does not list.
    netrc_default: Option<Credentials>,
}

impl CredentialStore {
    /// Loads netrc as `source` says.
    pub(crate) fn new(source: &NetrcSource) -> Result<Self, NetrcError> {
        let path = match source {
            NetrcSource::Disabled => None,
            NetrcSource::File(path) => Some(path.clone()),
            // The crate's lookup: `NETRC`, else `~/.netrc`, only when the file exists.
            NetrcSource::Default => netrc::Netrc::get_file(),
        };
        let mut store = Self::default();
        if let Some(path) = path {
            store.load_netrc(&path)?;
        }
        Ok(store)
    }

    fn load_netrc(&mut self, path: &Path) -> Result<(), NetrcError> {
        let parsed = netrc::Netrc::from_file(path).map_err(|e| NetrcError {
            path: path.to_path_buf(),
            message: match e {
                netrc::Error::Io(io) => io.to_string(),
                netrc::Error::Parsing { parser, .. } => without_tokens(&parser.to_string()),
            },
        })?;
        for (host, auth) in parsed.hosts {
            let credentials = Credentials {
                username: auth.login,
                password: Some(auth.password),
            };
            // The crate files netrc's `default` entry under the empty host name.
            if host.is_empty() || host == "default" {
                self.netrc_default = Some(credentials);
            } else {
                self.netrc.insert(host.to_ascii_lowercase(), credentials);
            }
        }
        Ok(())
    }

    /// Remembers credentials that came with a URL, for that URL's realm only. A URL's own
    /// credentials take precedence over netrc's.
    pub(crate) fn insert(&self, url: &Url, credentials: Credentials) {
        if let Ok(mut map) = self.by_realm.lock() {
            map.entry(Realm::of(url)).or_insert(credentials);
        }
    }

    /// The credentials to send with a request to `url`, if any.
    pub(crate) fn for_url(&self, url: &Url) -> Option<Credentials> {
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let from_url = self
            .by_realm
            .lock()
            .ok()
            .and_then(|map| map.get(&Realm::of(url)).cloned());
        if from_url.is_some() {
            return from_url;
        }
        let host = url.host_str()?.to_ascii_lowercase();
        self.netrc
            .get(&host)
            .or(self.netrc_default.as_ref())
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_split_off_and_decoded() {
        let url = Url::parse("https://user%40corp:s3cr%3At@example.com:8443/simple/").unwrap();
        let (clean, creds) = split_credentials(url);
        assert_eq!(clean.as_str(), "https://example.com:8443/simple/");
        let creds = creds.unwrap();
        assert_eq!(creds.username, "user@corp");
        assert_eq!(creds.password.as_deref(), Some("s3cr:t"));
        assert_eq!(format!("{creds:?}"), "Credentials(****)");
    }

    #[test]
    fn credentials_go_only_to_their_realm() {
        let store = CredentialStore::default();
        let index = Url::parse("https://example.com/simple/").unwrap();
        store.insert(
            &index,
            Credentials {
                username: "u".into(),
                password: Some("p".into()),
            },
        );
        let same = Url::parse("https://example.com/files/a.whl").unwrap();
        assert!(store.for_url(&same).is_some());
        for other in [
            "http://example.com/simple/",
            "https://example.com:444/simple/",
            "https://files.example.com/a.whl",
            "file:///tmp/a.whl",
        ] {
            assert!(
                store.for_url(&Url::parse(other).unwrap()).is_none(),
                "{other}"
            );
        }
    }

    #[test]
    fn netrc_is_read_per_host() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("netrc");
        std::fs::write(
            &path,
            "machine Example.com login alice password wonderland\n\
             machine other.org login bob password builder\n",
        )
        .unwrap();
        let store = CredentialStore::new(&NetrcSource::File(path)).unwrap();
        let creds = store
            .for_url(&Url::parse("https://example.com/simple/").unwrap())
            .unwrap();
        assert_eq!(creds.username, "alice");
        assert_eq!(creds.password.as_deref(), Some("wonderland"));
        assert!(store
            .for_url(&Url::parse("https://third.net/").unwrap())
            .is_none());
    }

    #[test]
    fn netrc_parse_errors_do_not_quote_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("netrc");
        std::fs::write(&path, "machine h login a password p hunter2\n").unwrap();
        let err = CredentialStore::new(&NetrcSource::File(path)).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        assert!(err.to_string().contains("line"), "{err}");
    }

    #[test]
    fn a_missing_netrc_file_given_explicitly_is_an_error() {
        let err =
            CredentialStore::new(&NetrcSource::File("/nonexistent/netrc".into())).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/netrc"), "{err}");
    }
}
