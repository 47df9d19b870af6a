//! What uv 0.13 does with a release's variant metadata: the one model of uv's narrower
//! variant support, used by `metadata validate --for uv`, `index validate --for uv` and
//! `metadata convert --for uv` (`docs/reference/providers-schema.md` lists the facts and their source).
//!
//! uv 0.13.2–0.13.9 select variants natively (`--preview-features wheel-variants`) with four
//! vendored providers ([`KNOWN_PROVIDERS`] entries with `vendored_by_uv`). Measured against
//! uv 0.13.8 and 0.13.9 (`bench/uv_parity.sh`):
//! - it reads every `*-variants.json` in the PEP 825/850 wire form and fails the install
//!   ("Unknown variant metadata schema") on the 0.0.x drafts' keys, and on `enable-if`;
//! - it uses a provider only when it has exactly one requirement, naming the vendored package
//!   with a specifier that admits the vendored version, and the vendored `plugin-api` (or,
//!   for the providers whose entry point is derived from the name, none); `static-properties`
//!   providers are used as written; other providers are skipped, and so are `optional` ones
//!   and `builtin` ones (uv has no built-in provider names);
//! - a namespace whose provider is skipped counts as unsupported, so variants using it are
//!   never chosen (with no providers at all, PEP 825 0.1.x alone, only the null variant is);
//! - `Requires-Dist` markers naming variant variables fail to parse.
//!
//! [`UvView::compare`] then ranks the release with vari's own selection twice for each target
//! the release was built for (a machine supporting exactly one variant's properties): once as
//! vari does, once with uv's unsupported namespaces removed from the target.

use std::collections::BTreeSet;
use std::str::FromStr;

use pep440_rs::Version;
use pep508_rs::VersionOrUrl;

use crate::markers::TargetEnvironment;
use crate::metadata::{
    known_provider, parse_requirement, ProviderInfo, ProviderKind, SchemaGeneration,
    VariantMetadata, KNOWN_PROVIDERS,
};
use crate::names::{Namespace, VariantLabel};
use crate::ordering::{rank_labels, SelectionOptions};
use crate::profile::{FeatureSupport, NamespaceSupport, Profile};

/// The uv releases this model describes.
pub const UV_VERSIONS: &str = "uv 0.13";

/// What uv makes of one release's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UvView {
    /// Why uv fails to read the metadata at all (the install fails), if it does.
    pub rejected: Option<String>,
    /// Namespaces uv can select on.
    pub usable: BTreeSet<Namespace>,
    /// Why each other namespace is unsupported in uv, one sentence each (`providers.amd: …`).
    pub skipped: Vec<String>,
}

/// One target on which uv and vari choose differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceDifference {
    /// The variant whose properties the target supports (the build made for it).
    pub target: VariantLabel,
    /// What vari installs there.
    pub vari: Option<VariantLabel>,
    /// What uv installs there (`None`: uv fails, or nothing is compatible).
    pub uv: Option<VariantLabel>,
}

impl UvView {
    /// What uv 0.13 makes of `meta`.
    ///
    /// ```
    /// use vari_core::metadata::{read_json, SourceKind};
    /// use vari_core::uv::UvView;
    /// let meta = read_json(r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/850/v0.2.0.json",
    ///     "default-priorities": {"namespace": ["nvidia", "amd"]},
    ///     "providers": {"nvidia": {"requires": ["nvidia-variant-provider>=0.0.2"],
    ///                              "plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin"},
    ///                   "amd": {"requires": ["amd-variant-provider"]}},
    ///     "variants": {"null": {}}}"#, SourceKind::IndexFile).unwrap();
    /// let view = UvView::of(&meta);
    /// assert!(view.rejected.is_none());
    /// assert!(view.usable.is_empty());
    /// // nvidia's declaration names a version uv does not vendor; amd has no provider in uv.
    /// assert!(view.skipped.iter().any(|s| s.contains("vendors nvidia-variant-provider 0.0.1")));
    /// assert!(view.skipped.iter().any(|s| s.starts_with("providers.amd")));
    /// ```
    pub fn of(meta: &VariantMetadata) -> Self {
        let mut view = UvView {
            rejected: None,
            usable: BTreeSet::new(),
            skipped: Vec::new(),
        };
        if matches!(
            meta.generation,
            SchemaGeneration::V0_0_2 | SchemaGeneration::V0_0_3
        ) {
            view.rejected = Some(format!(
                "schema {} ({}): {UV_VERSIONS} reads only PEP 825 (0.1.x) and PEP 850 (0.2.x) \
                 metadata and fails with \"Unknown variant metadata schema\"",
                meta.generation,
                meta.schema_url.as_deref().unwrap_or("no $schema")
            ));
            return view;
        }
        if let Some((ns, _)) = meta.providers.iter().find(|(_, p)| p.enable_if.is_some()) {
            view.rejected = Some(format!(
                "providers.{ns}.enable-if: {UV_VERSIONS} reads PEP 850's providers schema, which \
                 has no enable-if, and fails to read the file"
            ));
            return view;
        }
        if meta.generation == SchemaGeneration::V0_1 {
            view.skipped.push(format!(
                "no providers (schema 0.1.x): {UV_VERSIONS} supports no namespace and installs \
                 the null variant"
            ));
        }
        for (ns, provider) in &meta.providers {
            match skip_reason(ns, provider) {
                None => {
                    view.usable.insert(ns.clone());
                }
                Some(why) => view.skipped.push(format!("providers.{ns}: {why}")),
            }
        }
        let abi_used = meta
            .variants
            .values()
            .any(|v| v.keys().any(Namespace::is_abi_dependency));
        if abi_used {
            view.skipped.push(format!(
                "abi_dependency: {UV_VERSIONS} does not evaluate ABI dependencies, so variants \
                 declaring them are never chosen"
            ));
        }
        view
    }

