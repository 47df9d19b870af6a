//! A site under an object store prefix (`object_store`: S3 and compatible stores, Google Cloud
//! Storage, Azure Blob Storage, WebDAV).
//!
//! The prefix is listed once when the site is opened (the first request, so missing credentials
//! or a missing bucket fail before anything is written). An object is uploaded unless the last
//! publish recorded the same SHA-256 and size for it and the listing still shows that size and
//! the entity tag the store gave it then (so an object changed behind vari's back is replaced).
//! Uploads run in parallel ([`MAX_PARALLEL`]); files larger than [`PART_BYTES`] go up in parts,
//! read from disk as they are sent. A distribution's SHA-256 is checked while it is read: a file
//! changed since the build hashed it is not published under the old hash.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path as FsPath;
use std::sync::Arc;

use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions,
    PutPayload, WriteMultipart,
};
use sha2::{Digest, Sha256};
use url::Url;

use super::{aws_profile, content_type, Body, Done, Put, SiteFile, SiteStore, Stamp, Stamps};
use crate::error::BuildError;

/// Uploads (and deletions) in flight at once.
pub(crate) const MAX_PARALLEL: usize = 8;
/// Files up to this size are uploaded in one request; larger ones in parts of this size (S3's
/// smallest part is 5 MiB). At most about `MAX_PARALLEL × (PARTS_IN_FLIGHT + 1) × PART_BYTES`
/// (192 MiB) is held in memory at once, whatever the size of the wheels.
pub(crate) const PART_BYTES: usize = 8 << 20;
/// Parts of one file in flight at once.
const PARTS_IN_FLIGHT: usize = 2;
/// The most objects a listing of the prefix may return (a site of a million files is far
/// beyond any index; a prefix holding more is not a site).
const MAX_LISTED: usize = 4_000_000;

/// The size and entity tag of a listed object.
type Listed = (u64, Option<String>);

/// A site under an object store prefix.
pub struct ObjectSite {
    store: Arc<dyn ObjectStore>,
    /// The prefix, without a trailing `/` (empty for the bucket's root).
    prefix: String,
    /// The destination as given, for messages.
    base: String,
    runtime: tokio::runtime::Runtime,
    /// What the prefix held when the site was opened, by site path.
    listing: BTreeMap<String, Listed>,
}

impl std::fmt::Debug for ObjectSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectSite")
            .field("base", &self.base)
            .field("objects", &self.listing.len())
            .finish_non_exhaustive()
    }
}

impl ObjectSite {
    /// Connects to the store `url` names and lists what its prefix holds.
    pub fn open(url: &Url) -> Result<Self, BuildError> {
        // For messages: never the user information (a WebDAV URL may carry a password).
        let base =
            vari_core::redact::redact_credentials(url.as_str().trim_end_matches('/')).into_owned();
        let fail = |problem: String| BuildError::Store {
            location: base.clone(),
            problem,
        };
        // reqwest is built without a bundled TLS provider (vari uses ring everywhere), and the
        // store's client is made when the store is.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (store, prefix) = store_for(url).map_err(fail)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the runtime: {e}")))?;
        let mut site = Self {
            store,
            prefix,
            base,
            runtime,
            listing: BTreeMap::new(),
        };
        site.listing = site.list()?;
        Ok(site)
    }

    fn key(&self, relative: &str) -> Result<Path, BuildError> {
        let full = if self.prefix.is_empty() {
            relative.to_owned()
        } else {
            format!("{}/{relative}", self.prefix)
        };
        Path::parse(&full).map_err(|e| BuildError::Store {
            location: self.locate(relative),
            problem: format!("not a valid object key: {e}"),
        })
    }

