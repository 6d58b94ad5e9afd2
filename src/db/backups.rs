//! The backups the service keeps, in a folder of this host or in an S3
//! bucket ([`Shelf`]): taking one (read back and checked before it counts
//! as verified), listing them for the admin's page, finding one by its
//! name, and keeping the newest few. The archive format itself is
//! [`super::backup`]'s.

pub use super::backup::BackupError;
use super::backup::{create, io, read, Manifest, Result};
use crate::storage::{Location, Object, Storage};
use std::path::{Path, PathBuf};

/// How a scheduled backup's name starts and ends.
const PREFIX: &str = "atelier-";
/// How a scheduled backup's name ends.
const SUFFIX: &str = ".backup.tar";
/// What marks a backup that was read back whole: a file beside it, named
/// after it, holding its manifest.
const VERIFIED: &str = ".verified.json";

/// The name of a backup taken at `at`; names sort by time.
pub fn scheduled_name(at: chrono::DateTime<chrono::Utc>) -> String {
    format!("{PREFIX}{}{SUFFIX}", at.format("%Y%m%dT%H%M%SZ"))
}

/// When a backup of this name was taken (`None`: not a backup's name). The
/// only names the folder's readers accept, so a name from a request can
/// never reach another file.
fn taken_at(name: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let stamp = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let ok = stamp.len() == 16 && stamp.bytes().all(|b| b.is_ascii_digit() || b == b'T' || b == b'Z');
    let at = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ").ok().filter(|_| ok)?;
    Some(at.and_utc())
}

/// Takes a backup into `dir`, reads it back whole (every checksum), marks
/// it verified, and deletes the oldest beyond the newest `keep`: the file
/// and its manifest.
pub fn take(conninfo: &str, upload_dir: &Path, dir: &Path, keep: usize) -> Result<(PathBuf, Manifest)> {
    let (unlisted, file, manifest, mark) = stage(conninfo, upload_dir, dir)?;
    let mark_file = verified_mark(&file);
    std::fs::write(&mark_file, mark).map_err(io(&mark_file))?;
    std::fs::rename(&unlisted, &file).map_err(io(&file))?;
    prune(dir, keep)?;
    Ok((file, manifest))
}

/// Takes a backup into `dir` under a name the folder's readers do not list
/// and reads it back whole: that file, the name it is to have, its
/// manifest, and its verified mark's text. The admin's page never lists a
/// backup still being written or read back as one that failed its check.
fn stage(conninfo: &str, upload_dir: &Path, dir: &Path) -> Result<(PathBuf, PathBuf, Manifest, Vec<u8>)> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    sweep_abandoned(dir, ABANDONED_AFTER);
    let file = dir.join(scheduled_name(chrono::Utc::now()));
    let mut unlisted = file.clone().into_os_string();
    unlisted.push(".partial");
    let unlisted = PathBuf::from(unlisted);
    let staged = create(conninfo, upload_dir, &unlisted).and_then(|_| read(&unlisted));
    let staged = match staged {
        Ok(staged) => staged,
        Err(e) => {
            let _ = std::fs::remove_file(&unlisted);
            return Err(e);
        }
    };
    let mark = serde_json::to_vec_pretty(&staged.manifest).map_err(|e| BackupError::Damaged {
        file: file.display().to_string(),
        entry: "manifest.json".into(),
        reason: e.to_string(),
    })?;
    Ok((unlisted, file, staged.manifest, mark))
}

/// How old a backup still being written must be to count as abandoned (its
/// service was killed while taking it): far longer than any backup takes.
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Deletes the backups in `dir` left half-written (`<name>.partial`) more
/// than `after` ago by a service that was stopped while taking them; one
/// being written now, by this host or another sharing the folder, is
/// younger. Failures are only logged: the backup being taken goes on.
fn sweep_abandoned(dir: &Path, after: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let abandoned = name.strip_suffix(".partial").is_some_and(|n| taken_at(n).is_some())
            && entry.metadata().and_then(|m| m.modified()).is_ok_and(|at| at.elapsed().is_ok_and(|age| age > after));
        if abandoned {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => tracing::info!(file = %name, "deleted a backup left half-written"),
                Err(e) => tracing::warn!(file = %name, error = %e, "a backup left half-written could not be deleted"),
            }
        }
    }
}

