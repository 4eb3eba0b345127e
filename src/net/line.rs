//! Reading lines from a socket with a deadline and a length limit.
//!
//! A client controls every byte it sends, so the reader never holds more than
//! the line limit plus one read chunk, and never waits past the deadline.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How much is read from the socket at once.
const CHUNK: usize = 4096;

/// Why no line could be read.
#[derive(Debug)]
pub(crate) enum LineError {
    /// The deadline passed before a full line arrived.
    Timeout,
    /// More than the limit arrived without a newline; the rest of that line
    /// is skipped by the next call.
    TooLong,
    /// The peer closed the connection (a partial last line is dropped).
    Closed,
    /// The socket failed.
    Io(io::Error),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Timeout => f.write_str("no complete line before the deadline"),
            LineError::TooLong => f.write_str("line too long"),
            LineError::Closed => f.write_str("connection closed"),
            LineError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// Reads `\n`-terminated lines from a stream.
pub struct LineReader<R = TcpStream> {
    inner: R,
    buf: Vec<u8>,
    /// Bytes of `buf` already handed out as lines.
    start: usize,
    max_line: usize,
    /// Set after a too-long line: bytes up to the next newline are dropped.
    skipping: bool,
    /// Bytes received so far.
    received: u64,
}

/// A stream whose reads can be bounded in time.
pub trait TimedRead: Read {
    /// Makes the next reads give up after `timeout` (`None`: wait forever).
    fn set_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()>;
}

impl TimedRead for TcpStream {
    fn set_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(timeout)
    }
}

/// Standard input, read without a deadline: `referee engine` waits for its
/// harness as long as the harness runs.
impl TimedRead for std::io::Stdin {
    fn set_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        match timeout {
            None => Ok(()),
            Some(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "standard input is read without a deadline",
            )),
        }
    }
}

impl<R: TimedRead> LineReader<R> {
    /// A reader of lines of at most `max_line` bytes (the newline excluded).
    pub fn new(inner: R, max_line: usize) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(CHUNK),
            start: 0,
            max_line: max_line.max(1),
            skipping: false,
            received: 0,
        }
    }

    /// The next line without its `\n` (a trailing `\r` is kept for the caller
    /// to judge), or why there is none by `deadline` (`None`: no deadline).
    pub(crate) fn read_line(&mut self, deadline: Option<Instant>) -> Result<Vec<u8>, LineError> {
        loop {
            if let Some(i) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
                let end = self.start + i;
                let skipped = std::mem::replace(&mut self.skipping, false);
                let too_long = end - self.start > self.max_line;
                let line = self.buf[self.start..end].to_vec();
                self.start = end + 1;
                self.compact();
                if skipped {
                    // The tail of a line already reported as too long.
                    continue;
                }
                if too_long {
                    return Err(LineError::TooLong);
                }
                return Ok(line);
            }
            if self.skipping {
                self.buf.clear();
                self.start = 0;
            } else if self.buf.len() - self.start > self.max_line {
                self.buf.clear();
                self.start = 0;
                self.skipping = true;
                return Err(LineError::TooLong);
            }
            self.fill(deadline)?;
        }
    }

    fn compact(&mut self) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > CHUNK {
            self.buf.drain(..self.start);
            self.start = 0;
        }
    }

    /// Reads one chunk, waiting at most until `deadline`.
    fn fill(&mut self, deadline: Option<Instant>) -> Result<(), LineError> {
        let timeout = match deadline {
            None => None,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(LineError::Timeout);
                }
                Some(left)
            }
        };
        self.inner.set_timeout(timeout).map_err(LineError::Io)?;
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        let got = self.inner.read(&mut self.buf[old..]);
        match got {
            Ok(0) => {
                self.buf.truncate(old);
                Err(LineError::Closed)
            }
            Ok(n) => {
                self.buf.truncate(old + n);
                self.received += n as u64;
                Ok(())
            }
            Err(e) => {
                self.buf.truncate(old);
                match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                        // Loop again: the deadline check decides.
                        Ok(())
                    }
                    io::ErrorKind::Interrupted => Ok(()),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
                        Err(LineError::Closed)
                    }
                    _ => Err(LineError::Io(e)),
                }
            }
        }
    }

    /// Bytes received so far: 0 for a peer that never sent anything.
    pub(crate) fn received(&self) -> u64 {
        self.received
    }
}

/// A stream that hands out scripted chunks, then end of file (for tests).
#[cfg(test)]
pub(crate) struct Script(std::collections::VecDeque<Vec<u8>>);

