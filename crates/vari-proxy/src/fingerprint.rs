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
//! Only facts that can change a choice are in it. Where the hardware came from (a profile's
//! path, detection) is left out, and so is each namespace's `source` line (`NVML 570.86.15`,
//! the `abi_dependency` provider's site-packages path): the same facts give the same choices,
//! so they share a URL, and uv's cache. A new virtual environment (every CI job, every Docker
//! build) at another path gets the URL the last one had.

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

/// Every tag of `target` on a line of its own, `python-abi-platform` as the tag displays: the
/// parts copied into one buffer rather than formatted (there are hundreds of tags, and the
/// fingerprint is computed for each target of a union).
fn hash_tags(hash: &mut Sha256, target: &Target) {
    let mut lines: Vec<u8> = Vec::new();
    for tag in target.python.tags().iter() {
        for (part, end) in [(tag.python, b'-'), (tag.abi, b'-'), (tag.platform, b'\n')] {
            lines.extend_from_slice(part.as_bytes());
            lines.push(end);
        }
    }
    hash.update(&lines);
}

/// The profile as far as it can change a choice: without the `source` of each namespace
/// (where its facts were read: a driver version string, a path), which no selection reads.
fn choice_facts(profile: &vari_core::Profile) -> vari_core::Profile {
    let mut facts = profile.clone();
    for namespace in &mut facts.namespaces {
        namespace.source = None;
    }
    facts
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
    hash.update(choice_facts(&target.hardware.profile).to_json().as_bytes());
    hash.update(b"\nmarkers\n");
    for (name, value) in target.markers.values() {
        hash.update(format!("{name}={value:?}\n").as_bytes());
    }
    hash.update(b"tags\n");
    hash_tags(&mut hash, target);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn described_target() -> Target {
        let empty = tempfile::tempdir().unwrap();
        let mut settings = vari_select::TargetSettings::from_process_env();
        settings.env.clear();
        settings.use_cache = false;
        settings.sysroot = Some(empty.path().to_path_buf());
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        Target::resolve(&settings).unwrap()
    }

    #[test]
    fn where_facts_were_read_does_not_change_the_fingerprint_but_the_facts_do() {
        let mut first = described_target();
        let abi = vari_core::NamespaceSupport {
            namespace: "abi_dependency".parse().unwrap(),
            source: Some("/tmp/ci-job-1/venv/lib/python3.12/site-packages".to_owned()),
            features: vec![vari_core::FeatureSupport {
                name: "torch".parse().unwrap(),
                values: vec!["2.8".parse().unwrap()],
                multi_value: false,
            }],
        };
        first.hardware.profile.namespaces.push(abi);
        let mut second = first.clone();
        second
            .hardware
            .profile
            .namespaces
            .last_mut()
            .unwrap()
            .source = Some("/tmp/ci-job-2/venv/lib/python3.12/site-packages".to_owned());
        let (selection, sources) = (SelectionOptions::default(), ClientSettings::default());
        assert_eq!(
            fingerprint(&first, &selection, &sources),
            fingerprint(&second, &selection, &sources)
        );
        second
            .hardware
            .profile
            .namespaces
            .last_mut()
            .unwrap()
            .features[0]
            .values = vec!["2.9".parse().unwrap()];
        assert_ne!(
            fingerprint(&first, &selection, &sources),
            fingerprint(&second, &selection, &sources)
        );
    }

    #[test]
    fn the_tags_are_hashed_as_they_display() {
        let empty = tempfile::tempdir().unwrap();
        let mut settings = vari_select::TargetSettings::from_process_env();
        settings.env.clear();
        settings.use_cache = false;
        settings.sysroot = Some(empty.path().to_path_buf());
        settings.python.version = Some("3.12".parse().unwrap());
        settings.python.platform = Some("x86_64-manylinux_2_28".parse().unwrap());
        let target = Target::resolve(&settings).unwrap();
        let mut displayed = Sha256::new();
        for tag in target.python.tags().iter() {
            displayed.update(format!("{tag}\n").as_bytes());
        }
        let mut copied = Sha256::new();
        hash_tags(&mut copied, &target);
        assert!(target.python.tags().iter().count() > 100);
        assert_eq!(copied.finalize(), displayed.finalize());
    }
}
