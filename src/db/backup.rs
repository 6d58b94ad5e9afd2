//! Backups: the service's database in PostgreSQL's custom dump format and
//! the uploaded images, in one tar archive with a manifest of SHA-256 sums.
//!
//! Consistent while the service runs: `pg_dump` reads one snapshot, and
//! images are copied after it. Images are content-addressed and written
//! before any row names them, so every image the snapshot refers to is
//! already on disk when the copy starts (later ones are harmless extras).
//!
//! A restore reads and checks the whole archive into a staging directory
//! before it touches anything, goes only into an empty data directory or
//! database, and loads the dump in one transaction: all or nothing.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the manifest's `format` says.
pub const FORMAT: &str = "atelier-backup";
/// The archive layout's version.
pub const VERSION: u32 = 1;
/// The manifest's name in the archive (its first entry).
const MANIFEST: &str = "manifest.json";
/// The database dump's name in the archive.
const DUMP: &str = "database.dump";
/// The folder of uploaded images in the archive.
const UPLOADS: &str = "uploads";

/// What a backup holds, with a checksum of every file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The layout's version ([`VERSION`]).
    pub version: u32,
    /// When the backup was taken.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The Atelier version that took it.
    pub atelier_version: String,
    /// The database dump (`pg_dump --format=custom`).
    pub database: Entry,
    /// The uploaded images, by file name.
    pub uploads: Vec<Entry>,
}