#[cfg(test)]
impl Script {
    /// The whole of `text` in one chunk.
    pub(crate) fn lines(text: &str) -> Script {
        Script([text.as_bytes().to_vec()].into_iter().collect())
    }
}

#[cfg(test)]
impl Read for Script {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self.0.pop_front() {
            None => Ok(0),
            Some(mut c) => {
                let n = c.len().min(out.len());
                out[..n].copy_from_slice(&c[..n]);
                if n < c.len() {
                    self.0.push_front(c.split_off(n));
                }
                Ok(n)
            }
        }
    }
}

#[cfg(test)]
impl TimedRead for Script {
    fn set_timeout(&mut self, _t: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(chunks: &[&[u8]], max: usize) -> LineReader<Script> {
        LineReader::new(Script(chunks.iter().map(|c| c.to_vec()).collect()), max)
    }

    #[test]
    fn lines_across_chunks() {
        let mut r = reader(&[b"ab", b"c\nde\r\n", b"f\n", b"tail"], 16);
        assert_eq!(r.read_line(None).unwrap(), b"abc");
        assert_eq!(r.read_line(None).unwrap(), b"de\r");
        assert_eq!(r.read_line(None).unwrap(), b"f");
        assert!(matches!(r.read_line(None), Err(LineError::Closed)));
    }

    #[test]
    fn long_line_is_reported_once_and_skipped() {
        let long = vec![b'x'; 20_000];
        let mut r = reader(&[&long, b"yyy\nok\n"], 100);
        assert!(matches!(r.read_line(None), Err(LineError::TooLong)));
        assert_eq!(r.read_line(None).unwrap(), b"ok");
        // Memory stays near the limit plus one chunk.
        assert!(r.buf.capacity() <= 100 + 3 * CHUNK, "{}", r.buf.capacity());
        let mut r = reader(&[b"0123456789\nabc\n"], 5);
        assert!(matches!(r.read_line(None), Err(LineError::TooLong)));
        assert_eq!(r.read_line(None).unwrap(), b"abc");
    }

    #[test]
    fn past_deadline_is_a_timeout() {
        let mut r = reader(&[b"partial"], 100);
        let past = Instant::now() - Duration::from_millis(1);
        assert!(matches!(r.read_line(Some(past)), Err(LineError::Timeout)));
    }
}

#[cfg(test)]
mod props {
    //! Property tests: whatever a client sends, in whatever chunks, the
    //! reader returns exactly its complete lines, reports each over-long line
    //! once, never holds more than the limit and two chunks, and never panics.
    use super::*;
    use proptest::prelude::*;

    /// What the reader must return for `input`: each complete line, or
    /// `None` for one too long.
    fn expected(input: &[u8], max: usize) -> Vec<Option<Vec<u8>>> {
        let max = max.max(1);
        let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        // The partial last line (or the empty tail) is dropped, but one
        // already over the limit is reported before the end.
        let partial = parts.pop().unwrap_or_default();
        let mut out: Vec<Option<Vec<u8>>> = parts
            .into_iter()
            .map(|l| (l.len() <= max).then(|| l.to_vec()))
            .collect();
        if partial.len() > max {
            out.push(None);
        }
        out
    }

    fn input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'x'), any::<u8>()],
                0..400
            ),
            // Long lines around the limit.
            prop::collection::vec((1usize..40, any::<bool>()), 0..12).prop_map(|ls| {
                let mut v = Vec::new();
                for (n, nl) in ls {
                    v.extend(std::iter::repeat_n(b'a', n));
                    if nl {
                        v.push(b'\n');
                    }
                }
                v
            }),
        ]
    }

    proptest! {
        #[test]
        fn lines_come_out_as_sent(
            data in input(), cuts in prop::collection::vec(1usize..50, 0..20), max in 0usize..30
        ) {
            let mut chunks = Vec::new();
            let mut rest = &data[..];
            for c in cuts {
                let n = c.min(rest.len());
                chunks.push(rest[..n].to_vec());
                rest = &rest[n..];
            }
            chunks.push(rest.to_vec());
            let mut r = LineReader::new(Script(chunks.into_iter().collect()), max);
            let mut got = Vec::new();
            loop {
                match r.read_line(None) {
                    Ok(line) => got.push(Some(line)),
                    Err(LineError::TooLong) => got.push(None),
                    Err(LineError::Closed) => break,
                    Err(e) => panic!("unexpected {e}"),
                }
                prop_assert!(r.buf.len() <= r.max_line + 2 * CHUNK);
            }
            prop_assert_eq!(got, expected(&data, max));
            prop_assert_eq!(r.received(), data.len() as u64);
        }
    }
}
