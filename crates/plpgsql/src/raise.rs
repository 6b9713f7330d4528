//! RAISE: a message formatted from its `%` placeholders, sent as a notice or raised as an
//! error with the SQLSTATE, DETAIL and HINT its options give.

use crate::Host;
use crate::interp::{Interp, PlState, intern_code};
use keel_common::{PgError, PgResult, Severity, sqlstate};
use keel_pl::{Raise, RaiseCondition, RaiseLevel, RaiseOptionKind};

impl<H: Host + ?Sized> Interp<'_, H> {
    pub(crate) async fn raise(&mut self, st: &mut PlState, r: &Raise, line: u32) -> PgResult<()> {
        if r.is_rethrow() {
            // The caught error again, as it was caught: its CONTEXT lines are those of where
            // it first happened (PostgreSQL's ReThrowError).
            return match st.handling.last() {
                Some(e) => {
                    st.located = true;
                    Err(e.clone())
                }
                None => Err(PgError::new(
                    sqlstate::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER,
                    "RAISE without parameters cannot be used outside an exception handler",
                )),
            };
        }
        let mut args = Vec::with_capacity(r.params.len());
        for p in &r.params {
            let (v, _) = self.eval(st, p).await?;
            args.push(if v.is_null() {
                "<NULL>".to_string()
            } else {
                keel_types::io::to_text(&v)
            });
        }
        let mut msg = String::new();
        if let Some(fmt) = &r.message {
            let mut it = args.into_iter();
            let mut chars = fmt.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '%' {
                    if chars.peek() == Some(&'%') {
                        chars.next();
                        msg.push('%');
                    } else {
                        msg.push_str(&it.next().unwrap_or_default());
                    }
                } else {
                    msg.push(c);
                }
            }
        }
        // The SQLSTATE and the condition's name, as the statement gives them (PostgreSQL's
        // err_code and condname).
        let (mut code, mut condname): (Option<&'static str>, Option<String>) = match &r.condition {
            Some(RaiseCondition::SqlState(c)) => (Some(intern_code(c)), Some(c.clone())),
            Some(RaiseCondition::Name(n)) => (
                Some(keel_pl::condition_sqlstate(n).unwrap_or(sqlstate::RAISE_EXCEPTION)),
                Some(n.clone()),
            ),
            None => (None, None),
        };
        let mut message = r.message.is_some().then_some(msg);
        let (mut detail, mut hint) = (None, None);
        let mut objects = keel_common::ErrorObjects::default();
        for (kind, e) in &r.options {
            let (v, _) = self.eval(st, e).await?;
            if v.is_null() {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "RAISE statement option cannot be null",
                ));
            }
            let text = keel_types::io::to_text(&v);
            let slot = match kind {
                RaiseOptionKind::Errcode => {
                    if code.is_some() {
                        return Err(already_specified(*kind));
                    }
                    code = Some(
                        keel_pl::condition_sqlstate(&text).unwrap_or_else(|| intern_code(&text)),
                    );
                    condname = Some(text);
                    continue;
                }
                RaiseOptionKind::Message => &mut message,
                RaiseOptionKind::Detail => &mut detail,
                RaiseOptionKind::Hint => &mut hint,
                RaiseOptionKind::Column => &mut objects.column,
                RaiseOptionKind::Constraint => &mut objects.constraint,
                RaiseOptionKind::Datatype => &mut objects.datatype,
                RaiseOptionKind::Table => &mut objects.table,
                RaiseOptionKind::Schema => &mut objects.schema,
            };
            if slot.is_some() {
                return Err(already_specified(*kind));
            }
            *slot = Some(text);
        }
        let code = code.unwrap_or(match r.level {
            RaiseLevel::Exception => sqlstate::RAISE_EXCEPTION,
            RaiseLevel::Warning => sqlstate::WARNING,
            _ => sqlstate::SUCCESSFUL_COMPLETION,
        });
        // Without a message: the condition's name, else the SQLSTATE itself.
        let msg = message.or(condname).unwrap_or_else(|| code.to_string());
        let severity = match r.level {
            RaiseLevel::Exception => {
                let mut e = PgError::new(code, msg);
                e.detail = detail;
                e.hint = hint;
                if objects != Default::default() {
                    e.objects = Some(Box::new(objects));
                }
                return Err(e);
            }
            RaiseLevel::Warning => Severity::Warning,
            RaiseLevel::Notice => Severity::Notice,
            RaiseLevel::Info => Severity::Info,
            // client_min_messages is NOTICE: DEBUG and LOG do not reach the client.
            RaiseLevel::Debug | RaiseLevel::Log => return Ok(()),
        };
        let mut n = PgError::notice(severity, code, msg);
        n.detail = detail;
        n.hint = hint;
        if objects != Default::default() {
            n.objects = Some(Box::new(objects));
        }
        let n = n.with_context_line(format!(
            "PL/pgSQL function {} line {} at RAISE",
            st.fname, line
        ));
        self.h.notice(&n);
        Ok(())
    }
}

/// A RAISE option given twice (the format string counts as MESSAGE).
fn already_specified(kind: RaiseOptionKind) -> PgError {
    PgError::new(
        sqlstate::SYNTAX_ERROR,
        format!("RAISE option already specified: {}", kind.name()),
    )
}