/// One file of a backup.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// Its path in the archive.
    pub path: String,
    /// SHA-256 of its content, hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Why a backup could not be taken or restored. Nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// A PostgreSQL program is missing.
    #[error(
        "`{0}` not found (looked in PATH, `pg_config --bindir` and /usr/lib/postgresql/*/bin): \
         install PostgreSQL's programs (Debian: `apt-get install postgresql`)"
    )]
    NoTool(&'static str),
    /// A PostgreSQL program failed; what it said.
    #[error("{tool} failed: {detail}")]
    Tool {
        /// The program.
        tool: &'static str,
        /// Its standard error.
        detail: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a backup this version can read.
    #[error("{file}: not an Atelier backup: {reason}")]
    NotABackup {
        /// The archive.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A file in the archive does not match the manifest.
    #[error("{file}: `{entry}` {reason}; the archive is damaged and nothing was restored")]
    Damaged {
        /// The archive.
        file: String,
        /// The entry.
        entry: String,
        /// What is wrong.
        reason: String,
    },
    /// The restore target already holds data.
    #[error("{0} is not empty: a backup is restored only into an empty data directory or database")]
    NotEmpty(String),
    /// Opening the target database failed.
    #[error(transparent)]
    Database(#[from] super::DbError),
    /// The bucket that keeps backups failed.
    #[error("the backup store: {0}")]
    Store(#[from] crate::storage::StorageError),
}

/// Result of this module.
pub type Result<T, E = BackupError> = std::result::Result<T, E>;

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BackupError + '_ {
    move |source| BackupError::Io { path: path.display().to_string(), source }
}

/// A PostgreSQL client program: beside the server binaries Atelier finds,
/// else from `PATH`.
fn program(name: &'static str) -> Result<PathBuf> {
    if let Some(path) = super::embedded::find_bin_dir().map(|d| d.join(name)).filter(|p| p.is_file()) {
        return Ok(path);
    }
    let on_path =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|p| p.is_file()));
    on_path.ok_or(BackupError::NoTool(name))
}

/// Runs a PostgreSQL program; its standard error on failure.
fn run(tool: &'static str, mut command: Command) -> Result<()> {
    let output = command.output().map_err(|e| BackupError::Tool { tool, detail: e.to_string() })?;
    if output.status.success() {
        return Ok(());
    }
    let detail = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    Err(BackupError::Tool { tool, detail: if detail.is_empty() { output.status.to_string() } else { detail } })
}

/// SHA-256 and size of a file, read in chunks.
fn checksum(path: &Path) -> Result<(String, u64)> {
    let mut file = std::fs::File::open(path).map_err(io(path))?;
    let mut hasher = Sha256::new();
    let bytes = std::io::copy(&mut file, &mut hasher).map_err(io(path))?;
    Ok((hex::encode(hasher.finalize()), bytes))
}

/// Whether a name is a plain file name (no directory part, not hidden):
/// what the upload directory holds and the only names a restore writes.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

/// The uploaded images, by name (files being written, `.<name>.tmp`, left out).
fn uploads_in(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if plain_name(&name) && entry.file_type().map_err(io(dir))?.is_file() {
            files.push((name, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// Takes a backup of the database `conninfo` names (a libpq connection
/// string or URL) and of the images in `upload_dir` into `file`, written
/// whole or not at all. Blocking: run it off the async runtime.
pub fn create(conninfo: &str, upload_dir: &Path, file: &Path) -> Result<Manifest> {
    let parent = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let staging = tempfile::Builder::new().prefix(".atelier-backup-").tempdir_in(parent).map_err(io(parent))?;
    let dump = staging.path().join(DUMP);
    let mut pg_dump = Command::new(program("pg_dump")?);
    pg_dump.arg("--format=custom").arg("--file").arg(&dump).arg("--dbname").arg(conninfo);
    run("pg_dump", pg_dump)?;
    let (sha256, bytes) = checksum(&dump)?;
    let images = uploads_in(upload_dir)?;
    let mut uploads = Vec::with_capacity(images.len());
    for (name, path) in &images {
        let (sha256, bytes) = checksum(path)?;
        uploads.push(Entry { path: format!("{UPLOADS}/{name}"), sha256, bytes });
    }
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        version: VERSION,
        created_at: chrono::Utc::now(),
        atelier_version: env!("CARGO_PKG_VERSION").to_owned(),
        database: Entry { path: DUMP.to_owned(), sha256, bytes },
        uploads,
    };
    let partial = staging.path().join("backup.tar");
    let out = std::fs::File::create(&partial).map_err(io(&partial))?;
    let mut tar = tar::Builder::new(std::io::BufWriter::new(out));
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| io(file)(e.into()))?;
    let mut header = tar::Header::new_gnu();
    header.set_size(json.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(manifest.created_at.timestamp().max(0) as u64);
    tar.append_data(&mut header, MANIFEST, json.as_slice()).map_err(io(&partial))?;
    tar.append_path_with_name(&dump, DUMP).map_err(io(&dump))?;
    for ((_, path), entry) in images.iter().zip(&manifest.uploads) {
        tar.append_path_with_name(path, &entry.path).map_err(io(path))?;
    }
    let out = tar.into_inner().map_err(io(&partial))?.into_inner().map_err(|e| io(&partial)(e.into_error()))?;
    out.sync_all().map_err(io(&partial))?;
    std::fs::rename(&partial, file).map_err(io(file))?;
    Ok(manifest)
}

/// A backup read and checked into a staging directory.
pub struct Staged {
    /// What the archive says it holds (every file checked against it).
    pub manifest: Manifest,
    dir: tempfile::TempDir,
}

impl Staged {
    /// The database dump.
    fn dump(&self) -> PathBuf {
        self.dir.path().join(DUMP)
    }

    /// The uploaded images: name and staged path.
    fn uploads(&self) -> impl Iterator<Item = (&str, PathBuf)> {
        self.manifest.uploads.iter().map(|e| {
            let name = e.path.trim_start_matches(UPLOADS).trim_start_matches('/');
            (name, self.dir.path().join(&e.path))
        })
    }
}

/// The largest manifest a restore reads (its header's size is checked first).
const MANIFEST_LIMIT: u64 = 16 * 1024 * 1024;

/// Reads a backup into a staging directory, checking the manifest and
/// every file's name, type, size and checksum.
///
/// The archive is hostile until proven otherwise: a first pass checks every
/// name (the manifest's and the tar entries': only `database.dump` and
/// `uploads/<plain name>`, compared byte for byte, so absolute paths, `..`,
/// links, devices and duplicates are refused) and every checksum while
/// writing nothing at all; only an archive that passes is then copied into
/// a fresh staging directory (and checked again as it is, in case the file
/// changed in between). Nothing outside the staging directory is written.
pub fn read(file: &Path) -> Result<Staged> {
    let manifest = walk(file, None)?;
    let dir = tempfile::Builder::new().prefix("atelier-restore-").tempdir().map_err(io(Path::new("temp dir")))?;
    std::fs::create_dir(dir.path().join(UPLOADS)).map_err(io(dir.path()))?;
    let staged = walk(file, Some(dir.path()))?;
    if staged.database.sha256 != manifest.database.sha256 || staged.uploads.len() != manifest.uploads.len() {
        return Err(BackupError::Damaged {
            file: file.display().to_string(),
            entry: MANIFEST.into(),
            reason: "changed while it was read".into(),
        });
    }
    Ok(Staged { manifest: staged, dir })
}

/// Checks the manifest's own names: the dump under its one name, images
/// as `uploads/<plain name>`, none twice.
fn check_manifest_names(manifest: &Manifest) -> std::result::Result<(), (String, &'static str)> {
    if manifest.database.path != DUMP {
        return Err((manifest.database.path.clone(), "is not the database dump's name (`database.dump`)"));
    }
    let mut names = std::collections::HashSet::from([DUMP]);
    for e in &manifest.uploads {
        let name = e.path.strip_prefix(UPLOADS).and_then(|n| n.strip_prefix('/'));
        if !name.is_some_and(plain_name) {
            return Err((e.path.clone(), "is not an image name the manifest may list"));
        }
        if !names.insert(e.path.as_str()) {
            return Err((e.path.clone(), "is listed twice"));
        }
    }
    Ok(())
}

/// One pass over the archive: checks everything, and copies each file into
/// `stage` when given (only names checked against the manifest's, which
/// are checked first). The manifest.
fn walk(file: &Path, stage: Option<&Path>) -> Result<Manifest> {
    let shown = file.display().to_string();
    let not_a_backup = |reason: String| BackupError::NotABackup { file: shown.clone(), reason };
    let damaged = |entry: &str, reason: &str| BackupError::Damaged {
        file: shown.clone(),
        entry: entry.into(),
        reason: reason.into(),
    };
    let archive = std::fs::File::open(file).map_err(io(file))?;
    let mut tar = tar::Archive::new(std::io::BufReader::new(archive));
    let mut entries = tar.entries().map_err(io(file))?;
    let mut first = entries
        .next()
        .ok_or_else(|| not_a_backup("the archive is empty".into()))?
        .map_err(|e| not_a_backup(e.to_string()))?;
    if first.path_bytes().as_ref() != MANIFEST.as_bytes() || first.header().entry_type() != tar::EntryType::Regular {
        return Err(not_a_backup(format!("it does not start with {MANIFEST}")));
    }
    if first.size() > MANIFEST_LIMIT {
        return Err(not_a_backup(format!("{MANIFEST} is larger than {MANIFEST_LIMIT} bytes")));
    }
    let mut json = Vec::new();
    first.by_ref().take(MANIFEST_LIMIT).read_to_end(&mut json).map_err(io(file))?;
    let manifest: Manifest =
        serde_json::from_slice(&json).map_err(|e| not_a_backup(format!("{MANIFEST} does not parse: {e}")))?;
    if manifest.format != FORMAT || manifest.version != VERSION {
        return Err(not_a_backup(format!(
            "format `{}` version {} (this version reads `{FORMAT}` version {VERSION})",
            manifest.format, manifest.version
        )));
    }
    check_manifest_names(&manifest).map_err(|(entry, reason)| damaged(&entry, reason))?;
    let wanted: std::collections::HashMap<&[u8], &Entry> =
        std::iter::once(&manifest.database).chain(&manifest.uploads).map(|e| (e.path.as_bytes(), e)).collect();
    let mut seen = std::collections::HashSet::new();
    for entry in entries {
        let mut entry = entry.map_err(|e| not_a_backup(e.to_string()))?;
        let raw = entry.path_bytes().into_owned();
        let path = String::from_utf8_lossy(&raw).into_owned();
        let expected = wanted.get(raw.as_slice()).ok_or_else(|| damaged(&path, "is not in the manifest"))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(damaged(&path, "is not a regular file (links and devices are refused)"));
        }
        if !seen.insert(raw) {
            return Err(damaged(&path, "appears twice"));
        }
        if entry.size() != expected.bytes {
            return Err(damaged(&path, "does not match its size in the manifest"));
        }
        // Only a name equal to one the manifest lists (checked above): nothing escapes `stage`.
        let mut out = match stage {
            Some(dir) => {
                let target = dir.join(&expected.path);
                Some((std::fs::File::create(&target).map_err(io(&target))?, target))
            }
            None => None,
        };
        let mut hasher = Sha256::new();
        let mut buffer = vec![0; 64 * 1024];
        let mut bytes = 0u64;
        let mut limited = entry.by_ref().take(expected.bytes);
        loop {
            let n = limited.read(&mut buffer).map_err(io(file))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            if let Some((out, target)) = out.as_mut() {
                out.write_all(&buffer[..n]).map_err(io(target))?;
            }
            bytes += n as u64;
        }
        if bytes != expected.bytes || hex::encode(hasher.finalize()) != expected.sha256 {
            return Err(damaged(&path, "does not match its checksum"));
        }
    }
    if let Some(missing) = wanted.keys().find(|p| !seen.contains(**p)) {
        return Err(damaged(&String::from_utf8_lossy(missing), "is missing"));
    }
    Ok(manifest)
}

/// Loads a staged dump into the (empty) database `conninfo` names, in one
/// transaction; a failure leaves the database as it was.
pub fn load_database(staged: &Staged, conninfo: &str) -> Result<()> {
    let mut pg_restore = Command::new(program("pg_restore")?);
    pg_restore
        .args(["--exit-on-error", "--single-transaction", "--no-owner", "--no-privileges", "--dbname"])
        .arg(conninfo)
        .arg(staged.dump());
    run("pg_restore", pg_restore)
}

/// Copies the staged images into `upload_dir` (each written, then renamed).
pub fn copy_uploads(staged: &Staged, upload_dir: &Path) -> Result<usize> {
    std::fs::create_dir_all(upload_dir).map_err(io(upload_dir))?;
    let mut copied = 0;
    for (name, from) in staged.uploads() {
        let to = upload_dir.join(name);
        let tmp = upload_dir.join(format!(".{name}.tmp"));
        std::fs::copy(&from, &tmp).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &to).map_err(io(&to))?;
        copied += 1;
    }
    Ok(copied)
}

/// Whether a directory is missing or holds nothing.
pub fn is_empty_dir(dir: &Path) -> Result<bool> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(io(dir)(e)),
    }
}

