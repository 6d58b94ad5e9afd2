//! The service's backups as it runs: the admin page's "Back up now" and
//! the scheduled backups.

use super::Shelf;
use std::path::PathBuf;

/// The service's backups, as its admin page uses them: where they go, how
/// many are kept, how often the service takes one by itself, and what a
/// backup reads.
#[derive(Clone)]
pub struct Folder {
    /// Where backups go.
    pub shelf: Shelf,
    /// How many are kept.
    pub keep: usize,
    /// How often the service takes one by itself (`None`: only when asked).
    pub every: Option<std::time::Duration>,
    /// The database to back up (a libpq connection string; never shown).
    pub conninfo: String,
    /// The folder store's images (a bucket keeps its own).
    pub upload_dir: PathBuf,
    /// Whether a backup asked for on the page is being taken.
    pub taking: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The connection string may hold a password.
        f.debug_struct("Folder")
            .field("shelf", &self.shelf)
            .field("keep", &self.keep)
            .field("every", &self.every)
            .finish()
    }
}

impl Folder {
    /// Starts taking a backup in the background, unless one is being
    /// taken; whether it started.
    pub fn take_now(&self) -> bool {
        use std::sync::atomic::Ordering;
        if self.taking.swap(true, Ordering::SeqCst) {
            return false;
        }
        let folder = self.clone();
        tokio::spawn(async move {
            match folder.shelf.take(&folder.conninfo, &folder.upload_dir, folder.keep).await {
                Ok((name, _)) => tracing::info!(backup = %name, "backup taken and verified (asked for)"),
                Err(e) => tracing::error!(error = %e, "a backup asked for failed"),
            }
            folder.taking.store(false, Ordering::SeqCst);
        });
        true
    }
}

/// When and where the service takes backups by itself.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Time between backups (the first is taken one period after start).
    pub every: std::time::Duration,
    /// Where they go.
    pub shelf: Shelf,
    /// How many to keep (older ones are deleted).
    pub keep: usize,
}

/// Takes a backup every period until the process ends; failures are logged
/// and the next period tries again.
pub async fn run_schedule(schedule: Schedule, conninfo: String, upload_dir: PathBuf) {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + schedule.every, schedule.every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let started = std::time::Instant::now();
        match schedule.shelf.take(&conninfo, &upload_dir, schedule.keep).await {
            Ok((name, manifest)) => tracing::info!(
                backup = %name,
                database_bytes = manifest.database.bytes,
                images = manifest.uploads.len(),
                ms = started.elapsed().as_millis() as u64,
                "backup taken and verified"
            ),
            Err(e) => tracing::error!(error = %e, "scheduled backup failed"),
        }
    }
}