    fn list(&self) -> Result<BTreeMap<String, Listed>, BuildError> {
        let prefix = (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()));
        let strip = if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        };
        let listed = self.runtime.block_on(async {
            let mut listing = BTreeMap::new();
            let mut stream = self.store.list(prefix.as_ref());
            while let Some(meta) = stream.try_next().await? {
                if listing.len() >= MAX_LISTED {
                    return Ok(Err(listing.len()));
                }
                if let Some(relative) = meta.location.as_ref().strip_prefix(&strip) {
                    listing.insert(relative.to_owned(), (meta.size, meta.e_tag));
                }
            }
            Ok(Ok(listing))
        });
        match listed {
            Ok(Ok(listing)) => Ok(listing),
            Ok(Err(count)) => Err(BuildError::Store {
                location: self.base.clone(),
                problem: format!("the prefix holds more than {count} objects; not a site"),
            }),
            Err(e) => Err(BuildError::Store {
                location: self.base.clone(),
                problem: describe("listing failed", &e),
            }),
        }
    }

    /// Uploads one file; its stamp.
    async fn upload(&self, file: &SiteFile) -> Result<Stamp, BuildError> {
        let key = self.key(&file.path)?;
        let location = || self.locate(&file.path);
        let mut attributes = Attributes::new();
        attributes.insert(Attribute::ContentType, content_type(&file.path).into());
        let result = match &file.body {
            // Never uploaded: `put_all` keeps the object that is there.
            Body::Kept => Err(object_store::Error::NotSupported {
                source: "a kept file has no content to upload".into(),
            }),
            Body::Bytes(bytes) => {
                let options = PutOptions {
                    attributes,
                    ..PutOptions::default()
                };
                self.store
                    .put_opts(&key, PutPayload::from(bytes.clone()), options)
                    .await
            }
            Body::File(src) if file.size <= PART_BYTES as u64 => {
                let bytes = read_checked(src, file)?;
                let options = PutOptions {
                    attributes,
                    ..PutOptions::default()
                };
                self.store
                    .put_opts(&key, PutPayload::from(bytes), options)
                    .await
            }
            Body::File(src) => {
                let options = PutMultipartOptions {
                    attributes,
                    ..PutMultipartOptions::default()
                };
                let upload = self
                    .store
                    .put_multipart_opts(&key, options)
                    .await
                    .map_err(|e| BuildError::Store {
                        location: location(),
                        problem: describe("upload failed", &e),
                    })?;
                upload_parts(
                    WriteMultipart::new_with_chunk_size(upload, PART_BYTES),
                    src,
                    file,
                )
                .await
            }
        }
        .map_err(|e| BuildError::Store {
            location: location(),
            problem: describe("upload failed", &e),
        })?;
        Ok(Stamp {
            sha256: file.sha256.clone(),
            size: file.size,
            e_tag: result.e_tag,
        })
    }

    /// Uploads `file` unless the object there holds its content already.
    async fn put(&self, file: &SiteFile, previous: &Stamps) -> Result<Put, BuildError> {
        if let Some(stamp) = self.unchanged(file, previous) {
            return Ok(Put::Unchanged(stamp));
        }
        if matches!(file.body, Body::Kept) {
            // Published before and still listed: keep its stamp.
            let e_tag = self.listing.get(&file.path).and_then(|(_, t)| t.clone());
            let stamp = previous.get(&file.path).cloned().unwrap_or(Stamp {
                sha256: file.sha256.clone(),
                size: file.size,
                e_tag,
            });
            return Ok(Put::Unchanged(stamp));
        }
        self.upload(file).await.map(Put::Written)
    }

    /// Whether the object at `file.path` already holds `file`'s content.
    fn unchanged(&self, file: &SiteFile, previous: &Stamps) -> Option<Stamp> {
        let (size, e_tag) = self.listing.get(&file.path)?;
        let stamp = previous.get(&file.path)?;
        let same = stamp.sha256 == file.sha256
            && stamp.size == file.size
            && *size == file.size
            && (stamp.e_tag.is_none() || stamp.e_tag == *e_tag);
        same.then(|| stamp.clone())
    }
}

