//! Expected values were printed by PostgreSQL 15: each row is the function, its arguments
//! (T text, I integer, N an untyped NULL) and what PostgreSQL returned.

use super::*;
use crate::func::resolve_function;

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

enum A {
    T(&'static str),
    I(i32),
    N,
}
use A::{I, N, T};

enum Want {
    Ok(&'static str),
    Err(&'static str, &'static str),
}
use Want::{Err, Ok};

fn call(name: &str, args: &[A]) -> PgResult<Option<String>> {
    let types: Vec<TypeId> = args
        .iter()
        .map(|a| match a {
            T(_) => TypeId::Text,
            I(_) => TypeId::Int4,
            N => TypeId::Unknown,
        })
        .collect();
    let datums: Vec<Datum> = args
        .iter()
        .map(|a| match a {
            T(s) => Datum::Text(s.to_string()),
            I(i) => Datum::Int4(*i),
            N => Datum::Null,
        })
        .collect();
    let f = resolve_function(name, &types).expect("function resolves");
    if f.strict && datums.iter().any(Datum::is_null) {
        return PgResult::Ok(None);
    }
    let d = (f.func)(&datums, &mut Ctx)?;
    PgResult::Ok(match d {
        Datum::Text(s) => Some(s),
        _ => None,
    })
}

#[test]
fn format_quote_translate_match_postgres() {
    let rows: &[(&str, &[A], Want)] = &[
        ("format", &[T("Hello %s"), T("World")], Ok("Hello World")),
        (
            "format",
            &[T("%s-%I-%L"), I(1), T("Foo"), T("it's")],
            Ok("1-\"Foo\"-'it''s'"),
        ),
        ("format", &[T("x")], Ok("x")),
        ("format", &[T("%%%s%%"), T("a")], Ok("%a%")),
        ("format", &[T("%s %s"), T("a"), N], Ok("a ")),
        (
            "format",
            &[T("[%5s][%-5s][%5L][%-5I]"), N, N, N, T("x")],
            Ok("[     ][     ][ NULL][x    ]"),
        ),
        (
            "format",
            &[T("%3$s, %2$s, %s"), T("one"), T("two"), T("three")],
            Ok("three, two, three"),
        ),
        (
            "format",
            &[
                T("[%*s][%*s][%-*s]"),
                I(-3),
                T("a"),
                N,
                T("b"),
                I(3),
                T("c"),
            ],
            Ok("[a  ][b][c  ]"),
        ),
        ("format", &[T("%1$*s"), I(3), I(4)], Ok("  3")),
        (
            "format",
            &[T("%*2$s|%s"), T("a"), I(5), T("b")],
            Err("22023", "too few arguments for format()"),
        ),
        ("format", &[T("%*s"), T("3"), T("x")], Ok("  x")),
        (
            "format",
            &[T("%*s"), T("c"), T("x")],
            Err("22P02", "invalid input syntax for type integer: \"c\""),
        ),
        ("format", &[T("%-*s|"), I(-3), T("x")], Ok("x  |")),
        (
            "format",
            &[
                T("%I %I %I %L %L"),
                T("Foo"),
                T("select"),
                T("a b"),
                T("it's"),
                T("a\\b"),
            ],
            Ok("\"Foo\" \"select\" \"a b\" 'it''s' E'a\\\\b'"),
        ),
        ("format", &[T("%I"), T("name")], Ok("name")),
        ("format", &[T("[%3s]"), T("é")], Ok("[  é]")),
        (
            "format",
            &[T("%s %q"), I(1)],
            Err("22023", "unrecognized format() type specifier \"q\""),
        ),
        (
            "format",
            &[T("%s %s"), I(1)],
            Err("22023", "too few arguments for format()"),
        ),
        (
            "format",
            &[T("%I"), N],
            Err(
                "22004",
                "null values cannot be formatted as an SQL identifier",
            ),
        ),
        (
            "format",
            &[T("%2$s %s"), I(1), I(2)],
            Err("22023", "too few arguments for format()"),
        ),
        (
            "format",
            &[T("%0$s"), I(1)],
            Err(
                "22023",
                "format specifies argument 0, but arguments are numbered from 1",
            ),
        ),
        (
            "format",
            &[T("%*0$s"), I(1)],
            Err(
                "22023",
                "format specifies argument 0, but arguments are numbered from 1",
            ),
        ),
        (
            "format",
            &[T("%*1s"), I(3)],
            Err("22023", "width argument position must be ended by \"$\""),
        ),
        (
            "format",
            &[T("%-5-10s"), T("x")],
            Err("22023", "unrecognized format() type specifier \"-\""),
        ),
        (
            "format",
            &[T("%99999999999s"), T("a")],
            Err("22003", "number is out of range"),
        ),
        (
            "format",
            &[T("%2147483647$s"), I(1)],
            Err("22023", "too few arguments for format()"),
        ),
        (
            "format",
            &[T("%"), I(1)],
            Err("22023", "unterminated format() type specifier"),
        ),
        (
            "format",
            &[T("%s%")],
            Err("22023", "too few arguments for format()"),
        ),
        (
            "format",
            &[T("%1"), T("a")],
            Err("22023", "unterminated format() type specifier"),
        ),
        (
            "format",
            &[T("%-"), T("a")],
            Err("22023", "unterminated format() type specifier"),
        ),
        (
            "format",
            &[T("abc%é"), I(1)],
            Err("22023", "unrecognized format() type specifier \"é\""),
        ),
        ("format", &[T("%1$s %1$s %s"), T("a"), T("b")], Ok("a a b")),
        ("format", &[T("%L"), T("")], Ok("''")),
        (
            "format",
            &[T("%-2147483648s"), T("a")],
            Err("22003", "number is out of range"),
        ),
        ("quote_ident", &[T("select")], Ok("\"select\"")),
        ("quote_ident", &[T("abc")], Ok("abc")),
        ("quote_ident", &[T("Abc")], Ok("\"Abc\"")),
        ("quote_ident", &[T("a\"b")], Ok("\"a\"\"b\"")),
        ("quote_ident", &[T("_x1")], Ok("_x1")),
        ("quote_ident", &[T("1x")], Ok("\"1x\"")),
        ("quote_ident", &[T("")], Ok("\"\"")),
        ("quote_ident", &[T("name")], Ok("name")),
        ("quote_ident", &[T("between")], Ok("\"between\"")),
        ("quote_ident", &[T("é")], Ok("\"é\"")),
        ("quote_ident", &[T("user")], Ok("\"user\"")),
        ("quote_ident", &[T("int")], Ok("\"int\"")),
        (
            "quote_ident",
            &[T("authorization")],
            Ok("\"authorization\""),
        ),
        ("quote_ident", &[T("a$b")], Ok("\"a$b\"")),
        ("quote_literal", &[T("it's")], Ok("'it''s'")),
        ("quote_literal", &[T("a\\b")], Ok("E'a\\\\b'")),
        ("quote_literal", &[T("")], Ok("''")),
        ("quote_literal", &[T("x'y\\")], Ok("E'x''y\\\\'")),
        ("quote_nullable", &[T("a")], Ok("'a'")),
        ("quote_nullable", &[N], Ok("NULL")),
        ("translate", &[T("12345"), T("143"), T("ax")], Ok("a2x5")),
        ("translate", &[T("aéb"), T("é"), T("E")], Ok("aEb")),
        ("translate", &[T("abcabc"), T("abc"), T("")], Ok("")),
        ("translate", &[T("hello"), T("lo"), T("LOX")], Ok("heLLO")),
        ("translate", &[T("aaa"), T("aa"), T("bc")], Ok("bbb")),
    ];
    let mut bad = Vec::new();
    for (name, args, want) in rows {
        let got = call(name, args);
        let ok = match (&got, want) {
            (PgResult::Ok(Some(g)), Want::Ok(w)) => g == w,
            (PgResult::Err(e), Want::Err(code, msg)) => e.code == *code && e.message == *msg,
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{name} {:?}: got {:?}",
                args.len(),
                got.map_err(|e| e.message.clone())
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
fn hints_match_postgres() {
    let e = call("format", &[T("%s %q"), I(1)]).unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("For a single \"%\" use \"%%\"."));
    let e = call("format", &[T("%"), I(1)]).unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("For a single \"%\" use \"%%\"."));
}

#[test]
fn quote_literal_of_other_types_uses_their_text_form() {
    // PostgreSQL 15: quote_literal(42) = '42', quote_nullable(1.5) = '1.5', format('%s|%s|%L',
    // 1.50, true, 42) = 1.50|t|'42'.
    let f = resolve_function("quote_literal", &[TypeId::Int4]).unwrap();
    let d = (f.func)(&[Datum::Int4(42)], &mut Ctx).unwrap();
    assert_eq!(d, Datum::Text("'42'".into()));
    let f = resolve_function("format", &[TypeId::Text, TypeId::Bool, TypeId::Int4]).unwrap();
    let d = (f.func)(
        &[
            Datum::Text("%s|%L".into()),
            Datum::Bool(true),
            Datum::Int4(42),
        ],
        &mut Ctx,
    )
    .unwrap();
    assert_eq!(d, Datum::Text("t|'42'".into()));
}

#[test]
fn keyword_table_is_sorted_and_complete() {
    use crate::keywords::KEYWORDS;
    assert!(KEYWORDS.windows(2).all(|w| w[0].0 < w[1].0));
    // PostgreSQL 15's pg_get_keywords(): 460 words, 77 reserved, 51 column-name, 23
    // type/function-name.
    assert_eq!(KEYWORDS.len(), 460);
    let n = |c| KEYWORDS.iter().filter(|(_, k)| *k == c).count();
    assert_eq!(n(KeywordCategory::Reserved), 77);
    assert_eq!(n(KeywordCategory::ColName), 51);
    assert_eq!(n(KeywordCategory::TypeFuncName), 23);
}
