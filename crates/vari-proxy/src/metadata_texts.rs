//! The METADATA texts of wheels, as the proxy serves them for PEP 658/714: the index's own
//! `.metadata` when it has one, else the `.dist-info/METADATA` member read from the wheel with
//! range requests (`vari_client::IndexClient::core_metadata`), so that no installer has to
//! download a wheel whole to learn its dependencies.
//!
//! A text is read once per wheel: it is kept in memory (at most [`MEMORY_BYTES`] in all, the
//! oldest dropped first) and on disk under the proxy's cache directory (`metadata/KEY`), keyed
//! by a digest of the wheel's URL and SHA-256, so that a proxy started again serves it without
//! asking the upstream. The text comes from an index, a wheel or the disk: it is bounded
//! ([`MAX_TEXT`]), UTF-8, and its `Name` and `Version` must be the wheel's (a text of another
//! wheel, from a confused index or a tampered cache, is refused rather than served).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use vari_client::{ClientError, IndexClient, IndexFile};

/// The directory of the texts, under the proxy's cache directory.
pub(crate) const METADATA_DIR: &str = "metadata";

/// The hex digits of a text's key (a SHA-256 of the wheel's URL and hash, cut short).
pub(crate) const KEY_HEX: usize = 32;

/// The largest METADATA text served (real ones are at most a few hundred kilobytes; the long
/// description is the bulk).
pub(crate) const MAX_TEXT: usize = 8 * 1024 * 1024;

/// How many bytes of texts are kept in memory.
pub(crate) const MEMORY_BYTES: usize = 64 * 1024 * 1024;

/// A text and the SHA-256 of its bytes (what a page advertises for it).
#[derive(Debug, Clone)]
pub(crate) struct Text {
    pub(crate) text: Arc<str>,
    pub(crate) sha256: Arc<str>,
}

impl Text {
    fn new(text: Arc<str>) -> Self {
        let sha256 = hex::encode(Sha256::digest(text.as_bytes())).into();
        Self { text, sha256 }
    }
}

/// The texts read so far, in memory and on disk.
pub(crate) struct MetadataTexts {
    /// The proxy's cache directory: nothing below it is written through a symbolic link.
    root: PathBuf,
    memory: Mutex<Memory>,
}

#[derive(Default)]
struct Memory {
    texts: HashMap<String, Text>,
    /// Keys in the order they were added: the oldest is dropped first.
    order: VecDeque<String>,
    bytes: usize,
}