/// Reads a distribution file whole (it is at most [`PART_BYTES`]), checking its hash.
fn read_checked(src: &FsPath, file: &SiteFile) -> Result<Vec<u8>, BuildError> {
    let read_error = |source| BuildError::Read {
        path: src.to_owned(),
        source,
    };
    let mut bytes = Vec::with_capacity(file.size as usize);
    vari_fs::open_input(src)
        .map_err(|e| read_error(std::io::Error::other(e.problem())))?
        .take(file.size + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    check_hash(src, file, bytes.len() as u64, &Sha256::digest(&bytes))?;
    Ok(bytes)
}

fn check_hash(src: &FsPath, file: &SiteFile, size: u64, digest: &[u8]) -> Result<(), BuildError> {
    if size != file.size || hex::encode(digest) != file.sha256 {
        return Err(BuildError::Read {
            path: src.to_owned(),
            source: std::io::Error::other(
                "the file changed while the index was built; build again",
            ),
        });
    }
    Ok(())
}

/// Sends `src` in parts, checking its hash before the upload is completed (a mismatch aborts it,
/// so the object is never created).
async fn upload_parts(
    mut upload: WriteMultipart,
    src: &FsPath,
    file: &SiteFile,
) -> object_store::Result<object_store::PutResult> {
    let as_store_error = |e: BuildError| object_store::Error::Generic {
        store: "local file",
        source: e.to_string().into(),
    };
    let mut input = match vari_fs::open_input(src) {
        Ok(input) => input,
        Err(e) => {
            upload.abort().await?;
            return Err(as_store_error(BuildError::Read {
                path: src.to_owned(),
                source: std::io::Error::other(e.problem()),
            }));
        }
    };
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut buffer = vec![0; 1 << 20];
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                upload.abort().await?;
                return Err(as_store_error(BuildError::Read {
                    path: src.to_owned(),
                    source,
                }));
            }
        };
        hasher.update(&buffer[..n]);
        size += n as u64;
        upload.wait_for_capacity(PARTS_IN_FLIGHT).await?;
        upload.write(&buffer[..n]);
    }
    if let Err(e) = check_hash(src, file, size, &hasher.finalize()) {
        upload.abort().await?;
        return Err(as_store_error(e));
    }
    upload.finish().await
}

impl SiteStore for ObjectSite {
    fn locate(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }

