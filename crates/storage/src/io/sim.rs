//! `SimFs`: an in-memory [`Fs`] for crash and fault tests (feature `sim`).
//!
//! It keeps, per file, what a completed fsync made durable beside the live contents, and per
//! directory which names a directory fsync made durable. From that it derives the state a
//! disk is left in:
//! - [`SimFs::power_loss`]: only durable data and names survive; each unsynced write is lost,
//!   lands, or lands partially (torn), as a policy decides ([`SimFs::power_loss_seeded`]
//!   draws it from a seed, [`SimFs::power_loss_strict`] loses them all);
//! - [`SimFs::crash`]: a process crash: everything written survives (the kernel's page cache
//!   still has it), and what was unsynced stays unsynced.
//!
//! Both return a new, independent `SimFs`: the engine that ran on the old one can be shut down
//! there without touching what the "restarted" engine sees.
//!
//! Faults: a capacity (writes that would grow the files past it write what fits, then fail
//! with ENOSPC, as a full disk does), and rules that fail the n-th matching write or fsync with
//! ENOSPC or EIO. A failed fsync drops the file's unsynced writes from what can become durable
//! while reads still return them, as Linux does after writeback fails.
//!
//! Simplifications: files are dense (a write past the end counts the gap as used), directories
//! are durable as soon as they are created, and rename/remove are atomic.

use super::{Fs, FsFile, OpenMode};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Which operation a fault rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `write_at` (each call counts once).
    Write,
    /// `sync_data`, `sync_all` and `sync_dir`.
    Sync,
}

/// The error an injected fault returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// ENOSPC: No space left on device.
    NoSpace,
    /// EIO: Input/output error.
    Io,
}

impl Fault {
    fn error(self) -> io::Error {
        io::Error::from_raw_os_error(match self {
            Fault::NoSpace => libc::ENOSPC,
            Fault::Io => libc::EIO,
        })
    }
}

/// What becomes of one unsynced change at a power loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landing {
    Lost,
    Landed,
    /// Only the first `n` bytes of the write reach the disk.
    Torn(usize),
}

/// An unsynced change offered to a power-loss policy: a write of `len` bytes at `off`, or
/// (`set_len`) a change of the file's size to `off`.
#[derive(Clone, Debug)]
pub struct Unsynced<'a> {
    pub path: &'a Path,
    pub off: u64,
    pub len: usize,
    pub set_len: bool,
}

/// Counts of operations since the `SimFs` was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    pub writes: u64,
    pub bytes_written: u64,
    pub syncs: u64,
    pub injected: u64,
}

struct Rule {
    op: Op,
    path: String,
    /// Matching operations still let through before the rule fires.
    skip: u64,
    fault: Fault,
    /// Keeps failing every matching operation once fired.
    sticky: bool,
}

enum Change {
    Write { off: u64, bytes: Vec<u8> },
    SetLen(u64),
}

impl Change {
    fn apply(&self, data: &mut Vec<u8>) {
        match self {
            Change::Write { off, bytes } => write_into(data, *off, bytes),
            Change::SetLen(len) => data.resize(*len as usize, 0),
        }
    }
}

fn write_into(data: &mut Vec<u8>, off: u64, bytes: &[u8]) {
    let off = off as usize;
    if data.len() < off + bytes.len() {
        data.resize(off + bytes.len(), 0);
    }
    data[off..off + bytes.len()].copy_from_slice(bytes);
}

struct Inode {
    /// The name it was last given (for fault rules and power-loss policies).
    path: PathBuf,
    data: Vec<u8>,
    synced: Vec<u8>,
    pending: Vec<Change>,
    handles: usize,
}

#[derive(Default)]
struct World {
    names: BTreeMap<PathBuf, u64>,
    durable: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    inodes: HashMap<u64, Inode>,
    next_ino: u64,
    capacity: Option<u64>,
    rules: Vec<Rule>,
    panics: Vec<String>,
    stats: SimStats,
}

