//! The frontend-message decoder on arbitrary bytes. The first byte picks the phase:
//! even = a startup packet (length word + body, as `decode_startup` sees it after framing);
//! odd = a stream of regular messages `[tag][len: i32][body]`, each checked with
//! `check_header` and, when the header is valid, decoded from a frame of exactly that body.
//! Any panic (slice out of range, overflow in debug builds, unwrap) is a bug: a client
//! controls all of these bytes.

use bytes::Bytes;
use keel_wire::codec::{check_header, decode, decode_startup};

pub fn wire_decode(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let _ = decode_startup(&Bytes::copy_from_slice(rest));
        return;
    }
    let mut buf = rest;
    while buf.len() >= 5 {
        let tag = buf[0];
        let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
        buf = &buf[5..];
        let Ok(body_len) = check_header(tag, len) else {
            // FATAL on a bad header: the connection would be closed here.
            return;
        };
        let take = body_len.min(buf.len());
        let frame = Bytes::copy_from_slice(&buf[..take]);
        buf = &buf[take..];
        let _ = decode(tag, &frame);
    }
}
