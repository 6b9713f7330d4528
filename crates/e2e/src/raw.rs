//! A minimal hand-rolled PostgreSQL v3 frontend over a blocking TcpStream, for tests that must
//! send what no well-behaved driver would: garbage, truncated frames, absurd lengths, or a
//! session that vanishes mid-transaction or mid-COPY.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

/// One backend message: type byte and body (without the length word).
pub type Msg = (u8, Vec<u8>);

pub struct RawConn {
    pub stream: TcpStream,
}

impl RawConn {
    pub fn connect(port: u16) -> io::Result<RawConn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_write_timeout(Some(Duration::from_secs(30)))?;
        Ok(RawConn { stream })
    }

    /// Connects and completes a trust-auth startup, returning once ReadyForQuery arrives.
    pub fn login(port: u16) -> io::Result<RawConn> {
        let mut c = RawConn::connect(port)?;
        c.send(&startup_message("postgres", "postgres"))?;
        let msgs = c.read_until_ready()?;
        if let Some((_, body)) = msgs.iter().find(|(t, _)| *t == b'E') {
            return Err(io::Error::other(format!(
                "startup error: {}",
                String::from_utf8_lossy(body)
            )));
        }
        Ok(c)
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    /// Reads one message; `Ok(None)` on a clean EOF.
    pub fn read_msg(&mut self) -> io::Result<Option<Msg>> {
        let mut head = [0u8; 5];
        match self.stream.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        if !(4..=64 << 20).contains(&len) {
            return Err(io::Error::other(format!("bad backend length {len}")));
        }
        let mut body = vec![0u8; len - 4];
        self.stream.read_exact(&mut body)?;
        Ok(Some((head[0], body)))
    }

    /// Reads messages up to and including ReadyForQuery ('Z').
    pub fn read_until_ready(&mut self) -> io::Result<Vec<Msg>> {
        let mut out = Vec::new();
        loop {
            match self.read_msg()? {
                Some(m) => {
                    let done = m.0 == b'Z';
                    out.push(m);
                    if done {
                        return Ok(out);
                    }
                }
                None => return Err(io::Error::other("EOF before ReadyForQuery")),
            }
        }
    }

    /// Reads messages until one of type `want` arrives (returned last).
    pub fn read_until(&mut self, want: u8) -> io::Result<Vec<Msg>> {
        let mut out = Vec::new();
        loop {
            match self.read_msg()? {
                Some(m) => {
                    let done = m.0 == want;
                    out.push(m);
                    if done {
                        return Ok(out);
                    }
                }
                None => return Err(io::Error::other("EOF")),
            }
        }
    }

    /// Simple query; returns everything up to ReadyForQuery, failing on an ErrorResponse.
    pub fn simple(&mut self, sql: &str) -> io::Result<Vec<Msg>> {
        self.send(&query_message(sql))?;
        let msgs = self.read_until_ready()?;
        if let Some((_, body)) = msgs.iter().find(|(t, _)| *t == b'E') {
            return Err(io::Error::other(format!(
                "{sql}: {}",
                String::from_utf8_lossy(body)
            )));
        }
        Ok(msgs)
    }

    /// Drains whatever the server sends until it closes the connection or goes quiet for
    /// `quiet`. Returns the bytes received and whether the server closed the connection
    /// (EOF or reset) rather than just going quiet.
    pub fn drain(&mut self, quiet: Duration) -> (Vec<u8>, bool) {
        let _ = self.stream.set_read_timeout(Some(quiet));
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return (all, true),
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) => {
                    let quiet = matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    );
                    return (all, !quiet);
                }
            }
        }
    }

    /// Hard close: both directions, no Terminate message.
    pub fn vanish(self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn frame(tag: Option<u8>, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 5);
    if let Some(t) = tag {
        v.push(t);
    }
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

/// StartupMessage, protocol 3.0.
pub fn startup_message(user: &str, db: &str) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&196608u32.to_be_bytes());
    for (k, v) in [("user", user), ("database", db)] {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    frame(None, &body)
}

pub fn query_message(sql: &str) -> Vec<u8> {
    let mut body = sql.as_bytes().to_vec();
    body.push(0);
    frame(Some(b'Q'), &body)
}

pub fn copy_data(data: &[u8]) -> Vec<u8> {
    frame(Some(b'd'), data)
}

pub fn copy_done() -> Vec<u8> {
    frame(Some(b'c'), &[])
}

pub fn terminate() -> Vec<u8> {
    frame(Some(b'X'), &[])
}

/// The SQLSTATE ('C' field) of an ErrorResponse body.
pub fn error_code(body: &[u8]) -> Option<String> {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'C'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
}
