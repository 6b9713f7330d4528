//! Segment recycling: a recycled segment is reused in place and its old records never read
//! as new ones.

use super::*;
use std::os::unix::fs::MetadataExt;

/// Logs `n` records of about 1 MB, each tagged with its xid, and waits until they are written.
fn log_batch(wal: &Wal, first_xid: u64, n: u64) -> u64 {
    for xid in first_xid..first_xid + n {
        let payload = vec![(xid % 251) as u8; 1 << 20];
        wal.log(RecordKind::Sequence, xid, &payload);
    }
    let end = wal.insert_lsn();
    wal.flush_blocking(end).unwrap();
    end
}

fn segment_inode(wal: &Wal, seg: u64) -> Option<u64> {
    std::fs::metadata(wal.dir().join(format!("{seg:016X}")))
        .ok()
        .map(|m| m.ino())
}

#[test]
fn recycled_segments_are_reused_and_their_old_records_never_read_as_new() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), FIRST_LSN, 0, false).unwrap();
    let redo = log_batch(&wal, 1, 50);
    assert!(
        redo / SEGMENT_SIZE >= 3,
        "the first batch spans segments 0..=2 at least"
    );
    let old_inodes: Vec<u64> = (0..3).map(|s| segment_inode(&wal, s).unwrap()).collect();

    wal.recycle_segments_before(redo, 5);
    for s in 0..3 {
        assert_eq!(segment_inode(&wal, s), None, "segment {s} was retired");
    }
    let current = redo / SEGMENT_SIZE;
    let ahead: Vec<u64> = (current + 1..current + 8)
        .filter_map(|s| segment_inode(&wal, s))
        .collect();
    for ino in &old_inodes {
        assert!(
            ahead.contains(ino),
            "a retired segment was renamed ahead, not removed"
        );
    }

    // The second batch runs into the recycled files and ends inside one, followed by its stale
    // (but well-formed) records from its old position.
    let end = log_batch(&wal, 1000, 50);
    assert!(old_inodes.contains(&segment_inode(&wal, end / SEGMENT_SIZE).unwrap()));
    wal.shutdown();

    let mut reader = WalReader::new(dir.path().join("wal").as_path(), redo);
    let mut xids = Vec::new();
    while let Some(rec) = reader.next_record() {
        assert!(rec.payload.iter().all(|&b| b == (rec.xid % 251) as u8));
        xids.push(rec.xid);
    }
    assert_eq!(xids, (1000..1050).collect::<Vec<_>>());
    assert_eq!(
        reader.end(),
        end,
        "the log ends where the last record was written"
    );
}

#[test]
fn recycling_keeps_at_most_the_given_number_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), FIRST_LSN, 0, false).unwrap();
    let redo = log_batch(&wal, 1, 100);
    wal.recycle_segments_before(redo, 2);
    let current = redo / SEGMENT_SIZE;
    let mut segs: Vec<u64> = std::fs::read_dir(wal.dir())
        .unwrap()
        .flatten()
        .filter_map(|e| u64::from_str_radix(e.file_name().to_str()?, 16).ok())
        .collect();
    segs.sort_unstable();
    assert_eq!(
        segs.first(),
        Some(&current),
        "nothing before the redo point's segment is left"
    );
    assert!(
        segs.iter().filter(|&&s| s > current).count() <= 2,
        "at most 2 segments ahead: {segs:?}"
    );
    wal.shutdown();
}

#[test]
fn after_shutdown_no_segment_is_still_being_created() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let wal = Wal::open(dir.path(), FIRST_LSN, 0, false).unwrap();
        // The first write starts the creation of segment 1 ahead (16 MB of zeros); shut down
        // at once, while it is likely still running.
        log_batch(&wal, 1, 1);
        wal.shutdown();
        let names = |d: &std::path::Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        let wal_dir = dir.path().join("wal");
        let at_shutdown = names(&wal_dir);
        assert!(
            !at_shutdown.iter().any(|n| n.starts_with("xlogtemp.")),
            "round {round}: a temporary segment outlived shutdown: {at_shutdown:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            names(&wal_dir),
            at_shutdown,
            "round {round}: the directory changed after shutdown"
        );
    }
}
