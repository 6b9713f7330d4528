use super::*;

fn body(src: &str) -> Body {
    match parse_function_body(src) {
        Ok(b) => b,
        Err(e) => panic!("{src}\n=> {e}"),
    }
}

fn stmts(src: &str) -> Vec<Stmt> {
    body(src).block.body
}

/// The error's message, and its 1-based position in the body.
fn err(src: &str) -> (String, Option<u32>) {
    match parse_do_block(src) {
        Ok(b) => panic!("{src} parsed: {b:?}"),
        Err(e) => (e.error.message.clone(), e.error.position),
    }
}

#[test]
fn seed_partition_do_block() {
    let src = "declare begin for i in 0..1023 loop execute format('create unlogged table p_%s partition of p for values WITH (MODULUS 1024, REMAINDER %s)', i, i); end loop; end;";
    let b = parse_do_block(src).unwrap().block;
    assert!(b.decls.is_empty());
    let StmtKind::ForInt {
        var,
        lower,
        upper,
        step,
        reverse,
        body,
        ..
    } = &b.body[0].kind
    else {
        panic!("{:?}", b.body[0]);
    };
    assert_eq!(var, "i");
    assert_eq!(lower.text, "0");
    assert_eq!(upper.text, "1023");
    assert!(step.is_none() && !reverse);
    assert_eq!(b.body[0].kind_name(), "FOR with integer loop variable");
    let StmtKind::Execute {
        query,
        into,
        params,
    } = &body[0].kind
    else {
        panic!()
    };
    assert!(query.text.starts_with("format('create unlogged"));
    assert!(query.text.ends_with("i, i)"));
    assert_eq!(&src[query.offset..query.offset + 6], "format");
    assert!(into.is_none() && params.is_empty());
}

#[test]
fn trigger_function() {
    let src = "\nBEGIN\n  NEW.updated_at := now();\n  RETURN NEW;\nEND;\n";
    let s = stmts(src);
    let StmtKind::Assign { target, expr } = &s[0].kind else {
        panic!()
    };
    assert_eq!(target.name, "new");
    assert_eq!(target.path, vec![TargetPart::Field("updated_at".into())]);
    assert_eq!(target.text.text, "NEW.updated_at");
    assert_eq!(expr.text, "now()");
    assert_eq!(s[0].line, 3);
    assert_eq!(s[0].kind_name(), "assignment");
    let StmtKind::Return { expr: Some(e) } = &s[1].kind else {
        panic!()
    };
    assert_eq!(e.text, "NEW");
    assert_eq!(e.line, 4);
}

#[test]
fn declarations() {
    let src = "declare
        a int := 1;
        b constant text default 'x';
        c numeric(10, 2) not null = 0;
        d t.col%TYPE;
        e t%rowtype;
        f int[];
        g record;
        h text collate \"C\";
        p alias for $1;
        cur cursor (k int) for select * from t where id = k;
        s no scroll cursor is select 1;
      begin null; end";
    let d = body(src).block.decls;
    let Decl::Var(a) = &d[0] else { panic!() };
    assert_eq!(
        (a.name.as_str(), a.data_type.text.text.as_str()),
        ("a", "int")
    );
    assert_eq!(a.default.as_ref().map(|e| e.text.as_str()), Some("1"));
    let Decl::Var(b) = &d[1] else { panic!() };
    assert!(b.constant);
    assert_eq!(b.default.as_ref().unwrap().text, "'x'");
    let Decl::Var(c) = &d[2] else { panic!() };
    assert!(c.not_null);
    assert_eq!(c.data_type.text.text, "numeric(10, 2)");
    let Decl::Var(dd) = &d[3] else { panic!() };
    assert_eq!(
        dd.data_type.kind,
        TypeKind::TypeOf(vec!["t".into(), "col".into()])
    );
    assert_eq!(dd.data_type.text.text, "t.col%TYPE");
    let Decl::Var(e) = &d[4] else { panic!() };
    assert_eq!(e.data_type.kind, TypeKind::RowTypeOf(vec!["t".into()]));
    let Decl::Var(f) = &d[5] else { panic!() };
    assert_eq!(f.data_type.text.text, "int[]");
    let Decl::Var(h) = &d[7] else { panic!() };
    assert_eq!(h.collate.as_deref(), Some("C"));
    assert!(matches!(&d[8], Decl::Alias { target, .. } if target == &["$1"]));
    let Decl::Cursor(cur) = &d[9] else { panic!() };
    assert_eq!(cur.args[0].0, "k");
    assert_eq!(cur.query.text, "select * from t where id = k");
    let Decl::Cursor(s) = &d[10] else { panic!() };
    assert_eq!(s.scroll, Some(false));
}

