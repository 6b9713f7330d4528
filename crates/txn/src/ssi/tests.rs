use super::*;

fn begin(ssi: &Ssi, read_only: bool) -> SxId {
    ssi.register(read_only, || ()).0.expect("registered")
}

fn commit(ssi: &Ssi, t: SxId) -> PgResult<()> {
    ssi.pre_commit(t)?;
    ssi.release(t, true);
    Ok(())
}

/// `t` writes row `row` of relation 7.
fn write(ssi: &Ssi, t: SxId, row: u64) -> PgResult<()> {
    ssi.conflict_in(t, &[Target::Tuple(7, row), Target::Relation(7)], None)
}

#[test]
fn write_skew_fails_the_second_committer() {
    // T1 and T2 each read both rows (relation locks) and update a different one.
    let ssi = Ssi::default();
    let (t1, t2) = (begin(&ssi, false), begin(&ssi, false));
    ssi.set_xid(t1, 101);
    ssi.set_xid(t2, 102);
    ssi.lock(t1, Target::Relation(7)).unwrap();
    ssi.lock(t2, Target::Relation(7)).unwrap();
    write(&ssi, t1, 1).unwrap();
    // T2 writes row 2: T1 read it (T1 ->rw T2); T2 read row 1 that T1 wrote (T2 ->rw T1).
    write(&ssi, t2, 2).unwrap();
    commit(&ssi, t1).unwrap();
    let e = ssi.pre_commit(t2).unwrap_err();
    assert_eq!(e.code, "40001");
    ssi.release(t2, false);
    assert_eq!(ssi.counts(), (0, 0));
}

#[test]
fn disjoint_readers_and_writers_commit() {
    let ssi = Ssi::default();
    let (t1, t2) = (begin(&ssi, false), begin(&ssi, false));
    ssi.lock(t1, Target::Tuple(7, 1)).unwrap();
    ssi.lock(t2, Target::Tuple(7, 2)).unwrap();
    write(&ssi, t1, 1).unwrap();
    write(&ssi, t2, 2).unwrap();
    commit(&ssi, t1).unwrap();
    commit(&ssi, t2).unwrap();
    assert_eq!(ssi.counts(), (0, 0));
}

#[test]
fn key_ranges_catch_phantoms_and_promote() {
    let ssi = Ssi::default();
    let (t1, t2) = (begin(&ssi, false), begin(&ssi, false));
    ssi.lock_range(t1, 9, b"b", Some(b"d")).unwrap();
    ssi.conflict_in(t2, &[], Some((9, b"e"))).unwrap();
    assert!(ssi.state.lock().x(t1).outs.is_empty() && ssi.state.lock().x(t1).ins.is_empty());
    ssi.conflict_in(t2, &[], Some((9, b"c"))).unwrap();
    assert_eq!(ssi.state.lock().x(t2).ins, vec![t1]);
    for i in 0..=PROMOTE_AFTER as u8 {
        ssi.lock_range(t1, 10, &[i], Some(&[i, 1])).unwrap();
    }
    // Promoted to one range over the whole index.
    assert_eq!(ssi.state.lock().table.ranges[&10].len(), 1);
    ssi.release(t1, false);
    ssi.release(t2, false);
    assert_eq!(ssi.counts(), (0, 0));
}

#[test]
fn read_only_is_safe_without_writers_and_deferred_until_they_end() {
    let ssi = Ssi::default();
    assert!(ssi.register(true, || ()).0.is_none());
    let w = begin(&ssi, false);
    let ro = begin(&ssi, true);
    assert_eq!(ssi.safety(ro), Safety::Pending);
    commit(&ssi, w).unwrap();
    assert_eq!(ssi.safety(ro), Safety::Safe);
    ssi.release(ro, true);
}

#[test]
fn the_lock_table_is_bounded() {
    let ssi = Ssi::default();
    ssi.set_max_connections(1);
    let t = begin(&ssi, false);
    let mut err = None;
    for rel in 0..200u32 {
        if let Err(e) = ssi.lock(t, Target::Tuple(rel, 1)) {
            err = Some(e);
            break;
        }
    }
    assert_eq!(err.expect("bounded").code, "53200");
    ssi.release(t, false);
    assert_eq!(ssi.counts(), (0, 0));
}
