//! Build families by extra through the proxy (issue 35): plain pip and uv asking for `jax` on a
//! CUDA 12 machine get what `pip install "jax[cuda12]"` gets, with their own command line
//! unchanged; on a CPU machine, plain `jax`.
//!
//! The mechanism: **the family's own wheels, with the chosen extra's requirements made plain
//! ones**. The page of `jax` lists jax's files as the upstream does, and each wheel whose
//! METADATA has requirements behind the chosen build's extra (`jax-cuda12-plugin; extra ==
//! "cuda12"`) is served as a rewritten copy whose METADATA also requires them without the extra
//! ([`vari_core::metadata::require_extra`]); its PEP 658 metadata is that text, with its hash, and
//! the copy's hash is listed once the copy exists (as for wheels whose variant markers are
//! evaluated, [`crate::rewrite`]). Why this and not a selector wheel ([`crate::selector`]): the
//! family's name is itself the project (`jax` is the CPU build), so a selector would have to
//! replace the real project, and a user who pins `jax==0.7.2` or asks for `jax[cuda12]` must get
//! jax's own versions and extras. So:
//! - the environment holds jax's own files once, under its own name and version; what the extra
//!   adds (the plugin and its CUDA libraries) comes in as ordinary dependencies;
//! - asking for the extra by name still works (the original fields are kept), and asking for
//!   `jax` on a CPU machine is served as listed (the CPU build is the null build: nothing to add);
//! - the choice is `vari_family::choose`'s, the same as `vari select jax` makes.
//!
//! The proxy cannot see the extras on the installer's command line: `jax[cuda13]` asked for on a
//! machine whose best build is `cuda12` gets both lines' requirements. Asking for the extra of
//! another line is asking for that build; a user who wants exactly it names its index or turns
//! the catalog off (`--no-families`).

use std::sync::Arc;

use bytes::Bytes;
use vari_client::IndexFile;
use vari_core::markers::VariantMarkerContext;
use vari_family::{Family, Layout};

use crate::context::Context;
use crate::rewrite::RewriteJob;

/// Whether the proxy answers `family`'s page with its own wheels, the chosen extra required: one
/// of its builds is an extra of the family's own name on the proxy's sources (`jax[cuda12]`,
/// `tensorflow[and-cuda]`). Builds by extra on an index of their own (AMD's
/// `torch[device-gfx950]`) are served from that index (the by-index family page), with their
/// extra required likewise.
pub(crate) fn serves_extra(family: &Family) -> bool {
    family
        .builds
        .iter()
        .any(|b| b.layout() == Layout::Extra && b.distribution == family.name)
}

/// One listed file of the page whose METADATA may gain the extra's requirements.
pub(crate) struct Listed<'a> {
    /// The upstream file.
    pub(crate) file: &'a IndexFile,
    /// The name it is served under.
    pub(crate) shown_as: &'a str,
    /// The METADATA the page serves already (a text whose variant markers were evaluated), if
    /// any; else the upstream's is read.
    pub(crate) served: Option<&'a Bytes>,
    /// What its variant markers were evaluated against, when it is a rewritten copy already.
    pub(crate) markers: Option<&'a VariantMarkerContext>,
}

/// A wheel served with the extra's requirements required.
pub(crate) struct Required {
    /// Its new METADATA (served as its PEP 658 metadata too).
    pub(crate) metadata: Bytes,
    /// The copy carrying it.
    pub(crate) job: RewriteJob,
}

/// Which of `files` (the page of `name`) are served with `extra`'s requirements required, and
/// how: for each wheel whose METADATA has requirements behind `extra`, its new METADATA and the
/// copy to build. A wheel whose METADATA cannot be read, or has nothing behind the extra (a
/// release from before the extra existed), is served as listed, with one warning; the count is
/// logged with `family` and `build`, the choice that asked for it.
pub(crate) async fn require_extra(
    context: &Arc<Context>,
    name: &str,
    files: &[Listed<'_>],
    (family, build, extra): (&str, &str, &str),
) -> Vec<Option<Required>> {
    // Read in parallel (the client bounds it).
    let texts = futures_util::future::join_all(files.iter().map(|listed| {
        let context = context.clone();
        async move {
            listed.file.wheel()?;
            Some(match listed.served {
                Some(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
                None => context
                    .core_metadata(listed.file)
                    .await
                    .map(|text| text.to_string()),
            })
        }
    }))
    .await;
    let mut out = Vec::with_capacity(files.len());
    let mut as_listed: Vec<pep440_rs::Version> = Vec::new();
    for (listed, text) in files.iter().zip(texts) {
        let new = match text {
            None => None,
            Some(Ok(text)) => {
                let new = vari_core::metadata::require_extra(&text, extra);
                if new.is_none() {
                    as_listed.push(listed.file.version().clone());
                }
                new
            }
            Some(Err(e)) => {
                context.log_once(
                    tracing::Level::WARN,
                    format!(
                        "{}: cannot read its METADATA ({e}); served as listed, without the \
                         requirements of extra {extra}",
                        listed.file.filename
                    ),
                );
                None
            }
        };
        out.push(new.map(|text| {
            let metadata = Bytes::from(text.into_bytes());
            let markers = listed
                .markers
                .cloned()
                .unwrap_or_else(VariantMarkerContext::non_variant);
            let job = RewriteJob::new(
                listed.file,
                listed.shown_as,
                Some(metadata.clone()),
                &markers,
            );
            Required { metadata, job }
        }));
    }
    let required = out.iter().filter(|r| r.is_some()).count();
    tracing::info!(
        "{name}: serving {required} wheels with the requirements of extra {extra} (family \
         {family} chooses build {build} for this target)"
    );
    as_listed.sort_by(|a, b| b.cmp(a));
    as_listed.dedup();
    if !as_listed.is_empty() {
        // Releases from before the extra existed can be many: a few and the count.
        let shown: Vec<String> = as_listed.iter().take(3).map(ToString::to_string).collect();
        let more = match as_listed.len() > shown.len() {
            true => format!(", … ({} in all)", as_listed.len()),
            false => String::new(),
        };
        context.log_once(
            tracing::Level::WARN,
            format!(
                "{name}: {}{more} served as listed: nothing in their METADATA is behind extra \
                 {extra}",
                shown.join(", ")
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_family::builtin;

    #[test]
    fn families_with_a_build_by_extra_of_their_own_name_are_served_so() {
        let catalog = builtin();
        for name in ["jax", "tensorflow"] {
            assert!(serves_extra(catalog.family(name).unwrap()), "{name}");
        }
        // cupy's builds have names of their own; torch's extras live on AMD's index.
        for name in ["cupy", "onnxruntime", "torch"] {
            assert!(!serves_extra(catalog.family(name).unwrap()), "{name}");
        }
    }
}
