use super::*;

fn frame(parts: &[&[u8]]) -> Bytes {
    Bytes::from(parts.concat())
}

#[test]
fn header_limits_follow_postgres() {
    assert_eq!(check_header(b'Q', 4).unwrap(), 0);
    assert_eq!(
        check_header(b'Q', 0).unwrap_err().message,
        "invalid message length"
    );
    assert_eq!(
        check_header(b'S', 3).unwrap_err().message,
        "invalid message length"
    );
    assert!(check_header(b'S', 10_004).is_ok());
    assert!(check_header(b'S', 10_005).is_err());
    assert!(check_header(b'Q', 0x3fff_fffe + 4).is_ok());
    assert!(check_header(b'Q', i32::MAX).is_err());
    assert!(check_header(b'Q', -5).is_err());
    let e = check_header(b'x', 8).unwrap_err();
    assert_eq!(e.message, "invalid frontend message type 120");
    assert_eq!(e.code, "08P01");
    assert_eq!(e.severity, keel_common::Severity::Fatal);
}

#[test]
fn decodes_query_parse_bind_execute() {
    let q = frame(&[b"select 1\0"]);
    assert_eq!(
        decode(b'Q', &q).unwrap(),
        FrontendMessage::Query("select 1")
    );

    let p = frame(&[
        b"s1\0select $1\0",
        &1i16.to_be_bytes(),
        &23i32.to_be_bytes(),
    ]);
    assert_eq!(
        decode(b'P', &p).unwrap(),
        FrontendMessage::Parse {
            name: "s1",
            sql: "select $1",
            param_types: vec![23]
        }
    );

    let b = frame(&[
        b"p\0s1\0",
        &1i16.to_be_bytes(),
        &0i16.to_be_bytes(),
        &2i16.to_be_bytes(),
        &2i32.to_be_bytes(),
        b"42",
        &(-1i32).to_be_bytes(),
        &1i16.to_be_bytes(),
        &1i16.to_be_bytes(),
    ]);
    match decode(b'B', &b).unwrap() {
        FrontendMessage::Bind {
            portal,
            statement,
            param_formats,
            params,
            result_formats,
        } => {
            assert_eq!((portal, statement), ("p", "s1"));
            assert_eq!(param_formats, vec![0]);
            assert_eq!(params, vec![Some(Bytes::from_static(b"42")), None]);
            assert_eq!(result_formats, vec![1]);
        }
        other => panic!("{other:?}"),
    }

    let e = frame(&[b"p\0", &(-3i32).to_be_bytes()]);
    assert_eq!(
        decode(b'E', &e).unwrap(),
        FrontendMessage::Execute {
            portal: "p",
            max_rows: 0
        }
    );
    let e = frame(&[b"\0", &10i32.to_be_bytes()]);
    assert_eq!(
        decode(b'E', &e).unwrap(),
        FrontendMessage::Execute {
            portal: "",
            max_rows: 10
        }
    );
}

#[test]
fn malformed_bodies_are_errors_not_panics() {
    // Missing terminator.
    assert_eq!(
        decode(b'Q', &frame(&[b"select"])).unwrap_err().message,
        "invalid string in message"
    );
    // Trailing garbage.
    assert_eq!(
        decode(b'S', &frame(&[b"x"])).unwrap_err().message,
        "invalid message format"
    );
    // Truncated int.
    assert_eq!(
        decode(b'E', &frame(&[b"p\0\0\0"])).unwrap_err().message,
        "insufficient data left in message"
    );
    // Parameter length beyond the message.
    let b = frame(&[
        b"\0\0",
        &0i16.to_be_bytes(),
        &1i16.to_be_bytes(),
        &100i32.to_be_bytes(),
        b"ab",
    ]);
    assert!(decode(b'B', &b).is_err());
    // Negative length other than -1.
    let b = frame(&[
        b"\0\0",
        &0i16.to_be_bytes(),
        &1i16.to_be_bytes(),
        &(-7i32).to_be_bytes(),
        &0i16.to_be_bytes(),
    ]);
    assert!(decode(b'B', &b).is_err());
    // Huge counts.
    let b = frame(&[b"\0\0", &i16::MAX.to_be_bytes()]);
    assert!(decode(b'B', &b).is_err());
    let p = frame(&[b"\0x\0", &(-1i16).to_be_bytes()]);
    assert!(decode(b'P', &p).is_err());
    // Format count mismatch.
    let b = frame(&[
        b"\0\0",
        &2i16.to_be_bytes(),
        &0i16.to_be_bytes(),
        &0i16.to_be_bytes(),
        &1i16.to_be_bytes(),
        &(-1i32).to_be_bytes(),
        &0i16.to_be_bytes(),
    ]);
    assert_eq!(
        decode(b'B', &b).unwrap_err().message,
        "bind message has 2 parameter formats but 1 parameters"
    );
    // Bad Describe subtype.
    assert_eq!(
        decode(b'D', &frame(&[b"X\0"])).unwrap_err().message,
        "invalid DESCRIBE message subtype 88"
    );
    assert_eq!(
        decode(b'C', &frame(&[b"Z\0"])).unwrap_err().message,
        "invalid CLOSE message subtype 90"
    );
    // Invalid UTF-8.
    let e = decode(b'Q', &frame(&[b"select '\xff'\0"])).unwrap_err();
    assert_eq!(e.code, "22021");
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
}

