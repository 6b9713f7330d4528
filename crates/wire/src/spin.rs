//! Idle spinning: a shard with nothing to run polls its sockets for a short while before it
//! sleeps in epoll, when the machine has a core to spare.
//!
//! A single client's session is a ping-pong: keel answers, the client reads the answer and
//! sends the next query. When the shard's thread sleeps in between, the client's send has to
//! wake it, and on a VM that wake-up is an inter-processor interrupt into a halted virtual CPU:
//! at one pgbench client (select-only) 44 % of the shard's CPU samples fell on its way back out
//! of `epoll_wait`. A thread that is still running when the query arrives takes it without
//! being woken (pgbench select-only at 1 client, 3 alternating pairs: 2.0× tps).
//!
//! Spinning costs a core while it lasts. When the clients run on the same machine and need
//! that core, it costs them more than it saves (at 4 and 16 clients, 25–40 % fewer tps), and
//! on a busy machine it takes CPU from other programs. So a shard spins only while it pays:
//! - [`Governor`]: only while the machine has a core to spare. Every [`PERIOD`] it reads the
//!   CPU pressure (the share of time some task waited for a CPU, /proc/pressure/cpu) and the
//!   idle time (/proc/stat). Spinning is allowed when the pressure was below
//!   [`MAX_PRESSURE`] and idle time plus the CPU time spent spinning came to at least
//!   [`MIN_SPARE_CORES`]. Spinning counts as spare: it is time that would otherwise have been
//!   idle.
//! - [`IdleSpin`]: at most its budget per park, ending as soon as a socket is readable or a
//!   task was handed to the shard from another thread (a commit's WAL flush, a lock released).
//!   After a spin that saw nothing the shard stops spinning, and starts again once an idle
//!   period shows that a spin would have covered it (park to the next unpark).
//!
//! Sockets are watched through an epoll set of the shard's own (level-triggered, read only),
//! next to tokio's: tokio's is not reachable, and polling ours consumes nothing. A query that
//! arrives during the spin is a new edge for tokio's (edge-triggered) set, so its `epoll_wait`
//! returns at once; a task handed over finds the worker still searching, and tokio's park
//! returns at once for it. A session that leaves input unread (a pipelined message during a
//! lock wait, a client gone) ends every spin of its shard at once: no spinning, no harm.
//!
//! A timer that falls due during a spin fires up to the budget late, which is why the budget
//! is capped at 1 ms.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the governor re-reads the machine's load.
const PERIOD: Duration = Duration::from_millis(100);
/// Above this share of time with a task waiting for a CPU, nobody spins.
const MAX_PRESSURE: f64 = 0.25;
/// Idle plus spinning time, in cores, below which nobody spins.
const MIN_SPARE_CORES: f64 = 0.5;

/// Decides, for all shards, whether spinning is allowed now.
pub(crate) struct Governor {
    allowed: AtomicBool,
    /// Time spent spinning since the last sample.
    spun_ns: AtomicU64,
    last: Mutex<Sampling>,
}

#[derive(Clone, Copy)]
enum Sampling {
    NotYet,
    Last(Sample),
    Unavailable,
}

#[derive(Clone, Copy)]
struct Sample {
    at: Instant,
    /// Idle and iowait time of all CPUs, in clock ticks.
    idle_ticks: u64,
    /// /proc/pressure/cpu `some total`, in microseconds; None without PSI.
    pressure_us: Option<u64>,
}

impl Governor {
    pub(crate) fn new() -> Governor {
        Governor {
            allowed: AtomicBool::new(false),
            spun_ns: AtomicU64::new(0),
            last: Mutex::new(Sampling::NotYet),
        }
    }

    /// A governor that always allows spinning (tests).
    #[cfg(test)]
    pub(crate) fn always() -> Governor {
        Governor {
            allowed: AtomicBool::new(true),
            spun_ns: AtomicU64::new(0),
            last: Mutex::new(Sampling::Unavailable),
        }
    }

