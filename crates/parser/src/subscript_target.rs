//! Subscripted assignment targets: `UPDATE t SET a[i] = v`, `a[lo:hi] = '{...}'`, and the
//! same in `ON CONFLICT DO UPDATE SET`. sqlparser's grammar takes only a column name there,
//! so the subscripts are blanked out of the text before parsing (every other character keeps
//! its offset: error positions stay right), parsed on their own as the expression `a[i]`,
//! and put back into the tree afterwards: the assignment becomes `a = "?subscript"(a[i], v)`,
//! a marker call the binder recognises ([`marker_args`]) and binds as PostgreSQL's
//! subscripted assignment.
//!
//! A target is a column name followed by one or more `[...]` and `=`, at the start of an item
//! of a SET list (after `SET` or a comma at the list's nesting depth); the list ends at WHERE,
//! FROM or RETURNING at its depth, or where that depth closes. In an INSERT's column list
//! (`INSERT INTO t (a[1:2], b)`), a column with subscripts is a target too: the statement
//! gets an assignment `a = "?subscript"(a[1:2], 0)` per such column, 0 its position in the
//! list ([`insert_subscripts`]).

use crate::symmetric::{keyword, offset};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

const MARKER: &str = "?subscript";

/// A subscripted target found in the text: where its column name starts, and the byte range
/// of the name and its subscripts in the original text.
#[derive(Clone, Debug)]
pub struct Target {
    pub name_at: Location,
    pub range: std::ops::Range<usize>,
}

/// `(subscripted target, value)` of a marker call the rewrite made; None for any other
/// expression.
pub fn marker_args(e: &ast::Expr) -> Option<(&ast::Expr, &ast::Expr)> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let [part] = f.name.0.as_slice() else {
        return None;
    };
    let name = part.as_ident()?;
    if name.value != MARKER || name.quote_style != Some('"') {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) => match l.args.as_slice() {
            [
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(t)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(v)),
            ] => Some((t, v)),
            _ => None,
        },
        _ => None,
    }
}

/// The text with the subscripts of assignment targets blanked, and the targets; None when
/// there is none (or the text does not tokenize: the parser reports that).
pub fn rewrite(text: &str) -> Option<(String, Vec<Target>)> {
    if !text.contains('[')
        || !(crate::split::contains_ignore_case(text, "set")
            || crate::split::contains_ignore_case(text, "insert"))
    {
        return None;
    }
    let all = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize_with_location()
        .ok()?;
    let toks: Vec<&TokenWithSpan> = all
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut targets = Vec::new();
    // Depths of the SET lists open around the current token.
    let mut lists: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut item_start = false;
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i].token;
        if keyword(t) == Some(Keyword::INSERT) {
            insert_targets(text, &toks, i, &mut targets);
        }
        if item_start && lists.last() == Some(&depth) {
            item_start = false;
            if let Some(end) = subscripted_target(&toks, i) {
                let start = offset(text, toks[i].span.start);
                let stop = offset(text, toks[end].span.end);
                targets.push(Target {
                    name_at: toks[i].span.start,
                    range: start..stop,
                });
                i = end + 1;
                continue;
            }
        }
        match t {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => {
                depth = depth.saturating_sub(1);
                while lists.last().is_some_and(|&d| d > depth) {
                    lists.pop();
                }
            }
            Token::Comma if lists.last() == Some(&depth) => item_start = true,
            Token::SemiColon => lists.clear(),
            _ => match keyword(t) {
                Some(Keyword::SET) => {
                    lists.push(depth);
                    item_start = true;
                }
                Some(Keyword::WHERE | Keyword::FROM | Keyword::RETURNING)
                    if lists.last() == Some(&depth) =>
                {
                    lists.pop();
                }
                _ => {}
            },
        }
        i += 1;
    }
    if targets.is_empty() {
        return None;
    }
    // One blank per character: sqlparser locates tokens by line and column, so everything
    // after a blanked subscript keeps its position. Last target first, so the byte ranges of
    // the earlier ones still hold.
    let mut out = text.to_string();
    for t in targets.iter().rev() {
        // The subscripts: from the first `[` to the end of the target.
        let bracket = text[t.range.clone()]
            .find('[')
            .map_or(t.range.end, |k| t.range.start + k);
        let blank: String = text[bracket..t.range.end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(bracket..t.range.end, &blank);
    }
    Some((out, targets))
}

/// The subscripted columns of the column list of the INSERT at `toks[at]`:
/// `INSERT INTO name [AS alias] (a[1:2], b, c[3])`. A parenthesized query in that place
/// (`INSERT INTO t (SELECT ...)`) has no column list.
fn insert_targets(text: &str, toks: &[&TokenWithSpan], at: usize, targets: &mut Vec<Target>) {
    let tok = |k: usize| toks.get(k).map(|t| &t.token);
    let mut j = at + 1;
    if tok(j).and_then(keyword) != Some(Keyword::INTO) {
        return;
    }
    j += 1;
    while matches!(tok(j), Some(Token::Word(_))) {
        j += 1;
        if !matches!(tok(j), Some(Token::Period)) {
            break;
        }
        j += 1;
    }
    if tok(j).and_then(keyword) == Some(Keyword::AS) {
        j += 2;
    }
    if !matches!(tok(j), Some(Token::LParen)) {
        return;
    }
    if matches!(
        tok(j + 1).and_then(keyword),
        Some(Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::TABLE)
    ) || matches!(tok(j + 1), Some(Token::LParen))
    {
        return;
    }
    let mut k = j + 1;
    loop {
        if let Some(end) = subscripted_item(toks, k) {
            targets.push(Target {
                name_at: toks[k].span.start,
                range: offset(text, toks[k].span.start)..offset(text, toks[end].span.end),
            });
            k = end + 1;
        } else {
            k += 1;
        }
        match tok(k) {
            Some(Token::Comma) => k += 1,
            _ => return,
        }
    }
}