/// The mark beside a verified backup.
fn verified_mark(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(VERIFIED);
    file.with_file_name(name)
}

/// A blocking backup step (files, `pg_dump`), run off the async workers.
async fn blocking<T: Send + 'static>(step: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(step)
        .await
        .map_err(|e| BackupError::Tool { tool: "a backup task", detail: e.to_string() })?
}

/// Where the service keeps its backups.
#[derive(Debug, Clone)]
pub enum Shelf {
    /// A folder of this host (the default, `<data-dir>/backups`).
    Dir(PathBuf),
    /// An S3 bucket (`s3://bucket/prefix`): each backup is taken and read
    /// back in `staging` on this host, then uploaded whole (its mark first,
    /// so the bucket never lists an unverified backup) and removed here;
    /// every host sharing the bucket lists and serves the same backups.
    Bucket {
        /// The bucket, rooted at the prefix.
        store: Storage,
        /// Where a backup is written before it is uploaded.
        staging: PathBuf,
    },
}

impl Shelf {
    /// The shelf an address names (`DIR`, `file://DIR` or
    /// `s3://bucket/prefix`, a bucket configured by the process's `AWS_*`
    /// environment); a bucket's backups are staged in `staging`.
    pub fn parse(address: &str, staging: PathBuf) -> std::result::Result<Self, String> {
        match Location::parse(address)? {
            Location::File(dir) => Ok(Self::Dir(dir)),
            Location::S3 { .. } => {
                let store = Storage::from_address(address, false).map_err(|e| e.to_string())?;
                Ok(Self::Bucket { store, staging })
            }
        }
    }

    /// Where it is, as the admin's page and the logs say it.
    pub fn describe(&self) -> String {
        match self {
            Self::Dir(dir) => dir.display().to_string(),
            Self::Bucket { store, .. } => store.location().url(),
        }
    }

    /// Takes a backup, reads it back whole, marks it verified, and deletes
    /// the oldest beyond the newest `keep`: the backup's name and manifest.
    pub async fn take(&self, conninfo: &str, upload_dir: &Path, keep: usize) -> Result<(String, Manifest)> {
        let (conninfo, upload_dir) = (conninfo.to_owned(), upload_dir.to_owned());
        let name_of = |file: &Path| file.file_name().unwrap_or_default().to_string_lossy().into_owned();
        match self {
            Self::Dir(dir) => {
                let dir = dir.clone();
                let (file, manifest) = blocking(move || take(&conninfo, &upload_dir, &dir, keep)).await?;
                Ok((name_of(&file), manifest))
            }
            Self::Bucket { store, staging } => {
                let staging = staging.clone();
                let (unlisted, file, manifest, mark) =
                    blocking(move || stage(&conninfo, &upload_dir, &staging)).await?;
                let name = name_of(&file);
                let mark_name = format!("{name}{VERIFIED}");
                let uploaded = async {
                    store.put(Object::Backup(&mark_name), mark.into()).await?;
                    store.put_file(Object::Backup(&name), &unlisted).await
                }
                .await;
                let _ = std::fs::remove_file(&unlisted);
                if let Err(e) = uploaded {
                    let _ = store.delete(Object::Backup(&mark_name)).await;
                    return Err(e.into());
                }
                self.prune(keep).await?;
                Ok((name, manifest))
            }
        }
    }

    /// Deletes the oldest backups beyond the newest `keep` (other objects
    /// are left alone); the names deleted.
    pub async fn prune(&self, keep: usize) -> Result<Vec<String>> {
        match self {
            Self::Dir(dir) => {
                let dir = dir.clone();
                blocking(move || prune(&dir, keep)).await
            }
            Self::Bucket { store, .. } => {
                let mut names: Vec<String> =
                    store.root_objects().await?.into_iter().map(|(n, _)| n).filter(|n| taken_at(n).is_some()).collect();
                names.sort();
                let excess = names.len().saturating_sub(keep);
                let old: Vec<String> = names.drain(..excess).collect();
                for name in &old {
                    store.delete(Object::Backup(name)).await?;
                    store.delete(Object::Backup(&format!("{name}{VERIFIED}"))).await?;
                }
                Ok(old)
            }
        }
    }

