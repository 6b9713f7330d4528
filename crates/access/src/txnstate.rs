//! Engine-private per-transaction state.

use keel_common::Xid;

#[derive(Debug, Default)]
pub struct TxnState {
    pub xid: Option<Xid>,
}