#[test]
fn exception_blocks() {
    let src = "begin
        insert into t values (1);
      exception
        when unique_violation or sqlstate '23503' then
          raise notice 'dup';
        when division_by_zero then null;
        when others then
          raise;
      end";
    let b = body(src).block;
    let h = b.exceptions.unwrap();
    assert_eq!(h.len(), 3);
    assert_eq!(
        h[0].conditions,
        vec![
            Condition::Name("unique_violation".into()),
            Condition::SqlState("23503".into())
        ]
    );
    assert_eq!(h[0].line, 4);
    assert!(h[2].conditions[0].matches("22012"));
    assert!(!h[2].conditions[0].matches("57014"));
    let StmtKind::Raise(r) = &h[2].body[0].kind else {
        panic!()
    };
    assert!(r.is_rethrow());
    assert!(Condition::Name("data_exception".into()).matches("22P02"));
    assert!(!Condition::Name("division_by_zero".into()).matches("22000"));
    assert_eq!(condition_sqlstate("null_value_not_allowed"), Some("22004"));
    assert_eq!(condition_sqlstates("null_value_not_allowed").len(), 2);
    // What keel has not built passes OTHERS; a handler naming it catches it.
    assert!(Condition::Others.catches("0A000", false));
    assert!(!Condition::Others.catches("0A000", true));
    assert!(Condition::Name("feature_not_supported".into()).catches("0A000", true));
    assert!(Condition::SqlState("0A000".into()).catches("0A000", true));
}

#[test]
fn labelled_loops_and_exits() {
    let src = "begin
      <<outer>>
      for r in select * from t order by 1 loop
        <<inner>> while r.x > 0 loop
          exit outer when r.x = 5;
          continue inner;
          continue when true;
          exit;
        end loop inner;
        loop exit; end loop;
        foreach x slice 1 in array arr loop null; end loop;
        for a, b in execute 'select 1, 2' using 1 loop end loop;
        for i in reverse 10..1 by 2 loop end loop;
        for rr in cur(1, 2) loop end loop;
      end loop outer;
    end";
    let s = stmts(src);
    assert_eq!(s[0].line, 3);
    let StmtKind::ForQuery {
        label,
        targets,
        query,
        body,
    } = &s[0].kind
    else {
        panic!("{:?}", s[0])
    };
    assert_eq!(label.as_deref(), Some("outer"));
    assert_eq!(targets[0].names, vec!["r"]);
    assert_eq!(query.text, "select * from t order by 1");
    let StmtKind::While { cond, body: wb, .. } = &body[0].kind else {
        panic!()
    };
    assert_eq!(cond.text, "r.x > 0");
    assert!(
        matches!(&wb[0].kind, StmtKind::Exit { is_exit: true, label: Some(l), cond: Some(c) } if l == "outer" && c.text == "r.x = 5")
    );
    assert_eq!(wb[1].kind_name(), "CONTINUE");
    assert!(
        matches!(&body[2].kind, StmtKind::Foreach { slice: 1, array, .. } if array.text == "arr")
    );
    assert!(
        matches!(&body[3].kind, StmtKind::ForExecute { targets, params, .. } if targets.len() == 2 && params.len() == 1)
    );
    assert!(
        matches!(&body[4].kind, StmtKind::ForInt { reverse: true, step: Some(s), .. } if s.text == "2")
    );
    assert!(
        matches!(&body[5].kind, StmtKind::ForCursor { cursor, args: Some(a), .. } if cursor.names == ["cur"] && a.text == "1, 2")
    );
}