    /// The backups kept, newest first.
    pub async fn list(&self) -> Result<Vec<Kept>> {
        match self {
            Self::Dir(dir) => {
                let dir = dir.clone();
                blocking(move || list(&dir)).await
            }
            Self::Bucket { store, .. } => {
                let objects = store.root_objects().await?;
                let marks: std::collections::HashSet<&str> =
                    objects.iter().filter_map(|(n, _)| n.strip_suffix(VERIFIED)).collect();
                let mut kept: Vec<Kept> = objects
                    .iter()
                    .filter_map(|(name, bytes)| {
                        Some(Kept {
                            taken_at: taken_at(name)?,
                            verified: marks.contains(name.as_str()),
                            bytes: *bytes,
                            name: name.clone(),
                        })
                    })
                    .collect();
                kept.sort_by(|a, b| b.name.cmp(&a.name));
                Ok(kept)
            }
        }
    }

    /// The backup called `name`, streamed (`None` when `name` is not a
    /// backup's name or there is no such backup): its size and bytes.
    pub async fn open(&self, name: &str) -> Result<Option<crate::storage::Fetched>> {
        use futures_util::StreamExt;
        if taken_at(name).is_none() {
            return Ok(None);
        }
        match self {
            Self::Dir(dir) => {
                let Some(path) = find(dir, name) else { return Ok(None) };
                let Ok(file) = tokio::fs::File::open(&path).await else { return Ok(None) };
                let size = file.metadata().await.map_err(io(&path))?.len();
                let what = name.to_owned();
                let stream = tokio_util::io::ReaderStream::new(file)
                    .map(move |chunk| {
                        chunk.map_err(|e| crate::storage::StorageError::Invalid(format!("backup {what}: {e}")))
                    })
                    .boxed();
                Ok(Some(crate::storage::Fetched { size, stream }))
            }
            Self::Bucket { store, .. } => match store.get(Object::Backup(name)).await {
                Ok(fetched) => Ok(Some(fetched)),
                Err(crate::storage::StorageError::NotFound(_)) => Ok(None),
                Err(e) => Err(e.into()),
            },
        }
    }
}

/// Deletes the oldest backups in `dir` beyond the newest `keep` (other files
/// are left alone); the names deleted.
pub fn prune(dir: &Path, keep: usize) -> Result<Vec<String>> {
    let mut names: Vec<String> = names(dir)?;
    names.sort();
    let excess = names.len().saturating_sub(keep);
    let old: Vec<String> = names.drain(..excess).collect();
    for name in &old {
        let path = dir.join(name);
        std::fs::remove_file(&path).map_err(io(&path))?;
        // A backup taken before marks existed has none.
        let _ = std::fs::remove_file(verified_mark(&path));
    }
    Ok(old)
}

/// The backups' names in `dir` (none when it does not exist yet).
fn names(dir: &Path) -> Result<Vec<String>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    Ok(entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| taken_at(n).is_some())
        .collect())
}

/// One backup in the folder, as the admin's page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Its file name (what a download names).
    pub name: String,
    /// When it was taken.
    pub taken_at: chrono::DateTime<chrono::Utc>,
    /// Its size in bytes.
    pub bytes: u64,
    /// Whether it was read back whole after it was written.
    pub verified: bool,
}

/// The backups in `dir`, newest first.
pub fn list(dir: &Path) -> Result<Vec<Kept>> {
    let mut kept: Vec<Kept> = names(dir)?
        .into_iter()
        .filter_map(|name| {
            let path = dir.join(&name);
            let bytes = std::fs::metadata(&path).ok()?.len();
            Some(Kept { taken_at: taken_at(&name)?, verified: verified_mark(&path).is_file(), bytes, name })
        })
        .collect();
    kept.sort_by(|a, b| b.name.cmp(&a.name));
    Ok(kept)
}

