//! One installation through the proxy: the proxy started in front of the upstream sources (on
//! a stable port, [`crate::stable_port`]), the installer run against it with its output going
//! straight to the terminal, the proxy stopped, and which variant each package was installed
//! as, and why.
//!
//! What counts as "installed from a variant choice": a variant wheel the proxy presented whose
//! distribution is in the environment afterwards with that label in its `variant.json`, and
//! whose `.dist-info` directory the installer wrote in this run ([`crate::changes`]): a
//! distribution that was already there is not reported again, whether the installer found it
//! satisfied or failed and left it; and when the installer fails, nothing is reported as
//! installed.

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use url::Url;
use vari_client::ClientSettings;
use vari_core::project::normalize;
use vari_proxy::{ProxyError, ProxySettings, Served, UpstreamFailure};

use crate::changes::Snapshot;
use crate::installer::InstallRequest;
use crate::list::{list_installed, Installed, InstalledVariant};

/// The prefix of the temporary directories an installation makes (`vari-install-…`): those
/// older than [`vari_fs::stale::STALE_AFTER`] are removed by the next installation.
pub const TEMPORARY_PREFIX: &str = "vari-install-";

/// The page TTL of an installation's proxy when every source is an HTTP index: ten minutes,
/// as long as PyPI lets a client keep its pages.
///
/// The TTL caps the `max-age` the proxy gives the installer's cache (the rest of the
/// upstream's own freshness, whichever ends first: `vari_proxy`'s pages). With the proxy's
/// default of a minute, uv kept the proxy's pages a minute where it keeps PyPI's ten, and every
/// `vari install` more than a minute after the last one had uv revalidate every page: the proxy
/// then read, selected and rendered each of them again (numpy's page lists over 4,000 files),
/// a quarter of a second of CPU for 21 projects where plain uv asked nothing. The proxy of one
/// installation lives only as long as the installer runs, so the TTL's other use (how long a
/// long-running proxy reuses a page in memory) does not arise; and the upstream's freshness
/// still bounds the `max-age`, so uv through vari keeps a page no longer than uv straight at
/// the index would. The URL names the target, the options and the sources
/// ([`crate::stable_port`]), so a changed configuration is never answered from uv's cache.
pub const INSTALL_PAGE_TTL: Duration = Duration::from_secs(600);

/// The page TTL for an installation's proxy over `sources`: [`INSTALL_PAGE_TTL`] when every
/// source is an HTTP(S) index, whose answers say how long they stay fresh; else the proxy's
/// default ([`vari_proxy::DEFAULT_PAGE_TTL`]). A local directory, a `file:` index or a
/// find-links page sets no freshness of its own, and a wheel added to it must show within a
/// minute, as before.
pub fn install_page_ttl(sources: &ClientSettings) -> Duration {
    let http_only = sources.find_links.is_empty()
        && sources
            .indexes
            .iter()
            .all(|index| matches!(index.url().scheme(), "http" | "https"));
    match http_only {
        true => INSTALL_PAGE_TTL,
        false => vari_proxy::DEFAULT_PAGE_TTL,
    }
}

/// What one installation did.
#[derive(Debug)]
pub struct InstallOutcome {
    /// The installer's exit status.
    pub status: ExitStatus,
    /// The packages installed from a variant choice in this run, in the order the proxy
    /// presented them; empty when the installer failed.
    pub installed: Vec<InstalledChoice>,
    /// Distributions the installer left as they were although the proxy chose another variant
    /// of the same version (pip's "Requirement already satisfied").
    pub kept: Vec<KeptDistribution>,
    /// Distributions the installer wrote in this run as another variant (or as the plain
    /// wheel) than the proxy presented for their version: they came from the installer's own
    /// cache, filled by an earlier run when the upstream offered other files (uv reuses a
    /// cached wheel by index URL and file name without comparing hashes, and the proxy shows
    /// every variant under the plain name). Only uv can do this; pip checks the listed hash.
    pub stale: Vec<KeptDistribution>,
    /// Everything the proxy presented and served.
    pub journal: Vec<Served>,
    /// The distributions the installer wrote in this run (normalised names), variants or not:
    /// none of them was "already satisfied"; empty when the installer failed.
    pub written: Vec<String>,
    /// The upstream sources that failed while the installer asked (each failure once): when
    /// the installer fails, the cause it cannot name.
    pub upstream_failures: Vec<UpstreamFailure>,
    /// The URL the installer was given.
    pub index_url: Url,
}