#[test]
fn raise_forms() {
    let s = stmts(
        "begin
        raise notice 'a % b %%', x using hint = 'h', errcode = '22012';
        raise 'plain';
        raise exception using message = 'm';
        raise division_by_zero;
        raise warning sqlstate 'P0001' using detail = d;
        raise E'tab\\t%', 1;
        raise $m$x$m$;
      end",
    );
    let StmtKind::Raise(r) = &s[0].kind else {
        panic!()
    };
    assert_eq!(r.level, RaiseLevel::Notice);
    assert_eq!(r.message.as_deref(), Some("a % b %%"));
    assert_eq!(r.params[0].text, "x");
    assert_eq!(r.options[0].0, RaiseOptionKind::Hint);
    assert_eq!(r.options[1].1.text, "'22012'");
    let StmtKind::Raise(r) = &s[3].kind else {
        panic!()
    };
    assert_eq!(
        r.condition,
        Some(RaiseCondition::Name("division_by_zero".into()))
    );
    let StmtKind::Raise(r) = &s[4].kind else {
        panic!()
    };
    assert_eq!(r.condition, Some(RaiseCondition::SqlState("P0001".into())));
    let StmtKind::Raise(r) = &s[5].kind else {
        panic!()
    };
    assert_eq!(r.message.as_deref(), Some("tab\t%"));
    let StmtKind::Raise(r) = &s[6].kind else {
        panic!()
    };
    assert_eq!(r.message.as_deref(), Some("x"));
}

#[test]
fn select_into_and_execute_into() {
    let src = "begin
      select a, b into strict x, r.f from t where id = 1;
      insert into t values (1) returning id into v;
      update t set a = 1 where b = 2 returning a into y;
      execute 'select 1' using a, b into z;
      execute format('x %I', t) into strict z;
      perform f(1);
      get diagnostics n = row_count, m := pg_context;
      get stacked diagnostics msg = message_text;
      return query select 1;
      return query execute 'select $1' using 1;
      return next;
      assert n > 0, 'no rows';
      call p(1);
      commit and chain;
      rollback;
      set search_path = public;
      create function f() returns int begin atomic; select 1; end;
    end";
    let s = stmts(src);
    let StmtKind::Sql { sql, into } = &s[0].kind else {
        panic!()
    };
    let into = into.as_ref().unwrap();
    assert!(into.strict);
    assert_eq!(into.targets[1].names, vec!["r", "f"]);
    assert_eq!(
        sql.text.split_whitespace().collect::<Vec<_>>(),
        ["select", "a,", "b", "from", "t", "where", "id", "=", "1"]
    );
    // The INTO clause is blanked, so offsets still match the body.
    let k = src[sql.offset..].find("from").unwrap();
    assert_eq!(&sql.text[k..k + 4], "from");
    let StmtKind::Sql { sql, into } = &s[1].kind else {
        panic!()
    };
    assert_eq!(sql.text, "insert into t values (1) returning id");
    assert_eq!(into.as_ref().unwrap().targets[0].names, vec!["v"]);
    assert_eq!(s[1].kind_name(), "SQL statement");
    let StmtKind::Execute { into, params, .. } = &s[3].kind else {
        panic!()
    };
    assert_eq!(params.len(), 2);
    assert_eq!(into.as_ref().unwrap().targets[0].names, vec!["z"]);
    assert!(matches!(&s[5].kind, StmtKind::Perform { query } if query.text == "f(1)"));
    let StmtKind::GetDiagnostics { stacked, items } = &s[6].kind else {
        panic!()
    };
    assert!(!stacked);
    assert_eq!(items[1].1, DiagItem::PgContext);
    assert_eq!(s[7].kind_name(), "GET STACKED DIAGNOSTICS");
    assert!(matches!(
        &s[8].kind,
        StmtKind::ReturnQuery { dynamic: false, .. }
    ));
    assert!(
        matches!(&s[9].kind, StmtKind::ReturnQuery { dynamic: true, params, .. } if params.len() == 1)
    );
    assert!(matches!(&s[10].kind, StmtKind::ReturnNext { expr: None }));
    assert!(matches!(
        &s[11].kind,
        StmtKind::Assert {
            message: Some(_),
            ..
        }
    ));
    assert!(
        matches!(&s[12].kind, StmtKind::Call { is_call: true, sql } if sql.text == "call p(1)")
    );
    assert!(matches!(&s[13].kind, StmtKind::Commit { chain: true }));
    assert!(matches!(&s[14].kind, StmtKind::Rollback { chain: false }));
    assert!(
        matches!(&s[15].kind, StmtKind::Sql { sql, .. } if sql.text == "set search_path = public")
    );
    assert!(
        matches!(&s[16].kind, StmtKind::Sql { sql, .. } if sql.text.ends_with("select 1; end"))
    );
}

