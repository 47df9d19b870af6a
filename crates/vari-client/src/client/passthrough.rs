//! Files handed on as they arrive, for a front-end that serves them again (the proxy): a
//! whole file read chunk by chunk from its source (with the client's credentials, retries and
//! time limits), and whether the client would send credentials to a URL (when it would not, a
//! front-end may send its own clients to the URL directly).

use std::io::Read;

use url::Url;

use super::IndexClient;
use crate::error::ClientError;
use crate::http::Streaming;

/// A file being read from its source. Dropping it closes the connection.
pub struct FileStream {
    url: Url,
    length: Option<u64>,
    source: Source,
}

enum Source {
    Remote(Box<Streaming>),
    Local(std::fs::File, std::path::PathBuf),
}

impl std::fmt::Debug for FileStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStream")
            .field("url", &self.url.as_str())
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}

/// How much of a local file one chunk reads.
const LOCAL_CHUNK: usize = 256 * 1024;

impl FileStream {
    /// Its size in bytes, when the source says.
    pub fn len(&self) -> Option<u64> {
        self.length
    }

    /// Whether the source announced an empty file.
    pub fn is_empty(&self) -> bool {
        self.length == Some(0)
    }

    /// The file's URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The next bytes; `None` at the end. A connection that breaks is an error naming the URL.
    pub async fn chunk(&mut self) -> Result<Option<Vec<u8>>, ClientError> {
        match &mut self.source {
            Source::Remote(streaming) => Ok(streaming.chunk().await?.map(Vec::from)),
            // Chunks of a local file are read synchronously: a page-cache read of a quarter
            // megabyte is cheaper than a round trip to a blocking thread.
            Source::Local(file, path) => {
                let mut buffer = vec![0; LOCAL_CHUNK];
                loop {
                    match file.read(&mut buffer) {
                        Ok(0) => return Ok(None),
                        Ok(n) => {
                            buffer.truncate(n);
                            return Ok(Some(buffer));
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(source) => {
                            return Err(ClientError::Io {
                                path: path.clone(),
                                source,
                            })
                        }
                    }
                }
            }
        }
    }
}

impl IndexClient {
    /// Opens the file at `url` (`http`, `https` or `file`) for reading as it arrives, with the
    /// client's credentials, retries (until the headers arrive) and time limits. Nothing is
    /// cached. A missing file is [`ClientError::Status`] (404).
    pub async fn open_file(&self, url: &Url) -> Result<FileStream, ClientError> {
        self.http.check_reach(url)?;
        if url.scheme() == "file" {
            let path = url.to_file_path().map_err(|()| ClientError::Transport {
                url: url.clone(),
                message: "not a local path".to_owned(),
            })?;
            return match std::fs::File::open(&path) {
                Ok(file) => Ok(FileStream {
                    url: url.clone(),
                    length: file.metadata().ok().map(|m| m.len()),
                    source: Source::Local(file, path),
                }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ClientError::Status {
                    url: url.clone(),
                    status: 404,
                }),
                Err(source) => Err(ClientError::Io { path, source }),
            };
        }
        let streaming = self.http.open(url).await?;
        Ok(FileStream {
            url: url.clone(),
            length: streaming.content_length(),
            source: Source::Remote(Box::new(streaming)),
        })
    }

    /// Whether the client sends credentials with requests to `url` (from the settings' URLs, a
    /// link, or netrc). A front-end that hands URLs to other programs passes only those without
    /// credentials on, and fetches the others itself.
    pub fn sends_credentials(&self, url: &Url) -> bool {
        self.http.credentials().for_url(url).is_some()
    }
}

#[cfg(test)]
mod tests {
    use crate::settings::{ClientSettings, IndexUrl};
    use crate::{IndexClient, NetrcSource};

    #[tokio::test]
    async fn local_files_stream_whole_and_missing_ones_are_404() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        let content: Vec<u8> = (0..600_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let url = url::Url::from_file_path(&path).unwrap();
        // Every source remote: no local file is read, whoever asks.
        let remote_only = IndexClient::new(ClientSettings {
            cache_dir: None,
            netrc: NetrcSource::Disabled,
            ..ClientSettings::default()
        })
        .unwrap();
        let refused = remote_only.open_file(&url).await.unwrap_err();
        assert!(
            matches!(refused, crate::ClientError::Refused { .. }),
            "{refused}"
        );
        let client = IndexClient::new(ClientSettings {
            find_links: vec![crate::FindLinks::Directory(dir.path().to_path_buf())],
            cache_dir: None,
            netrc: NetrcSource::Disabled,
            ..ClientSettings::default()
        })
        .unwrap();
        let mut stream = client.open_file(&url).await.unwrap();
        assert_eq!(stream.len(), Some(content.len() as u64));
        let mut read = Vec::new();
        while let Some(chunk) = stream.chunk().await.unwrap() {
            read.extend(chunk);
        }
        assert_eq!(read, content);
        let missing = url::Url::from_file_path(dir.path().join("b.bin")).unwrap();
        assert!(client.open_file(&missing).await.unwrap_err().is_not_found());
    }

    #[test]
    fn credentials_are_known_per_realm() {
        let client = IndexClient::new(ClientSettings {
            indexes: vec![IndexUrl::parse("https://u:p@private.example/simple/").unwrap()],
            cache_dir: None,
            netrc: NetrcSource::Disabled,
            ..ClientSettings::default()
        })
        .unwrap();
        let private = url::Url::parse("https://private.example/files/a.whl").unwrap();
        let public = url::Url::parse("https://files.example/a.whl").unwrap();
        assert!(client.sends_credentials(&private));
        assert!(!client.sends_credentials(&public));
    }
}
