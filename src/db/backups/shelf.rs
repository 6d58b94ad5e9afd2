//! Where the service keeps its backups: a folder of this host, or an S3
//! bucket that every host sharing it lists and serves.

use super::{
    backups_in, beyond, find, io, list, prune, stage, take, taken_at, BackupError, Kept, Manifest, Result, VERIFIED,
};
use crate::storage::{Location, Object, Storage};
use std::path::{Path, PathBuf};

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
                let old = beyond(&store.root_objects().await?, keep);
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
            Self::Bucket { store, .. } => Ok(backups_in(&store.root_objects().await?)),
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
