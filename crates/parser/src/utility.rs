//! Utility statements parsed by hand (see `split`): transaction control, SET/SHOW/RESET,
//! VACUUM, ANALYZE, CHECKPOINT and COPY. The session executes them.

use crate::split::{Tok, syntax_near, tokenize};
use keel_common::Isolation;
use keel_common::{PgError, PgResult};

#[derive(Clone, Debug, PartialEq)]
pub struct TxnModes {
    pub isolation: Option<Isolation>,
    pub read_only: Option<bool>,
    /// DEFERRABLE / NOT DEFERRABLE (effective for SERIALIZABLE READ ONLY transactions).
    pub deferrable: Option<bool>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Utility {
    Begin(TxnModes),
    /// START TRANSACTION (same as BEGIN, its own command tag).
    StartTransaction(TxnModes),
    Commit,
    Rollback,
    SetTransaction(TxnModes),
    SetSessionCharacteristics(TxnModes),
    /// `SET [SESSION|LOCAL] name TO value, ...`; `None` value = DEFAULT.
    Set {
        name: String,
        value: Option<String>,
        local: bool,
    },
    Show(String),
    ShowAll,
    Reset(String),
    ResetAll,
    Vacuum {
        verbose: bool,
        analyze: bool,
        full: bool,
        tables: Vec<String>,
    },
    Analyze {
        tables: Vec<String>,
    },
    Checkpoint,
    Copy(CopyStmt),
    Discard,
    /// SAVEPOINT / RELEASE [SAVEPOINT] / ROLLBACK TO [SAVEPOINT] name.
    Savepoint(SavepointOp, String),
    /// LOCK [TABLE] [ONLY] names [IN mode MODE] [NOWAIT]; `mode` is PostgreSQL's lock mode
    /// number, 1 (ACCESS SHARE) to 8 (ACCESS EXCLUSIVE, the default).
    Lock {
        tables: Vec<String>,
        mode: u8,
        nowait: bool,
    },
    /// `PREPARE name [(type, ...)] AS statement` (prepare_stmt.rs): the parameter types as
    /// written, and the statement's text and character offset in the statement.
    Prepare {
        name: String,
        types: Vec<crate::prepare_stmt::TypeText>,
        query: String,
        query_offset: usize,
    },
    /// `EXECUTE name [(argument, ...)]`: the arguments' text (empty without parentheses) and
    /// its character offset in the statement.
    Execute {
        name: String,
        args: String,
        args_offset: usize,
    },
    /// DEALLOCATE [PREPARE] name | ALL (None = ALL).
    Deallocate(Option<String>),
    /// `DO [LANGUAGE lang] code`: the code's text and the character position (1-based) of its
    /// first character in the statement, for error positions inside it.
    Do {
        body: String,
        body_position: usize,
    },
    /// `DECLARE name [[NO] SCROLL] CURSOR [WITH HOLD] FOR query` (cursor_stmt.rs): the query's
    /// text and its character offset in the statement.
    DeclareCursor {
        name: String,
        scroll: Option<bool>,
        hold: bool,
        query: String,
        query_offset: usize,
    },
    /// FETCH (`is_move` false) or MOVE.
    Fetch {
        is_move: bool,
        dir: crate::cursor_stmt::Fetch,
        name: String,
    },
    /// `CLOSE name | ALL` (None = ALL).
    CloseCursor(Option<String>),
    /// ALTER TABLE ... ATTACH | DETACH PARTITION (partition_cmd.rs).
    Partition(Box<crate::partition_cmd::PartitionCmd>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SavepointOp {
    Savepoint,
    Release,
    RollbackTo,
}

impl SavepointOp {
    /// The statement's name in PostgreSQL's "... can only be used in transaction blocks".
    pub fn statement(self) -> &'static str {
        match self {
            SavepointOp::Savepoint => "SAVEPOINT",
            SavepointOp::Release => "RELEASE SAVEPOINT",
            SavepointOp::RollbackTo => "ROLLBACK TO SAVEPOINT",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct CopyOptions {
    pub csv: bool,
    pub binary: bool,
    pub header: bool,
    pub delimiter: Option<char>,
    pub null: Option<String>,
    pub quote: Option<char>,
    pub escape: Option<char>,
    pub freeze: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CopyStmt {
    /// Table name (folded), or None for `COPY (query) TO`.
    pub table: Option<String>,
    pub columns: Vec<String>,
    /// The text of the query for `COPY (query) TO STDOUT`.
    pub query: Option<String>,
    pub from: bool,
    /// The server-side file of `COPY ... FROM 'file'` / `TO 'file'`; None for STDIN/STDOUT.
    pub file: Option<String>,
    /// The options as written, in order; `CopyStmt::options` validates them (after the
    /// table and column checks, PostgreSQL's order).
    pub raw_options: Vec<(String, Option<CopyOptValue>)>,
}

/// The argument of a COPY option.
#[derive(Clone, Debug, PartialEq)]
pub enum CopyOptValue {
    Str(String),
    Num(String),
    /// `(a, b)` or `*`.
    List(Vec<String>),
}

struct P {
    toks: Vec<Tok>,
    pos: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_word(w)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_word(&mut self, w: &str) -> PgResult<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(syntax_near(self.peek()))
        }
    }
    fn end(&self) -> PgResult<()> {
        match self.peek() {
            None => Ok(()),
            t => Err(syntax_near(t)),
        }
    }
    fn ident(&mut self) -> PgResult<String> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            Some(Tok::Quoted(w)) => Ok(w),
            t => Err(syntax_near(t.as_ref())),
        }
    }
}

/// Tries to parse `text` as a utility statement. `Ok(None)` = not a utility statement (hand it
/// to sqlparser).
pub fn parse_utility(text: &str) -> PgResult<Option<Utility>> {
    let first = crate::split::first_word(text).to_ascii_lowercase();
    let known = [
        "begin",
        "start",
        "commit",
        "end",
        "rollback",
        "abort",
        "set",
        "show",
        "reset",
        "vacuum",
        "analyze",
        "analyse",
        "checkpoint",
        "copy",
        "discard",
        "savepoint",
        "release",
        "lock",
        "prepare",
        "execute",
        "deallocate",
        "do",
        "declare",
        "fetch",
        "move",
        "close",
    ];
    if !known.contains(&first.as_str()) {
        return Ok(None);
    }
    match first.as_str() {
        "do" => return crate::do_stmt::parse_do(text).map(Some),
        "prepare" => return crate::prepare_stmt::parse_prepare(text).map(Some),
        "execute" => return crate::prepare_stmt::parse_execute(text).map(Some),
        _ => {}
    }
    let mut p = P {
        toks: tokenize_stmt(text)?,
        pos: 1,
    };
    let u = match first.as_str() {
        "declare" => return crate::cursor_stmt::parse_declare(&p.toks, text).map(Some),
        "fetch" | "move" => {
            return crate::cursor_stmt::parse_fetch(&p.toks, first == "move").map(Some);
        }
        "close" => return crate::cursor_stmt::parse_close(&p.toks).map(Some),
        "begin" | "start" => {
            if first == "start" {
                p.expect_word("transaction")?;
            } else if !p.eat_word("transaction") {
                p.eat_word("work");
            }
            if first == "start" {
                Utility::StartTransaction(txn_modes(&mut p)?)
            } else {
                Utility::Begin(txn_modes(&mut p)?)
            }
        }
        "commit" | "end" => {
            if !p.eat_word("transaction") {
                p.eat_word("work");
            }
            Utility::Commit
        }
        "rollback" | "abort" => {
            if !p.eat_word("transaction") {
                p.eat_word("work");
            }
            if p.eat_word("to") {
                p.eat_word("savepoint");
                Utility::Savepoint(SavepointOp::RollbackTo, p.ident()?)
            } else {
                Utility::Rollback
            }
        }
        "set" => parse_set(&mut p)?,
        "show" => {
            let mut words = Vec::new();
            while let Some(t) = p.next() {
                words.push(t.text());
            }
            let name = words.join(" ");
            match name.as_str() {
                "all" => Utility::ShowAll,
                "" => return Err(syntax_near(None)),
                "transaction isolation level" => Utility::Show("transaction_isolation".into()),
                "time zone" => Utility::Show("TimeZone".into()),
                _ => Utility::Show(name),
            }
        }
        "reset" => {
            let name = p.ident()?;
            if name == "session" || name == "role" {
                return Err(PgError::unsupported(
                    "roles (RESET ROLE / SESSION AUTHORIZATION)",
                ));
            }
            if name == "all" {
                Utility::ResetAll
            } else {
                Utility::Reset(name)
            }
        }
        "vacuum" => {
            let (mut verbose, mut analyze, mut full) = (false, false, false);
            if p.eat_punct('(') {
                loop {
                    let opt = p.ident()?;
                    let on = match p.peek() {
                        Some(Tok::Punct(',')) | Some(Tok::Punct(')')) => true,
                        _ => {
                            let v = p
                                .next()
                                .map(|t| t.text().to_lowercase())
                                .unwrap_or_default();
                            !matches!(v.as_str(), "off" | "false" | "0")
                        }
                    };
                    match opt.as_str() {
                        "verbose" => verbose = on,
                        "analyze" | "analyse" => analyze = on,
                        "full" => full = on,
                        "freeze"
                        | "skip_locked"
                        | "index_cleanup"
                        | "truncate"
                        | "parallel"
                        | "process_toast"
                        | "disable_page_skipping" => {}
                        _ => {
                            return Err(PgError::new(
                                keel_common::sqlstate::SYNTAX_ERROR,
                                format!("unrecognized VACUUM option \"{opt}\""),
                            ));
                        }
                    }
                    if p.eat_punct(')') {
                        break;
                    }
                    if !p.eat_punct(',') {
                        return Err(syntax_near(p.peek()));
                    }
                }
            } else {
                loop {
                    if p.eat_word("full") {
                        full = true;
                    } else if p.eat_word("freeze") {
                    } else if p.eat_word("verbose") {
                        verbose = true;
                    } else if p.eat_word("analyze") || p.eat_word("analyse") {
                        analyze = true;
                    } else {
                        break;
                    }
                }
            }
            let tables = table_list(&mut p)?;
            Utility::Vacuum {
                verbose,
                analyze,
                full,
                tables,
            }
        }
        "analyze" | "analyse" => {
            p.eat_word("verbose");
            Utility::Analyze {
                tables: table_list(&mut p)?,
            }
        }
        "checkpoint" => Utility::Checkpoint,
        "discard" => {
            p.next();
            Utility::Discard
        }
        "copy" => Utility::Copy(parse_copy(&mut p, text)?),
        "savepoint" => Utility::Savepoint(SavepointOp::Savepoint, p.ident()?),
        "release" => {
            p.eat_word("savepoint");
            Utility::Savepoint(SavepointOp::Release, p.ident()?)
        }
        "lock" => {
            p.eat_word("table");
            p.eat_word("only");
            let mut tables = vec![p.ident()?];
            p.eat_punct('*');
            while p.eat_punct(',') {
                p.eat_word("only");
                tables.push(p.ident()?);
                p.eat_punct('*');
            }
            let mut mode = 8;
            if p.eat_word("in") {
                const MODES: [&[&str]; 8] = [
                    &["access", "share"],
                    &["row", "share"],
                    &["row", "exclusive"],
                    &["share", "update", "exclusive"],
                    &["share", "row", "exclusive"],
                    &["share"],
                    &["exclusive"],
                    &["access", "exclusive"],
                ];
                const NUMBERS: [u8; 8] = [1, 2, 3, 4, 6, 5, 7, 8];
                let at = p.pos;
                let found = MODES.iter().position(|words| {
                    p.pos = at;
                    words.iter().all(|w| p.eat_word(w))
                        && p.peek().is_some_and(|t| t.is_word("mode"))
                });
                match found {
                    Some(i) => mode = NUMBERS[i],
                    None => {
                        p.pos = at;
                        return Err(syntax_near(p.peek()));
                    }
                }
                p.expect_word("mode")?;
            }
            let nowait = p.eat_word("nowait");
            Utility::Lock {
                tables,
                mode,
                nowait,
            }
        }
        "deallocate" => {
            p.eat_word("prepare");
            match p.ident()? {
                w if w == "all" => Utility::Deallocate(None),
                name => Utility::Deallocate(Some(name)),
            }
        }
        _ => return Ok(None),
    };
    p.end()?;
    Ok(Some(u))
}

/// Tokens of one statement, without its terminating `;`.
fn tokenize_stmt(text: &str) -> PgResult<Vec<Tok>> {
    let mut t = tokenize(text)?;
    if t.last() == Some(&Tok::Punct(';')) {
        t.pop();
    }
    Ok(t)
}

fn table_list(p: &mut P) -> PgResult<Vec<String>> {
    let mut tables = Vec::new();
    while p.peek().is_some() {
        let t = p.ident()?;
        tables.push(t.rsplit('.').next().unwrap_or(&t).to_string());
        if p.eat_punct('(') {
            return Err(PgError::unsupported("VACUUM/ANALYZE with a column list"));
        }
        if !p.eat_punct(',') {
            break;
        }
    }
    Ok(tables)
}

fn txn_modes(p: &mut P) -> PgResult<TxnModes> {
    let mut m = TxnModes {
        isolation: None,
        read_only: None,
        deferrable: None,
    };
    loop {
        if p.eat_word("isolation") {
            p.expect_word("level")?;
            m.isolation = if p.eat_word("serializable") {
                Some(Isolation::Serializable)
            } else if p.eat_word("repeatable") {
                p.expect_word("read")?;
                Some(Isolation::RepeatableRead)
            } else if p.eat_word("read") {
                if !p.eat_word("committed") {
                    p.expect_word("uncommitted")?;
                }
                Some(Isolation::ReadCommitted)
            } else {
                return Err(syntax_near(p.peek()));
            };
        } else if p.eat_word("read") {
            if p.eat_word("only") {
                m.read_only = Some(true);
            } else {
                p.expect_word("write")?;
                m.read_only = Some(false);
            }
        } else if p.eat_word("not") {
            p.expect_word("deferrable")?;
            m.deferrable = Some(false);
        } else if p.eat_word("deferrable") {
            m.deferrable = Some(true);
        } else {
            break;
        }
        p.eat_punct(',');
    }
    Ok(m)
}

fn parse_set(p: &mut P) -> PgResult<Utility> {
    let mut local = false;
    if p.eat_word("local") {
        local = true;
    } else {
        p.eat_word("session");
    }
    if p.eat_word("transaction") {
        return Ok(Utility::SetTransaction(txn_modes(p)?));
    }
    if p.eat_word("characteristics") {
        p.expect_word("as")?;
        p.expect_word("transaction")?;
        return Ok(Utility::SetSessionCharacteristics(txn_modes(p)?));
    }
    let name = p.ident()?;
    if name == "role" || name == "authorization" {
        return Err(PgError::unsupported(
            "roles (SET ROLE / SESSION AUTHORIZATION)",
        ));
    }
    if name == "time" && p.eat_word("zone") {
        let v = p
            .next()
            .map(|t| t.text())
            .ok_or_else(|| syntax_near(None))?;
        let value = if v.eq_ignore_ascii_case("local") || v.eq_ignore_ascii_case("default") {
            None
        } else {
            Some(v)
        };
        return Ok(Utility::Set {
            name: "TimeZone".into(),
            value,
            local,
        });
    }
    if name == "names" {
        let v = p.next().map(|t| t.text());
        return Ok(Utility::Set {
            name: "client_encoding".into(),
            value: v,
            local,
        });
    }
    if !p.eat_word("to") && !p.eat_punct('=') {
        return Err(syntax_near(p.peek()));
    }
    let mut parts = Vec::new();
    loop {
        match p.next() {
            None => return Err(syntax_near(None)),
            Some(Tok::Word(w)) if w == "default" && parts.is_empty() && p.peek().is_none() => {
                return Ok(Utility::Set {
                    name,
                    value: None,
                    local,
                });
            }
            Some(t) => parts.push(t.text()),
        }
        if !p.eat_punct(',') {
            break;
        }
    }
    Ok(Utility::Set {
        name,
        value: Some(parts.join(", ")),
        local,
    })
}

/// The file name of `COPY ... FROM | TO 'file'`.
fn copy_file(p: &mut P) -> PgResult<String> {
    if p.eat_word("program") {
        return Err(PgError::unsupported("COPY to or from an external program"));
    }
    match p.next() {
        Some(Tok::Str(f)) => Ok(f),
        t => Err(syntax_near(t.as_ref())),
    }
}

fn parse_copy(p: &mut P, text: &str) -> PgResult<CopyStmt> {
    let mut stmt = CopyStmt {
        table: None,
        columns: vec![],
        query: None,
        from: false,
        file: None,
        raw_options: vec![],
    };
    if p.peek() == Some(&Tok::Punct('(')) {
        // COPY (query) TO ...: take the text between the outer parentheses.
        let open = text.find('(').ok_or_else(|| syntax_near(None))?;
        let mut depth = 0;
        let mut close = None;
        for (i, c) in text[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close.ok_or_else(|| syntax_near(None))?;
        stmt.query = Some(text[open + 1..close].to_string());
        let rest = tokenize_stmt(&text[close + 1..])?;
        *p = P { toks: rest, pos: 0 };
    } else {
        let t = p.ident()?;
        stmt.table = Some(t.rsplit('.').next().unwrap_or(&t).to_string());
        if p.eat_punct('(') {
            loop {
                stmt.columns.push(p.ident()?);
                if p.eat_punct(')') {
                    break;
                }
                if !p.eat_punct(',') {
                    return Err(syntax_near(p.peek()));
                }
            }
        }
    }
    if p.eat_word("from") {
        stmt.from = true;
        if !p.eat_word("stdin") {
            stmt.file = Some(copy_file(p)?);
        }
    } else if p.eat_word("to") {
        if !p.eat_word("stdout") {
            stmt.file = Some(copy_file(p)?);
        }
    } else {
        return Err(syntax_near(p.peek()));
    }
    if stmt.from && stmt.query.is_some() {
        return Err(syntax_near(Some(&Tok::Word("from".into()))));
    }
    p.eat_word("with");
    let o = &mut stmt.raw_options;
    if p.eat_punct('(') {
        loop {
            let name = p.ident()?;
            let val = match p.peek() {
                Some(Tok::Punct(',')) | Some(Tok::Punct(')')) => None,
                Some(Tok::Punct('(')) => {
                    // A column list (FORCE_QUOTE (a, b) ...): kept as its text.
                    let mut parts = Vec::new();
                    p.next();
                    loop {
                        match p.next() {
                            Some(Tok::Punct(')')) => break,
                            Some(Tok::Punct(',')) => {}
                            Some(t) => parts.push(t.text()),
                            None => return Err(syntax_near(None)),
                        }
                    }
                    Some(CopyOptValue::List(parts))
                }
                Some(Tok::Num(_)) => p.next().map(|t| CopyOptValue::Num(t.text())),
                _ => p.next().map(|t| CopyOptValue::Str(t.text())),
            };
            o.push((name, val));
            if p.eat_punct(')') {
                break;
            }
            if !p.eat_punct(',') {
                return Err(syntax_near(p.peek()));
            }
        }
    } else {
        // Pre-9.0 syntax: BINARY, CSV, HEADER, DELIMITER [AS] 'x', NULL [AS] 'x', ...
        let s = |t: Option<Tok>| t.map(|t| CopyOptValue::Str(t.text()));
        loop {
            if p.eat_word("binary") {
                o.push(("format".into(), Some(CopyOptValue::Str("binary".into()))));
            } else if p.eat_word("csv") {
                o.push(("format".into(), Some(CopyOptValue::Str("csv".into()))));
            } else if p.eat_word("header") {
                o.push(("header".into(), None));
            } else if p.eat_word("freeze") {
                o.push(("freeze".into(), None));
            } else if let Some(w) = ["delimiter", "null", "quote", "escape"]
                .into_iter()
                .find(|w| p.eat_word(w))
            {
                p.eat_word("as");
                o.push((w.into(), s(p.next())));
            } else {
                break;
            }
        }
    }
    Ok(stmt)
}

/// sqlparser accepts CREATE SEQUENCE options only in one fixed order; PostgreSQL takes them in
/// any order. For a CREATE SEQUENCE, returns the same statement with its options rewritten in
/// sqlparser's order (each at most once, 42601 "conflicting or redundant options" otherwise).
pub fn reorder_create_sequence(text: &str) -> PgResult<Option<String>> {
    // Runs before every statement's parse: tokenize only what can be a CREATE SEQUENCE.
    if !crate::split::first_word(text).eq_ignore_ascii_case("create")
        || !crate::split::contains_ignore_case(text, "sequence")
    {
        return Ok(None);
    }
    let toks = tokenize_stmt(text)?;
    let mut p = P { toks, pos: 0 };
    if !p.eat_word("create") {
        return Ok(None);
    }
    let temp = p.eat_word("temp") || p.eat_word("temporary");
    if !p.eat_word("sequence") {
        return Ok(None);
    }
    let if_not_exists = p.eat_word("if");
    if if_not_exists {
        p.expect_word("not")?;
        p.expect_word("exists")?;
    }
    let name = match p.next() {
        Some(Tok::Word(w)) => w,
        Some(Tok::Quoted(w)) => format!("\"{}\"", w.replace('"', "\"\"")),
        t => return Err(syntax_near(t.as_ref())),
    };
    // Slots in sqlparser's order: increment, min, max, start, cache, cycle, owned by.
    let mut slots: [Option<String>; 7] = Default::default();
    let number = |p: &mut P| -> PgResult<String> {
        let neg = if p.eat_punct('-') {
            "-"
        } else {
            p.eat_punct('+');
            ""
        };
        match p.next() {
            Some(Tok::Num(n)) => Ok(format!("{neg}{n}")),
            t => Err(syntax_near(t.as_ref())),
        }
    };
    let mut as_type = None;
    while let Some(t) = p.peek().cloned() {
        let word = match &t {
            Tok::Word(w) => w.clone(),
            _ => return Err(syntax_near(Some(&t))),
        };
        p.pos += 1;
        let (slot, value) = match word.as_str() {
            "as" => {
                as_type = Some(p.ident()?);
                continue;
            }
            "increment" => {
                p.eat_word("by");
                (0, format!("INCREMENT BY {}", number(&mut p)?))
            }
            "minvalue" => (1, format!("MINVALUE {}", number(&mut p)?)),
            "maxvalue" => (2, format!("MAXVALUE {}", number(&mut p)?)),
            "start" => {
                p.eat_word("with");
                (3, format!("START WITH {}", number(&mut p)?))
            }
            "cache" => (4, format!("CACHE {}", number(&mut p)?)),
            "cycle" => (5, "CYCLE".to_string()),
            "no" => match p.next() {
                Some(Tok::Word(w)) if w == "minvalue" => (1, "NO MINVALUE".into()),
                Some(Tok::Word(w)) if w == "maxvalue" => (2, "NO MAXVALUE".into()),
                Some(Tok::Word(w)) if w == "cycle" => (5, "NO CYCLE".into()),
                t => return Err(syntax_near(t.as_ref())),
            },
            "owned" => {
                p.expect_word("by")?;
                (6, format!("OWNED BY {}", p.ident()?))
            }
            _ => return Err(syntax_near(Some(&t))),
        };
        if slots[slot].is_some() {
            return Err(PgError::new(
                keel_common::sqlstate::SYNTAX_ERROR,
                "conflicting or redundant options",
            ));
        }
        slots[slot] = Some(value);
    }
    let mut out = String::from("CREATE ");
    if temp {
        out.push_str("TEMPORARY ");
    }
    out.push_str("SEQUENCE ");
    if if_not_exists {
        out.push_str("IF NOT EXISTS ");
    }
    out.push_str(&name);
    if let Some(t) = as_type {
        out.push_str(" AS ");
        out.push_str(&t);
    }
    for s in slots.iter().flatten() {
        out.push(' ');
        out.push_str(s);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_pgbench_utilities() {
        assert_eq!(
            parse_utility("BEGIN").unwrap(),
            Some(Utility::Begin(TxnModes {
                isolation: None,
                read_only: None,
                deferrable: None,
            }))
        );
        assert_eq!(parse_utility("END").unwrap(), Some(Utility::Commit));
        assert_eq!(parse_utility("select 1").unwrap(), None);
        let v = parse_utility("vacuum analyze pgbench_branches")
            .unwrap()
            .unwrap();
        assert_eq!(
            v,
            Utility::Vacuum {
                verbose: false,
                analyze: true,
                full: false,
                tables: vec!["pgbench_branches".into()]
            }
        );
        let c = parse_utility("copy pgbench_accounts from stdin with (freeze on)")
            .unwrap()
            .unwrap();
        match c {
            Utility::Copy(c) => {
                assert!(c.from && c.options().unwrap().freeze);
                assert_eq!(c.table.as_deref(), Some("pgbench_accounts"));
            }
            _ => panic!(),
        }
        assert_eq!(
            parse_utility("checkpoint").unwrap(),
            Some(Utility::Checkpoint)
        );
    }

    #[test]
    fn parses_set_forms() {
        assert_eq!(
            parse_utility("set work_mem to '64MB'").unwrap(),
            Some(Utility::Set {
                name: "work_mem".into(),
                value: Some("64MB".into()),
                local: false
            })
        );
        assert_eq!(
            parse_utility("SET search_path = public, x").unwrap(),
            Some(Utility::Set {
                name: "search_path".into(),
                value: Some("public, x".into()),
                local: false
            })
        );
        assert!(matches!(
            parse_utility("begin isolation level repeatable read").unwrap(),
            Some(Utility::Begin(TxnModes {
                isolation: Some(Isolation::RepeatableRead),
                ..
            }))
        ));
        assert_eq!(parse_utility("show all").unwrap(), Some(Utility::ShowAll));
        let c = parse_utility(
            "copy t (a,b) to stdout with (format csv, header, delimiter ';', null 'x')",
        )
        .unwrap()
        .unwrap();
        match c {
            Utility::Copy(c) => {
                let o = c.options().unwrap();
                assert!(o.csv && o.header && !c.from);
                assert_eq!(o.delimiter, Some(';'));
                assert_eq!(c.columns, vec!["a", "b"]);
            }
            _ => panic!(),
        }
    }
}