#[test]
fn every_prefix_of_every_message_decodes_without_panic() {
    let msgs: Vec<(u8, Vec<u8>)> = vec![
        (
            b'P',
            [b"s\0select 1\0".as_slice(), &2i16.to_be_bytes(), &[0; 8]].concat(),
        ),
        (
            b'B',
            [
                b"\0\0".as_slice(),
                &1i16.to_be_bytes(),
                &[0, 1],
                &1i16.to_be_bytes(),
                &3i32.to_be_bytes(),
                b"abc",
                &0i16.to_be_bytes(),
            ]
            .concat(),
        ),
        (b'E', [b"\0".as_slice(), &0i32.to_be_bytes()].concat()),
        (b'D', b"Sname\0".to_vec()),
        (b'f', b"boom\0".to_vec()),
    ];
    for (tag, body) in msgs {
        for cut in 0..body.len() {
            let f = Bytes::copy_from_slice(&body[..cut]);
            assert!(decode(tag, &f).is_err(), "tag {tag} cut {cut}");
        }
        assert!(decode(tag, &Bytes::from(body)).is_ok());
    }
}

#[test]
fn startup_packets() {
    let mut v = PROTOCOL_3_0.to_be_bytes().to_vec();
    v.extend_from_slice(b"user\0bob\0database\0db\0\0");
    assert_eq!(
        decode_startup(&Bytes::from(v)).unwrap(),
        StartupPacket::Startup {
            minor: 0,
            params: vec![
                ("user".into(), "bob".into()),
                ("database".into(), "db".into())
            ]
        }
    );
    let ssl = Bytes::copy_from_slice(&SSL_REQUEST_CODE.to_be_bytes());
    assert_eq!(decode_startup(&ssl).unwrap(), StartupPacket::Ssl);
    let cancel = Bytes::from(
        [
            CANCEL_REQUEST_CODE.to_be_bytes(),
            7i32.to_be_bytes(),
            9i32.to_be_bytes(),
        ]
        .concat(),
    );
    assert_eq!(
        decode_startup(&cancel).unwrap(),
        StartupPacket::Cancel { pid: 7, secret: 9 }
    );
    let v2 = Bytes::copy_from_slice(&0x0002_0000i32.to_be_bytes());
    let e = decode_startup(&v2).unwrap_err();
    assert_eq!(
        e.message,
        "unsupported frontend protocol 2.0: server supports 3.0 to 3.0"
    );
    assert_eq!(e.code, "0A000");
    let mut bad = PROTOCOL_3_0.to_be_bytes().to_vec();
    bad.extend_from_slice(b"user\0bob");
    assert_eq!(
        decode_startup(&Bytes::from(bad)).unwrap_err().message,
        "invalid startup packet layout: expected terminator as last byte"
    );
}

#[test]
fn encodes_data_row_and_errors() {
    let mut buf = BytesMut::new();
    data_row(&mut buf, &[Some(b"1"), None, Some(b"")]);
    assert_eq!(
        &buf[..],
        &[
            b'D', 0, 0, 0, 19, 0, 3, 0, 0, 0, 1, b'1', 255, 255, 255, 255, 0, 0, 0, 0
        ][..]
    );
    let mut buf = BytesMut::new();
    let e = PgError::new("42P01", "relation \"x\" does not exist")
        .with_position(15)
        .with_hint("h");
    error_fields(&mut buf, b'E', &e);
    let len = i32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
    assert_eq!(len + 1, buf.len());
    let body = &buf[5..];
    assert!(body.starts_with(b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0"));
    assert!(body.ends_with(b"Hh\0P15\0\0"));

    let mut buf = BytesMut::new();
    command_complete(&mut buf, "SELECT 1");
    assert_eq!(&buf[..], b"C\0\0\0\x0dSELECT 1\0");
    let mut buf = BytesMut::new();
    ready_for_query(&mut buf, b'I');
    assert_eq!(&buf[..], b"Z\0\0\0\x05I");
}

#[test]
fn bind_counts_are_unsigned_16_bit() {
    // PostgreSQL reads the parameter count as an unsigned 16-bit integer: 40,000 and 65,535
    // parameters decode (the count is then checked against the statement), 65,536 cannot be
    // expressed.
    for n in [32_768u16, 40_000, 65_535] {
        let mut parts: Vec<Vec<u8>> = vec![b"\0\0".to_vec(), 0i16.to_be_bytes().to_vec()];
        parts.push(n.to_be_bytes().to_vec());
        for _ in 0..n {
            parts.push((-1i32).to_be_bytes().to_vec());
        }
        parts.push(0i16.to_be_bytes().to_vec());
        let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
        let b = frame(&refs);
        match decode(b'B', &b).unwrap() {
            FrontendMessage::Bind { params, .. } => assert_eq!(params.len(), n as usize),
            other => panic!("{other:?}"),
        }
    }
    // A count the message cannot hold is still refused before allocating.
    let b = frame(&[
        b"\0\0",
        &0i16.to_be_bytes(),
        &65_535u16.to_be_bytes(),
        b"ab",
    ]);
    assert_eq!(
        decode(b'B', &b).unwrap_err().message,
        "insufficient data left in message"
    );
}

#[test]
fn client_text_refuses_nul_and_reports_the_first_bad_byte() {
    assert_eq!(client_text(b"abc").unwrap(), "abc");
    let e = client_text(b"a\0b").unwrap_err();
    assert_eq!(e.code, "22021");
    assert_eq!(
        e.message,
        "invalid byte sequence for encoding \"UTF8\": 0x00"
    );
    assert_eq!(
        client_text(b"a\xff\0").unwrap_err().message,
        "invalid byte sequence for encoding \"UTF8\": 0xff"
    );
    assert_eq!(
        client_text(b"a\0\xff").unwrap_err().message,
        "invalid byte sequence for encoding \"UTF8\": 0x00"
    );
}