    fn read(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>, BuildError> {
        match self.listing.get(path) {
            None => return Ok(None),
            Some((size, _)) if *size > limit => {
                return Err(BuildError::Store {
                    location: self.locate(path),
                    problem: format!("{size} bytes, more than the {limit} allowed"),
                })
            }
            Some(_) => {}
        }
        let key = self.key(path)?;
        // Read as a stream and stopped at the limit, whatever size the store announced.
        let fetched = self.runtime.block_on(async {
            let mut stream = self.store.get(&key).await?.into_stream();
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.try_next().await? {
                if (bytes.len() + chunk.len()) as u64 > limit {
                    return Ok(None);
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(Some(bytes))
        });
        match fetched {
            Ok(Some(bytes)) => Ok(Some(bytes)),
            Ok(None) => Err(BuildError::Store {
                location: self.locate(path),
                problem: format!("more than the {limit} bytes allowed"),
            }),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(BuildError::Store {
                location: self.locate(path),
                problem: describe("download failed", &e),
            }),
        }
    }

    fn contains(&self, path: &str) -> bool {
        self.listing.contains_key(path)
    }

    fn put_all(
        &self,
        files: &[&SiteFile],
        previous: &Stamps,
        done: &Done<'_>,
    ) -> Result<Vec<Put>, BuildError> {
        // After a failure no upload starts, but those under way are finished and told of: an
        // upload the store took is recorded whichever upload failed first.
        let failed = std::sync::atomic::AtomicBool::new(false);
        let results: Vec<Option<Result<Put, BuildError>>> = self.runtime.block_on(async {
            futures_util::stream::iter(files.iter().map(|file| {
                let failed = &failed;
                async move {
                    if failed.load(std::sync::atomic::Ordering::SeqCst) {
                        return None;
                    }
                    let put = self.put(file, previous).await;
                    match &put {
                        // Told now, not when every upload is done: a run that fails or is
                        // stopped later has recorded this one.
                        Ok(put) => done(file, put),
                        Err(_) => failed.store(true, std::sync::atomic::Ordering::SeqCst),
                    }
                    Some(put)
                }
            }))
            .buffered(MAX_PARALLEL)
            .collect()
            .await
        });
        // The first failure in plan order (an upload not started follows a failure).
        results.into_iter().flatten().collect()
    }

    fn remove_all(&self, paths: &[&str]) -> Result<usize, BuildError> {
        let removed: Vec<bool> = self.runtime.block_on(async {
            futures_util::stream::iter(paths.iter().map(|path| async move {
                if !self.listing.contains_key(*path) {
                    return Ok(false);
                }
                let key = self.key(path)?;
                match self.store.delete(&key).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(true),
                    Err(e) => Err(BuildError::Store {
                        location: self.locate(path),
                        problem: describe("delete failed", &e),
                    }),
                }
            }))
            .buffered(MAX_PARALLEL)
            .try_collect()
            .await
        })?;
        Ok(removed.into_iter().filter(|r| *r).count())
    }

    fn write_private(&self, path: &str, bytes: &[u8]) -> Result<(), BuildError> {
        let file = SiteFile::bytes(path, bytes.to_vec());
        self.runtime.block_on(self.upload(&file)).map(|_| ())
    }
}

/// The store and the prefix inside it that `url` names.
fn store_for(url: &Url) -> Result<(Arc<dyn ObjectStore>, String), String> {
    let built: object_store::Result<Arc<dyn ObjectStore>> = match url.scheme() {
        "s3" | "s3a" => s3_builder()?
            .with_url(url.as_str())
            .build()
            .map(|s| Arc::new(s) as _),
        "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
            .with_url(url.as_str())
            .build()
            .map(|s| Arc::new(s) as _),
        "http" | "https" => {
            // WebDAV: the URL is the site's root; keys are relative to it.
            return object_store::http::HttpBuilder::new()
                .with_url(url.as_str())
                .build()
                .map(|s| (Arc::new(s) as _, String::new()))
                .map_err(|e| describe("cannot use the store", &e));
        }
        // az, adl, azure, abfs, abfss
        _ => object_store::azure::MicrosoftAzureBuilder::from_env()
            .with_url(url.as_str())
            .build()
            .map(|s| Arc::new(s) as _),
    };
    let store = built.map_err(|e| describe("cannot use the store", &e))?;
    let prefix = url.path().trim_matches('/').to_owned();
    Ok((store, prefix))
}

/// What to do about missing S3 credentials.
const NO_CREDENTIALS: &str = "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, \
                              or name a profile of ~/.aws/credentials with AWS_PROFILE";
/// The EC2 instance metadata service, object_store's last source of S3 credentials.
const IMDS_HOST: &str = "169.254.169.254";

/// S3 settings: the environment (`AWS_*`, as `object_store` reads it), then what the AWS profile
/// files add for the keys the environment leaves unset. An `http://` endpoint the user named is
/// allowed (a store on the local network or 127.0.0.1).
fn s3_builder() -> Result<object_store::aws::AmazonS3Builder, String> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey as Key};
    let set = |key: &str| std::env::var_os(key).is_some_and(|v| !v.is_empty());
    let mut builder = AmazonS3Builder::from_env();
    let profile = aws_profile::load_from_env().map_err(|e| e.to_string())?;
    if !set("AWS_ACCESS_KEY_ID") && !set("AWS_SECRET_ACCESS_KEY") {
        for (name, key) in [
            ("aws_access_key_id", Key::AccessKeyId),
            ("aws_secret_access_key", Key::SecretAccessKey),
            ("aws_session_token", Key::Token),
        ] {
            if let Some(value) = profile.get(name) {
                builder = builder.with_config(key, value);
            }
        }
    }
    if !set("AWS_REGION") && !set("AWS_DEFAULT_REGION") {
        if let Some(region) = profile.get("region") {
            builder = builder.with_config(Key::Region, region);
        }
    }
    if !set("AWS_ENDPOINT_URL") && !set("AWS_ENDPOINT") && !set("AWS_ENDPOINT_URL_S3") {
        if let Some(endpoint) = profile.get("endpoint_url") {
            builder = builder.with_config(Key::Endpoint, endpoint);
        }
    }
    // Without credentials object_store asks the EC2 instance metadata service, retrying for
    // minutes where there is none. That is the right source on EC2 only: with a custom endpoint
    // (another S3 store) or the metadata service disabled, missing credentials are said now.
    let has_static = builder.get_config_value(&Key::AccessKeyId).is_some()
        && builder.get_config_value(&Key::SecretAccessKey).is_some();
    let other_source = [
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ]
    .iter()
    .any(|key| set(key));
    let is_true =
        |key: &str| std::env::var(key).is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    let custom_endpoint = builder.get_config_value(&Key::Endpoint).is_some();
    if !has_static
        && !other_source
        && !is_true("AWS_SKIP_SIGNATURE")
        && (custom_endpoint || is_true("AWS_EC2_METADATA_DISABLED"))
    {
        return Err(NO_CREDENTIALS.to_owned());
    }
    let http_endpoint = builder.get_config_value(&Key::Endpoint).is_some_and(|e| {
        e.get(..7)
            .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
    });
    if http_endpoint && !set("AWS_ALLOW_HTTP") {
        builder = builder.with_allow_http(true);
    }
    Ok(builder)
}