impl World {
    fn inode(&mut self, ino: u64) -> io::Result<&mut Inode> {
        self.inodes
            .get_mut(&ino)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))
    }

    /// Bytes held by files that still have a name or an open handle (a removed name that is
    /// durable until the next directory sync holds none, as on a real file system).
    fn used(&self) -> u64 {
        let named: BTreeSet<u64> = self.names.values().copied().collect();
        self.inodes
            .iter()
            .filter(|(ino, i)| i.handles > 0 || named.contains(ino))
            .map(|(_, i)| i.data.len() as u64)
            .sum()
    }

    /// Fires the first rule that matches, if it is due.
    fn check(&mut self, op: Op, path: &Path) -> io::Result<()> {
        let path = path.to_string_lossy();
        let Some(i) = self
            .rules
            .iter()
            .position(|r| r.op == op && path.contains(&r.path))
        else {
            return Ok(());
        };
        let rule = &mut self.rules[i];
        if rule.skip > 0 {
            rule.skip -= 1;
            return Ok(());
        }
        let fault = rule.fault;
        if !rule.sticky {
            self.rules.remove(i);
        }
        self.stats.injected += 1;
        Err(fault.error())
    }

    /// Forgets an inode nothing refers to any more.
    fn collect(&mut self, ino: u64) {
        let named =
            self.names.values().any(|&i| i == ino) || self.durable.values().any(|&i| i == ino);
        if !named && self.inodes.get(&ino).is_some_and(|i| i.handles == 0) {
            self.inodes.remove(&ino);
        }
    }

    fn parent_exists(&self, path: &Path) -> bool {
        path.parent()
            .is_none_or(|p| p.as_os_str().is_empty() || self.dirs.contains(p))
    }

    fn write(&mut self, ino: u64, buf: &[u8], off: u64) -> io::Result<usize> {
        let path = self.inode(ino)?.path.clone();
        self.check(Op::Write, &path)?;
        let len = self.inode(ino)?.data.len() as u64;
        let mut n = buf.len();
        if let Some(cap) = self.capacity {
            let grow = (off + n as u64).saturating_sub(len);
            let room = cap.saturating_sub(self.used());
            if grow > room {
                // A full disk: write what fits, then fail.
                n = (len + room).saturating_sub(off).min(n as u64) as usize;
                if n == 0 {
                    return Err(Fault::NoSpace.error());
                }
            }
        }
        let inode = self.inode(ino)?;
        write_into(&mut inode.data, off, &buf[..n]);
        inode.pending.push(Change::Write {
            off,
            bytes: buf[..n].to_vec(),
        });
        self.stats.writes += 1;
        self.stats.bytes_written += n as u64;
        Ok(n)
    }

    fn sync(&mut self, ino: u64) -> io::Result<()> {
        let path = self.inode(ino)?.path.clone();
        self.stats.syncs += 1;
        let failed = self.check(Op::Sync, &path);
        let inode = self.inode(ino)?;
        let pending = std::mem::take(&mut inode.pending);
        // After a failed fsync the kernel has given up on those writes: they never reach
        // the disk, though reads still see them.
        failed?;
        for c in &pending {
            c.apply(&mut inode.synced);
        }
        Ok(())
    }
}

/// The in-memory file system; clones share it.
#[derive(Clone, Default)]
pub struct SimFs {
    world: Arc<Mutex<World>>,
}

struct SimFile {
    world: Arc<Mutex<World>>,
    ino: u64,
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut w = self.world.lock();
        if let Some(i) = w.inodes.get_mut(&self.ino) {
            i.handles -= 1;
        }
        w.collect(self.ino);
    }
}

impl FsFile for SimFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let mut w = self.world.lock();
        let data = &w.inode(self.ino)?.data;
        let off = (off as usize).min(data.len());
        let n = buf.len().min(data.len() - off);
        buf[..n].copy_from_slice(&data[off..off + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
        self.world.lock().write(self.ino, buf, off)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.world.lock().inode(self.ino)?.data.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut w = self.world.lock();
        let inode = w.inode(self.ino)?;
        inode.data.resize(len as usize, 0);
        inode.pending.push(Change::SetLen(len));
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        self.world.lock().sync(self.ino)
    }

    fn sync_all(&self) -> io::Result<()> {
        self.world.lock().sync(self.ino)
    }
}

fn not_found() -> io::Error {
    io::ErrorKind::NotFound.into()
}

