//! `plpgsql.extra_warnings` / `plpgsql.extra_errors` = `shadowed_variables`: a declaration
//! whose name an enclosing scope already declares (a parameter, FOUND, an outer block's
//! variable, an integer FOR loop's variable, a cursor's argument) is reported at CREATE
//! FUNCTION, as PostgreSQL's grammar reports it while compiling for the validator: a WARNING
//! per declaration, or an ERROR at the first one. Names in the same block are a different
//! error (duplicate declaration), left to the parser.

use keel_common::{PgError, sqlstate};
use keel_pl::{Block, Body, Decl, Stmt, StmtKind};

/// One shadowing declaration: its name and the byte offset of the name in the body.
pub struct Shadowing {
    pub name: String,
    pub offset: usize,
}

impl Shadowing {
    /// The report, placed at the name in `body` (an internal position the session moves into
    /// the CREATE statement).
    pub fn report(&self, body: &str) -> PgError {
        let chars = body[..self.offset.min(body.len())].chars().count();
        let mut e = PgError::new(
            sqlstate::DUPLICATE_ALIAS,
            format!(
                "variable \"{}\" shadows a previously defined variable",
                self.name
            ),
        );
        let o = e.objects_mut();
        o.internal_query = Some(body.to_string());
        o.internal_position = Some(chars as u32 + 1);
        e
    }
}

/// The shadowing declarations of `body`, in the order written; `params` are the function's
/// named parameters (IN, OUT and TABLE ones), the outermost scope with FOUND.
pub fn shadowed(body: &Body, params: &[String]) -> Vec<Shadowing> {
    let mut scopes: Vec<Vec<String>> = vec![params.to_vec(), vec!["found".into()]];
    let mut out = Vec::new();
    block(&body.block, &mut scopes, &mut out);
    out
}

fn declared(scopes: &[Vec<String>], name: &str) -> bool {
    scopes.iter().any(|s| s.iter().any(|n| n == name))
}

fn declare(scopes: &mut [Vec<String>], name: &str, offset: usize, out: &mut Vec<Shadowing>) {
    if declared(scopes, name) {
        out.push(Shadowing {
            name: name.to_string(),
            offset,
        });
    }
    if let Some(s) = scopes.last_mut() {
        s.push(name.to_string());
    }
}

fn block(b: &Block, scopes: &mut Vec<Vec<String>>, out: &mut Vec<Shadowing>) {
    scopes.push(Vec::new());
    for d in &b.decls {
        match d {
            Decl::Var(v) => declare(scopes, &v.name, v.offset, out),
            Decl::Alias { name, offset, .. } => declare(scopes, name, *offset, out),
            Decl::Cursor(c) => {
                // A cursor's arguments are a scope of their own, inside the block's.
                scopes.push(Vec::new());
                for (arg, ty) in &c.args {
                    declare(
                        scopes,
                        arg,
                        ty.text.offset.saturating_sub(arg.len() + 1),
                        out,
                    );
                }
                scopes.pop();
                declare(scopes, &c.name, c.offset, out);
            }
        }
    }
    stmts(&b.body, scopes, out);
    for h in b.exceptions.iter().flatten() {
        stmts(&h.body, scopes, out);
    }
    scopes.pop();
}

fn stmts(list: &[Stmt], scopes: &mut Vec<Vec<String>>, out: &mut Vec<Shadowing>) {
    for s in list {
        stmt(s, scopes, out);
    }
}

fn stmt(s: &Stmt, scopes: &mut Vec<Vec<String>>, out: &mut Vec<Shadowing>) {
    match &s.kind {
        StmtKind::Block(b) => block(b, scopes, out),
        StmtKind::If {
            then_body,
            elsifs,
            else_body,
            ..
        } => {
            stmts(then_body, scopes, out);
            for e in elsifs {
                stmts(&e.body, scopes, out);
            }
            stmts(else_body.as_deref().unwrap_or(&[]), scopes, out);
        }
        StmtKind::Case {
            whens, else_body, ..
        } => {
            for w in whens {
                stmts(&w.body, scopes, out);
            }
            stmts(else_body.as_deref().unwrap_or(&[]), scopes, out);
        }
        StmtKind::ForInt { var, body, .. } | StmtKind::ForCursor { var, body, .. } => {
            scopes.push(vec![var.clone()]);
            stmts(body, scopes, out);
            scopes.pop();
        }
        StmtKind::Loop { body, .. }
        | StmtKind::While { body, .. }
        | StmtKind::ForQuery { body, .. }
        | StmtKind::ForExecute { body, .. }
        | StmtKind::Foreach { body, .. } => stmts(body, scopes, out),
        _ => {}
    }
}
