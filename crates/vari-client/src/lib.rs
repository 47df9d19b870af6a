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
//! - **Trust** (everything an index sends is hostile until checked):
//!   - *where a link may lead*: a remote page's links are followed over http and https only;
//!     `file:` links only on pages the user named as local paths or `file:` URLs; other
//!     schemes never. A link that breaks the rule is skipped with a warning naming the page
//!     and the link. Every page, index or find-links, passes this one rule, so every command
//!     and the proxy inherit it.
//!   - *bounded reading* ([`Limits`]): every body read into memory has a ceiling by kind
//!     (pages and `variants.json` 64 MiB, PEP 658 metadata 16 MiB; counted after decoding
//!     gzip/deflate, so a gzip bomb stops at the ceiling, and a larger `Content-Length` is
//!     refused before reading), every such request an overall deadline (300 s), besides the
//!     30 s read timeout. Raise them with `max-page-bytes`, `max-variants-json-bytes`,
//!     `max-metadata-bytes`, `http-deadline` in vari.toml or `VARI_MAX_PAGE_BYTES`,
//!     `VARI_MAX_VARIANTS_JSON_BYTES`, `VARI_MAX_METADATA_BYTES`, `VARI_HTTP_DEADLINE`
//!     (seconds), which win over any settings. The HTTP cache stores and reads back nothing
//!     over the ceiling. Range reads keep only the bytes asked for, whatever the server sends
//!     (a `206` with an endless body, or the whole file from a server that ignores `Range`).
//!     Downloads stream to disk and are not held in memory; besides the read timeout, a
//!     streamed body (download, proxy pass-through, hashing) must bring at least 1 KiB in
//!     every 60 s (`low-speed-bytes`, `low-speed-seconds`, `VARI_LOW_SPEED_BYTES`,
//!     `VARI_LOW_SPEED_SECONDS`), so a server dripping bytes cannot hold it forever.
//!   - *checked metadata*: a `*-variants.json` whose content does not have the hash its page
//!     lists is unusable ([`UnusableReason::HashMismatch`]), like a wheel with a wrong hash.
//!   - *messages that say what happened*: a body cut off before its `Content-Length`, an
//!     encoding that was not asked for (`br`), a corrupt gzip stream, a ceiling or the deadline
//!     passed: each is an error naming the URL, never an empty page.
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
mod listings;
mod name;
mod range;
mod raw;
mod settings;
mod simple;
mod variants;
mod zip_index;

pub use auth::{NetrcError, NetrcSource};
pub use client::IndexClient;
pub use client::{FileStream, ProjectList, ProjectSource};
pub use download::{Downloaded, Progress};
pub use error::{ClientError, HashMismatch, SizeMismatch};
pub use http::HttpCacheLayout;
pub use limits::{
    CeilingNames, InvalidLimit, Limits, HTTP_DEADLINE_ENV, LOW_SPEED_BYTES_ENV,
    LOW_SPEED_SECONDS_ENV, MAX_METADATA_BYTES_ENV, MAX_PAGE_BYTES_ENV, MAX_UNSIZED_FILE_BYTES_ENV,
    MAX_VARIANTS_JSON_BYTES_ENV, UNSIZED_FILE_DEFAULT,
};
pub use listings::Listings;
pub use name::{InvalidProjectName, ProjectName};
pub use raw::FetchedBody;
pub use settings::{
    CacheMode, ClientSettings, CredentialsSlot, FindLinks, IndexStrategy, IndexUrl, InvalidUrl,
};
pub use simple::{
    CoreMetadata, FileKind, FileSource, HashAlgorithm, Hashes, IndexFile, PageError, PageFormat,
    PageWarning, Project, Yanked,
};
pub use variants::{
    DescribedVariants, MetadataOrigin, UnusableReason, UnusableVariants, VersionVariants,
};
