//! One connection's socket with its input and output buffers; the [`Client`] the backend writes
//! results through.

use crate::backend::{Client, FieldDescription};
use crate::codec::{self, FrontendMessage};
use bytes::{Buf, Bytes, BytesMut};
use keel_common::{PgError, PgResult, sqlstate};
use std::io;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Output is written to the socket once this much is buffered, even mid-statement.
pub const FLUSH_THRESHOLD: usize = 64 * 1024;

/// A byte stream a connection runs on. `try_write_now` lets the synchronous [`Client`] methods
/// drain a large buffer without awaiting; streams that cannot do that keep buffering.
pub trait Transport: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    fn try_write_now(&self, _buf: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::WouldBlock.into())
    }

    /// The client's address, for the log.
    fn peer(&self) -> Option<std::net::SocketAddr> {
        None
    }

    /// The socket, for checking that the client is still there (see `CancelToken`).
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
}

impl Transport for tokio::net::TcpStream {
    fn try_write_now(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write(buf)
    }

    fn peer(&self) -> Option<std::net::SocketAddr> {
        self.peer_addr().ok()
    }

    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        Some(std::os::fd::AsRawFd::as_raw_fd(self))
    }
}

impl Transport for tokio::io::DuplexStream {}

/// Why reading a message failed.
#[derive(Debug)]
pub enum ReadError {
    /// The client went away (EOF or socket error): just disconnect.
    Gone,
    /// Framing is broken: send this FATAL error and disconnect.
    Fatal(PgError),
}

pub struct Conn<S> {
    stream: S,
    rbuf: BytesMut,
    pub(crate) wbuf: BytesMut,
    /// Set once a write failed or EOF was seen: the client is gone, further output is dropped.
    pub(crate) broken: bool,
    /// The smallest read: small until the client has authenticated, so that thousands of
    /// connections idling in startup cost little memory.
    min_read: usize,
}

/// Read size during startup and authentication: a startup packet is rarely over 200 bytes.
const STARTUP_READ: usize = 512;
/// Read size once authenticated: pipelined messages are parsed from one `read`.
const SESSION_READ: usize = 8192;
/// Input and output buffers are bounded by the largest message (1 GB, PostgreSQL's limits in
/// `codec`); one that grew past this is released once it is empty again.
const KEEP_CAPACITY: usize = 1 << 20;

impl<S: Transport> Conn<S> {
    pub fn new(stream: S) -> Self {
        Conn {
            stream,
            rbuf: BytesMut::new(),
            wbuf: BytesMut::new(),
            broken: false,
            min_read: STARTUP_READ,
        }
    }

    /// The client has authenticated: buffers of a session's size from now on.
    pub fn authenticated(&mut self) {
        self.min_read = SESSION_READ;
        self.wbuf.reserve(SESSION_READ);
    }

    pub fn stream(&self) -> &S {
        &self.stream
    }

    async fn fill(&mut self, need: usize) -> Result<(), ReadError> {
        while self.rbuf.len() < need {
            if self.broken {
                return Err(ReadError::Gone);
            }
            // Grow toward the message size in steps of at most 1 MB: a header claiming 1 GB
            // costs memory only as the bytes actually arrive.
            self.rbuf
                .reserve((need - self.rbuf.len()).clamp(self.min_read, 1 << 20));
            match self.stream.read_buf(&mut self.rbuf).await {
                Ok(0) | Err(_) => {
                    self.broken = true;
                    return Err(ReadError::Gone);
                }
                Ok(_) => {}
            }
        }
        Ok(())
    }

    /// Reads the untyped startup packet; returns its body after the length word.
    pub async fn read_startup(&mut self) -> Result<Bytes, ReadError> {
        self.fill(4).await?;
        let len = i32::from_be_bytes([self.rbuf[0], self.rbuf[1], self.rbuf[2], self.rbuf[3]]);
        if len < 8 || len as usize > codec::MAX_STARTUP_PACKET_LENGTH {
            return Err(ReadError::Fatal(PgError::fatal(
                sqlstate::PROTOCOL_VIOLATION,
                "invalid length of startup packet",
            )));
        }
        self.fill(len as usize).await?;
        self.rbuf.advance(4);
        Ok(self.rbuf.split_to(len as usize - 4).freeze())
    }

    /// An empty output buffer that grew past [`KEEP_CAPACITY`] (one huge row) is given back,
    /// so an idle connection holds no more than a session's buffer sizes.
    fn shrink_wbuf(&mut self) {
        if self.wbuf.is_empty() && self.wbuf.capacity() > KEEP_CAPACITY {
            self.wbuf = BytesMut::with_capacity(SESSION_READ);
        }
    }

