//! `league serve`'s connections: its own accept loop around hyper, so that
//! slow or idle clients cannot hold the page for everyone else.
//!
//! - At most [`WebLimits::max_connections`] connections are served at
//!   once, and [`WebLimits::max_per_address`] from one IP address; one more
//!   is answered `503 Service Unavailable` at once and closed, so that it
//!   holds no file descriptor and no place in the listen queue.
//! - A connection on which no byte is read or written for
//!   [`WebLimits::stall`] is closed: an idle keep-alive connection, a
//!   client that opened a socket and sent nothing, one that does not read
//!   its answer.
//! - A request whose header is not all in within [`WebLimits::stall`] is
//!   closed too (hyper's header read timeout): a client sending a header
//!   byte every few seconds (slow loris) keeps the connection busy but not
//!   for long.
//! - A connection buffers at most 64 KiB of a request's header.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// `--max-connections`'s default: well under the common limit of 1024 open
/// files, with room for the database and the refresher.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// `--max-per-address`'s default: a class's browsers keep a few
/// connections each; one machine cannot take every place.
pub const DEFAULT_MAX_PER_ADDRESS: usize = 64;

/// How long a connection may go without a byte either way, and a request's
/// header may take to arrive.
pub const STALL: Duration = Duration::from_secs(10);

/// The most of a request the server buffers per connection.
const MAX_BUFFER: usize = 64 * 1024;

/// The limits on the page's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebLimits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections served at once from one IP address.
    pub max_per_address: usize,
    /// A connection with no byte read or written for this long is closed,
    /// and so is one whose request header takes longer to arrive.
    pub stall: Duration,
}

impl Default for WebLimits {
    fn default() -> Self {
        WebLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_per_address: DEFAULT_MAX_PER_ADDRESS,
            stall: STALL,
        }
    }
}

/// Connections being served, in all and by address.
#[derive(Default)]
struct Counts {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// A connection's place in the counts, given back when it is dropped.
struct Place {
    counts: Arc<Mutex<Counts>>,
    ip: IpAddr,
}

impl Place {
    /// A place for a connection from `ip`, or why there is none.
    fn take(counts: &Arc<Mutex<Counts>>, ip: IpAddr, limits: &WebLimits) -> Option<Place> {
        let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
        let mine = c.by_address.get(&ip).copied().unwrap_or(0);
        if c.total >= limits.max_connections || mine >= limits.max_per_address {
            return None;
        }
        c.total += 1;
        c.by_address.insert(ip, mine + 1);
        Some(Place {
            counts: Arc::clone(counts),
            ip,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by_address.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                c.by_address.remove(&self.ip);
            }
        }
    }
}

/// What a connection past the limits is told before it is closed.
const BUSY: &str = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
                    content-length: 37\r\nretry-after: 10\r\nconnection: close\r\n\r\n\
                    too many connections; try again soon\n";

/// Serves `router` on `listener` within `limits` until `stopped` says so
/// (it is asked every 100 ms).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: WebLimits,
    stopped: impl Fn() -> bool,
) {
    let counts = Arc::new(Mutex::new(Counts::default()));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {
                if stopped() {
                    return;
                }
                continue;
            }
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(_) => {
                // Out of file descriptors and the like: wait a little
                // rather than spin; connections that end free some.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(place) = Place::take(&counts, peer.ip(), &limits) else {
            // Never waits: a client that does not read gets what fits.
            let _ = stream.try_write(BUSY.as_bytes());
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let io = TokioIo::new(Stall::new(stream, limits.stall));
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(limits.stall)
                .max_buf_size(MAX_BUFFER);
            // A client gone or too slow ends its own connection, no other.
            let _ = http.serve_connection(io, service).await;
            drop(place);
        });
    }
}

/// A connection that fails once no byte has been read or written for its
/// limit while the server waits on it: every byte either way starts the
/// limit again.
struct Stall {
    io: TcpStream,
    limit: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl Stall {
    fn new(io: TcpStream, limit: Duration) -> Stall {
        Stall {
            io,
            limit,
            deadline: Box::pin(tokio::time::sleep(limit)),
        }
    }

    fn progress(&mut self) {
        let next = Instant::now() + self.limit;
        self.deadline.as_mut().reset(next);
    }

    /// Pending while the limit has not passed (the deadline wakes the task
    /// when it does), else the error that closes the connection.
    fn waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no byte either way within the limit",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl AsyncRead for Stall {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.progress();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }
}

impl AsyncWrite for Stall {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_write(cx, buf) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    this.progress();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_flush(cx) {
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_shutdown(cx) {
            Poll::Pending => this.waiting(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_and_given_back() {
        let counts = Arc::new(Mutex::new(Counts::default()));
        let limits = WebLimits {
            max_connections: 3,
            max_per_address: 2,
            stall: STALL,
        };
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let a1 = Place::take(&counts, a, &limits).unwrap();
        let a2 = Place::take(&counts, a, &limits).unwrap();
        assert!(Place::take(&counts, a, &limits).is_none(), "per address");
        let b1 = Place::take(&counts, b, &limits).unwrap();
        assert!(Place::take(&counts, b, &limits).is_none(), "in all");
        drop(a1);
        let a3 = Place::take(&counts, a, &limits).unwrap();
        drop((a2, a3, b1));
        let c = counts.lock().unwrap();
        assert_eq!(c.total, 0);
        assert!(c.by_address.is_empty());
    }
}