    /// Whether spinning is allowed; re-samples the machine when the last sample is old.
    fn allowed(&self) -> bool {
        let Ok(mut last) = self.last.try_lock() else {
            return self.allowed.load(Ordering::Relaxed);
        };
        let before = *last;
        if let Sampling::Unavailable = before {
            return self.allowed.load(Ordering::Relaxed);
        }
        if let Sampling::Last(prev) = before
            && prev.at.elapsed() < PERIOD
        {
            return self.allowed.load(Ordering::Relaxed);
        }
        let now = match Sample::read() {
            Ok(now) => now,
            Err(e) => {
                // No /proc (not Linux, or hidden): never spin, and stop asking. A passing
                // error (EMFILE) only skips this sample.
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound
                        | std::io::ErrorKind::PermissionDenied
                        | std::io::ErrorKind::InvalidData
                ) {
                    *last = Sampling::Unavailable;
                }
                self.allowed.store(false, Ordering::Relaxed);
                return false;
            }
        };
        let spun = self.spun_ns.swap(0, Ordering::Relaxed);
        let ok = match before {
            // A sample long ago (no shard was armed meanwhile) would average the whole gap;
            // it only serves as the baseline for the next decision.
            Sampling::Last(prev) if prev.at.elapsed() < 2 * PERIOD => spare(&prev, &now, spun),
            _ => false,
        };
        self.allowed.store(ok, Ordering::Relaxed);
        *last = Sampling::Last(now);
        ok
    }
}

/// Whether the machine had a core to spare between two samples.
fn spare(prev: &Sample, now: &Sample, spun_ns: u64) -> bool {
    let secs = now.at.duration_since(prev.at).as_secs_f64();
    if secs <= 0.0 {
        return false;
    }
    if let (Some(a), Some(b)) = (prev.pressure_us, now.pressure_us)
        && b.saturating_sub(a) as f64 / 1e6 / secs >= MAX_PRESSURE
    {
        return false;
    }
    let idle = now.idle_ticks.saturating_sub(prev.idle_ticks) as f64 / clock_ticks() / secs;
    let spinning = spun_ns as f64 / 1e9 / secs;
    idle + spinning >= MIN_SPARE_CORES
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf takes no pointers.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 { hz as f64 } else { 100.0 }
}

impl Sample {
    fn read() -> std::io::Result<Sample> {
        let at = Instant::now();
        let stat = std::fs::read_to_string("/proc/stat")?;
        let idle_ticks = idle_ticks(&stat).ok_or(std::io::ErrorKind::InvalidData)?;
        let pressure_us = std::fs::read_to_string("/proc/pressure/cpu")
            .ok()
            .and_then(|p| pressure_total(&p));
        Ok(Sample {
            at,
            idle_ticks,
            pressure_us,
        })
    }
}

/// CPU time of the calling thread, in nanoseconds: a spinning thread that was preempted did
/// not spend that time spinning, and must not count it as spare.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a live timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Idle + iowait ticks from /proc/stat's `cpu` line.
fn idle_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map_while(|f| f.parse().ok())
        .collect();
    Some(fields.get(3)? + fields.get(4).copied().unwrap_or(0))
}

