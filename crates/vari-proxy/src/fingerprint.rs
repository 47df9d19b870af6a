//! The target's fingerprint: a short, stable hash of everything that decides which wheel the
//! proxy shows — the hardware profile, the marker environment, the wheel tags, the selection
//! options and the upstream sources (their URLs without credentials, and how they combine). It
//! names the target-specific index URL (`/t/{fingerprint}/simple/`).
//!
//! Why the URL must change with the target: uv keeps downloaded registry wheels under the
//! index URL and the file name and reuses them without comparing the listed hash, and the
//! proxy shows every variant under the same plain name. With one URL for every target, a proxy
//! restarted on the same port for another profile (or after a hardware change) would have uv
//! install the previous target's wheel from its cache. The sources are in it for the same
//! reason: another index may hold other bytes under the same file name, and a front-end that
//! keeps the port stable across runs (`vari install`, so that uv's cache is reused) must not
//! hand uv the first index's wheel for the second.
//!
//! Where the hardware came from (a profile's path, detection) is left out: the same facts
//! give the same choices, so they may share a cache.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};
use vari_client::ClientSettings;
use vari_core::ordering::SelectionOptions;
use vari_select::Target;

use crate::settings::ProxySettings;

/// How many bytes of the SHA-256 the fingerprint keeps (12 hex digits: a collision between
/// the targets one machine serves is not a concern at 48 bits).
const BYTES: usize = 6;

/// The fingerprint a proxy started with `settings` puts in its URLs
/// ([`RunningProxy::fingerprint`](crate::RunningProxy::fingerprint)), known before it starts: a
/// front-end can derive a stable port from it.
pub fn fingerprint_of(settings: &ProxySettings) -> String {
    match settings.union.is_empty() {
        true => fingerprint(&settings.target, &settings.selection, &settings.client),
        false => union_fingerprint(&settings.union, &settings.selection, &settings.client),
    }
}

/// The fingerprint of the union of `targets` ([`ProxySettings::union`]): its pages differ
/// from every single target's, so its URLs must too.
pub(crate) fn union_fingerprint(
    targets: &[Target],
    selection: &SelectionOptions,
    sources: &ClientSettings,
) -> String {
    let mut hash = Sha256::new();
    hash.update(b"vari-proxy union 1\n");
    for target in targets {
        hash.update(format!("{}\n", fingerprint(target, selection, sources)).as_bytes());
    }
    hex::encode(&hash.finalize()[..BYTES])
}

/// The fingerprint of `target` chosen for with `selection` from `sources`.
pub(crate) fn fingerprint(
    target: &Target,
    selection: &SelectionOptions,
    sources: &ClientSettings,
) -> String {
    let mut hash = Sha256::new();
    // A version, so that a change in what is hashed gives new URLs rather than old ones.
    hash.update(b"vari-proxy target 2\n");
    // Without credentials: the URL names where the bytes come from, and a secret has no
    // business in a hash that ends up in URLs and logs.
    hash.update(format!("strategy {:?}\n", sources.strategy).as_bytes());
    for index in &sources.indexes {
        hash.update(format!("index {}\n", index.url()).as_bytes());
    }
    for links in &sources.find_links {
        hash.update(format!("find-links {}\n", links.location()).as_bytes());
    }
    hash.update(target.hardware.profile.to_json().as_bytes());
    hash.update(b"\nmarkers\n");
    for (name, value) in target.markers.values() {
        hash.update(format!("{name}={value:?}\n").as_bytes());
    }
    hash.update(b"tags\n");
    // One buffer for every tag (there are hundreds): the same bytes, without an allocation
    // each.
    let mut line = String::new();
    for tag in target.python.tags().iter() {
        line.clear();
        let _ = writeln!(line, "{tag}");
        hash.update(line.as_bytes());
    }
    let list = |items: &mut dyn Iterator<Item = String>| items.collect::<Vec<_>>().join(" ");
    hash.update(
        format!(
            "prefer {}\nforbid {}\nvariant {}\nno-variants {}\nenable-optional {}\n",
            list(&mut selection.prefer.iter().map(ToString::to_string)),
            list(&mut selection.forbid.iter().map(ToString::to_string)),
            selection
                .variant
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            selection.no_variants,
            list(&mut selection.enable_optional.iter().map(ToString::to_string)),
        )
        .as_bytes(),
    );
    hex::encode(&hash.finalize()[..BYTES])
}