/// Whether a database holds no tables of its own (a fresh `CREATE DATABASE`).
pub async fn is_empty_database(pool: &sqlx::PgPool) -> Result<bool> {
    let tables: i64 = sqlx::query_scalar!(
        r#"SELECT count(*) AS "tables!" FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
              AND n.nspname NOT LIKE 'pg_toast%'"#
    )
    .fetch_one(pool)
    .await
    .map_err(super::DbError::Sqlx)?;
    Ok(tables == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar of these (name, content) entries, in order.
    fn archive(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("file");
        let mut tar = tar::Builder::new(file.reopen().expect("reopen"));
        for (name, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, *data).expect("append");
        }
        tar.finish().expect("finish");
        file
    }

    fn manifest_of(dump: &[u8], uploads: &[(&str, &[u8])]) -> Vec<u8> {
        let entry = |path: &str, data: &[u8]| Entry {
            path: path.to_owned(),
            sha256: hex::encode(Sha256::digest(data)),
            bytes: data.len() as u64,
        };
        let manifest = Manifest {
            format: FORMAT.into(),
            version: VERSION,
            created_at: chrono::Utc::now(),
            atelier_version: "test".into(),
            database: entry(DUMP, dump),
            uploads: uploads.iter().map(|(p, d)| entry(p, d)).collect(),
        };
        serde_json::to_vec(&manifest).expect("json")
    }

    #[test]
    fn a_restore_reads_only_what_the_manifest_lists_with_matching_checksums() {
        let ok = manifest_of(b"dump", &[("uploads/a.png", b"png")]);
        let staged = read(archive(&[(MANIFEST, &ok), (DUMP, b"dump"), ("uploads/a.png", b"png")]).path()).expect("ok");
        assert_eq!(staged.uploads().map(|(n, _)| n.to_owned()).collect::<Vec<_>>(), ["a.png"]);
        assert_eq!(std::fs::read(staged.dump()).expect("dump"), b"dump");

        let refused = |entries: &[(&str, &[u8])]| read(archive(entries).path()).err().map(|e| e.to_string());
        let flipped = refused(&[(MANIFEST, &ok), (DUMP, b"dumq"), ("uploads/a.png", b"png")]).expect("refused");
        assert!(flipped.contains("`database.dump` does not match its checksum"), "{flipped}");
        let missing = refused(&[(MANIFEST, &ok), (DUMP, b"dump")]).expect("refused");
        assert!(missing.contains("`uploads/a.png` is missing"), "{missing}");
        let extra =
            refused(&[(MANIFEST, &ok), (DUMP, b"dump"), ("uploads/a.png", b"png"), ("x", b"")]).expect("refused");
        assert!(extra.contains("`x` is not in the manifest"), "{extra}");
        let escaping = manifest_of(b"dump", &[("uploads/../../etc/cron.d/x", b"png")]);
        let traversal = refused(&[(MANIFEST, &escaping), (DUMP, b"dump")]).expect("refused");
        assert!(traversal.contains("is not an image name"), "{traversal}");
        let unordered = refused(&[(DUMP, b"dump"), (MANIFEST, &ok)]).expect("refused");
        assert!(unordered.contains("not an Atelier backup"), "{unordered}");
    }

    /// A tar of raw entries (name bytes as given, no checks the `tar`
    /// crate's builder would make): what an attacker can write.
    fn crafted(entries: &[(&str, tar::EntryType, &[u8])]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().expect("file");
        let mut tar = tar::Builder::new(file.reopen().expect("reopen"));
        for (name, kind, data) in entries {
            let mut header = tar::Header::new_gnu();
            let gnu = header.as_gnu_mut().expect("gnu");
            gnu.name[..name.len()].copy_from_slice(name.as_bytes());
            header.set_entry_type(*kind);
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            if matches!(kind, tar::EntryType::Symlink | tar::EntryType::Link) {
                header.set_link_name("/etc/passwd").expect("link");
            }
            header.set_cksum();
            tar.append(&header, *data).expect("append");
        }
        tar.finish().expect("finish");
        file
    }

    /// A manifest whose dump is named `dump_path` and whose images are `uploads`.
    fn manifest_named(dump_path: &str, dump: &[u8], uploads: &[(&str, &[u8])]) -> Vec<u8> {
        let mut manifest: Manifest = serde_json::from_slice(&manifest_of(dump, uploads)).expect("manifest");
        manifest.database.path = dump_path.to_owned();
        serde_json::to_vec(&manifest).expect("json")
    }

    #[test]
    fn a_crafted_archive_is_refused_before_anything_is_written() {
        use tar::EntryType::{Block, Char, Link, Regular, Symlink};
        let outside = tempfile::tempdir().expect("dir");
        let canary = outside.path().join("pwned");
        let absolute = canary.to_str().expect("utf8").to_owned();
        // `..` from the staging directory (in the temp dir) up to the root and down again.
        let dotted = format!("../../../../../../../..{absolute}");
        let refused = |entries: &[(&str, tar::EntryType, &[u8])]| match read(crafted(entries).path()) {
            Ok(_) => panic!("accepted: {:?}", entries.iter().map(|e| e.0).collect::<Vec<_>>()),
            Err(e) => e.to_string(),
        };
        let png: &[u8] = b"png";
        /// (manifest, the entries after it, what the refusal says)
        type Case<'a> = (Vec<u8>, Vec<(&'a str, tar::EntryType, &'a [u8])>, &'a str);
        let cases: Vec<Case> = vec![
            // The manifest names the dump by an absolute path, and the entry follows it (checksum right, then wrong).
            (manifest_named(&absolute, b"dump", &[]), vec![(&absolute, Regular, b"dump")], "database dump's name"),
            (manifest_named(&absolute, b"dump", &[]), vec![(&absolute, Regular, b"dumq")], "database dump's name"),
            (manifest_named(&dotted, b"dump", &[]), vec![(&dotted, Regular, b"dump")], "database dump's name"),
            // Entries the manifest does not list: absolute and `..` names.
            (
                manifest_of(b"dump", &[]),
                vec![(&absolute, Regular, b"x"), (DUMP, Regular, b"dump")],
                "not in the manifest",
            ),
            (manifest_of(b"dump", &[]), vec![("uploads/../../x", Regular, b"x")], "not in the manifest"),
            // Listed names whose entries are links or devices.
            (
                manifest_of(b"dump", &[("uploads/a.png", png)]),
                vec![(DUMP, Regular, b"dump"), ("uploads/a.png", Symlink, b"")],
                "not a regular file",
            ),
            (
                manifest_of(b"dump", &[("uploads/a.png", png)]),
                vec![(DUMP, Regular, b"dump"), ("uploads/a.png", Link, b"")],
                "not a regular file",
            ),
            (
                manifest_of(b"dump", &[("uploads/a.png", png)]),
                vec![(DUMP, Regular, b"dump"), ("uploads/a.png", Char, b"")],
                "not a regular file",
            ),
            (
                manifest_of(b"dump", &[("uploads/a.png", png)]),
                vec![(DUMP, Regular, b"dump"), ("uploads/a.png", Block, b"")],
                "not a regular file",
            ),
            // Duplicates, in the archive and in the manifest.
            (manifest_of(b"dump", &[]), vec![(DUMP, Regular, b"dump"), (DUMP, Regular, b"dump")], "appears twice"),
            (
                manifest_of(b"dump", &[("uploads/a.png", png), ("uploads/a.png", png)]),
                vec![(DUMP, Regular, b"dump")],
                "listed twice",
            ),
            // A size that differs from the manifest's is refused before the entry is read.
            (manifest_of(b"dump", &[]), vec![(DUMP, Regular, b"dump and more")], "size"),
        ];
        for (manifest, rest, expected) in cases {
            let mut entries = vec![(MANIFEST, Regular, manifest.as_slice())];
            entries.extend(rest.iter().cloned());
            let message = refused(&entries);
            assert!(message.contains(expected), "{message} (wanted: {expected})");
            assert!(!canary.exists(), "{message}: wrote {}", canary.display());
        }
        // A manifest that is itself a link, or too large, is not a backup.
        let link = refused(&[(MANIFEST, Symlink, b"")]);
        assert!(link.contains("does not start with manifest.json"), "{link}");
        assert_eq!(std::fs::read_dir(outside.path()).expect("dir").count(), 0);
    }

    #[test]
    fn only_plain_file_names_are_images() {
        assert!(plain_name("0a1b.png"));
        for bad in ["", ".0a1b.png.tmp", "../x.png", "a/b.png", "x\\y", "..", "a b.png"] {
            assert!(!plain_name(bad), "{bad}");
        }
    }
}