/// `{action}: {reason}` on one line: the HTTP status as a phrase a user can act on, and the
/// store's own error code and message when it sent them.
fn describe(action: &str, error: &object_store::Error) -> String {
    // The store's own messages repeat the URL it was given, user information included.
    vari_core::redact::redact_credentials(&describe_raw(action, error)).into_owned()
}

fn describe_raw(action: &str, error: &object_store::Error) -> String {
    let mut chain = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        chain.push_str(": ");
        chain.push_str(&inner.to_string());
        source = inner.source();
    }
    // Some requests (listings) come back as generic errors: their status is in the text.
    let status = match error {
        object_store::Error::PermissionDenied { .. } => Some(403),
        object_store::Error::Unauthenticated { .. } => Some(401),
        object_store::Error::NotFound { .. } => Some(404),
        _ => chain
            .split("status code: ")
            .nth(1)
            .and_then(|rest| rest.get(..3))
            .and_then(|code| code.parse::<u16>().ok()),
    };
    let reason = match status {
        // Credentials were to come from the EC2 instance metadata service, which gave none.
        _ if chain.contains(IMDS_HOST) => {
            format!("{NO_CREDENTIALS} (the EC2 instance metadata service at {IMDS_HOST} gave none)")
        }
        Some(403) => "access denied (HTTP 403): check the credentials and the bucket's permissions"
            .to_owned(),
        Some(401) => "not authenticated (HTTP 401): check the credentials".to_owned(),
        Some(404) => "not found (HTTP 404): does the bucket exist?".to_owned(),
        // The store's error document is summarised below, not repeated.
        _ => first_line(error.to_string().split("<?xml").next().unwrap_or_default()),
    };
    let code = between(&chain, "<Code>", "</Code>");
    let message = between(&chain, "<Message>", "</Message>");
    match (code, message) {
        (Some(code), Some(message)) => format!("{action}: {reason} ({code}: {message})"),
        (Some(code), None) => format!("{action}: {reason} ({code})"),
        _ => format!("{action}: {reason}"),
    }
}

/// The first line of `text`, at most 400 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(400) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}

/// The text between `open` and `close` (an XML element of an S3 error body), bounded.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let len = text[start..].find(close)?;
    let inner = text[start..start + len].trim();
    (!inner.is_empty() && inner.len() <= 300 && !inner.contains('<')).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_are_one_line_with_the_store_s_code() {
        let denied = object_store::Error::PermissionDenied {
            path: "site/simple/index.html".to_owned(),
            source: "Error performing PUT http://x - 403 Forbidden: <?xml version=\"1.0\"?>\n\
                     <Error><Code>AccessDenied</Code><Message>Forbidden: no such key</Message></Error>"
                .into(),
        };
        assert_eq!(
            describe("upload failed", &denied),
            "upload failed: access denied (HTTP 403): check the credentials and the bucket's \
             permissions (AccessDenied: Forbidden: no such key)"
        );
        let generic = object_store::Error::Generic {
            store: "S3",
            source: "connection refused\nmore".into(),
        };
        assert_eq!(
            describe("listing failed", &generic),
            "listing failed: Generic S3 error: connection refused"
        );
        let listing = object_store::Error::Generic {
            store: "S3",
            source: "Error performing GET http://x/b?list-type=2 - Server returned non-2xx \
                     status code: 403 Forbidden: <?xml version=\"1.0\"?><Error><Code>AccessDenied\
                     </Code><Message>Forbidden: Invalid signature</Message></Error>"
                .into(),
        };
        assert_eq!(
            describe("listing failed", &listing),
            "listing failed: access denied (HTTP 403): check the credentials and the bucket's \
             permissions (AccessDenied: Forbidden: Invalid signature)"
        );
        let imds = object_store::Error::Generic {
            store: "S3",
            source: "Error performing PUT http://169.254.169.254/latest/api/token - Server \
                     returned non-2xx status code: 403 Forbidden"
                .into(),
        };
        assert!(describe("listing failed", &imds).starts_with(
            "listing failed: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
        ));
    }
}
