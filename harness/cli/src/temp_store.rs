//! Temporary durable event stores (the `deferred` profile's SQLite file) that never outlive
//! their process for long: each lives in its own directory under
//! `$TMPDIR/conformance-stores/`, removed when the [`TempStore`] is dropped, and holding a
//! `.lock` file locked for the store's lifetime. A process killed before it could remove its
//! directory (`kill -9`, a crash) releases the lock with its descriptors, so the next
//! [`TempStore::create`] (any `conformance` process) finds the directory unlocked and removes
//! it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The directory under the system's temporary directory that holds every temporary store.
pub const STORES_DIR: &str = "conformance-stores";
/// How old an unlocked store's `.lock` must be before a sweep removes it: a store being
/// created has its lock file for a moment before it is locked, and is never that old.
pub const STALE_AFTER: Duration = Duration::from_secs(10);

const LOCK_FILE: &str = ".lock";
const PREFIX: &str = "store-";

/// A temporary store's directory, locked while this value lives and removed when it is
/// dropped.
#[derive(Debug)]
pub struct TempStore {
    dir: tempfile::TempDir,
    // Held for the lock: released (by the kernel, whatever ends the process) when closed.
    _lock: File,
}

impl TempStore {
    /// Removes the stale stores of processes that are gone, then makes a new locked store
    /// directory under `$TMPDIR/conformance-stores/`.
    pub fn create() -> io::Result<TempStore> {
        Self::create_in(&std::env::temp_dir().join(STORES_DIR))
    }

    /// [`TempStore::create`] under `parent` instead (tests).
    pub fn create_in(parent: &Path) -> io::Result<TempStore> {
        std::fs::create_dir_all(parent)?;
        sweep(parent, STALE_AFTER);
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(parent)?;
        let lock = File::create(dir.path().join(LOCK_FILE))?;
        lock.try_lock().map_err(|error| match error {
            std::fs::TryLockError::Error(error) => error,
            std::fs::TryLockError::WouldBlock => {
                io::Error::other("a new store's lock is held by another process")
            }
        })?;
        Ok(TempStore { dir, _lock: lock })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The SQLite file of the store, in its directory.
    pub fn database(&self) -> PathBuf {
        self.dir.path().join("events.db")
    }
}

/// Removes every store directory under `parent` whose `.lock` no process holds and is older
/// than `stale_after`; returns how many it removed. Failures are skipped (another sweep may
/// be removing the same directory).
pub fn sweep(parent: &Path, stale_after: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let is_store = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PREFIX));
        if !is_store || !path.is_dir() {
            continue;
        }
        let lock_path = path.join(LOCK_FILE);
        let Ok(lock) = File::options().read(true).write(true).open(&lock_path) else {
            continue;
        };
        let old_enough = lock
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age >= stale_after);
        if !old_enough || lock.try_lock().is_err() {
            continue;
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_removed_on_drop_and_a_killed_ones_by_the_next_sweep() {
        let parent = tempfile::tempdir().unwrap();
        let store = TempStore::create_in(parent.path()).unwrap();
        let dir = store.dir().to_path_buf();
        std::fs::write(store.database(), b"x").unwrap();
        // A live store is never swept, however old.
        assert_eq!(sweep(parent.path(), Duration::ZERO), 0);
        assert!(dir.exists());
        drop(store);
        assert!(!dir.exists());

        // What `kill -9` leaves: the directory and an unlocked `.lock`.
        let left = parent.path().join("store-killed");
        std::fs::create_dir(&left).unwrap();
        std::fs::write(left.join("events.db"), b"x").unwrap();
        let lock = File::create(left.join(LOCK_FILE)).unwrap();
        drop(lock);
        // Too young: it might be a store being created.
        assert_eq!(sweep(parent.path(), Duration::from_secs(3600)), 0);
        assert!(left.exists());
        // Old enough and unlocked: removed by the next store's creation.
        File::options()
            .write(true)
            .open(left.join(LOCK_FILE))
            .unwrap()
            .set_modified(SystemTime::now() - 2 * STALE_AFTER)
            .unwrap();
        let next = TempStore::create_in(parent.path()).unwrap();
        assert!(!left.exists());
        assert!(next.dir().exists());
        // Whatever else lives there is left alone.
        std::fs::create_dir(parent.path().join("other")).unwrap();
        assert_eq!(sweep(parent.path(), Duration::ZERO), 0);
        assert!(parent.path().join("other").exists());
    }
}