/// When `toks[i]` starts `name [..]...` followed by `,` or `)` (an INSERT column), the
/// index of the last `]`.
fn subscripted_item(toks: &[&TokenWithSpan], i: usize) -> Option<usize> {
    let last = subscripts_end(toks, i)?;
    match toks.get(last + 1).map(|t| &t.token) {
        Some(Token::Comma | Token::RParen) => Some(last),
        _ => None,
    }
}

/// When `toks[i]` is a name followed by one or more `[...]`, the index of the last `]`.
fn subscripts_end(toks: &[&TokenWithSpan], i: usize) -> Option<usize> {
    if !matches!(toks.get(i)?.token, Token::Word(_)) {
        return None;
    }
    let mut j = i + 1;
    let mut last = None;
    while matches!(toks.get(j).map(|t| &t.token), Some(Token::LBracket)) {
        let mut depth = 0usize;
        loop {
            match &toks.get(j)?.token {
                Token::LBracket => depth += 1,
                Token::RBracket => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::SemiColon => return None,
                _ => {}
            }
            j += 1;
        }
        last = Some(j);
        j += 1;
    }
    last
}

/// When `toks[i]` starts `name [..]... =`, the index of the last `]`.
fn subscripted_target(toks: &[&TokenWithSpan], i: usize) -> Option<usize> {
    let last = subscripts_end(toks, i)?;
    match toks.get(last + 1).map(|t| &t.token) {
        Some(Token::Eq) => Some(last),
        _ => None,
    }
}

/// Puts the targets back into the parsed statement: each assignment whose column name starts
/// at a target's location gets the marker call as its value. An INSERT's subscripted
/// columns become assignments of `"?subscript"(target, k)`, k the column's position in the
/// list (see [`insert_subscripts`]).
pub fn restore(stmt: &mut ast::Statement, text: &str, targets: &[Target]) -> Result<(), String> {
    if let ast::Statement::Insert(ins) = stmt {
        for (k, col) in ins.columns.iter().enumerate() {
            let Some(t) = targets.iter().find(|t| Some(t.name_at) == name_start(col)) else {
                continue;
            };
            let position = ast::Expr::value(ast::Value::Number(k.to_string(), false));
            ins.assignments.push(ast::Assignment {
                target: ast::AssignmentTarget::ColumnName(col.clone()),
                value: marker_call(target_alone(text, t)?, position)?,
            });
        }
    }
    let assignments: &mut Vec<ast::Assignment> = match stmt {
        ast::Statement::Update(u) => &mut u.assignments,
        ast::Statement::Insert(ins) => match &mut ins.on {
            Some(ast::OnInsert::OnConflict(ast::OnConflict {
                action: ast::OnConflictAction::DoUpdate(d),
                ..
            })) => &mut d.assignments,
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    for a in assignments.iter_mut() {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            continue;
        };
        let Some(t) = targets.iter().find(|t| Some(t.name_at) == name_start(n)) else {
            continue;
        };
        let value = std::mem::replace(&mut a.value, ast::Expr::value(ast::Value::Null));
        a.value = marker_call(target_alone(text, t)?, value)?;
    }
    Ok(())
}

/// Where a column name starts in the text.
fn name_start(n: &ast::ObjectName) -> Option<Location> {
    n.0.first()
        .and_then(|p| p.as_ident())
        .map(|id| id.span.start)
}

/// The target parsed alone, at its own line and column (everything else blanked).
fn target_alone(text: &str, t: &Target) -> Result<ast::Expr, String> {
    let alone: String = text
        .char_indices()
        .map(|(k, c)| {
            if t.range.contains(&k) || c == '\n' {
                c
            } else {
                ' '
            }
        })
        .collect();
    sqlparser::parser::Parser::new(&crate::dialect::KeelDialect)
        .try_with_sql(&alone)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| e.to_string())
}

/// `"?subscript"(target, value)`.
fn marker_call(target: ast::Expr, value: ast::Expr) -> Result<ast::Expr, String> {
    let mut call = sqlparser::parser::Parser::new(&crate::dialect::KeelDialect)
        .try_with_sql(&format!("\"{MARKER}\"(NULL, NULL)"))
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| e.to_string())?;
    if let ast::Expr::Function(f) = &mut call
        && let ast::FunctionArguments::List(l) = &mut f.args
    {
        l.args = vec![
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(target)),
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(value)),
        ];
    }
    Ok(call)
}

/// An INSERT's subscripted columns, as [`restore`] recorded them: (position in the column
/// list, the target `a[i]...`).
pub fn insert_subscripts(ins: &ast::Insert) -> Vec<(usize, &ast::Expr)> {
    ins.assignments
        .iter()
        .filter_map(|a| {
            let (target, pos) = marker_args(&a.value)?;
            match pos {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => Some((n.parse().ok()?, target)),
                    _ => None,
                },
                _ => None,
            }
        })
        .collect()
}
