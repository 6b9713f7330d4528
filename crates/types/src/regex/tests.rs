//! Expected values were printed by PostgreSQL 15 (UTF8 database, locale C); each row is
//! the function (or, for the operators, PostgreSQL's function behind them: textregexeq is
//! `~`, texticregexeq `~*`, textregexne `!~`, texticregexne `!~*`), its arguments and what
//! PostgreSQL returned.

use super::*;
use crate::func::FuncContext;
use crate::{Datum, TypeId};

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

#[derive(Clone, Copy)]
enum A {
    T(&'static str),
    I(i32),
}
use A::{I, T};

enum Want {
    Ok(&'static str),
    Null,
    Err(&'static str, &'static str),
}
use Want::{Err, Null, Ok};

/// Calls `name` as keel resolves it and prints the result as psql does.
fn call(name: &str, args: &[A]) -> PgResult<Option<String>> {
    let datums: Vec<Datum> = args
        .iter()
        .map(|a| match a {
            T(s) => Datum::Text(s.to_string()),
            I(i) => Datum::Int4(*i),
        })
        .collect();
    let types: Vec<TypeId> = args
        .iter()
        .map(|a| match a {
            T(_) => TypeId::Text,
            I(_) => TypeId::Int4,
        })
        .collect();
    let op = match name {
        "textregexeq" => Some("~"),
        "texticregexeq" => Some("~*"),
        "textregexne" => Some("!~"),
        "texticregexne" => Some("!~*"),
        _ => None,
    };
    let d = match op {
        Some(op) => {
            let o = resolve_operator(op, types[0], types[1]).expect("operator resolves");
            (o.func)(&datums[0], &datums[1])?
        }
        None => {
            let f = resolve_function(name, &types).expect("function resolves");
            (f.func)(&datums, &mut Ctx)?
        }
    };
    Result::Ok(match d {
        Datum::Null => Option::None,
        d => Some(crate::io::to_text(&d)),
    })
}

fn check(rows: &[(&str, &[A], Want)]) {
    let mut bad = Vec::new();
    for (name, args, want) in rows {
        let got = call(name, args);
        let ok = match (&got, want) {
            (Result::Ok(Some(g)), Want::Ok(w)) => g == w,
            (Result::Ok(None), Want::Null) => true,
            (Result::Err(e), Want::Err(code, msg)) => e.code == *code && e.message == *msg,
            _ => false,
        };
        if !ok {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a {
                    T(s) => format!("{s:?}"),
                    I(i) => i.to_string(),
                })
                .collect();
            bad.push(format!(
                "{name}({}): got {:?}",
                args.join(", "),
                got.map_err(|e| format!("{} {}", e.code, e.message))
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} rows differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn regexp_replace_matches_postgres() {
    check(&[
        ("regexp_replace", &[T("abcd"), T("a|ab"), T("X")], Ok("Xcd")),
        (
            "regexp_replace",
            &[T("axbyb"), T("a.*?b.*"), T("X")],
            Ok("Xyb"),
        ),
        ("regexp_replace", &[T("aaa"), T("a"), T("b")], Ok("baa")),
        (
            "regexp_replace",
            &[T("aaa"), T("a"), T("b"), T("g")],
            Ok("bbb"),
        ),
        (
            "regexp_replace",
            &[T("Hello World"), T("o"), T("0"), T("gi")],
            Ok("Hell0 W0rld"),
        ),
        (
            "regexp_replace",
            &[T("ABC"), T("b"), T("x"), T("i")],
            Ok("AxC"),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("x*"), T("-"), T("g")],
            Ok("-a-b-c-"),
        ),
        (
            "regexp_replace",
            &[T("abc"), T(""), T("-"), T("g")],
            Ok("-a-b-c-"),
        ),
        (
            "regexp_replace",
            &[T("foobarbaz"), T("b(..)"), T("X\\1Y"), T("g")],
            Ok("fooXarYXazY"),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("(b)"), T("[\\1\\&\\\\\\x\\0\\9]")],
            Ok("a[bb\\\\x\\0]c"),
        ),
        (
            "regexp_replace",
            &[T("héllo wörld"), T("ö|é"), T("_"), T("g")],
            Ok("h_llo w_rld"),
        ),
        (
            "regexp_replace",
            &[T("a.b.c"), T("."), T("-"), T("g")],
            Ok("-----"),
        ),
        (
            "regexp_replace",
            &[T("a.b.c"), T("\\."), T("-"), T("g")],
            Ok("a-b-c"),
        ),
        (
            "regexp_replace",
            &[T("a.b.c"), T("."), T("-"), T("gq")],
            Ok("a-b-c"),
        ),
        (
            "regexp_replace",
            &[T("a.b.c"), T("***=."), T("-"), T("g")],
            Ok("a-b-c"),
        ),
        (
            "regexp_replace",
            &[T("abcabc"), T("b"), T("X"), I(1), I(2)],
            Ok("abcaXc"),
        ),
        (
            "regexp_replace",
            &[T("abcabc"), T("b"), T("X"), I(3)],
            Ok("abcaXc"),
        ),
        (
            "regexp_replace",
            &[T("abcabcabc"), T("b"), T("X"), I(1), I(2), T("g")],
            Ok("abcaXcabc"),
        ),
        (
            "regexp_replace",
            &[T("abcabcabc"), T("b"), T("X"), I(2), I(0)],
            Ok("aXcaXcaXc"),
        ),
        (
            "regexp_replace",
            &[T("the cat sat"), T("\\mcat\\M"), T("dog")],
            Ok("the dog sat"),
        ),
        (
            "regexp_replace",
            &[T("concat cat"), T("\\ycat\\y"), T("dog"), T("g")],
            Ok("concat dog"),
        ),
        (
            "regexp_replace",
            &[T("concat cat"), T("[[:<:]]cat[[:>:]]"), T("dog"), T("g")],
            Ok("concat dog"),
        ),
        (
            "regexp_replace",
            &[T("a1b22c333"), T("\\d+"), T("#"), T("g")],
            Ok("a#b#c#"),
        ),
        (
            "regexp_replace",
            &[T("a1b22c333"), T("[^[:digit:]]"), T(""), T("g")],
            Ok("122333"),
        ),
        (
            "regexp_replace",
            &[T("  a  b  "), T("\\s+"), T(" "), T("g")],
            Ok(" a b "),
        ),
        (
            "regexp_replace",
            &[T("foo_bar-baz"), T("\\W"), T(""), T("g")],
            Ok("foo_barbaz"),
        ),
        (
            "regexp_replace",
            &[T("line1\nline2"), T("^l"), T("L"), T("g")],
            Ok("Line1\nline2"),
        ),
        (
            "regexp_replace",
            &[T("line1\nline2"), T("^l"), T("L"), T("gn")],
            Ok("Line1\nLine2"),
        ),
        (
            "regexp_replace",
            &[T("line1\nline2"), T("\\d$"), T("#"), T("gw")],
            Ok("line#\nline#"),
        ),
        ("regexp_replace", &[T("a\nb"), T("a.b"), T("X")], Ok("X")),
        (
            "regexp_replace",
            &[T("a\nb"), T("a.b"), T("X"), T("p")],
            Ok("a\nb"),
        ),
        (
            "regexp_replace",
            &[T("a\nb"), T("a[^x]b"), T("X"), T("n")],
            Ok("a\nb"),
        ),
        ("regexp_replace", &[T("abc"), T("(?i)B"), T("x")], Ok("axc")),
        (
            "regexp_replace",
            &[T("a b c"), T("a b"), T("X"), T("x")],
            Ok("a b c"),
        ),
        ("regexp_replace", &[T("abab"), T("(ab)*"), T("X")], Ok("X")),
        (
            "regexp_replace",
            &[T("xyz"), T("(x)(y)?(q)?"), T("[\\1|\\2|\\3]")],
            Ok("[x|y|]z"),
        ),
        ("regexp_replace", &[T("aaa"), T("a{2}"), T("X")], Ok("Xa")),
        (
            "regexp_replace",
            &[T("aaaa"), T("a{1,2}?"), T("X"), T("g")],
            Ok("XXXX"),
        ),
        ("regexp_replace", &[T("aaaa"), T("a+?"), T("X")], Ok("Xaaa")),
        (
            "regexp_replace",
            &[T("abcabc"), T("(a|ab)(c|bcd)"), T("[\\1,\\2]"), T("g")],
            Ok("[ab,c][ab,c]"),
        ),
        (
            "regexp_replace",
            &[T("Straße"), T("ß"), T("ss")],
            Ok("Strasse"),
        ),
        (
            "regexp_replace",
            &[T("AbC"), T("[a-c]"), T("x"), T("gi")],
            Ok("xxx"),
        ),
        (
            "regexp_replace",
            &[T("ABC"), T("[^a]"), T("x"), T("gi")],
            Ok("Axx"),
        ),
        ("regexp_replace", &[T("x{y"), T("{"), T("!")], Ok("x!y")),
        (
            "regexp_replace",
            &[T("tab\there"), T("\\t"), T("T")],
            Ok("tabThere"),
        ),
        ("regexp_replace", &[T("a\\b"), T("\\\\"), T("/")], Ok("a/b")),
        ("regexp_replace", &[T("abc"), T("\\x62"), T("B")], Ok("aBc")),
        (
            "regexp_replace",
            &[T("abc"), T("\\u0062"), T("B")],
            Ok("aBc"),
        ),
        (
            "regexp_replace",
            &[T("a-b]c"), T("[]-]"), T("_"), T("g")],
            Ok("a_b_c"),
        ),
        (
            "regexp_replace",
            &[T("é1"), T("[[:alpha:]]"), T("x"), T("g")],
            Ok("é1"),
        ),
        (
            "regexp_replace",
            &[T("Éé"), T("é"), T("x"), T("gi")],
            Ok("Éx"),
        ),
        (
            "regexp_replace",
            &[T("foo123"), T("(?:o)(\\d)"), T("<\\1>")],
            Ok("fo<1>23"),
        ),
    ]);
}

#[test]
fn operators_and_functions_match_postgres() {
    check(&[
        ("textregexeq", &[T("abc"), T("b")], Ok("t")),
        ("textregexeq", &[T("abc"), T("^b")], Ok("f")),
        ("textregexeq", &[T("abc"), T("c$")], Ok("t")),
        ("texticregexeq", &[T("ABC"), T("b")], Ok("t")),
        ("textregexne", &[T("x"), T("y")], Ok("t")),
        ("texticregexne", &[T("X"), T("x")], Ok("f")),
        ("textregexeq", &[T("É"), T("é")], Ok("f")),
        ("texticregexeq", &[T("É"), T("é")], Ok("f")),
        ("textregexeq", &[T("é"), T("\\w")], Ok("f")),
        ("textregexeq", &[T("日本語"), T("本")], Ok("t")),
        ("textregexeq", &[T("日本語"), T("^.{3}$")], Ok("t")),
        (
            "textregexeq",
            &[T("abc"), T("(")],
            Err(
                "2201B",
                "invalid regular expression: parentheses () not balanced",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T(")")],
            Err(
                "2201B",
                "invalid regular expression: parentheses () not balanced",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("a{300}")],
            Err(
                "2201B",
                "invalid regular expression: invalid repetition count(s)",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("x{2,1}")],
            Err(
                "2201B",
                "invalid regular expression: invalid repetition count(s)",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("[z-a]")],
            Err(
                "2201B",
                "invalid regular expression: invalid character range",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("a**")],
            Err(
                "2201B",
                "invalid regular expression: quantifier operand invalid",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("*a")],
            Err(
                "2201B",
                "invalid regular expression: quantifier operand invalid",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("\\")],
            Err(
                "2201B",
                "invalid regular expression: invalid escape \\ sequence",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("[[:foo:]]")],
            Err(
                "2201B",
                "invalid regular expression: invalid character class",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("[a")],
            Err(
                "2201B",
                "invalid regular expression: brackets [] not balanced",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("\\9")],
            Err(
                "2201B",
                "invalid regular expression: invalid backreference number",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("(a)\\2")],
            Err(
                "2201B",
                "invalid regular expression: invalid backreference number",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("\\q")],
            Err(
                "2201B",
                "invalid regular expression: invalid escape \\ sequence",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("^*")],
            Err(
                "2201B",
                "invalid regular expression: quantifier operand invalid",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("(?z)a")],
            Err(
                "2201B",
                "invalid regular expression: invalid embedded option",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("b(?i)a")],
            Err(
                "2201B",
                "invalid regular expression: quantifier operand invalid",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("a{1")],
            Err(
                "2201B",
                "invalid regular expression: braces {} not balanced",
            ),
        ),
        (
            "textregexeq",
            &[T("abc"), T("a{1,2")],
            Err(
                "2201B",
                "invalid regular expression: braces {} not balanced",
            ),
        ),
        ("textregexeq", &[T("abc"), T("a{,2}")], Ok("f")),
        ("textregexeq", &[T("abc"), T("[[.a.]]")], Ok("t")),
        (
            "textregexeq",
            &[T("abc"), T("[[.ab.]]")],
            Err(
                "2201B",
                "invalid regular expression: invalid collating element",
            ),
        ),
        ("textregexeq", &[T("abc"), T("[[=a=]]")], Ok("t")),
        (
            "textregexeq",
            &[T("abc"), T("[[:alpha:]-z]")],
            Err(
                "2201B",
                "invalid regular expression: invalid character range",
            ),
        ),
        ("textregexeq", &[T("a{"), T("a{")], Ok("t")),
        ("textregexeq", &[T("abc"), T("a|")], Ok("t")),
        ("textregexeq", &[T("abc"), T("()")], Ok("t")),
        ("textregexeq", &[T("abc"), T("a(?#comment)b")], Ok("t")),
        ("textregexeq", &[T("ab"), T("(?x) a  b # c")], Ok("t")),
        ("textregexeq", &[T("AB"), T("***:(?i)ab")], Ok("t")),
        ("textregexeq", &[T("a*b"), T("***=*")], Ok("t")),
        (
            "textregexeq",
            &[T("abc"), T("***xa")],
            Err(
                "2201B",
                "invalid regular expression: quantifier operand invalid",
            ),
        ),
        ("textregexeq", &[T("abc"), T("\\Aab")], Ok("t")),
        ("textregexeq", &[T("ab\n"), T("b\\Z")], Ok("f")),
        ("textregexeq", &[T("ab\n"), T("b$")], Ok("f")),
        ("textregexeq", &[T("a b"), T("a\\sb")], Ok("t")),
        ("textregexeq", &[T("a_b"), T("^\\w+$")], Ok("t")),
        ("textregexeq", &[T("a-b"), T("^\\w+$")], Ok("f")),
        ("textregexeq", &[T("3"), T("\\d")], Ok("t")),
        ("textregexeq", &[T("x"), T("[\\d\\W]")], Ok("f")),
        ("textregexeq", &[T("-"), T("[\\d\\W]")], Ok("t")),
        ("textregexeq", &[T("x"), T("[[:word:]]")], Ok("t")),
        ("textregexeq", &[T("B"), T("[[:lower:]]")], Ok("f")),
        ("texticregexeq", &[T("B"), T("[[:lower:]]")], Ok("t")),
        ("textregexeq", &[T("abc"), T("a.c")], Ok("t")),
        ("textregexeq", &[T("a\u{7}b"), T("a\\ab")], Ok("t")),
        ("textregexeq", &[T("a]b"), T("a[]]b")], Ok("t")),
        ("textregexeq", &[T("a^b"), T("a[\\^]b")], Ok("t")),
        ("textregexeq", &[T("abc"), T("a[^]]c")], Ok("t")),
        ("regexp_like", &[T("abc"), T("B"), T("i")], Ok("t")),
        ("regexp_like", &[T("abc"), T("B")], Ok("f")),
        (
            "regexp_like",
            &[T("a"), T("a"), T("g")],
            Err(
                "22023",
                "regexp_like() does not support the \"global\" option",
            ),
        ),
        (
            "regexp_like",
            &[T("a"), T("a"), T("z")],
            Err("22023", "invalid regular expression option: \"z\""),
        ),
        ("regexp_count", &[T("abcabc"), T("b")], Ok("2")),
        ("regexp_count", &[T("abcabc"), T("b"), I(3)], Ok("1")),
        ("regexp_count", &[T("abc"), T("")], Ok("4")),
        ("regexp_count", &[T("aaa"), T("a*")], Ok("2")),
        (
            "regexp_count",
            &[T("a"), T("a"), I(0)],
            Err("22023", "invalid value for parameter \"start\": 0"),
        ),
        (
            "regexp_count",
            &[T("a"), T("a"), I(1), T("g")],
            Err(
                "22023",
                "regexp_count() does not support the \"global\" option",
            ),
        ),
        ("regexp_count", &[T("abc"), T("b"), I(10)], Ok("0")),
        ("regexp_instr", &[T("abcabc"), T("b")], Ok("2")),
        ("regexp_instr", &[T("abcabc"), T("b"), I(1), I(2)], Ok("5")),
        ("regexp_instr", &[T("abcabc"), T("b"), I(1), I(3)], Ok("0")),
        (
            "regexp_instr",
            &[T("abcabc"), T("(b)(c)"), I(1), I(1), I(1), T(""), I(2)],
            Ok("4"),
        ),
        (
            "regexp_instr",
            &[T("abcabc"), T("(b)(c)"), I(1), I(2), I(0), T(""), I(1)],
            Ok("5"),
        ),
        (
            "regexp_instr",
            &[T("abcabc"), T("(b)(c)"), I(1), I(1), I(0), T(""), I(3)],
            Ok("0"),
        ),
        (
            "regexp_instr",
            &[T("héllo"), T("l+"), I(1), I(1), I(1)],
            Ok("5"),
        ),
        (
            "regexp_instr",
            &[T("a"), T("a"), I(1), I(1), I(2)],
            Err("22023", "invalid value for parameter \"endoption\": 2"),
        ),
        (
            "regexp_instr",
            &[T("a"), T("a"), I(1), I(1), I(0), T(""), I(-1)],
            Err("22023", "invalid value for parameter \"subexpr\": -1"),
        ),
        (
            "regexp_instr",
            &[T("a"), T("a"), I(1), I(0)],
            Err("22023", "invalid value for parameter \"n\": 0"),
        ),
        (
            "regexp_instr",
            &[T("a"), T("a"), I(0)],
            Err("22023", "invalid value for parameter \"start\": 0"),
        ),
        (
            "regexp_substr",
            &[T("abcabc"), T("b."), I(1), I(2)],
            Ok("bc"),
        ),
        (
            "regexp_substr",
            &[T("abc"), T("(a)(x)?"), I(1), I(1), T(""), I(2)],
            Null,
        ),
        (
            "regexp_substr",
            &[T("abc"), T("(a)(b)"), I(1), I(1), T(""), I(2)],
            Ok("b"),
        ),
        (
            "regexp_substr",
            &[T("abc"), T("(a)(b)"), I(1), I(1), T(""), I(3)],
            Null,
        ),
        ("regexp_substr", &[T("abc"), T("x")], Null),
        ("regexp_substr", &[T("héllo wörld"), T("w.r")], Ok("wör")),
        (
            "regexp_substr",
            &[T("ABC"), T("b"), I(1), I(1), T("i")],
            Ok("B"),
        ),
        (
            "regexp_substr",
            &[T("a"), T("a"), I(1), I(0)],
            Err("22023", "invalid value for parameter \"n\": 0"),
        ),
        (
            "regexp_substr",
            &[T("a"), T("a"), I(1), I(1), T("g")],
            Err(
                "22023",
                "regexp_substr() does not support the \"global\" option",
            ),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("b"), T("X"), I(0)],
            Err("22023", "invalid value for parameter \"start\": 0"),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("b"), T("X"), I(1), I(-1)],
            Err("22023", "invalid value for parameter \"n\": -1"),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("b"), T("X"), T("z")],
            Err("22023", "invalid regular expression option: \"z\""),
        ),
        (
            "regexp_replace",
            &[T("abc"), T("b"), T("X"), I(5)],
            Ok("abc"),
        ),
    ]);
}
