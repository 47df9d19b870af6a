//! # vari-client
//!
//! The package index client: it fetches and parses what indexes say, and never chooses
//! (choosing is `vari-select`'s job).
//!
//! - **Pages**: PEP 691 JSON by content negotiation, PEP 503 HTML otherwise; per file its
//!   hashes, `requires-python`, yank status (PEP 592), core-metadata availability (PEP 658 and
//!   PEP 714, both spellings), size and upload time (PEP 700); wheel names parsed with
//!   `vari_core::filename`; the `{name}-{version}-variants.json` links per version (PEP 825).
//!   See [`IndexClient::project`] and [`Project`].
//! - **Sources**: several indexes ([`IndexStrategy`]: the first index that has the project, or
//!   all merged) and find-links directories and pages ([`FindLinks`]).
//! - **Variant metadata** of a version ([`IndexClient::variant_metadata`]): the
//!   `variants.json`, else one wheel per label read with HTTP range requests, as data for the
//!   selector ([`VersionVariants`]).
//! - **Core metadata** ([`IndexClient::core_metadata`]): PEP 658 `.metadata`, else a range
//!   read of the wheel's `METADATA`; the raw text (parsing `Requires-Dist` is the selector's).
//! - **Files as they are** ([`IndexClient::fetch`], [`IndexClient::sha256`] while streaming,
//!   [`IndexClient::wheel_member`] with range requests), for checking an index.
//! - **Serving again** (the proxy): the sources' project list ([`IndexClient::project_names`]),
//!   a file streamed as it arrives ([`IndexClient::open_file`]), and whether a URL would be
//!   sent credentials ([`IndexClient::sends_credentials`]).
//! - **Downloads** ([`IndexClient::download`]): streamed through `vari_fs::AtomicFile`, hash
//!   checked while streaming, nothing left behind on failure.
//! - **HTTP**: rustls, connect and read time limits, retries with exponential backoff on 5xx
//!   and failed connections, bounded parallelism, credentials from URLs and netrc (sent only
//!   to their host, never printed), an on-disk cache driven by `http-cache-semantics` with
//!   offline and refresh modes ([`CacheMode`]).
//!
//! What it leaves to others: which version and file to pick, marker evaluation, and the
//! rendering of warnings (library messages carry data; front-ends phrase them).

mod auth;
mod client;
mod download;
mod error;
mod find_links;
mod http;
mod limits;
mod name;
mod range;
mod raw;
mod settings;
mod simple;
mod variants;
mod zip_index;

pub use auth::{NetrcError, NetrcSource};
pub use client::IndexClient;
pub use client::{FileStream, ProjectList};
pub use download::{Downloaded, Progress};
pub use error::{ClientError, HashMismatch};
pub use limits::{
    CeilingNames, InvalidLimit, Limits, HTTP_DEADLINE_ENV, MAX_METADATA_BYTES_ENV,
    MAX_PAGE_BYTES_ENV, MAX_VARIANTS_JSON_BYTES_ENV,
};
pub use name::{InvalidProjectName, ProjectName};
pub use raw::FetchedBody;
pub use settings::{
    CacheMode, ClientSettings, CredentialsSlot, FindLinks, IndexStrategy, IndexUrl, InvalidUrl,
};
pub use simple::{
    CoreMetadata, FileKind, FileSource, Hashes, IndexFile, PageError, PageFormat, PageWarning,
    Project, Yanked,
};
pub use variants::{
    DescribedVariants, MetadataOrigin, UnusableReason, UnusableVariants, VersionVariants,
};
