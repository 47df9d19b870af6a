//! # vari-proxy
//!
//! The local variant-aware simple index. Installers that do not understand variants (released
//! pip and uv, and poetry, pdm or tox through them) point their index URL at it and get, per
//! version and tag set, only the wheel vari chose for the target, under an ordinary wheel name,
//! with its variant markers already evaluated.
//!
//! - **Routes**: `/simple/` (every project the upstream indexes' root pages and the find-links
//!   sources list) and `/simple/{project}/` (non-normalised names redirected, as PyPI does), in
//!   PEP 691 JSON or PEP 503 HTML by content negotiation (q-values; HTML by default); PEP 658/714
//!   metadata at `{file}.metadata` (advertised under both names) for every wheel listed, the
//!   upstream's own or, where it has none, read from the wheel with range requests and kept
//!   on disk (so that installers never download a wheel to read its metadata); files at
//!   `/files/{project}/{key}/{name}` with range requests (206, 416) and HEAD.
//! - **URLs name the target**: all of the above is served under `/t/{fingerprint}/`, a short
//!   hash of what decides the choices (hardware profile, marker environment, wheel tags,
//!   selection options, upstream sources; [`fingerprint_of`] gives it before the proxy
//!   starts), and [`RunningProxy::index_url`] is that URL; files are always linked
//!   under it. uv keeps registry wheels by index URL and file name without comparing hashes,
//!   so one URL for every target would let a proxy restarted for another target on the same
//!   port have uv install the previous target's variant from its cache. The plain `/simple/`
//!   stays as an alias ([`RunningProxy::alias_url`]): a URL that survives a target change, for
//!   a `pip.conf` (pip checks hashes), not for uv. Another fingerprint's URLs get 404.
//! - **Machine classes**: one proxy can serve a heterogeneous cluster
//!   ([`ProxySettings::for_classes`]): each [`TargetClass`] under `/t/{name}.{fingerprint}/`
//!   (its fingerprint as a single target's; the URL for uv, which changes when the class's
//!   facts do) and `/t/{name}/` (the stable alias, for pip and a `pip.conf`, as `/simple/` is
//!   for a single target), with its own pages and journal, and one client (one HTTP cache), one
//!   cache of METADATA texts, one cache of rewritten wheels (keyed by the marker context, so a
//!   class never gets another's copy) and one set of page-build threads between them. The
//!   root `/` lists the classes (text, or JSON for `Accept: application/json`), and
//!   `/t/{name}/` redirects to the class's own index URL (what a provisioning script gives
//!   uv); another name,
//!   the plain `/simple/`, and an old fingerprint of a class get 404 naming the classes served
//!   or the class's current URL. Names follow a small grammar ([`ClassName`]) checked before
//!   they name a path.
//! - **A union of targets** ([`ProxySettings::for_union`]): one index for a resolver that
//!   must pin versions every target can install (`vari lock`'s one `uv pip compile` for
//!   targets alike but for their hardware): per version and tag set, the upstream file the
//!   first target that is shown one there is shown, its PEP 658 metadata stating what each
//!   target's own variant asks for (variant markers evaluated per target, identical entries
//!   once), a version listed when any target is shown a file of it, and
//!   [`RunningProxy::union_view`] saying what each target was shown, so that the caller can
//!   verify the resolution target by target. Its URLs have a fingerprint of their own.
//! - **What a page shows** is [`vari_select::present`]'s decision for the target: the chosen
//!   variant wheel of each tag set under its name without the label, the other variants and the
//!   non-variant wheel it replaces hidden, the non-variant wheel kept when no variant fits, a
//!   version with nothing that fits hidden (and logged with what hardware would fit). Projects
//!   without variants pass through untouched: every file, its name, its hashes.
//! - **Build families** (issue 35; [`ProxySettings::families`]): the page of a family whose
//!   builds are published under their own names and whose name is not itself a build (`cupy`,
//!   `faiss`, `cudf`) lists one synthesized *selector wheel*, `cupy-{V}-py3-none-any.whl`,
//!   holding only its `.dist-info` and requiring the build `vari_family::choose` takes for the
//!   target (`cupy-cuda12x==14.2.0`); plain `pip install cupy` installs it and, as its
//!   dependency, the build. The environment holds one copy of the files (the build's), a
//!   package requiring `cupy-cuda12x` by name is satisfied by the same build, and the selector
//!   is deterministic (same choice, same bytes and hash). Installers refuse a wheel named for
//!   another project on a page, so listing the build's files under `cupy` cannot work; the
//!   installer, not vari, reads the command line and other packages' dependencies, so only the
//!   index can answer for the family's name. A family whose chosen build lives on an index of
//!   its own (`torch` → PyTorch's `whl/cu128`) is served that index's files of the name, only
//!   the versions carrying the build's local tag (`2.9.0+cu128`), presented for the target;
//!   that index is asked for the family's name and nothing else, and an upstream the user named
//!   that is one of the family's indexes is served as listed. A family chosen by extra
//!   (`jax` → `jax[cuda12]`) is served its own wheels with the extra's requirements made plain
//!   ones (rewritten copies, as for variant markers below; `family_extra`). Each member of
//!   a group (torch, torchvision, …) takes the line the whole group offers for the target
//!   (`vari_select::choose_across_group`), so pages read one at a time agree. A union is not
//!   served through the catalog yet.
//! - **Variant markers**: a chosen wheel whose `Requires-Dist` uses variant markers is served as
//!   a rewritten copy (`vari_wheel::replace_metadata`: only METADATA and RECORD change), cached
//!   on disk by the upstream digest and the marker context, built once however many requests
//!   ask, with its own hash; its PEP 658 metadata is served rewritten. Building the copy means
//!   downloading the wheel, so it starts when an installer first reads the wheel's metadata
//!   (it is about to choose it) or asks for the wheel, not when a page is built; until the copy
//!   exists the page lists it without a hash rather than a wrong one, then with its SHA-256. Wheels without variant markers are the original bytes
//!   with the original hashes: a redirect to an upstream that needs no credentials (pip and uv
//!   name a download after the link, not the final URL), else read from disk (`file:`
//!   sources) or streamed through.
//! - **Caching**: upstream pages and `variants.json` come through `vari-client` (its HTTP
//!   cache); a presented page is rendered (by `vari_simple`, as `index build` renders its
//!   pages, in the `SERVED` style) once per format and kept in memory for
//!   [`ProxySettings::page_ttl`]; concurrent requests for a page wait for one build; a page
//!   that could not be built answers with the same error for [`ProxySettings::failure_ttl`]
//!   (installers retry a 502 at once, and each retry would reach the upstream again).
//! - **Safety**: it listens on loopback unless remote access is allowed explicitly
//!   ([`ProxyError::RemoteBind`]), and then serves only requests whose `Host` names
//!   `localhost`, a loopback address or its own address (others get 421), so that a web page
//!   cannot reach it through DNS rebinding.
//! - **As a server**: at most [`ProxySettings::max_connections`] connections (and three
//!   quarters of the open-file limit), the one idle the longest closed to make room; request
//!   heads and idle keep-alive connections time out after [`ProxySettings::header_timeout`];
//!   failed accepts (too many open files) back off from 10 ms to 1 s and are logged once per
//!   10 s with a count, as are refused `Host`s. [`server_runtime`] bounds the threads (and so
//!   the address space their stacks and allocator heaps reserve); page builds run on a few
//!   threads of their own, however many are under way.
//! - **Reporting**: each choice is logged (`tracing`, info) with its reason — for a fallback
//!   (the null variant, or the non-variant wheel) and for a hidden version, which hardware the
//!   variants are built for and why the target lacks it, as `vari select` says
//!   ([`vari_select::NamespaceNeed::describe`]) —, upstream failures as warnings (the request
//!   gets a 502 with the reason on one line); [`RunningProxy::journal`],
//!   [`RunningProxy::hidden_versions`] and [`RunningProxy::upstream_failures`] give the
//!   choices, downloads, hidden versions and upstream failures as data.
//! - **Stopping**: [`RunningProxy::shutdown`], or [`RunningProxy::run_until`] the
//!   [`StopSignals`] (SIGINT, SIGTERM) a front-end listens for before it announces the URL.
//!
//! What it leaves to others: choosing (`vari-select`), fetching and parsing upstream pages
//! (`vari-client`), rewriting wheels (`vari-wheel`), evaluating markers (`vari-core`), running
//! installers and phrasing the journal for people (`vari-install`, the CLI).
//!
//! ```no_run
//! # async fn run(target: vari_select::Target) -> Result<(), vari_proxy::ProxyError> {
//! use vari_client::{ClientSettings, IndexUrl};
//! use vari_proxy::{start, ProxySettings};
//! let upstream = ClientSettings {
//!     indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
//!     ..ClientSettings::default()
//! };
//! let proxy = start(ProxySettings::new(upstream, target)).await?;
//! // … run `uv pip install --index-url {proxy.index_url()} torch` …
//! for served in proxy.journal() {
//!     println!("{} {}: {} ({})", served.project, served.version, served.shown_as, served.why);
//! }
//! proxy.shutdown().await;
//! # Ok(()) }
//! ```

mod builders;
mod cache_layout;
mod class;
mod connections;
mod context;
mod describe;
mod error;
mod family_extra;
mod files;
mod fingerprint;
mod flight;
mod host;
mod journal;
mod metadata_texts;
mod negotiate;
mod pages;
mod range;
mod response;
mod rewrite;
mod root;
mod routes;
mod runtime;
mod selector;
mod server;
mod settings;
mod signals;
mod state;
mod targets;
mod throttle;
mod union;
mod union_view;

pub use cache_layout::{prune_proxy_dir, ProxyCacheLayout};
pub use class::{ClassName, ClassNameError, ClassUrls, TargetClass};
pub use error::ProxyError;
pub use fingerprint::fingerprint_of;
pub use journal::{HiddenVersion, Served, UpstreamFailure};
pub use runtime::{server_runtime, MAX_BLOCKING_THREADS, MAX_WORKER_THREADS, THREAD_STACK_SIZE};
pub use selector::serves_selector;
pub use server::{start, start_first_free, RunningProxy};
pub use settings::{
    ProxySettings, DEFAULT_FAILURE_TTL, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_PAGE_TTL,
};
pub use signals::StopSignals;
pub use union_view::{UnionShown, UnionVersion};