impl InstallOutcome {
    /// The exit status vari ends with: the installer's, a signal as the shell reports it
    /// (128 + N), else 1.
    pub fn exit_code(&self) -> u8 {
        exit_code(self.status)
    }

    /// The projects the proxy answered for (normalised): the journal says all there is to say
    /// about them, so they are never selected again after the installer ran.
    pub fn asked(&self) -> Vec<&str> {
        let mut asked: Vec<&str> = self.journal.iter().map(|s| s.project.as_str()).collect();
        asked.extend(self.written.iter().map(String::as_str));
        asked.sort_unstable();
        asked.dedup();
        asked
    }
}

fn exit_code(status: ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return u8::try_from(code).unwrap_or(1);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return u8::try_from(128 + signal).unwrap_or(1);
        }
    }
    1
}

/// A package installed from a variant wheel the proxy chose.
#[derive(Debug, Clone)]
pub struct InstalledChoice {
    /// The proxy's record of the choice: project, version, label, why.
    pub served: Served,
    /// The variant as installed (its `variant.json`).
    pub variant: InstalledVariant,
}

/// A distribution already installed as another variant (or as the plain wheel) of the version
/// the proxy chose a variant of: installers compare versions, not variants, and keep it.
#[derive(Debug, Clone)]
pub struct KeptDistribution {
    /// The proxy's choice for the target.
    pub served: Served,
    /// What is installed: its variant, `None` for a plain distribution.
    pub installed: Option<InstalledVariant>,
}

/// Why an installation could not run (the installer failing is an [`InstallOutcome`]).
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The proxy did not start.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// The installer could not be started.
    #[error("cannot run {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The thread waiting for the installer was lost.
    #[error("lost the installer process: {0}")]
    Lost(String),
}

/// Starts the proxy with `settings` (on a stable port when they ask for any loopback port,
/// [`crate::stable_port::start_stable`]), runs `request`'s installer against it (its output
/// inherited, so it streams), stops the proxy, then reads `site_packages` (the target
/// environment's) to report what this run installed as which variant.
pub async fn install(
    settings: ProxySettings,
    request: &InstallRequest,
    site_packages: &[PathBuf],
) -> Result<InstallOutcome, InstallError> {
    // Temporary directories of installations killed before they could clean up.
    vari_fs::stale::remove_stale(
        &std::env::temp_dir(),
        |name| name.starts_with(TEMPORARY_PREFIX),
        vari_fs::stale::STALE_AFTER,
    );
    let proxy = crate::stable_port::start_stable(settings).await?;
    let index_url = proxy.index_url();
    tracing::debug!("proxy listening at {index_url}");
    let mut command = request.command(&index_url);
    tracing::debug!("running {command:?}");
    let program = PathBuf::from(command.get_program());
    // SIGINT and SIGTERM are forwarded to the installer and acted on once it has exited: the
    // process then removes its temporary files and exits 130 or 143 (vari_fs::interrupt's
    // supervised child).
    let before = Snapshot::take(site_packages);
    // Started from this thread, at once; a thread of the blocking pool only waits for it, so
    // the proxy keeps answering meanwhile. (Starting it from that thread made the installer
    // wait until a new thread was first scheduled: tens of milliseconds on a busy machine.)
    let waited = match vari_fs::interrupt::spawn_supervised(&mut command) {
        Ok(child) => tokio::task::spawn_blocking(move || child.wait()).await,
        Err(e) => Ok(Err(e)),
    };
    let journal = proxy.journal();
    let upstream_failures = proxy.upstream_failures();
    proxy.shutdown().await;
    let status = waited
        .map_err(|e| InstallError::Lost(e.to_string()))?
        .map_err(|source| InstallError::Spawn { program, source })?;
    let (installed, kept, stale, written) = match status.success() {
        true => {
            let written = before.written_since(&Snapshot::take(site_packages));
            let listing = list_installed(site_packages);
            let names = listing
                .distributions
                .iter()
                .filter(|d| written.contains(&d.metadata_dir))
                .map(|d| d.normalized_name())
                .collect();
            let (installed, kept, stale) = compare(&journal, &listing, &written);
            (installed, kept, stale, names)
        }
        // A failed installer installed nothing (pip and uv roll back); whatever is there was
        // there before, and saying it was kept would be a guess.
        false => (Vec::new(), Vec::new(), Vec::new(), Vec::new()),
    };
    Ok(InstallOutcome {
        status,
        installed,
        kept,
        stale,
        written,
        journal,
        upstream_failures,
        index_url,
    })
}

