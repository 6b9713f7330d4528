//! Engine internals (being built).
#![allow(unused_variables)]

use crate::api::*;
use keel_catalog::{Catalog, IndexDef, SequenceDef, TableDef};
use keel_common::{PgResult, Settings, Tid};
use keel_types::Datum;
use std::path::Path;
use std::sync::Arc;

pub struct EngineInner {}

pub fn open(data_dir: &Path, settings: &Settings) -> PgResult<Arc<Engine>> {
    todo!()
}

impl EngineInner {
    pub fn catalog(&self) -> Arc<Catalog> {
        todo!()
    }
    pub fn begin(&self, isolation: Isolation, read_only: bool) -> Transaction {
        todo!()
    }
    pub fn start_statement(&self, txn: &mut Transaction) {
        todo!()
    }
    pub async fn commit(&self, txn: Transaction, sync: bool) -> PgResult<()> {
        todo!()
    }
    pub fn rollback(&self, txn: Transaction) {
        todo!()
    }
    pub async fn wait(
        &self,
        txn: &Transaction,
        wait: RowWait,
        cancelled: impl std::future::Future<Output = ()> + Send,
    ) -> PgResult<()> {
        todo!()
    }
    pub fn create_relfile(&self, txn: &mut Transaction, relfile: u32, unlogged: bool) -> PgResult<()> {
        todo!()
    }
    pub fn drop_relfile_at_commit(&self, txn: &mut Transaction, relfile: u32) {
        todo!()
    }
    pub fn build_index(&self, txn: &mut Transaction, table: &TableDef, index: &IndexDef) -> PgResult<()> {
        todo!()
    }
    pub fn scan<'a>(&'a self, txn: &'a Transaction, table: &'a TableDef) -> RowIter<'a> {
        todo!()
    }
    pub fn index_scan<'a>(
        &'a self,
        txn: &'a Transaction,
        table: &'a TableDef,
        index: &'a IndexDef,
        range: KeyRange,
    ) -> RowIter<'a> {
        todo!()
    }
    pub fn insert(
        &self,
        txn: &mut Transaction,
        table: &TableDef,
        row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        todo!()
    }
    pub fn update(
        &self,
        txn: &mut Transaction,
        table: &TableDef,
        target: RowRef,
        new_row: &[Datum],
        state: &mut WriteState,
    ) -> PgResult<Write<RowRef>> {
        todo!()
    }
    pub fn delete(&self, txn: &mut Transaction, table: &TableDef, target: RowRef) -> PgResult<Write<()>> {
        todo!()
    }
    pub fn fetch_newest(
        &self,
        txn: &Transaction,
        table: &TableDef,
        root: Tid,
    ) -> PgResult<Option<(RowRef, Vec<Datum>)>> {
        todo!()
    }
    pub fn vacuum(&self, table: &TableDef) -> PgResult<VacuumStats> {
        todo!()
    }
    pub fn relation_size(&self, relfile: u32) -> u64 {
        todo!()
    }
    pub fn nextval(&self, seq: &SequenceDef) -> PgResult<i64> {
        todo!()
    }
    pub fn setval(&self, seq: &SequenceDef, value: i64, is_called: bool) -> PgResult<()> {
        todo!()
    }
    pub fn checkpoint(&self) -> PgResult<()> {
        todo!()
    }
    pub fn shutdown(&self) {}
}
