//! Reading one member of a remote wheel with range requests: the archive's tail (end of
//! central directory, usually the whole directory too), the directory if it did not fit, then
//! the member's local header and data. A server that ignores ranges sends the whole file on the
//! first request; it is then read from memory, and `Http` remembers not to ask that host for
//! ranges again.

use std::borrow::Cow;

use url::Url;

use crate::error::ClientError;
use crate::http::{ByteRange, Http, RangeAnswer};
use crate::zip_index::{
    data_offset, extract, find_directory, read_directory, LOCAL_LEN, MAX_MEMBER,
};

/// The first request asks for this many bytes from the end: the end-of-central-directory
/// record plus, for most wheels, the whole central directory and the `.dist-info` members
/// written last. uv asks for as much: more would make every metadata read through vari's
/// proxy cost the index more bytes than uv straight at it (issue 34); a larger directory is
/// completed by a second request for the part before the tail only.
const TAIL: u64 = 16 * 1024;

/// Slack read after a local header's name for its extra field, which the central directory
/// does not give (it is usually empty or a few dozen bytes).
const EXTRA_SLACK: u64 = 1024;

/// The bytes of a remote archive fetched so far.
struct Remote<'a> {
    http: &'a Http,
    url: &'a Url,
    total: u64,
    chunks: Vec<(u64, Vec<u8>)>,
}

impl Remote<'_> {
    fn archive_error(&self, message: impl Into<String>) -> ClientError {
        archive_error(self.url, message)
    }

    fn add(&mut self, answer: RangeAnswer) {
        let RangeAnswer::Partial {
            start,
            bytes,
            total,
        } = answer;
        self.total = total;
        self.chunks.push((start, bytes));
    }

    /// `len` bytes from `start` (fewer at the end of the file), fetched when not yet held.
    async fn bytes(&mut self, start: u64, len: u64) -> Result<Cow<'_, [u8]>, ClientError> {
        let end = start.saturating_add(len).min(self.total);
        if start > end {
            return Err(self.archive_error(format!(
                "offset {start} is past the end of the {}-byte file",
                self.total
            )));
        }
        let held = |chunks: &[(u64, Vec<u8>)]| {
            chunks
                .iter()
                .position(|(at, bytes)| *at <= start && end <= at + bytes.len() as u64)
        };
        // The span ends inside a chunk held (the central directory begins before the tail):
        // only the part before that chunk is fetched, then joined to it.
        if held(&self.chunks).is_none() {
            self.extend_down(start, end).await?;
        }
        let index = match held(&self.chunks) {
            Some(index) => index,
            None => {
                let answer = self
                    .http
                    .get_range(
                        self.url,
                        ByteRange::Span {
                            start,
                            len: end - start,
                        },
                    )
                    .await?;
                self.add(answer);
                held(&self.chunks).ok_or_else(|| {
                    self.archive_error(format!(
                        "the server did not send bytes {start}-{end} of the file"
                    ))
                })?
            }
        };
        let (at, bytes) = &self.chunks[index];
        let from = usize::try_from(start - at).map_err(|e| self.archive_error(e.to_string()))?;
        let to = usize::try_from(end - at).map_err(|e| self.archive_error(e.to_string()))?;
        Ok(Cow::Borrowed(&bytes[from..to]))
    }
}

impl Remote<'_> {
    /// When `start..end` ends inside a chunk held that begins after `start`, fetches
    /// `start..` up to that chunk and joins the two (a server that answers otherwise leaves
    /// what it sent as a chunk of its own).
    async fn extend_down(&mut self, start: u64, end: u64) -> Result<(), ClientError> {
        let Some(index) = self
            .chunks
            .iter()
            .position(|(at, bytes)| start < *at && *at < end && end <= at + bytes.len() as u64)
        else {
            return Ok(());
        };
        let at = self.chunks[index].0;
        let answer = self
            .http
            .get_range(
                self.url,
                ByteRange::Span {
                    start,
                    len: at - start,
                },
            )
            .await?;
        let RangeAnswer::Partial {
            start: got,
            mut bytes,
            total,
        } = answer;
        if got != start || bytes.len() as u64 != at - start {
            self.add(RangeAnswer::Partial {
                start: got,
                bytes,
                total,
            });
            return Ok(());
        }
        self.total = total;
        let (_, tail) = self.chunks.remove(index);
        bytes.extend_from_slice(&tail);
        self.chunks.push((start, bytes));
        Ok(())
    }
}

/// An archive error about the wheel at `url` (also for when `Remote` is borrowed).
fn archive_error(url: &Url, message: impl Into<String>) -> ClientError {
    ClientError::Archive {
        url: url.clone(),
        message: message.into(),
    }
}

/// `{dist-info}/{file}` of the wheel `wheel` at `url`, with its content; `None` when the wheel
/// has no such member. The central directory passes vari-wheel's checks first (the ones
/// `vari wheel inspect` makes of a local wheel: member names and types, duplicates, overlapping
/// data, exactly one `.dist-info` directory, matching the filename), so a remote wheel is held
/// to the same rules as a local one and its metadata is read from its one `.dist-info`.
pub(crate) async fn read_member(
    http: &Http,
    url: &Url,
    wheel: &vari_core::filename::WheelFilename,
    file: &str,
) -> Result<Option<(String, Vec<u8>)>, ClientError> {
    let first = http.get_range(url, ByteRange::Suffix(TAIL)).await?;
    let mut remote = Remote {
        http,
        url,
        total: 0,
        chunks: Vec::new(),
    };
    remote.add(first);
    let directory = {
        let (tail_start, tail) = &remote.chunks[0];
        find_directory(tail, *tail_start).map_err(|message| remote.archive_error(message))?
    };
    // The directory's size comes from the archive: a hostile one may claim gigabytes. A wheel
    // of 100,000 files has a directory of about 10 MB.
    if directory.size > MAX_MEMBER {
        return Err(remote.archive_error(format!(
            "the central directory claims {} bytes, more than the {MAX_MEMBER} read for metadata",
            directory.size
        )));
    }
    let (members, dist_info) = {
        let bytes = remote.bytes(directory.offset, directory.size).await?;
        let dist_info = vari_wheel::check_listing(wheel, &bytes, directory.offset)
            .map_err(|e| archive_error(url, e.to_string()))?;
        let members = read_directory(&bytes).map_err(|m| archive_error(url, m))?;
        (members, dist_info)
    };
    let wanted = format!("{dist_info}/{file}");
    let Some(member) = members.into_iter().find(|m| m.name == wanted) else {
        return Ok(None);
    };
    if member.compressed_size > MAX_MEMBER {
        return Err(remote.archive_error(format!(
            "{} claims {} compressed bytes, more than the {MAX_MEMBER} read for metadata",
            member.name, member.compressed_size
        )));
    }
    let guess = LOCAL_LEN + member.name.len() as u64 + EXTRA_SLACK + member.compressed_size;
    let (start, content) = {
        let head = remote.bytes(member.header_offset, guess).await?;
        let start = data_offset(&head).map_err(|m| ClientError::Archive {
            url: url.clone(),
            message: m,
        })?;
        let held = head.len() as u64 >= start + member.compressed_size;
        let content = held.then(|| head[start as usize..].to_vec());
        (start, content)
    };
    let data = match content {
        Some(data) => data,
        None => remote
            .bytes(member.header_offset + start, member.compressed_size)
            .await?
            .into_owned(),
    };
    let content = extract(&member, &data).map_err(|message| remote.archive_error(message))?;
    Ok(Some((member.name, content)))
}