/// `total` of the `some` line of /proc/pressure/cpu.
fn pressure_total(psi: &str) -> Option<u64> {
    let line = psi.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// One shard's spinning.
pub(crate) struct IdleSpin {
    epoll: OwnedFd,
    budget: Duration,
    /// Whether the next park spins first.
    armed: AtomicBool,
    /// When the current park started (ns since `epoch`, plus one), 0 when not parked.
    parked_at: AtomicU64,
    epoch: Instant,
}

impl IdleSpin {
    /// A zero budget never spins.
    pub(crate) fn new(budget: Duration) -> std::io::Result<IdleSpin> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative result is a new descriptor
        // that nothing else owns.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(IdleSpin {
            // SAFETY: see above.
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
            budget,
            armed: AtomicBool::new(true),
            parked_at: AtomicU64::new(0),
            epoch: Instant::now(),
        })
    }

    /// Watches a session's socket. The kernel drops it from the set when the socket's last
    /// descriptor closes; keel never duplicates a session socket, so that is when the session
    /// ends.
    pub(crate) fn watch(&self, socket: RawFd) {
        if self.budget.is_zero() {
            return;
        }
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: socket as u64,
        };
        // SAFETY: a valid epoll descriptor and a pointer to a live epoll_event. A failure
        // (ENOMEM) only means this socket's requests end no spin early.
        unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, socket, &mut ev) };
    }

    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64 + 1
    }

    /// Called just before the shard's worker parks (tokio's `on_thread_park`). `handed_over`
    /// says whether another thread has queued a task for the shard.
    pub(crate) fn before_park(&self, governor: &Governor, handed_over: impl Fn() -> bool) {
        if self.budget.is_zero() {
            return;
        }
        if self.armed.load(Ordering::Relaxed) && governor.allowed() {
            let cpu = thread_cpu_ns();
            let ready = self.spin(Instant::now(), handed_over);
            governor
                .spun_ns
                .fetch_add(thread_cpu_ns().saturating_sub(cpu), Ordering::Relaxed);
            if ready {
                return;
            }
            self.armed.store(false, Ordering::Relaxed);
        }
        self.parked_at.store(self.now_ns(), Ordering::Relaxed);
    }

    /// Polls until something is ready (true) or the budget is spent (false).
    fn spin(&self, start: Instant, handed_over: impl Fn() -> bool) -> bool {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        loop {
            // SAFETY: a valid epoll descriptor, room for one event, no wait.
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), &mut ev, 1, 0) };
            if n > 0 || handed_over() {
                return true;
            }
            if start.elapsed() >= self.budget {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    #[cfg(test)]
    pub(crate) fn armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }

    /// Called when the worker wakes (tokio's `on_thread_unpark`): an idle period short enough
    /// for a spin to have covered it arms the next park's spin.
    pub(crate) fn after_unpark(&self) {
        let at = self.parked_at.swap(0, Ordering::Relaxed);
        if at != 0 && self.now_ns().saturating_sub(at) < self.budget.as_nanos() as u64 {
            self.armed.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc_formats() {
        let stat = "cpu  8958664 1058 2639617 3105358 120169 0 772828 182139 0 0\ncpu0 1 2 3 4 5\n";
        assert_eq!(idle_ticks(stat), Some(3105358 + 120169));
        let psi = "some avg10=1.43 avg60=24.07 avg300=31.40 total=25608556478\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(pressure_total(psi), Some(25608556478));
        assert_eq!(pressure_total("full total=3\n"), None);
    }

    fn sample(at: Instant, idle_ticks: u64, pressure_us: Option<u64>) -> Sample {
        Sample {
            at,
            idle_ticks,
            pressure_us,
        }
    }

    #[test]
    fn spare_needs_idle_or_spin_time_and_low_pressure() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(1);
        let hz = clock_ticks() as u64;
        // A whole idle core, no pressure: spare.
        assert!(spare(&sample(t0, 0, Some(0)), &sample(t1, hz, Some(0)), 0));
        // A tenth of a core idle, but 0.6 s spent spinning: spare.
        assert!(spare(
            &sample(t0, 0, None),
            &sample(t1, hz / 10, None),
            600_000_000
        ));
        // Busy: neither idle nor spinning.
        assert!(!spare(
            &sample(t0, 0, Some(0)),
            &sample(t1, hz / 10, Some(0)),
            0
        ));
        // Idle enough, but tasks waited for a CPU 40 % of the time.
        assert!(!spare(
            &sample(t0, 0, Some(0)),
            &sample(t1, hz, Some(400_000)),
            0
        ));
    }

    #[test]
    fn a_spin_ends_on_a_readable_socket_or_a_handed_over_task() {
        use std::io::Write;
        let spin = IdleSpin::new(Duration::from_millis(50)).unwrap();
        let (mut client, server) = std::os::unix::net::UnixStream::pair().unwrap();
        spin.watch(server.as_raw_fd());
        // Nothing to read, nothing handed over: the whole budget.
        let t = Instant::now();
        assert!(!spin.spin(t, || false));
        assert!(t.elapsed() >= Duration::from_millis(50));
        assert!(spin.spin(Instant::now(), || true));
        client.write_all(b"Q").unwrap();
        assert!(spin.spin(Instant::now(), || false));
        // Closed sockets leave the set: nothing is readable again.
        drop((client, server));
        assert!(!spin.spin(Instant::now(), || false));
    }

    #[test]
    fn an_empty_spin_disarms_until_a_short_idle_period() {
        let governor = Governor::always();
        let spin = IdleSpin::new(Duration::from_millis(20)).unwrap();
        // A spin that sees nothing disarms...
        spin.before_park(&governor, || false);
        assert!(!spin.armed.load(Ordering::Relaxed));
        assert!(governor.spun_ns.load(Ordering::Relaxed) > 0);
        // ...and the next park does not spin.
        let t = Instant::now();
        spin.before_park(&governor, || false);
        assert!(t.elapsed() < Duration::from_millis(20));
        // A long idle period leaves it disarmed...
        std::thread::sleep(Duration::from_millis(30));
        spin.after_unpark();
        assert!(!spin.armed.load(Ordering::Relaxed));
        // ...a short one arms it (a budget of minutes: preemption cannot make it long).
        let spin = IdleSpin::new(Duration::from_secs(600)).unwrap();
        spin.armed.store(false, Ordering::Relaxed);
        spin.parked_at.store(spin.now_ns(), Ordering::Relaxed);
        spin.after_unpark();
        assert!(spin.armed.load(Ordering::Relaxed));
        // A spin that sees something stays armed.
        spin.before_park(&governor, || true);
        assert!(spin.armed.load(Ordering::Relaxed));
    }
}