#[test]
fn if_case_and_assignment_targets() {
    let s = stmts(
        "begin
      if a then x := 1; elsif b then x := 2; elseif c then null; else x = 3; end if;
      case x when 1, 2 then null; else null; end case;
      case when x > 1 then y[1] := 2; end case;
      a[i][j].f := 0;
      $1 := 5;
      <<blk>> declare z int; begin z := 1; end blk;
    end",
    );
    let StmtKind::If {
        elsifs, else_body, ..
    } = &s[0].kind
    else {
        panic!()
    };
    assert_eq!(elsifs.len(), 2);
    assert!(else_body.is_some());
    let StmtKind::Case { expr, whens, .. } = &s[1].kind else {
        panic!()
    };
    assert_eq!(expr.as_ref().unwrap().text, "x");
    assert_eq!(whens[0].expr.text, "1, 2");
    let StmtKind::Case {
        expr: None,
        whens,
        else_body: None,
    } = &s[2].kind
    else {
        panic!()
    };
    assert_eq!(whens[0].expr.text, "x > 1");
    let StmtKind::Assign { target, .. } = &s[3].kind else {
        panic!()
    };
    assert_eq!(target.path.len(), 3);
    assert!(matches!(&target.path[1], TargetPart::Subscript(t) if t.text == "j"));
    assert!(matches!(&s[4].kind, StmtKind::Assign { target, .. } if target.name == "$1"));
    assert!(matches!(&s[5].kind, StmtKind::Block(b) if b.label.as_deref() == Some("blk")));
    assert_eq!(s[5].kind_name(), "statement block");
}

#[test]
fn cursors_and_options() {
    let b = body(
        "#variable_conflict use_column
      #print_strict_params on
      declare c refcursor; begin
        open c for select 1;
        open c scroll for execute 'select 1' using 2;
        open c(1);
        fetch c into x;
        fetch next from c into x;
        move backward 2 in c;
        close c;
      end",
    );
    assert_eq!(
        b.options.variable_conflict,
        Some(VariableConflict::UseColumn)
    );
    assert_eq!(b.options.print_strict_params, Some(true));
    let s = b.block.body;
    assert!(matches!(
        &s[0].kind,
        StmtKind::Open {
            source: OpenSource::Query { .. },
            ..
        }
    ));
    assert!(matches!(
        &s[1].kind,
        StmtKind::Open {
            source: OpenSource::Execute {
                scroll: Some(true),
                ..
            },
            ..
        }
    ));
    assert!(matches!(
        &s[2].kind,
        StmtKind::Open {
            source: OpenSource::Bound { args: Some(_) },
            ..
        }
    ));
    assert_eq!(s[5].kind_name(), "MOVE");
    assert_eq!(s[6].kind_name(), "CLOSE");
}

#[test]
fn lexical_details() {
    // Strings, quoted identifiers, dollar quotes and comments hide terminators.
    let s = stmts(
        "begin
      x := 'a;b'';' || \"we;ird\" || $q$ ; end $q$ /* ; /* nested ; */ */ -- ;
      ;
      y := E'\\';' ;
    end",
    );
    let StmtKind::Assign { expr, .. } = &s[0].kind else {
        panic!()
    };
    assert_eq!(expr.text, "'a;b'';' || \"we;ird\" || $q$ ; end $q$");
    let StmtKind::Assign { expr, .. } = &s[1].kind else {
        panic!()
    };
    assert_eq!(expr.text, "E'\\';'");
    // `1..10` is two integers around `..`; `x=-1` splits the operator.
    let s = stmts("begin for i in 1..10 loop x:=-1; end loop; end");
    assert!(
        matches!(&s[0].kind, StmtKind::ForInt { lower, upper, .. } if lower.text == "1" && upper.text == "10")
    );
    // Multi-byte text keeps byte offsets and character positions apart.
    let (m, pos) = err("begin x := 'é'; assert; end");
    assert_eq!(m, "missing expression at or near \";\"");
    assert_eq!(pos, Some(23));
}

#[test]
fn line_numbers() {
    let s =
        stmts("\ndeclare\n  x int;\nbegin\n  raise notice 'hi';\n  raise exception 'boom';\nend");
    assert_eq!(s[1].line, 6);
    assert_eq!(s[1].kind_name(), "RAISE");
}