/// The journal's variant choices against what the environment holds afterwards (`listing`),
/// `written` being the `.dist-info` directories the installer wrote: the ones installed now
/// (once per distribution), the versions kept as another variant, and the ones written now as
/// another variant than presented ([`InstallOutcome::stale`]).
fn compare(
    journal: &[Served],
    listing: &Installed,
    written: &[PathBuf],
) -> (
    Vec<InstalledChoice>,
    Vec<KeptDistribution>,
    Vec<KeptDistribution>,
) {
    let mut installed: Vec<InstalledChoice> = Vec::new();
    let mut kept: Vec<KeptDistribution> = Vec::new();
    let mut stale: Vec<KeptDistribution> = Vec::new();
    for served in journal {
        let Some(label) = served.label.as_deref() else {
            continue;
        };
        let Some(dist) = listing.distributions.iter().find(|d| {
            normalize(&d.name) == normalize(&served.project) && d.version == served.version
        }) else {
            continue;
        };
        let now = written.contains(&dist.metadata_dir);
        let reported = installed
            .iter()
            .any(|c| c.served.project == served.project && c.served.version == served.version);
        match dist.variant.as_ref().filter(|v| v.label.as_str() == label) {
            // A version presented for several tag sets with the same label: reported once.
            Some(variant) if now && !reported => installed.push(InstalledChoice {
                served: served.clone(),
                variant: variant.clone(),
            }),
            Some(_) => {}
            None if !now => kept.push(KeptDistribution {
                served: served.clone(),
                installed: dist.variant.clone(),
            }),
            None => stale.push(KeptDistribution {
                served: served.clone(),
                installed: dist.variant.clone(),
            }),
        }
    }
    // A version presented for several tag sets counts as kept (or stale) only when none of
    // its choices is what is installed.
    let presented = |k: &KeptDistribution| {
        journal.iter().any(|s| {
            normalize(&s.project) == normalize(&k.served.project)
                && s.version == k.served.version
                && s.label.as_deref() == k.installed.as_ref().map(|v| v.label.as_str())
        })
    };
    for list in [&mut kept, &mut stale] {
        list.retain(|k| !presented(k));
        list.dedup_by(|a, b| {
            a.served.project == b.served.project && a.served.version == b.served.version
        });
    }
    (installed, kept, stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_kept_longer_only_when_every_source_is_an_http_index() {
        let index = |url: &str| vari_client::IndexUrl::parse(url).unwrap();
        let mut sources = ClientSettings {
            indexes: vec![
                index("https://pypi.org/simple/"),
                index("http://mirror.test/"),
            ],
            ..ClientSettings::default()
        };
        assert_eq!(install_page_ttl(&sources), INSTALL_PAGE_TTL);
        sources.indexes.push(index("file:///srv/wheels/simple/"));
        assert_eq!(install_page_ttl(&sources), vari_proxy::DEFAULT_PAGE_TTL);
        sources.indexes.pop();
        sources
            .find_links
            .push(vari_client::FindLinks::Directory("/srv/wheels".into()));
        assert_eq!(install_page_ttl(&sources), vari_proxy::DEFAULT_PAGE_TTL);
    }

    fn served(version: &str, label: &str, downloaded: bool) -> Served {
        Served {
            project: "demo".into(),
            version: version.into(),
            shown_as: format!("demo-{version}-py3-none-any.whl"),
            original: format!("demo-{version}-py3-none-any-{label}.whl"),
            label: Some(label.into()),
            because: vari_select::ShownBecause::Variant {
                because: vari_select::ChosenBecause::BestVariant { selectable: 1 },
                needs: Vec::new(),
            },
            why: "best".into(),
            downloaded,
        }
    }

    /// A site-packages directory holding `demo 1.0` as `label` (`None`: plain).
    fn site(label: Option<&str>) -> tempfile::TempDir {
        let site = tempfile::tempdir().unwrap();
        let dist_info = site.path().join("Demo-1.0.dist-info");
        std::fs::create_dir(&dist_info).unwrap();
        std::fs::write(dist_info.join("METADATA"), "Name: Demo\nVersion: 1.0\n").unwrap();
        if let Some(label) = label {
            let json = format!(
                r#"{{"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
                "default-priorities": {{"namespace": ["x86_64"]}},
                "variants": {{"{label}": {{"x86_64": {{"level": ["v3"]}}}}}}}}"#
            );
            std::fs::write(dist_info.join("variant.json"), json).unwrap();
        }
        site
    }

    #[test]
    fn installed_now_kept_as_another_variant_or_neither() {
        let v3 = site(Some("v3"));
        let sites = [v3.path().to_path_buf()];
        let now = [v3.path().join("Demo-1.0.dist-info")];
        // Written in this run with that label: reported, with its properties, once however
        // many tag sets presented it.
        let twice = [served("1.0", "v3", false), served("1.0", "v3", true)];
        let (installed, kept, _) = compare(&twice, &list_installed(&sites), &now);
        assert_eq!(installed.len(), 1);
        assert_eq!(
            installed[0].variant.property_list()[0].to_string(),
            "x86_64 :: level :: v3"
        );
        assert!(kept.is_empty());
        // Downloaded through the proxy but not written in this run (the installer failed, or
        // kept what was there): not reported as installed.
        let (installed, kept, _) =
            compare(&[served("1.0", "v3", true)], &list_installed(&sites), &[]);
        assert!(installed.is_empty() && kept.is_empty());
        // Presented, not written, and something else is installed: kept.
        let (installed, kept, _) =
            compare(&[served("1.0", "v4", false)], &list_installed(&sites), &[]);
        assert!(installed.is_empty());
        assert_eq!(kept[0].installed.as_ref().unwrap().label.as_str(), "v3");
        // Presented for another tag set with the installed label too: not kept.
        let both = [served("1.0", "v4", false), served("1.0", "v3", false)];
        assert!(compare(&both, &list_installed(&sites), &[]).1.is_empty());
        // Another version's choice says nothing about the installed one.
        assert_eq!(
            compare(&[served("2.0", "v4", true)], &list_installed(&sites), &now)
                .0
                .len(),
            0
        );
        let plain = site(None);
        let (installed, kept, _) = compare(
            &[served("1.0", "v3", false)],
            &list_installed(&[plain.path().into()]),
            &[],
        );
        assert!(installed.is_empty());
        assert!(kept[0].installed.is_none());
        // Written now as another variant than presented: from the installer's cache.
        let (installed, kept, stale) =
            compare(&[served("1.0", "v4", true)], &list_installed(&sites), &now);
        assert!(installed.is_empty() && kept.is_empty());
        assert_eq!(stale[0].installed.as_ref().unwrap().label.as_str(), "v3");
        assert_eq!(stale[0].served.label.as_deref(), Some("v4"));
    }
}