    /// Why uv does not install the release as intended, one sentence each: the file rejected,
    /// each skipped namespace, and each target that gets another build from uv than from vari.
    /// Empty when uv installs it as intended.
    pub fn reasons(&self, differences: &[ChoiceDifference]) -> Vec<String> {
        let label =
            |l: &Option<VariantLabel>| l.as_ref().map_or("nothing".to_owned(), ToString::to_string);
        let mut out: Vec<String> = self.rejected.iter().cloned().collect();
        if !differences.is_empty() || self.rejected.is_some() {
            out.extend(self.skipped.iter().cloned());
        }
        out.extend(differences.iter().map(|d| {
            let uv = match self.rejected {
                Some(_) => "fails".to_owned(),
                None => label(&d.uv),
            };
            format!(
                "a target built for {}: vari installs {}, uv {uv}",
                d.target,
                label(&d.vari)
            )
        }));
        out
    }

    /// [`Self::compare`] for CPython 3.12 on Linux x86-64 (the platform `enable-if` markers
    /// are evaluated for; uv's own rules do not depend on it).
    pub fn compare_on_linux(&self, meta: &VariantMetadata) -> Vec<ChoiceDifference> {
        let platform = crate::Platform {
            system: Some("Linux".into()),
            machine: Some("x86_64".into()),
            libc: None,
        };
        match TargetEnvironment::from_platform(Some(&platform), "3.12") {
            Ok(env) => self.compare(meta, &env),
            Err(_) => Vec::new(),
        }
    }

    /// Whether uv installs the release as vari does on every target it was built for.
    pub fn installs_as_intended(&self, differences: &[ChoiceDifference]) -> bool {
        self.rejected.is_none() && differences.is_empty()
    }

    /// `profile` as uv sees it: only the namespaces uv can select on.
    pub fn restrict(&self, profile: &Profile) -> Profile {
        let mut restricted = profile.clone();
        restricted
            .namespaces
            .retain(|ns| self.usable.contains(&ns.namespace));
        restricted
    }

    /// The targets on which uv's choice differs from vari's: for each non-null variant, a
    /// machine supporting exactly its properties, ranked by vari's selection as is and with
    /// uv's restrictions ([`Self::restrict`]; no choice at all when uv rejects the file).
    ///
    /// `env` is the target's marker environment (for `enable-if`).
    pub fn compare(
        &self,
        meta: &VariantMetadata,
        env: &TargetEnvironment,
    ) -> Vec<ChoiceDifference> {
        let options = SelectionOptions::default();
        let mut out = Vec::new();
        for (label, properties) in &meta.variants {
            if properties.is_empty() {
                continue;
            }
            let profile = Profile {
                namespaces: properties
                    .iter()
                    .map(|(ns, features)| NamespaceSupport {
                        namespace: ns.clone(),
                        source: None,
                        features: features
                            .iter()
                            .map(|(f, values)| FeatureSupport {
                                name: f.clone(),
                                values: values.iter().cloned().collect(),
                                multi_value: values.len() > 1,
                            })
                            .collect(),
                    })
                    .collect(),
                ..Profile::default()
            };
            let best = |p: &Profile| {
                rank_labels(meta, p, env, &options)
                    .first()
                    .map(|l| (*l).clone())
            };
            let vari = best(&profile);
            let uv = match self.rejected {
                Some(_) => None,
                None => best(&self.restrict(&profile)),
            };
            if vari != uv {
                out.push(ChoiceDifference {
                    target: label.clone(),
                    vari,
                    uv,
                });
            }
        }
        out
    }
}