    /// Reads one typed message: its tag and body.
    pub async fn read_message(&mut self) -> Result<(u8, Bytes), ReadError> {
        self.fill(5).await?;
        let tag = self.rbuf[0];
        let len = i32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]]);
        let body = codec::check_header(tag, len).map_err(ReadError::Fatal)?;
        self.fill(5 + body).await?;
        self.rbuf.advance(5);
        let msg = self.rbuf.split_to(body).freeze();
        if body > KEEP_CAPACITY {
            // The input buffer still points into the message's allocation (up to 1 GB) and
            // would reuse it for the next read: what follows moves to a buffer of its own,
            // so the allocation goes with the message.
            self.rbuf = BytesMut::from(&self.rbuf[..]);
        }
        Ok((tag, msg))
    }

    pub async fn write_raw(&mut self, data: &[u8]) {
        self.wbuf.extend_from_slice(data);
        self.flush_out().await;
    }

    /// Writes all buffered output. A failure marks the connection broken (the read side will
    /// then report the client gone); it is not an error for the caller.
    pub async fn flush_out(&mut self) {
        if self.broken {
            self.wbuf.clear();
            return;
        }
        if !self.wbuf.is_empty() {
            if self.stream.write_all(&self.wbuf).await.is_err() {
                self.broken = true;
            }
            self.wbuf.clear();
            self.shrink_wbuf();
        }
        if !self.broken && self.stream.flush().await.is_err() {
            self.broken = true;
        }
    }

    /// Flushes if the buffer grew past [`FLUSH_THRESHOLD`].
    pub async fn flush_if_large(&mut self) {
        if self.wbuf.len() >= FLUSH_THRESHOLD {
            self.flush_out().await;
        }
    }

    /// Drains what the socket accepts right now, without waiting (called from sync writers).
    fn drain_now(&mut self) {
        if self.broken {
            self.wbuf.clear();
            return;
        }
        while !self.wbuf.is_empty() {
            match self.stream.try_write_now(&self.wbuf) {
                Ok(0) => {
                    self.broken = true;
                    self.wbuf.clear();
                    return;
                }
                Ok(n) => {
                    self.wbuf.advance(n);
                    self.shrink_wbuf();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.broken = true;
                    self.wbuf.clear();
                    return;
                }
            }
        }
    }

    #[inline]
    fn after_write(&mut self) {
        if self.wbuf.len() >= FLUSH_THRESHOLD {
            self.drain_now();
        }
    }

    pub fn error(&mut self, e: &PgError) {
        codec::error_fields(&mut self.wbuf, b'E', e);
    }

    pub async fn shutdown(&mut self) {
        self.flush_out().await;
        let _ = self.stream.shutdown().await;
    }
}

fn copy_failed(msg: &str) -> PgError {
    PgError::new(
        sqlstate::QUERY_CANCELED,
        format!("COPY from stdin failed: {msg}"),
    )
}

impl<S: Transport> Client for Conn<S> {
    fn row_description(&mut self, fields: &[FieldDescription]) {
        codec::row_description(&mut self.wbuf, fields);
        self.after_write();
    }

    #[inline]
    fn data_row(&mut self, values: &[Option<&[u8]>]) {
        codec::data_row(&mut self.wbuf, values);
        self.after_write();
    }

    fn command_complete(&mut self, tag: &str) {
        codec::command_complete(&mut self.wbuf, tag);
    }

    fn empty_query(&mut self) {
        codec::empty(&mut self.wbuf, b'I');
    }

    fn notice(&mut self, notice: &PgError) {
        codec::error_fields(&mut self.wbuf, b'N', notice);
        self.after_write();
    }

    fn parameter_status(&mut self, name: &str, value: &str) {
        codec::parameter_status(&mut self.wbuf, name, value);
    }

    async fn copy_in_start(&mut self, binary: bool, columns: usize) -> PgResult<()> {
        codec::copy_response(&mut self.wbuf, b'G', binary, columns);
        self.flush_out().await;
        if self.broken {
            return Err(gone());
        }
        Ok(())
    }

    async fn copy_in_next(&mut self) -> PgResult<Option<Bytes>> {
        loop {
            let (tag, body) = match self.read_message().await {
                Ok(m) => m,
                Err(ReadError::Gone) => return Err(gone()),
                Err(ReadError::Fatal(e)) => {
                    // Framing is lost: report and make the main loop disconnect.
                    self.error(&e);
                    self.flush_out().await;
                    self.broken = true;
                    return Err(e);
                }
            };
            match tag {
                b'd' => {
                    // CopyData carries raw bytes: no decoding needed beyond the frame.
                    return Ok(Some(body));
                }
                b'c' => return Ok(None),
                b'f' => {
                    return Err(match codec::decode(tag, &body) {
                        Ok(FrontendMessage::CopyFail(msg)) => copy_failed(msg),
                        Ok(_) => copy_failed(""),
                        Err(e) => e,
                    });
                }
                // PostgreSQL ignores Flush and Sync during COPY IN.
                b'H' | b'S' => continue,
                other => {
                    return Err(PgError::new(
                        sqlstate::PROTOCOL_VIOLATION,
                        format!("unexpected message type 0x{other:02X} during COPY from stdin"),
                    ));
                }
            }
        }
    }

    fn copy_out_start(&mut self, binary: bool, columns: usize) {
        codec::copy_response(&mut self.wbuf, b'H', binary, columns);
    }

    fn copy_out_data(&mut self, data: &[u8]) {
        codec::copy_data(&mut self.wbuf, data);
        self.after_write();
    }

    fn copy_out_done(&mut self) {
        codec::empty(&mut self.wbuf, b'c');
    }

    fn wants_flush(&self) -> bool {
        self.wbuf.len() >= FLUSH_THRESHOLD
    }

    async fn flush(&mut self) -> PgResult<()> {
        self.flush_out().await;
        if self.broken {
            return Err(gone());
        }
        Ok(())
    }
}

fn gone() -> PgError {
    PgError::new(sqlstate::CONNECTION_FAILURE, "connection to client lost")
}