fn parent_of(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

impl Fs for SimFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>> {
        let mut w = self.world.lock();
        let ino = match (w.names.get(path).copied(), mode) {
            (Some(ino), _) => ino,
            (None, OpenMode::Existing) => return Err(not_found()),
            (None, _) => {
                if !w.parent_exists(path) {
                    return Err(not_found());
                }
                w.next_ino += 1;
                let ino = w.next_ino;
                w.inodes.insert(
                    ino,
                    Inode {
                        path: path.to_path_buf(),
                        data: Vec::new(),
                        synced: Vec::new(),
                        pending: Vec::new(),
                        handles: 0,
                    },
                );
                w.names.insert(path.to_path_buf(), ino);
                ino
            }
        };
        let inode = w.inode(ino)?;
        if mode == OpenMode::Truncate && !inode.data.is_empty() {
            inode.data.clear();
            inode.pending.push(Change::SetLen(0));
        }
        inode.handles += 1;
        Ok(Box::new(SimFile {
            world: self.world.clone(),
            ino,
        }))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut w = self.world.lock();
        let ino = w.names.remove(path).ok_or_else(not_found)?;
        w.collect(ino);
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut w = self.world.lock();
        let ino = w.names.remove(from).ok_or_else(not_found)?;
        w.inode(ino)?.path = to.to_path_buf();
        if let Some(old) = w.names.insert(to.to_path_buf(), ino) {
            w.collect(old);
        }
        Ok(())
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.world.lock().names.contains_key(to) {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        self.rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut w = self.world.lock();
        w.stats.syncs += 1;
        w.check(Op::Sync, dir)?;
        let live: Vec<(PathBuf, u64)> = w
            .names
            .iter()
            .filter(|(p, _)| parent_of(p) == dir)
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        let gone: Vec<PathBuf> = w
            .durable
            .keys()
            .filter(|p| parent_of(p) == dir && !w.names.contains_key(*p))
            .cloned()
            .collect();
        let mut dropped = Vec::new();
        for (p, ino) in live {
            if let Some(old) = w.durable.insert(p, ino) {
                dropped.push(old);
            }
        }
        for p in gone {
            dropped.extend(w.durable.remove(&p));
        }
        for ino in dropped {
            w.collect(ino);
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let w = self.world.lock();
        if !w.dirs.contains(dir) {
            return Err(not_found());
        }
        let files = w.names.keys().filter(|p| parent_of(p) == dir);
        let subdirs = w.dirs.iter().filter(|p| parent_of(p) == dir);
        Ok(files
            .chain(subdirs)
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut w = self.world.lock();
        for d in dir.ancestors().filter(|d| !d.as_os_str().is_empty()) {
            if w.names.contains_key(d) {
                return Err(io::ErrorKind::AlreadyExists.into());
            }
            w.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        let w = self.world.lock();
        w.names.contains_key(path) || w.dirs.contains(path)
    }

    fn panic(&self, message: &str) {
        eprintln!("PANIC (simulated):  {message}");
        self.world.lock().panics.push(message.to_string());
    }
}

/// A small deterministic generator (SplitMix64) for seeded policies.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Disk sectors: a torn write keeps a whole number of them.
pub const SECTOR: usize = 512;

impl SimFs {
    pub fn new() -> SimFs {
        SimFs::default()
    }

    /// Limits the bytes all files together may hold (None: unlimited).
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.world.lock().capacity = bytes;
    }

    /// Bytes the files hold now.
    pub fn used(&self) -> u64 {
        self.world.lock().used()
    }

    /// Fails the matching operation after `skip` more matching ones succeed: `op` on a path
    /// containing `path`, with `fault`; `sticky` keeps failing every later match too.
    pub fn fail(&self, op: Op, path: &str, skip: u64, fault: Fault, sticky: bool) {
        self.world.lock().rules.push(Rule {
            op,
            path: path.to_string(),
            skip,
            fault,
            sticky,
        });
    }

    pub fn clear_faults(&self) {
        self.world.lock().rules.clear();
    }

    /// The PANIC messages so far.
    pub fn panics(&self) -> Vec<String> {
        self.world.lock().panics.clone()
    }

    pub fn stats(&self) -> SimStats {
        self.world.lock().stats
    }

    /// The names under `dir` (recursively) with their sizes, live view.
    pub fn files_under(&self, dir: &Path) -> Vec<(PathBuf, u64)> {
        let w = self.world.lock();
        w.names
            .iter()
            .filter(|(p, _)| p.starts_with(dir))
            .map(|(p, i)| {
                (
                    p.clone(),
                    w.inodes.get(i).map_or(0, |i| i.data.len() as u64),
                )
            })
            .collect()
    }

    /// The state after a power loss: durable names and data, and of each unsynced change
    /// what `policy` lets land, in the order they were made.
    pub fn power_loss(&self, mut policy: impl FnMut(&Unsynced<'_>) -> Landing) -> SimFs {
        let w = self.world.lock();
        let mut next = World {
            names: w.durable.clone(),
            durable: w.durable.clone(),
            dirs: w.dirs.clone(),
            next_ino: w.next_ino,
            capacity: w.capacity,
            ..World::default()
        };
        for &ino in w.durable.values().collect::<BTreeSet<_>>() {
            let Some(old) = w.inodes.get(&ino) else {
                continue;
            };
            let mut data = old.synced.clone();
            for c in &old.pending {
                let (off, len, set_len) = match c {
                    Change::Write { off, bytes } => (*off, bytes.len(), false),
                    Change::SetLen(len) => (*len, 0, true),
                };
                let u = Unsynced {
                    path: &old.path,
                    off,
                    len,
                    set_len,
                };
                match (policy(&u), c) {
                    (Landing::Lost, _) => {}
                    (Landing::Torn(n), Change::Write { off, bytes }) => {
                        write_into(&mut data, *off, &bytes[..n.min(bytes.len())])
                    }
                    (_, c) => c.apply(&mut data),
                }
            }
            next.inodes.insert(
                ino,
                Inode {
                    path: old.path.clone(),
                    synced: data.clone(),
                    data,
                    pending: Vec::new(),
                    handles: 0,
                },
            );
        }
        SimFs {
            world: Arc::new(Mutex::new(next)),
        }
    }

    /// A power loss where every unsynced change is lost.
    pub fn power_loss_strict(&self) -> SimFs {
        self.power_loss(|_| Landing::Lost)
    }

    /// A power loss where each unsynced write is lost, lands, or is torn at a sector
    /// boundary, drawn from `seed`.
    pub fn power_loss_seeded(&self, seed: u64) -> SimFs {
        let mut rng = Rng::new(seed);
        self.power_loss(move |u| match rng.below(3) {
            0 => Landing::Lost,
            1 => Landing::Landed,
            _ if u.len > SECTOR => {
                let sectors = u.len.div_ceil(SECTOR) as u64;
                Landing::Torn((1 + rng.below(sectors - 1)) as usize * SECTOR)
            }
            _ => Landing::Landed,
        })
    }

    /// The state after the process dies (SIGKILL, abort) but the machine stays up: every
    /// completed write is there; what was unsynced is still unsynced.
    pub fn crash(&self) -> SimFs {
        let w = self.world.lock();
        let mut next = World {
            names: w.names.clone(),
            durable: w.durable.clone(),
            dirs: w.dirs.clone(),
            next_ino: w.next_ino,
            capacity: w.capacity,
            ..World::default()
        };
        for (&ino, old) in &w.inodes {
            let named = next.names.values().chain(next.durable.values());
            if !named.into_iter().any(|&i| i == ino) {
                continue;
            }
            next.inodes.insert(
                ino,
                Inode {
                    path: old.path.clone(),
                    data: old.data.clone(),
                    synced: old.synced.clone(),
                    pending: old
                        .pending
                        .iter()
                        .map(|c| match c {
                            Change::Write { off, bytes } => Change::Write {
                                off: *off,
                                bytes: bytes.clone(),
                            },
                            Change::SetLen(l) => Change::SetLen(*l),
                        })
                        .collect(),
                    handles: 0,
                },
            );
        }
        SimFs {
            world: Arc::new(Mutex::new(next)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (SimFs, PathBuf) {
        let fs = SimFs::new();
        let d = PathBuf::from("/d");
        fs.create_dir_all(&d).unwrap();
        (fs, d)
    }

    #[test]
    fn only_synced_data_under_a_synced_name_survives_a_power_loss() {
        let (fs, d) = dir();
        let a = fs.open(&d.join("a"), OpenMode::Create).unwrap();
        a.write_all_at(b"durable", 0).unwrap();
        a.sync_data().unwrap();
        fs.sync_dir(&d).unwrap();
        a.write_all_at(b"DURABLE", 0).unwrap();
        let b = fs.open(&d.join("b"), OpenMode::Create).unwrap();
        b.write_all_at(b"synced, name not", 0).unwrap();
        b.sync_all().unwrap();

        let after = fs.power_loss_strict();
        assert_eq!(after.read(&d.join("a")).unwrap(), b"durable");
        assert!(!after.exists(&d.join("b")));
        // A process crash keeps everything written.
        let crashed = fs.crash();
        assert_eq!(crashed.read(&d.join("a")).unwrap(), b"DURABLE");
        assert_eq!(crashed.read(&d.join("b")).unwrap(), b"synced, name not");
    }

    #[test]
    fn renames_are_durable_after_the_directory_sync() {
        let (fs, d) = dir();
        for (name, text) in [("f", b"old"), ("f.tmp", b"new")] {
            let f = fs.open(&d.join(name), OpenMode::Create).unwrap();
            f.write_all_at(text, 0).unwrap();
            f.sync_all().unwrap();
        }
        fs.sync_dir(&d).unwrap();
        fs.rename(&d.join("f.tmp"), &d.join("f")).unwrap();
        assert_eq!(fs.read(&d.join("f")).unwrap(), b"new");
        assert_eq!(fs.power_loss_strict().read(&d.join("f")).unwrap(), b"old");
        fs.sync_dir(&d).unwrap();
        let after = fs.power_loss_strict();
        assert_eq!(after.read(&d.join("f")).unwrap(), b"new");
        assert!(!after.exists(&d.join("f.tmp")));
    }

    #[test]
    fn a_full_disk_writes_what_fits_then_fails_with_enospc() {
        let (fs, d) = dir();
        fs.set_capacity(Some(10_000));
        let f = fs.open(&d.join("f"), OpenMode::Create).unwrap();
        assert_eq!(f.write_at(&[1u8; 8192], 0).unwrap(), 8192);
        assert_eq!(f.write_at(&[2u8; 8192], 8192).unwrap(), 10_000 - 8192);
        let e = f.write_at(&[3u8; 8192], 10_000).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
        // Overwriting allocated bytes needs no space.
        f.write_all_at(&[4u8; 8192], 0).unwrap();
        f.set_len(8192).unwrap();
        assert_eq!(fs.used(), 8192);
    }

    #[test]
    fn injected_faults_fire_on_the_chosen_operation_and_a_failed_fsync_loses_the_writes() {
        let (fs, d) = dir();
        let f = fs.open(&d.join("wal"), OpenMode::Create).unwrap();
        fs.sync_dir(&d).unwrap();
        fs.fail(Op::Write, "wal", 2, Fault::Io, false);
        f.write_all_at(b"a", 0).unwrap();
        f.write_all_at(b"b", 1).unwrap();
        assert_eq!(
            f.write_at(b"c", 2).unwrap_err().raw_os_error(),
            Some(libc::EIO)
        );
        f.write_all_at(b"c", 2).unwrap();
        fs.fail(Op::Sync, "wal", 0, Fault::Io, false);
        assert!(f.sync_data().is_err());
        f.sync_data().unwrap();
        assert_eq!(fs.read(&d.join("wal")).unwrap(), b"abc");
        assert_eq!(fs.power_loss_strict().read(&d.join("wal")).unwrap(), b"");
    }

    #[test]
    fn a_torn_write_lands_a_prefix() {
        let (fs, d) = dir();
        let f = fs.open(&d.join("rel"), OpenMode::Create).unwrap();
        f.write_all_at(&[1u8; 8192], 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(&d).unwrap();
        f.write_all_at(&[2u8; 8192], 0).unwrap();
        let after = fs.power_loss(|u| Landing::Torn(u.len / 2));
        let data = after.read(&d.join("rel")).unwrap();
        assert!(data[..4096].iter().all(|&b| b == 2));
        assert!(data[4096..].iter().all(|&b| b == 1));
        // Seeded power losses are reproducible.
        let one = fs.power_loss_seeded(7).read(&d.join("rel")).unwrap();
        let two = fs.power_loss_seeded(7).read(&d.join("rel")).unwrap();
        assert_eq!(one, two);
    }
}