/// The file of the backup called `name` in `dir`, if `name` is a backup's
/// name and the file is there.
pub fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    taken_at(name)?;
    Some(dir.join(name)).filter(|p| p.is_file())
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_names_sort_by_time_and_pruning_keeps_the_newest() {
        let dir = tempfile::tempdir().expect("dir");
        let t0 = chrono::DateTime::parse_from_rfc3339("2026-11-27T06:00:00Z").expect("time").to_utc();
        for hours in [0, 6, 12, 18] {
            let name = scheduled_name(t0 + chrono::Duration::hours(hours));
            std::fs::write(dir.path().join(&name), b"x").expect("write");
            std::fs::write(verified_mark(&dir.path().join(name)), b"{}").expect("write");
        }
        std::fs::write(dir.path().join("notes.txt"), b"mine").expect("write");
        let pruned = prune(dir.path(), 2).expect("prune");
        assert_eq!(pruned, ["atelier-20261127T060000Z.backup.tar", "atelier-20261127T120000Z.backup.tar"]);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("e").file_name().into_string().expect("utf8"))
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "atelier-20261127T180000Z.backup.tar",
                "atelier-20261127T180000Z.backup.tar.verified.json",
                "atelier-20261128T000000Z.backup.tar",
                "atelier-20261128T000000Z.backup.tar.verified.json",
                "notes.txt"
            ]
        );
        let listed = list(dir.path()).expect("list");
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].name, "atelier-20261128T000000Z.backup.tar", "newest first");
        assert!(listed.iter().all(|k| k.verified && k.bytes == 1));
    }

    #[test]
    fn only_backups_left_half_written_long_ago_are_swept() {
        let dir = tempfile::tempdir().expect("dir");
        let old = dir.path().join("atelier-20261127T060000Z.backup.tar.partial");
        let young = dir.path().join("atelier-20261208T060000Z.backup.tar.partial");
        let other = dir.path().join("notes.txt.partial");
        for path in [&old, &young, &other] {
            std::fs::write(path, b"x").expect("write");
        }
        let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(48 * 3600);
        for path in [&old, &other] {
            std::fs::File::options().write(true).open(path).expect("open").set_modified(two_days_ago).expect("mtime");
        }
        sweep_abandoned(dir.path(), ABANDONED_AFTER);
        assert!(!old.exists(), "abandoned two days ago");
        assert!(young.exists(), "perhaps being written now");
        assert!(other.exists(), "not a backup's");
    }

    #[test]
    fn a_shelf_is_a_folder_or_a_bucket_and_a_bad_address_is_refused() {
        let staging = PathBuf::from("/tmp/staging");
        assert!(
            matches!(Shelf::parse("/var/backups", staging.clone()), Ok(Shelf::Dir(d)) if d == Path::new("/var/backups"))
        );
        let bucket = Shelf::parse("s3://lab-backups/atelier/", staging.clone()).expect("a bucket");
        assert_eq!(bucket.describe(), "s3://lab-backups/atelier");
        for bad in ["s3://No_Such/x", "gs://bucket/x", ""] {
            assert!(Shelf::parse(bad, staging.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_a_backups_own_name_finds_a_file() {
        let dir = tempfile::tempdir().expect("dir");
        let name = "atelier-20261127T060000Z.backup.tar";
        std::fs::write(dir.path().join(name), b"x").expect("write");
        std::fs::write(dir.path().join("notes.txt"), b"mine").expect("write");
        assert!(find(dir.path(), name).is_some());
        for bad in [
            "notes.txt",
            "../notes.txt",
            "atelier-../../etc/passwd.backup.tar",
            "atelier-20261127T060000Z.backup.tar.verified.json",
            "atelier-2026112/T060000Z.backup.tar",
            "atelier-20261127T070000Z.backup.tar",
        ] {
            assert!(find(dir.path(), bad).is_none(), "{bad}");
        }
        assert!(list(&dir.path().join("not yet made")).expect("a folder not made yet").is_empty());
    }
}
