//! The process's file-descriptor limit and what it bounds: every connection holds a socket,
//! whether it has authenticated or not.

/// Descriptors kept for everything but client sockets: relation and WAL files, listeners,
/// the runtime's own (epoll, eventfd, pipes).
const RESERVED_FDS: u64 = 256;

/// The most connections that may be in startup or authentication at once (see
/// keel_wire::ServeConfig::max_pending_startups). Each costs ~6 kB until it authenticates
/// (RSS grew by 28 MB with 4,700 silent sockets), so 10,000 cost ~60 MB.
const MAX_PENDING: u64 = 10_000;

/// Raises the soft RLIMIT_NOFILE to the hard limit (many distributions start processes with
/// a soft limit of 1024 and a hard one far higher), and returns the soft limit in force.
pub fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    lim.rlim_cur
}

/// How many connections may wait in startup or authentication: what the descriptor limit
/// leaves after max_connections and the server's own files, at most [`MAX_PENDING`], and at
/// least a few so that clients can always log in.
pub fn max_pending_startups(fd_limit: u64, max_connections: u64) -> usize {
    fd_limit
        .saturating_sub(max_connections + RESERVED_FDS)
        .clamp(16, MAX_PENDING) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_startups_fit_in_the_fd_limit() {
        assert_eq!(max_pending_startups(1 << 20, 100), 10_000);
        assert_eq!(max_pending_startups(20_000, 100), 10_000);
        assert_eq!(max_pending_startups(4096, 100), 4096 - 356);
        assert_eq!(max_pending_startups(1024, 1000), 16);
        assert!(raise_fd_limit() >= 16);
    }
}
