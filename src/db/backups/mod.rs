//! The backups the service keeps, in a folder of this host or in an S3
//! bucket ([`Shelf`]): taking one (read back and checked before it counts
//! as verified), listing them for the admin's page, finding one by its
//! name, and keeping the newest few. This file holds a folder's
//! operations; `shelf` chooses between a folder and a bucket, and
//! `schedule` is the running service's side (the page's "Back up now",
//! the scheduled backups). The archive format itself is
//! [`super::backup`]'s.

mod schedule;
mod shelf;

pub use super::backup::BackupError;
use super::backup::{create, io, read, Manifest, Result};
pub use schedule::{run_schedule, Folder, Schedule};
pub use shelf::Shelf;
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

/// Deletes the oldest backups in `dir` beyond the newest `keep` (other files
/// are left alone); the names deleted.
pub fn prune(dir: &Path, keep: usize) -> Result<Vec<String>> {
    let old = beyond(&entries(dir)?, keep);
    for name in &old {
        let path = dir.join(name);
        std::fs::remove_file(&path).map_err(io(&path))?;
        // A backup taken before marks existed has none.
        let _ = std::fs::remove_file(verified_mark(&path));
    }
    Ok(old)
}

/// Every file in `dir` with its size (none when it does not exist yet).
fn entries(dir: &Path) -> Result<Vec<(String, u64)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    Ok(entries
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().map_or(0, |m| m.len())))
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
    Ok(backups_in(&entries(dir)?))
}

/// The backups among a shelf's entries (name and size, as a folder or a
/// bucket lists them), newest first; each is verified when its mark is
/// among the entries too.
fn backups_in(entries: &[(String, u64)]) -> Vec<Kept> {
    let marks: std::collections::HashSet<&str> =
        entries.iter().filter_map(|(name, _)| name.strip_suffix(VERIFIED)).collect();
    let mut kept: Vec<Kept> = entries
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
    kept
}

/// The names of the backups among a shelf's entries beyond the newest
/// `keep`, oldest first: what pruning deletes.
fn beyond(entries: &[(String, u64)], keep: usize) -> Vec<String> {
    let mut old: Vec<String> = backups_in(entries).into_iter().skip(keep).map(|k| k.name).collect();
    old.reverse();
    old
}

/// The file of the backup called `name` in `dir`, if `name` is a backup's
/// name and the file is there.
pub fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    taken_at(name)?;
    Some(dir.join(name)).filter(|p| p.is_file())
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
