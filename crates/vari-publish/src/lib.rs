//! # vari-publish
//!
//! Static variant indexes: [`build`] turns a directory of wheels and source distributions into a
//! simple index that any web server, object store or CDN can host, and [`validate`] checks that
//! such an index keeps its promises to variant-aware installers.
//!
//! A built site has, for every project, a PEP 503 HTML page and a PEP 691 JSON page (API 1.1:
//! `versions`, `size`), SHA-256 hashes, `requires-python` from each wheel's `METADATA`, the
//! wheel's `METADATA` as a PEP 658 file with the PEP 714 `data-core-metadata` /
//! `core-metadata` (and the older `dist-info-metadata`) attributes, and for every release with
//! variant wheels a `{name}-{version}-variants.json` combined from the wheels' `variant.json`
//! (PEP 825 "Index-level metadata"; a conflict fails the build, naming both wheels). That file
//! is linked with its hash but without `requires-python` and core metadata, which PEP 825 says
//! are not meaningful for it. Plain pip and uv ignore the variant wheels (they cannot parse their
//! filenames) and install the non-variant wheel.
//!
//! The pages are written by `vari_simple`, the page model the proxy writes its pages with (in
//! the `STATIC_SITE` style: indented JSON, `+` escaped in file links), and [`validate`] reads
//! them back with the reader the index client uses.
//!
//! Builds are incremental (a state file remembers what each unchanged input held, so only new
//! or changed files are opened), deterministic (sorted, no timestamps: two builds of the same
//! inputs are byte-identical), parallel (rayon) and atomic per file (through `vari_fs`).
//! Distribution files are hard-linked into the site (copied where a link cannot be made), copied,
//! or left where they are and linked by URL: [`FilePlacement`].
//!
//! ## Serving the JSON pages
//!
//! A static host cannot negotiate, so both `index.html` and `index.json` are written in each
//! directory; a plain file server answers with HTML, which every installer reads. To give the
//! JSON form (`application/vnd.pypi.simple.v1+json`) to clients that ask for it, let the server
//! pick the index file by the `Accept` header. nginx (`examples/nginx/vari-site.conf`, the file
//! the tests serve a site with):
//!
//! ```nginx
//! # PEP 691: a client that accepts `application/vnd.pypi.simple.v1+json` gets the JSON page, any
//! # other client the HTML page (both are in every directory of `simple/`).
//! map $http_accept $vari_simple_index {
//!     default                                     index.html;
//!     "~application/vnd\.pypi\.simple\.v1\+json"  index.json;
//! }
//!
//! server {
//!     listen 8080;
//!     root /srv/site;
//!
//!     # The site's files by extension: wheels and zip sdists, gzip sdists, PEP 658 `.metadata`,
//!     # `*-variants.json` (PEP 825), the HTML pages.
//!     types {
//!         text/html          html;
//!         application/json   json;
//!         application/zip    whl zip;
//!         application/gzip   gz;
//!         text/plain         metadata;
//!     }
//!     default_type application/octet-stream;
//!     charset utf-8;
//!     charset_types text/html text/plain application/json;
//!
//!     location /simple/ {
//!         index $vari_simple_index;
//!         add_header Vary Accept;
//!     }
//!     location ~ ^/simple/(.+/)?index\.json$ {
//!         types { }
//!         default_type application/vnd.pypi.simple.v1+json;
//!         add_header Vary Accept;
//!     }
//!     # The build state and temporary files of an update in progress are not for clients.
//!     location ~ /\. {
//!         return 404;
//!     }
//! }
//! ```
//!
//! Caddy:
//!
//! ```caddy
//! example.com {
//!     root * /srv/site
//!     @simple_json {
//!         path_regexp ^/simple/(.*/)?$
//!         header Accept *application/vnd.pypi.simple.v1+json*
//!     }
//!     handle @simple_json {
//!         rewrite * {path}index.json
//!         header Content-Type application/vnd.pypi.simple.v1+json
//!         header Vary Accept
//!     }
//!     file_server
//! }
//! ```
//!
//! Both serve JSON whenever the client lists it at all (pip and uv list it first); they do not
//! weigh `q` values.
//!
//! ## Publishing: directories and object stores
//!
//! [`build`] writes to a [`Destination`]: a directory, or an object store prefix
//! (`s3://BUCKET/PREFIX`, `gs://…`, `az://…`, an http(s) WebDAV URL; [`Destination::parse`] reads
//! what follows `-o`). Every destination is a [`SiteStore`], and every site is written by the
//! one [`publish()`] step, in one order: immutable files (distributions, `*.metadata`,
//! `*-variants.json`) first and in parallel, then project pages, then the root pages, then the
//! removal of what the site no longer has, so a client reading during an update never sees a
//! page pointing at a missing file. Object stores get each object's `Content-Type`
//! ([`content_type`]) and only changed objects are uploaded (the build state remembers each
//! object's SHA-256 and entity tag, [`Stamp`]). A front-end that gathers distributions itself
//! (a mirror) puts them in a directory and calls [`build`] with its [`Destination`]; one that
//! renders its own pages makes a [`SitePlan`] and calls [`publish()`] on
//! [`Destination::open`]'s store.
//!
//! ## What it leaves to others
//!
//! Reading wheels is `vari-wheel`'s; the format rules (filenames, combining, writing
//! `variants.json`) are `vari-core`'s; fetching a remote index is `vari-client`'s
//! ([`HttpSite`] uses it; validation takes any [`SiteReader`]); serving is a web server's.
//!
//! ```
//! let input = tempfile::tempdir()?;
//! let site = tempfile::tempdir()?;
//! vari_publish::build(&vari_publish::BuildOptions::new(input.path(), site.path()))?;
//! let report = vari_publish::validate(&vari_publish::LocalSite::new(site.path())?)?;
//! assert!(report.problems.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod build;
mod dist;
mod error;
mod inputs;
pub mod mirror;
mod place;
mod publish;
mod site;
mod state;
mod validate;

pub use build::{build, BuildOptions, BuildStats, NoProgress, Progress};
pub use error::BuildError;
pub use inputs::Skipped;
pub use place::FilePlacement;
pub use publish::{
    content_type, publish, Body, Destination, DestinationError, DirectoryStore, Done, ObjectSite,
    PublishStats, Put, SiteFile, SitePlan, SiteStore, Stamp, StampJournal, Stamps,
};
pub use validate::{
    validate, validate_site, validate_with, FetchError, HtmlPage, HttpSite, LocalSite, Problem,
    Severity, SiteReader, ValidateError, ValidateOptions, ValidationReport,
};

/// Entry points for the fuzz targets (`fuzz/`); not a stable API.
#[doc(hidden)]
pub mod fuzzing {
    /// Parses a build state file as `index build` does: `Ok(None)` for one that is ignored,
    /// `Ok(Some(outputs))` for one that is trusted (the site files it lists), `Err(key)` for one
    /// refused.
    pub fn parse_state(bytes: &[u8]) -> Result<Option<Vec<String>>, String> {
        match crate::state::parse(bytes) {
            Ok(None) => Ok(None),
            Ok(Some(state)) => Ok(Some(state.outputs.into_iter().collect())),
            Err(problem) => Err(format!("{}: {}", problem.key, problem.problem)),
        }
    }
}