impl Memory {
    fn insert(&mut self, key: String, text: Text) {
        let size = text.text.len();
        if size > MEMORY_BYTES || self.texts.contains_key(&key) {
            return;
        }
        while self.bytes + size > MEMORY_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(dropped) = self.texts.remove(&oldest) {
                self.bytes -= dropped.text.len();
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.texts.insert(key, text);
    }
}

impl MetadataTexts {
    /// The texts kept under the proxy's cache directory `root`.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            memory: Mutex::default(),
        }
    }

    /// The text of `file` when it is in memory (a page build asks this for every wheel it
    /// lists, so it never reads the disk).
    pub(crate) fn known(&self, file: &IndexFile) -> Option<Text> {
        self.lock().texts.get(&key(file)).cloned()
    }

    /// The text of `file` when it is kept, in memory or on disk (a proxy before this one on
    /// the same cache directory read it): never asks the upstream.
    pub(crate) async fn stored(&self, file: &IndexFile) -> Option<Text> {
        let key = key(file);
        if let Some(text) = self.lock().texts.get(&key) {
            return Some(text.clone());
        }
        let text = self.read_disk(file, &key).await?;
        self.lock().insert(key, text.clone());
        Some(text)
    }

    /// Whether any text has been read by this process (kept pages that advertise unread
    /// metadata are built again from then on: `crate::page_keeping`).
    pub(crate) fn any_known(&self) -> bool {
        !self.lock().texts.is_empty()
    }

    /// The text of the wheel `file`: from memory, else from disk, else through `client` (the
    /// index's `.metadata`, else range reads of the wheel), checked and kept.
    pub(crate) async fn get(
        &self,
        client: &IndexClient,
        file: &IndexFile,
    ) -> Result<Text, ClientError> {
        if let Some(text) = self.stored(file).await {
            return Ok(text);
        }
        let key = key(file);
        let text = client.core_metadata(file).await?;
        check(file, &text).map_err(|message| ClientError::Archive {
            url: file.url.clone(),
            message,
        })?;
        let root = self.root.clone();
        let path = self.root.join(METADATA_DIR).join(&key);
        let bytes = text.clone().into_bytes();
        // A text that cannot be stored is read again next time: logged, not fatal.
        tokio::task::spawn_blocking(move || {
            if let Err(e) = vari_fs::write_cache_file(&root, &path, &bytes) {
                tracing::debug!("cannot keep a METADATA text: {e}");
            }
        });
        let text = Text::new(text.into());
        self.lock().insert(key, text.clone());
        Ok(text)
    }

    /// The text of `file` kept on disk under `key`, when it is there and checks out.
    async fn read_disk(&self, file: &IndexFile, key: &str) -> Option<Text> {
        let path = self.root.join(METADATA_DIR).join(key);
        let stored =
            tokio::task::spawn_blocking(move || vari_fs::read_cache_file(&path, MAX_TEXT as u64))
                .await
                .ok()
                .flatten()?;
        let text = String::from_utf8(stored).ok()?;
        check(file, &text).ok()?;
        Some(Text::new(text.into()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The key of `file`'s text: a digest of its URL and its SHA-256 (when the index gives one), so
/// that a file replaced under the same URL with another hash is read again.
fn key(file: &IndexFile) -> String {
    let mut digest = Sha256::new();
    digest.update(file.url.as_str().as_bytes());
    digest.update(b"\n");
    digest.update(file.hashes.sha256().unwrap_or_default().as_bytes());
    let mut key = hex::encode(digest.finalize());
    key.truncate(KEY_HEX);
    key
}

/// Whether `text` can be the METADATA of the wheel `file`: not over [`MAX_TEXT`], and its
/// `Name` and `Version` (when it states them) those of the wheel's file name.
fn check(file: &IndexFile, text: &str) -> Result<(), String> {
    if text.len() > MAX_TEXT {
        return Err(format!(
            "its METADATA has {} bytes, more than the {MAX_TEXT} served",
            text.len()
        ));
    }
    let Some(wheel) = file.wheel() else {
        return Ok(());
    };
    let (name, version) = name_and_version(text);
    if let Some(name) = name {
        // Both normalised: a wheel's file name spells `foo_bar`, its METADATA `Foo.Bar`.
        let own = vari_client::ProjectName::new(wheel.name.as_str());
        let same = vari_client::ProjectName::new(name)
            .is_ok_and(|stated| own.is_ok_and(|own| own == stated));
        if !same {
            return Err(format!(
                "its METADATA names project {name:?}, not the wheel's {}",
                wheel.name
            ));
        }
    }
    if let Some(version) = version {
        let same = version
            .parse::<pep440_rs::Version>()
            .is_ok_and(|stated| &stated == file.version());
        if !same {
            return Err(format!(
                "its METADATA names version {version:?}, not the wheel's {}",
                file.version()
            ));
        }
    }
    Ok(())
}

/// The `Name` and `Version` fields of a METADATA header block (which ends at the first empty
/// line).
fn name_and_version(text: &str) -> (Option<&str>, Option<&str>) {
    let (mut name, mut version) = (None, None);
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        if let Some((field, value)) = line.split_once(':') {
            match field.trim().to_ascii_lowercase().as_str() {
                "name" if name.is_none() => name = Some(value.trim()),
                "version" if version.is_none() => version = Some(value.trim()),
                _ => {}
            }
        }
    }
    (name, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel_file(filename: &str) -> IndexFile {
        let wheel = vari_core::filename::WheelFilename::parse(filename).unwrap();
        IndexFile {
            filename: filename.to_owned(),
            kind: vari_client::FileKind::Wheel(wheel),
            url: url::Url::parse(&format!("http://127.0.0.1:1/files/{filename}")).unwrap(),
            hashes: vari_client::Hashes::default(),
            requires_python: None,
            yanked: None,
            core_metadata: vari_client::CoreMetadata::Absent,
            size: None,
            upload_time: None,
            source: vari_client::FileSource::FindLinks("test".to_owned()),
        }
    }

    #[test]
    fn a_text_must_name_the_wheel() {
        let file = wheel_file("Foo_Bar-1.0-py3-none-any.whl");
        assert_eq!(
            check(
                &file,
                "Metadata-Version: 2.1\nName: foo.bar\nVersion: 1.0.0\n"
            ),
            Ok(())
        );
        assert_eq!(check(&file, "Metadata-Version: 2.1\n"), Ok(()));
        let other = check(&file, "Name: other\nVersion: 1.0\n").unwrap_err();
        assert!(other.contains("\"other\""), "{other}");
        let version = check(&file, "Name: foo-bar\nVersion: 2.0\n").unwrap_err();
        assert!(version.contains("\"2.0\""), "{version}");
        // The body (after the first empty line) is not read for fields.
        assert_eq!(check(&file, "Name: foo-bar\n\nName: other\n"), Ok(()));
        let huge = format!("Name: foo-bar\n\n{}", "x".repeat(MAX_TEXT));
        assert!(check(&file, &huge).unwrap_err().contains("more than"));
    }

    #[test]
    fn memory_drops_the_oldest_texts_first() {
        let mut memory = Memory::default();
        let text = |n: usize| Text::new("x".repeat(n).into());
        memory.insert("a".into(), text(MEMORY_BYTES / 2));
        memory.insert("b".into(), text(MEMORY_BYTES / 2));
        memory.insert("c".into(), text(1));
        assert!(!memory.texts.contains_key("a"));
        assert!(memory.texts.contains_key("b") && memory.texts.contains_key("c"));
        assert_eq!(memory.bytes, MEMORY_BYTES / 2 + 1);
        memory.insert("huge".into(), text(MEMORY_BYTES + 1));
        assert!(!memory.texts.contains_key("huge"));
    }

    #[tokio::test]
    async fn a_stored_text_is_the_wheel_s_own_and_kept_in_memory_once_read() {
        let dir = tempfile::tempdir().unwrap();
        let texts = MetadataTexts::new(dir.path());
        let file = wheel_file("a-1.0-py3-none-any.whl");
        assert!(texts.stored(&file).await.is_none());
        let path = dir.path().join(METADATA_DIR).join(key(&file));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // A text of another wheel on disk (a tampered cache) is not taken.
        std::fs::write(&path, "Name: other\nVersion: 1.0\n").unwrap();
        assert!(texts.stored(&file).await.is_none());
        assert!(texts.known(&file).is_none());
        std::fs::write(&path, "Name: a\nVersion: 1.0\n").unwrap();
        let stored = texts.stored(&file).await.unwrap();
        assert_eq!(&*stored.text, "Name: a\nVersion: 1.0\n");
        // Kept: the next caller does not read the disk.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(texts.known(&file).unwrap().sha256, stored.sha256);
    }

    #[test]
    fn keys_follow_url_and_hash() {
        let mut file = wheel_file("a-1.0-py3-none-any.whl");
        let plain = key(&file);
        assert_eq!(plain.len(), KEY_HEX);
        file.hashes = vari_client::Hashes::sha256_of(&"0".repeat(64));
        assert_ne!(key(&file), plain);
    }
}