#[test]
fn syntax_errors_match_postgres() {
    let cases: &[(&str, &str, Option<u32>)] = &[
        (
            " begin if true then null; end ",
            "syntax error at end of input",
            Some(31),
        ),
        (
            " begin exit; end ",
            "EXIT cannot be used outside a loop, unless it has a label",
            Some(8),
        ),
        (
            " <<a>> begin null; end b ",
            "end label \"b\" differs from block's label \"a\"",
            Some(24),
        ),
        (
            " begin continue foo; end ",
            "there is no label \"foo\" attached to any block or loop enclosing this statement",
            Some(17),
        ),
        (
            " <<a>> begin loop continue a; end loop; end ",
            "block label \"a\" cannot be used in CONTINUE",
            Some(28),
        ),
        (
            " begin raise notice 'a % %', 1; end ",
            "too few parameters specified for RAISE",
            None,
        ),
        (
            " begin raise notice 'a', 1, 2; end ",
            "too many parameters specified for RAISE",
            None,
        ),
        (
            " begin perform 1 ",
            "syntax error at end of input",
            Some(18),
        ),
        (
            " begin select 1 ",
            "unexpected end of function definition at end of input",
            Some(17),
        ),
        (
            " begin raise foo_bar; end ",
            "unrecognized exception condition \"foo_bar\"",
            None,
        ),
        (
            " begin null; exception when foo_bar then null; end ",
            "unrecognized exception condition \"foo_bar\"",
            None,
        ),
        (
            " begin for i in 1..3 loop null; end ",
            "syntax error at end of input",
            Some(37),
        ),
        (
            " begin if (1 then null; end if; end ",
            "mismatched parentheses at or near \";\"",
            Some(23),
        ),
        (
            " declare x int; <<l>> begin end ",
            "block label must be placed before DECLARE, not after",
            Some(17),
        ),
        (
            " begin raise notice using foo = 1; end ",
            "unrecognized RAISE statement option at or near \"foo\"",
            Some(27),
        ),
        (
            " begin raise sqlstate '123'; end ",
            "invalid SQLSTATE code at or near \"'123'\"",
            Some(23),
        ),
        (
            " begin end; garbage ",
            "syntax error at or near \"garbage\"",
            Some(13),
        ),
        (
            " /* unterminated ",
            "unterminated /* comment at or near \"/* unterminated \"",
            Some(2),
        ),
        (
            " declare x int; begin x := 'abc; end ",
            "unterminated quoted string at or near \"'abc; end \"",
            Some(28),
        ),
        (
            " declare x int; begin x := \"abc; end ",
            "unterminated quoted identifier at or near \"\"abc; end \"",
            Some(28),
        ),
        (
            " begin if then null; end if; end ",
            "missing expression at or near \"then\"",
            Some(11),
        ),
        (
            " declare x int; begin select 1 into x into x; end ",
            "INTO specified more than once at or near \"into\"",
            Some(39),
        ),
        (
            " begin for i in 1..3 loop null; end loop foo; end ",
            "end label \"foo\" specified for unlabeled block",
            Some(42),
        ),
        (
            " declare x int; begin get stacked diagnostics x = row_count; end ",
            "diagnostics item ROW_COUNT is not allowed in GET STACKED DIAGNOSTICS",
            Some(23),
        ),
        (
            " declare x int; begin get diagnostics x = message_text; end ",
            "diagnostics item MESSAGE_TEXT is not allowed in GET CURRENT DIAGNOSTICS",
            Some(23),
        ),
        (
            " begin null; exception end ",
            "syntax error at or near \"end\"",
            Some(24),
        ),
        (
            " begin case when true then null; end ",
            "syntax error at end of input",
            Some(38),
        ),
        (
            " declare x int; begin x = 1 end ",
            "syntax error at end of input",
            Some(33),
        ),
        (
            " begin for x in reverse select 1 loop end loop; end ",
            "cannot specify REVERSE in query FOR loop",
            Some(17),
        ),
        (
            " begin assert; end ",
            "missing expression at or near \";\"",
            Some(14),
        ),
        (
            " begin raise notice; end ",
            "syntax error at or near \";\"",
            Some(20),
        ),
        (
            " begin end label ",
            "end label \"label\" specified for unlabeled block",
            Some(12),
        ),
        (
            " begin select 1; ) ",
            "syntax error at or near \")\"",
            Some(18),
        ),
        (
            " begin x(; end ",
            "unexpected end of function definition at end of input",
            Some(16),
        ),
        (" begin if true ", "syntax error at end of input", Some(16)),
        (
            " begin while true; end loop; end ",
            "missing \"LOOP\" at end of SQL expression",
            Some(18),
        ),
        (
            " declare x int; begin x := (1; end ",
            "mismatched parentheses at or near \";\"",
            Some(30),
        ),
        (
            " declare x int; begin x := 1); end ",
            "mismatched parentheses at or near \")\"",
            Some(29),
        ),
        (
            " begin for i in 1..",
            "missing expression at end of input",
            Some(20),
        ),
        (
            " begin execute 'a' ",
            "missing \"INTO or USING or ;\" at end of SQL expression",
            Some(20),
        ),
        (
            " begin raise notice 'x %', 1 ",
            "missing \", or ; or USING\" at end of SQL expression",
            Some(30),
        ),
        (
            " begin case 1 ",
            "missing expression at end of input",
            Some(15),
        ),
        (
            " begin raise notice 'a' using message = 1 ",
            "unexpected end of function definition at end of input",
            Some(43),
        ),
        (
            " declare a int[]; begin a[1 ",
            "mismatched parentheses at end of input",
            Some(29),
        ),
        (
            " begin execute 'x' using 1 ",
            "missing \", or ; or INTO\" at end of SQL expression",
            Some(28),
        ),
        (
            " declare x int; begin foreach x in 1 loop end loop; end ",
            "syntax error at or near \"1\"",
            Some(36),
        ),
        (
            " begin loop continue; end loop; continue; end ",
            "CONTINUE cannot be used outside a loop",
            Some(33),
        ),
        (" begin; end ", "syntax error at or near \";\"", Some(7)),
        (
            " begin null end ",
            "syntax error at or near \"end\"",
            Some(13),
        ),
        (
            " declare x int not null; begin end ",
            "variable \"x\" must have a default value, since it's declared NOT NULL",
            Some(16),
        ),
        (
            " declare x int; x int; begin end ",
            "duplicate declaration at or near \"x\"",
            Some(17),
        ),
        (
            " begin null; exception when sqlstate '22x12' then null; end ",
            "invalid SQLSTATE code at or near \"'22x12'\"",
            Some(38),
        ),
    ];
    let mut failures = Vec::new();
    for (src, want, pos) in cases {
        let got = err(src);
        if got.0 != *want || got.1 != *pos {
            failures.push(format!(
                "{src:?}\n  want {want} @ {pos:?}\n  got  {} @ {:?}",
                got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_codes_and_lines() {
    let e = parse_do_block("begin\n\n  raise foo;\nend").unwrap_err();
    assert_eq!(e.error.code, "42704");
    assert_eq!(e.line, 3);
    let e = parse_do_block("begin\n  x := (1;\nend").unwrap_err();
    assert_eq!(e.error.code, "42601");
    assert_eq!(
        (e.offset, e.line),
        Some((15, 2)).map(|(o, l)| (Some(o), l)).unwrap()
    );
    // The DO block's outermost block answers to its implicit label.
    assert!(parse_do_block("begin exit inline_code_block; end").is_ok());
    assert!(parse_function_body_named("begin exit f; end", "f").is_ok());
}

fn nested(depth: usize, open: &str, close: &str) -> String {
    let mut s = String::from("begin ");
    for _ in 0..depth {
        s.push_str(open);
    }
    for _ in 0..depth {
        s.push_str(close);
    }
    s.push_str("end");
    s
}

#[test]
fn deep_nesting_fails_cleanly() {
    for (open, close) in [
        ("begin ", "end; "),
        ("if true then ", "end if; "),
        ("loop ", "end loop; "),
    ] {
        let shallow = nested(50, open, close);
        assert!(parse_function_body(&shallow).is_ok());
        let deep = nested(10_000, open, close);
        let e = parse_function_body(&deep).unwrap_err();
        assert!(
            e.error.code == "54001" || e.error.message.starts_with("memory exhausted"),
            "{e}"
        );
    }
}
