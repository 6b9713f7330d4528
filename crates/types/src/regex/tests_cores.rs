//! Tests of the array cores, the refused constructs, the cache and interrupts. Expected values
//! were printed by PostgreSQL 15 (UTF8 database, locale C).

use super::*;
use crate::func::{CHECK_BYTES, FuncContext};

struct Ctx;

impl FuncContext for Ctx {
    fn transaction_timestamp(&self) -> i64 {
        0
    }
    fn statement_timestamp(&self) -> i64 {
        0
    }
    fn random(&mut self) -> f64 {
        0.0
    }
}

fn strs(v: &[Option<&str>]) -> Vec<Option<String>> {
    v.iter().map(|s| s.map(str::to_string)).collect()
}

#[test]
fn regexp_match_core_matches_postgres() {
    // PostgreSQL 15: {bar} | NULL | {a,NULL} | {bar,beque} | {B} | {x,y,NULL}
    let rm = |s, p, f| regexp_match(s, p, f, &mut Ctx).unwrap();
    assert_eq!(
        rm("foobarbequebaz", "ba.", None),
        Some(strs(&[Some("bar")]))
    );
    assert_eq!(rm("abc", "x", None), None);
    assert_eq!(rm("abc", "(a)|(b)", None), Some(strs(&[Some("a"), None])));
    assert_eq!(
        rm("foobarbequebaz", "(bar)(beque)", None),
        Some(strs(&[Some("bar"), Some("beque")]))
    );
    assert_eq!(rm("ABC", "b", Some("i")), Some(strs(&[Some("B")])));
    assert_eq!(
        rm("xyz", "(x)(y)?(q)?", None),
        Some(strs(&[Some("x"), Some("y"), None]))
    );
    let e = regexp_match("abc", "b", Some("g"), &mut Ctx).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str(), e.hint.as_deref()),
        (
            "22023",
            "regexp_match() does not support the \"global\" option",
            Some("Use the regexp_matches function instead.")
        )
    );
}

#[test]
fn regexp_matches_core_matches_postgres() {
    let rms = |s, p, f| regexp_matches(s, p, f, &mut Ctx).unwrap();
    // PostgreSQL 15: {bar,beque} / {bazil,barf}
    assert_eq!(
        rms("foobarbequebazilbarfbonk", "(b[^b]+)(b[^b]+)", Some("g")),
        vec![
            strs(&[Some("bar"), Some("beque")]),
            strs(&[Some("bazil"), Some("barf")])
        ]
    );
    // Four empty matches, the last at the end of the string.
    assert_eq!(rms("abc", "x*", Some("g")), vec![strs(&[Some("")]); 4]);
    assert_eq!(rms("abcabc", "b", Some("")), vec![strs(&[Some("b")])]);
    assert!(rms("abc", "x", None).is_empty());
}

#[test]
fn regexp_split_core_matches_postgres() {
    let split = |s, p, f| regexp_split(s, p, f, "regexp_split_to_array", &mut Ctx).unwrap();
    assert_eq!(
        split("the quick  brown", "\\s+", None),
        ["the", "quick", "brown"]
    );
    assert_eq!(split("abc", "", None), ["a", "b", "c"]);
    assert_eq!(split("abc", "x*", None), ["a", "b", "c"]);
    assert_eq!(split(",a,,b,", ",", None), ["", "a", "", "b", ""]);
    assert_eq!(split("", ",", None), [""]);
    assert_eq!(split("aXbxc", "x", Some("i")), ["a", "b", "c"]);
    assert_eq!(split("日本語", "", None), ["日", "本", "語"]);
    let e = regexp_split("abc", "b", Some("g"), "regexp_split_to_table", &mut Ctx).unwrap_err();
    assert_eq!(
        e.message,
        "regexp_split_to_table() does not support the \"global\" option"
    );
}

#[test]
fn constructs_without_a_faithful_translation_are_0a000() {
    // PostgreSQL 15 accepts all of these; keel refuses rather than risk a different answer.
    for (s, p) in [
        ("abc", "(?=a)"),
        ("abc", "a(?!b)"),
        ("abc", "(?<=a)b"),
        ("abc", "(?<!a)b"),
        ("aa", "(a)\\1"),
        ("a", "(?b)a"),
        ("a", "(?e)a"),
    ] {
        let e = with_regex(p, Flags::DEFAULT, |re| PgResult::Ok(re.is_match(s))).unwrap_err();
        assert_eq!(e.code, "0A000", "{p}");
    }
    let e = parse_flags(Some("e")).unwrap_err();
    assert_eq!(e.code, "0A000");
}

#[test]
fn cache_keeps_the_most_recent_patterns() {
    for i in 0..(CACHE_SIZE + 8) {
        with_regex(&format!("x{i}"), Flags::DEFAULT, |_| PgResult::Ok(())).unwrap();
    }
    // A hit moves the entry to the front; flags are part of the key.
    with_regex("x10", Flags::DEFAULT, |_| PgResult::Ok(())).unwrap();
    let icase = Flags {
        icase: true,
        ..Flags::DEFAULT
    };
    assert!(with_regex("x10", icase, |re| PgResult::Ok(re.is_match("X10"))).unwrap());
    CACHE.with(|c| {
        let c = c.borrow();
        assert_eq!(c.len(), CACHE_SIZE);
        assert_eq!((c[0].pattern.as_str(), c[0].flags), ("x10", icase));
        assert_eq!((c[1].pattern.as_str(), c[1].flags), ("x10", Flags::DEFAULT));
        assert!(c.iter().all(|e| e.pattern != "x0"));
    });
    // A pattern that does not compile is not cached.
    assert!(with_regex("(", Flags::DEFAULT, |_| PgResult::Ok(())).is_err());
    CACHE.with(|c| assert!(c.borrow().iter().all(|e| e.pattern != "(")));
}

#[test]
fn global_replace_checks_interrupts_on_large_input() {
    struct Cancelled(usize);
    impl FuncContext for Cancelled {
        fn transaction_timestamp(&self) -> i64 {
            0
        }
        fn statement_timestamp(&self) -> i64 {
            0
        }
        fn random(&mut self) -> f64 {
            0.0
        }
        fn check_interrupts(&mut self) -> PgResult<()> {
            self.0 += 1;
            PgResult::Err(keel_common::PgError::new(
                "57014",
                "canceling statement due to user request",
            ))
        }
    }
    let big = "ab".repeat(CHECK_BYTES);
    let f = parse_flags(Some("g")).unwrap();
    let mut ctx = Cancelled(0);
    let e = cores::replace(&big, "b", "c", 1, 0, f, &mut ctx).unwrap_err();
    assert_eq!((e.code, ctx.0), ("57014", 1));
    // Small inputs never ask.
    let mut ctx = Cancelled(0);
    assert_eq!(
        cores::replace("abab", "b", "c", 1, 0, f, &mut ctx).unwrap(),
        "acac"
    );
}
