//! Keel's hand-written codec vs pgwire's message codecs on the two hot paths of pgbench:
//! DataRow encoding (`-S`) and Bind decoding (`-M prepared`). Plain timing, best of 5 runs.
//! Run: `cargo bench -p keel-wire --features pgwire-bench`.

use bytes::{BufMut, Bytes, BytesMut};
use keel_wire::codec::{self, FrontendMessage};
use pgwire::messages::data::DataRow;
use pgwire::messages::extendedquery::Bind;
use pgwire::messages::{DecodeContext, Message, ProtocolVersion};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn best_of<F: FnMut()>(mut f: F) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

const ROWS: usize = 1_000_000;

fn report(name: &str, n: usize, keel: Duration, pgwire: Duration) {
    let k = keel.as_nanos() as f64 / n as f64;
    let p = pgwire.as_nanos() as f64 / n as f64;
    println!(
        "{name:<34} keel {k:7.1} ns/msg   pgwire {p:7.1} ns/msg   pgwire/keel {:.2}x",
        p / k
    );
}

fn data_rows(name: &str, row: &[Option<&[u8]>]) {
    let mut out = BytesMut::with_capacity(64 * 1024);
    let keel = best_of(|| {
        for _ in 0..ROWS {
            codec::data_row(&mut out, black_box(row));
            if out.len() > 60 * 1024 {
                out.clear();
            }
        }
        out.clear();
    });
    // pgwire's DataRow holds its already-encoded fields; the best case reuses one row buffer.
    let mut pg_row = DataRow::new(BytesMut::with_capacity(256), 0);
    let pgwire = best_of(|| {
        for _ in 0..ROWS {
            pg_row.data.clear();
            pg_row.field_count = row.len() as i16;
            for v in black_box(row) {
                match v {
                    Some(b) => {
                        pg_row.data.put_i32(b.len() as i32);
                        pg_row.data.put_slice(b);
                    }
                    None => pg_row.data.put_i32(-1),
                }
            }
            pg_row.encode(&mut out).unwrap();
            if out.len() > 60 * 1024 {
                out.clear();
            }
        }
        out.clear();
    });
    report(name, ROWS, keel, pgwire);
}

fn bind_message(params: &[&[u8]]) -> Vec<u8> {
    let mut body = BytesMut::new();
    body.put_slice(b"\0P0_1\0");
    body.put_i16(0);
    body.put_i16(params.len() as i16);
    for p in params {
        body.put_i32(p.len() as i32);
        body.put_slice(p);
    }
    body.put_i16(0);
    let mut m = vec![b'B'];
    m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    m.extend_from_slice(&body);
    m
}

fn binds(name: &str, params: &[&[u8]]) {
    let one = bind_message(params);
    const N: usize = 200_000;
    let mut stream = BytesMut::with_capacity(one.len() * N);
    for _ in 0..N {
        stream.put_slice(&one);
    }
    // Both decode a buffer holding N pipelined messages, as the read loop does.
    let keel = best_of(|| {
        let mut buf = stream.clone();
        for _ in 0..N {
            let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
            let body_len = codec::check_header(buf[0], len).unwrap();
            bytes::Buf::advance(&mut buf, 5);
            let frame: Bytes = buf.split_to(body_len).freeze();
            match codec::decode(b'B', &frame).unwrap() {
                FrontendMessage::Bind { params, .. } => {
                    black_box(params);
                }
                _ => unreachable!(),
            }
        }
    });
    let ctx = DecodeContext::new(ProtocolVersion::PROTOCOL3_0);
    let pgwire = best_of(|| {
        let mut buf = stream.clone();
        for _ in 0..N {
            let b = Bind::decode(&mut buf, &ctx).unwrap().unwrap();
            black_box(b);
        }
    });
    report(name, N, keel, pgwire);
}

fn main() {
    malformed_bind();
    data_rows("DataRow 1 int (pgbench -S)", &[Some(b"4242424")]);
    let ten: Vec<Option<&[u8]>> = (0..10)
        .map(|i| {
            if i == 3 {
                None
            } else {
                Some(&b"some text value"[..(i + 5)])
            }
        })
        .collect();
    data_rows("DataRow 10 mixed fields", &ten);
    binds("Bind 1 param (pgbench -S -M prep)", &[b"4242424"]);
    binds(
        "Bind 3 params (tpcb UPDATE)",
        &[b"-4321", b"4242424", b"17"],
    );
}

/// Robustness probe: a Bind whose declared length is right but whose body is truncated.
fn malformed_bind() {
    let msg: &[u8] = &[b'B', 0, 0, 0, 8, 0, 0, 0, 0];
    let frame = Bytes::copy_from_slice(&msg[5..]);
    println!(
        "keel   truncated Bind -> {:?}",
        codec::decode(b'B', &frame)
            .map(|_| ())
            .map_err(|e| e.message)
    );
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(|| {
        let mut buf = BytesMut::from(msg);
        Bind::decode(&mut buf, &DecodeContext::new(ProtocolVersion::PROTOCOL3_0)).map(|_| ())
    });
    println!(
        "pgwire truncated Bind -> {}",
        if r.is_err() { "panic" } else { "no panic" }
    );
}