/// Why uv 0.13 skips `provider` of namespace `ns`, or `None` when it uses it.
fn skip_reason(ns: &Namespace, provider: &ProviderInfo) -> Option<String> {
    if provider.optional {
        return Some(format!(
            "optional: {UV_VERSIONS} cannot turn optional providers on"
        ));
    }
    match &provider.kind {
        ProviderKind::AheadOfTime => return None,
        ProviderKind::Builtin(name) => {
            return Some(format!(
                "builtin = \"{name}\": {UV_VERSIONS} has no built-in provider by that name \
                 (declare its vendored plugin instead)"
            ))
        }
        ProviderKind::InstallTime => {}
    }
    let Some(known) = known_provider(ns).filter(|k| k.vendored_by_uv) else {
        let vendored: Vec<&str> = KNOWN_PROVIDERS
            .iter()
            .filter(|k| k.vendored_by_uv)
            .map(|k| k.namespace)
            .collect();
        return Some(format!(
            "{UV_VERSIONS} runs no plugins and vendors providers for {} only",
            vendored.join(", ")
        ));
    };
    let wanted = format!(
        "exactly one requirement on {} admitting {} and plugin-api \"{}\"",
        known.package,
        known.version,
        known.effective_plugin_api()
    );
    let [requirement] = provider.requires.as_slice() else {
        return Some(format!(
            "{} requirements where {UV_VERSIONS} needs {wanted}",
            provider.requires.len()
        ));
    };
    let admits = parse_requirement(requirement).ok().is_some_and(|r| {
        r.name.as_ref() == known.package
            && match &r.version_or_url {
                None => true,
                Some(VersionOrUrl::VersionSpecifier(specifiers)) => {
                    Version::from_str(known.version).is_ok_and(|v| specifiers.contains(&v))
                }
                Some(VersionOrUrl::Url(_)) => false,
            }
    });
    if !admits {
        return Some(format!(
            "requires {requirement:?}, but {UV_VERSIONS} vendors {} {} and needs {wanted}",
            known.package, known.version
        ));
    }
    let api = provider.effective_plugin_api().unwrap_or_default();
    if api != known.effective_plugin_api() {
        return Some(format!(
            "plugin-api \"{api}\", but {UV_VERSIONS} needs \"{}\"",
            known.effective_plugin_api()
        ));
    }
    None
}

/// `meta` rewritten so that uv 0.13 installs it as intended, where it can be: schema 0.2.x
/// under PEP 850's URL (the caller writes it with
/// [`write_json`](crate::metadata::write_json)), `enable-if` and `optional` dropped, and each
/// namespace with a vendored provider declared with that provider. Returns the warnings for
/// what cannot be expressed for uv.
///
/// ```
/// use vari_core::metadata::{read_json, SourceKind};
/// use vari_core::uv::{for_uv, UvView};
/// use vari_core::Namespace;
/// let meta = read_json(r#"{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
///     "default-priorities": {"namespace": ["nvidia", "amd"]},
///     "variants": {"null": {}, "cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}},
///                  "rocm": {"amd": {"rocm_version": ["6.4"]}}}}"#, SourceKind::IndexFile).unwrap();
/// let (converted, warnings) = for_uv(&meta);
/// let view = UvView::of(&converted);
/// assert!(view.usable.contains(&"nvidia".parse::<Namespace>().unwrap()));
/// assert!(warnings.iter().any(|w| w.contains("amd")));
/// ```
pub fn for_uv(meta: &VariantMetadata) -> (VariantMetadata, Vec<String>) {
    let mut out = meta.clone();
    let mut warnings = Vec::new();
    out.generation = SchemaGeneration::V0_2;
    out.schema_url = Some(SchemaGeneration::V0_2.url().to_owned());
    for ns in &meta.priorities.namespace {
        if ns.is_abi_dependency() {
            continue;
        }
        let existing = meta.providers.get(ns);
        let vendored = known_provider(ns).filter(|k| k.vendored_by_uv);
        let mut provider = match (existing, vendored) {
            // Static properties need no plugin: uv reads them as written.
            (Some(p), _) if p.kind == ProviderKind::AheadOfTime => p.clone(),
            (_, Some(k)) => k.provider_info(),
            (Some(p), None) => p.clone(),
            (None, None) => match known_provider(ns) {
                Some(k) => k.provider_info(),
                None => continue,
            },
        };
        let usable_in_uv = vendored.is_some() || provider.kind == ProviderKind::AheadOfTime;
        if let Some(marker) = provider
            .enable_if
            .take()
            .or_else(|| existing.and_then(|p| p.enable_if.clone()))
        {
            warnings.push(format!(
                "providers.{ns}: dropped enable-if ({}); uv cannot read it, so the provider is \
                 asked on every platform",
                marker.as_str()
            ));
        }
        if existing.is_some_and(|p| p.optional) && usable_in_uv {
            provider.optional = false;
            warnings.push(format!(
                "providers.{ns}: no longer optional; uv cannot turn optional providers on"
            ));
        }
        if !usable_in_uv {
            warnings.push(format!(
                "namespace {ns}: {UV_VERSIONS} has no provider for it, so uv users never get \
                 its variants (vari's users still do)"
            ));
        }
        out.providers.insert(ns.clone(), provider);
    }
    if meta
        .variants
        .values()
        .any(|v| v.keys().any(Namespace::is_abi_dependency))
    {
        warnings.push(format!(
            "abi_dependency: {UV_VERSIONS} does not evaluate it, so uv users never get the \
             variants that declare it"
        ));
    }
    (out, warnings)
}

#[cfg(test)]
mod tests;
