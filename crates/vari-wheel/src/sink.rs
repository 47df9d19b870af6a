//! The output side of a rewrite: a buffered writer that only moves forward.
//!
//! The zip crate's writer asks for `Seek` because it goes back to patch a member's local
//! header after compressing it. vari never lets it: new members are compressed in memory first
//! and every member reaches the output as a raw copy (see `rewrite.rs`), so the only "seeks"
//! left are questions about the current position (and `End(0)`, which is the same place). The
//! output can then be a pipe or a device as well as a file, and the large buffer keeps
//! system calls off the profile when gigabytes are copied.

use std::io::{self, BufWriter, Seek, SeekFrom, Write};

/// See the module docs.
pub(crate) struct ForwardSink<W: Write> {
    inner: BufWriter<W>,
    /// Bytes written so far: both the position and the length.
    written: u64,
}

impl<W: Write> ForwardSink<W> {
    pub(crate) fn new(capacity: usize, inner: W) -> Self {
        Self {
            inner: BufWriter::with_capacity(capacity, inner),
            written: 0,
        }
    }

    /// Flushes the buffer and returns the writer.
    pub(crate) fn into_inner(self) -> io::Result<W> {
        self.inner
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
    }
}

impl<W: Write> Write for ForwardSink<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Seek for ForwardSink<W> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let here = match pos {
            SeekFrom::Start(offset) => offset == self.written,
            SeekFrom::Current(delta) | SeekFrom::End(delta) => delta == 0,
        };
        if here {
            Ok(self.written)
        } else {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "internal error: the wheel writer tried to seek backwards",
            ))
        }
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_the_position_and_refuses_to_go_back() {
        let mut sink = ForwardSink::new(4, Vec::new());
        sink.write_all(b"hello world").unwrap();
        assert_eq!(sink.stream_position().unwrap(), 11);
        assert_eq!(sink.seek(SeekFrom::End(0)).unwrap(), 11);
        assert_eq!(sink.seek(SeekFrom::Start(11)).unwrap(), 11);
        assert!(sink.seek(SeekFrom::Start(3)).is_err());
        assert!(sink.seek(SeekFrom::Current(-1)).is_err());
        assert_eq!(sink.into_inner().unwrap(), b"hello world");
    }
}
