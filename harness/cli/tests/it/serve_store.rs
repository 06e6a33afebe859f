//! `conformance serve`'s event store: `--store sqlite:PATH` is the file the operator chose (kept
//! at exit); without it the `deferred` profile's temporary store lives under
//! `$TMPDIR/conformance-stores/` and is removed at SIGTERM, or, after a `kill -9`, by the next
//! start.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Kills the server when the test ends, however it ends; holds its stdout open (`serve` goes
/// on printing, and a closed pipe ends it at once).
struct Server(
    Child,
    #[allow(dead_code)] BufReader<std::process::ChildStdout>,
);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `conformance serve ARGS` with `$TMPDIR` at `tmp`, once it prints its address.
fn serve(tmp: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env("TMPDIR", tmp)
        .env_remove("CONFORMANCE_AUTH_A")
        .env_remove("CONFORMANCE_AUTH_B")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("listening on "), "{line}");
    Server(child, stdout)
}

/// Sends SIGTERM and waits for the exit.
fn terminate(mut server: Server) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "serve did not exit on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The temporary store directories under `tmp`.
fn stores(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp.join("conformance-stores"))
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn serve_keeps_a_chosen_store_and_cleans_its_temporary_ones() {
    let tmp = tempfile::tempdir().unwrap();

    // A chosen file: created, and kept at exit.
    let chosen = tmp.path().join("chosen.db");
    let server = serve(
        tmp.path(),
        &["--store", &format!("sqlite:{}", chosen.display())],
    );
    assert!(chosen.exists());
    assert!(stores(tmp.path()).is_empty(), "no temporary store");
    assert!(terminate(server).success());
    assert!(chosen.exists(), "the operator's store is kept");

    // The deferred profile's temporary store: killed with -9, its directory stays ...
    let mut killed = serve(tmp.path(), &["--built-in-profile", "deferred"]);
    let left = stores(tmp.path());
    assert_eq!(left.len(), 1, "{left:?}");
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    assert!(left[0].join("events.db").exists());
    // ... until the next start finds it unlocked (aged past the window in which a store
    // being created is left alone).
    std::fs::File::options()
        .write(true)
        .open(left[0].join(".lock"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let next = serve(tmp.path(), &["--built-in-profile", "deferred"]);
    assert!(!left[0].exists(), "the killed server's store was removed");
    let current = stores(tmp.path());
    assert_eq!(current.len(), 1, "{current:?}");
    // A clean stop removes its own.
    assert!(terminate(next).success());
    let remaining: Vec<_> = stores(tmp.path())
        .iter()
        .map(|dir| {
            (
                dir.clone(),
                std::fs::read_dir(dir)
                    .map(|e| e.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
                    .ok(),
            )
        })
        .collect();
    assert!(remaining.is_empty(), "{remaining:?}");
}
