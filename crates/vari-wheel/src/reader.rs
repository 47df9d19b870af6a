//! A buffered reader whose seeks keep the buffer when the target lies inside it.
//!
//! The zip crate seeks to an absolute position after every central-directory header it parses
//! (`seek(SeekFrom::Start(end_of_header))`, which is where the reader already is) and before
//! every member it opens. `std::io::BufReader` discards its buffer on every `seek`, so reading
//! the central directory of a 30,000-file wheel cost 30,000 refills of the buffer (a `read`
//! system call each), and `vari wheel inspect` ran 1.4× slower than `unzip -l`. Here a seek
//! that lands inside the buffered window only moves the cursor; copying the members of a wheel
//! in order (make-variant) then also reads each region once.

use std::io::{self, Read, Seek, SeekFrom};

/// Buffer size for reading central directories and small members: a 30,000-entry central
/// directory (~3 MiB) takes ~50 reads.
pub(crate) const INSPECT_BUFFER: usize = 64 * 1024;

/// Buffer size for copying whole archives: large enough that system calls do not show.
pub(crate) const COPY_BUFFER: usize = 1024 * 1024;

/// See the module docs.
pub(crate) struct SeekBufReader<R> {
    inner: R,
    buf: Box<[u8]>,
    /// The file offset of `buf[0]`; the inner reader is at `start + filled`.
    start: u64,
    /// How many bytes of `buf` hold data.
    filled: usize,
    /// The cursor inside `buf` (`pos <= filled`).
    pos: usize,
}

impl<R: Read + Seek> SeekBufReader<R> {
    /// Wraps `inner`, which must be at offset 0 (a freshly opened file).
    pub(crate) fn with_capacity(capacity: usize, inner: R) -> Self {
        Self {
            inner,
            buf: vec![0; capacity].into_boxed_slice(),
            start: 0,
            filled: 0,
            pos: 0,
        }
    }

    /// The logical position: where the next read starts.
    fn position(&self) -> u64 {
        // usize → u64 never truncates on supported targets.
        self.start + self.pos as u64
    }

    /// Forgets the buffer after the inner reader moved to `offset`.
    fn reset_at(&mut self, offset: u64) {
        self.start = offset;
        self.filled = 0;
        self.pos = 0;
    }
}

impl<R: Read + Seek> Read for SeekBufReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.filled {
            let next = self.start + self.filled as u64;
            if out.len() >= self.buf.len() {
                // A large read gains nothing from the buffer: read straight into `out`.
                let n = self.inner.read(out)?;
                self.reset_at(next + n as u64);
                return Ok(n);
            }
            let n = self.inner.read(&mut self.buf)?;
            self.start = next;
            self.filled = n;
            self.pos = 0;
        }
        let available = &self.buf[self.pos..self.filled];
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.pos += n;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for SeekBufReader<R> {
    fn seek(&mut self, target: SeekFrom) -> io::Result<u64> {
        let absolute = match target {
            SeekFrom::Start(offset) => Some(offset),
            SeekFrom::Current(delta) => self.position().checked_add_signed(delta),
            // The end is only known to the inner reader.
            SeekFrom::End(_) => None,
        };
        if let Some(offset) = absolute {
            let end = self.start + self.filled as u64;
            if (self.start..=end).contains(&offset) {
                // Inside the window: `offset - start <= filled`, which is a usize.
                self.pos = usize::try_from(offset - self.start).unwrap_or(self.filled);
                return Ok(offset);
            }
            let offset = self.inner.seek(SeekFrom::Start(offset))?;
            self.reset_at(offset);
            return Ok(offset);
        }
        let offset = self.inner.seek(target)?;
        self.reset_at(offset);
        Ok(offset)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.position())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    /// Counts the inner reader's calls, to show that seeks inside the window cost none.
    struct Counting {
        inner: Cursor<Vec<u8>>,
        reads: usize,
        seeks: usize,
    }

    impl Read for Counting {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            self.inner.read(buf)
        }
    }

    impl Seek for Counting {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.seeks += 1;
            self.inner.seek(pos)
        }
    }

    fn reader(len: usize, capacity: usize) -> SeekBufReader<Counting> {
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        SeekBufReader::with_capacity(
            capacity,
            Counting {
                inner: Cursor::new(data),
                reads: 0,
                seeks: 0,
            },
        )
    }

    fn byte_at(i: u64) -> u8 {
        (i % 251) as u8
    }

    #[test]
    fn seeks_inside_the_buffer_keep_it() {
        let mut r = reader(1000, 100);
        let mut b = [0u8; 10];
        r.read_exact(&mut b).unwrap();
        assert_eq!(r.inner.reads, 1);
        for target in [50u64, 5, 100, 0] {
            assert_eq!(r.seek(SeekFrom::Start(target)).unwrap(), target);
            assert_eq!(r.stream_position().unwrap(), target);
        }
        assert_eq!(r.inner.seeks, 0);
        r.seek(SeekFrom::Start(20)).unwrap();
        r.read_exact(&mut b).unwrap();
        assert_eq!(b[0], byte_at(20));
        assert_eq!(r.inner.reads, 1);
        assert_eq!(r.seek(SeekFrom::Current(-25)).unwrap(), 5);
        assert_eq!(r.inner.seeks, 0);
    }

    #[test]
    fn seeks_outside_the_buffer_and_to_the_end_go_to_the_inner_reader() {
        let mut r = reader(1000, 100);
        let mut b = [0u8; 4];
        r.read_exact(&mut b).unwrap();
        r.seek(SeekFrom::Start(500)).unwrap();
        r.read_exact(&mut b).unwrap();
        assert_eq!(b, [500, 501, 502, 503].map(byte_at));
        assert_eq!(r.seek(SeekFrom::End(-2)).unwrap(), 998);
        r.read_exact(&mut b[..2]).unwrap();
        assert_eq!(b[..2], [998, 999].map(byte_at));
        assert_eq!(r.read(&mut b).unwrap(), 0);
        assert_eq!(r.inner.seeks, 2);
    }

    #[test]
    fn large_reads_bypass_the_buffer_and_everything_reads_back_in_order() {
        let mut r = reader(10_000, 64);
        let mut all = Vec::new();
        let mut small = [0u8; 7];
        let mut large = [0u8; 300];
        loop {
            let n = r.read(&mut small).unwrap();
            all.extend_from_slice(&small[..n]);
            let m = r.read(&mut large).unwrap();
            all.extend_from_slice(&large[..m]);
            if n == 0 && m == 0 {
                break;
            }
        }
        let expected: Vec<u8> = (0..10_000u64).map(byte_at).collect();
        assert_eq!(all, expected);
        assert_eq!(r.seek(SeekFrom::Current(-10)).unwrap(), 9_990);
        r.read_exact(&mut small).unwrap();
        assert_eq!(small[0], byte_at(9_990));
    }
}
