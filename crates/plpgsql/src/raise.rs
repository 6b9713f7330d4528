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
        let mut code: &'static str = match (&r.condition, r.level) {
            (Some(RaiseCondition::SqlState(c)), _) => intern_code(c),
            (Some(RaiseCondition::Name(n)), _) => {
                keel_pl::condition_sqlstate(n).unwrap_or(sqlstate::RAISE_EXCEPTION)
            }
            (None, RaiseLevel::Exception) => sqlstate::RAISE_EXCEPTION,
            (None, RaiseLevel::Warning) => sqlstate::WARNING,
            (None, _) => sqlstate::SUCCESSFUL_COMPLETION,
        };
        if r.message.is_none()
            && let Some(RaiseCondition::Name(n)) = &r.condition
        {
            msg = n.clone();
        }
        let (mut detail, mut hint) = (None, None);
        for (kind, e) in &r.options {
            let (v, _) = self.eval(st, e).await?;
            let text = keel_types::io::to_text(&v);
            match kind {
                RaiseOptionKind::Errcode => {
                    code = keel_pl::condition_sqlstate(&text).unwrap_or_else(|| intern_code(&text))
                }
                RaiseOptionKind::Message => msg = text,
                RaiseOptionKind::Detail => detail = Some(text),
                RaiseOptionKind::Hint => hint = Some(text),
                _ => {}
            }
        }
        let severity = match r.level {
            RaiseLevel::Exception => {
                let mut e = PgError::new(code, msg);
                e.detail = detail;
                e.hint = hint;
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
        let n = n.with_context_line(format!(
            "PL/pgSQL function {} line {} at RAISE",
            st.fname, line
        ));
        self.h.notice(&n);
        Ok(())
    }
}
