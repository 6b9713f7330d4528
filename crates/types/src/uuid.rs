//! The uuid type: text input and output as PostgreSQL's uuid_in / uuid_out, and
//! `gen_random_uuid()`.
//!
//! Input takes 32 hex digits in either case, optionally in braces, with a hyphen allowed
//! after any group of four digits but the last (`a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11` is
//! accepted); anything else, surrounding spaces included, is 22P02. Output is always the
//! canonical lower-case 8-4-4-4-12 form.

use crate::io::hex_val;
use keel_common::{PgError, PgResult, sqlstate};

/// The 16 bytes of the uuid written as `text`.
pub fn parse(text: &str) -> PgResult<[u8; 16]> {
    let bad = || {
        PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type uuid: \"{text}\""),
        )
    };
    let b = text.as_bytes();
    let (mut at, braces) = match b.first() {
        Some(b'{') => (1, true),
        _ => (0, false),
    };
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        let hi = b.get(at).and_then(|&c| hex_val(c)).ok_or_else(bad)?;
        let lo = b.get(at + 1).and_then(|&c| hex_val(c)).ok_or_else(bad)?;
        *byte = hi << 4 | lo;
        at += 2;
        // A hyphen may follow every second byte (four digits), not the last.
        if i % 2 == 1 && i < 15 && b.get(at) == Some(&b'-') {
            at += 1;
        }
    }
    if braces {
        if b.get(at) != Some(&b'}') {
            return Err(bad());
        }
        at += 1;
    }
    if at != b.len() {
        return Err(bad());
    }
    Ok(out)
}

/// Appends the canonical text form: lower-case hex, hyphens after bytes 4, 6, 8 and 10.
pub fn write_text(u: &[u8; 16], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(36);
    for (i, &c) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[(c >> 4) as usize] as char);
        out.push(HEX[(c & 15) as usize] as char);
    }
}

/// A version 4 (random) uuid from the operating system's cryptographically secure
/// generator, as PostgreSQL's gen_random_uuid takes pg_strong_random: unlike random(), it
/// does not follow setseed().
pub fn random_v4() -> [u8; 16] {
    let mut u: [u8; 16] = rand::random();
    u[6] = (u[6] & 0x0f) | 0x40; // version 4
    u[8] = (u[8] & 0x3f) | 0x80; // variant RFC 4122
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(u: &[u8; 16]) -> String {
        let mut s = String::new();
        write_text(u, &mut s);
        s
    }

    #[test]
    fn accepts_postgres_spellings() {
        let canonical = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for t in [
            canonical,
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(text(&parse(t).unwrap()), canonical, "{t}");
        }
    }

    #[test]
    fn rejects_malformed() {
        for t in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc9-99c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        ] {
            let e = parse(t).unwrap_err();
            assert_eq!(e.code, sqlstate::INVALID_TEXT_REPRESENTATION, "{t}");
        }
    }

    #[test]
    fn random_ones_are_version_4() {
        let (a, b) = (random_v4(), random_v4());
        assert_ne!(a, b);
        assert_eq!(a[6] >> 4, 4);
        assert_eq!(a[8] >> 6, 2);
    }
}
