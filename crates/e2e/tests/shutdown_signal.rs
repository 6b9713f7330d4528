//! SIGTERM at any moment after the server logged its first line is a fast shutdown, as
//! postgres's: the server exits 0 with "database system is shut down", never by the signal's
//! default action. The handlers are installed before the listening sockets and the engine
//! open, so a signal sent while the engine recovers, or just after "ready to accept
//! connections" (before the serving loop first waits for it), is caught.

use keel_e2e::cmd::TempDir;
use keel_e2e::{free_port, keel_bin};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn sigterm_during_start_up_is_a_clean_shutdown() {
    let dir = TempDir::new("sigterm");
    let port = free_port().to_string();
    let data = dir.path().join("data");
    // Delays after the first log line ("listening on ..."), from "engine not open yet" to
    // "surely serving"; the first start creates the directory.
    for (i, ms) in [300u64, 0, 1, 3, 10, 30, 100].into_iter().enumerate() {
        let log = dir.path().join(format!("keel-{i}.log"));
        let mut child = Command::new(keel_bin())
            .arg("--data-dir")
            .arg(&data)
            .args(["--port", &port])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains("listening on")) {
            assert!(
                std::time::Instant::now() < deadline,
                "keel did not start listening"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(ms));
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            status.success(),
            "SIGTERM {ms} ms after listening: keel exited with {status}; log:\n{text}"
        );
        assert!(
            text.contains("database system is shut down"),
            "SIGTERM {ms} ms after listening: no clean shutdown; log:\n{text}"
        );
    }
}
