//! Where the service's blobs live: uploaded images (content-addressed),
//! release archives and the images of a lab's own bucket that items name,
//! behind one boundary, Apache Arrow's `object_store`: a folder on this host
//! (`file://DIR`, the default `<data-dir>/uploads`, today's layout) or an
//! S3-compatible bucket (`s3://bucket/prefix`, configured by the standard
//! AWS environment: `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP`).
//!
//! Objects are streamed out, never held whole; every write is one atomic
//! put (no reader sees half an object). A store that cannot be reached is
//! [`StorageError::Unavailable`]: a 503 with `Retry-After` for the request
//! that needed it, while votes and task pages, which never touch the store,
//! go on. This module knows nothing of campaigns or items.

pub mod location;

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
pub use location::Location;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::prefix::PrefixStore;
use object_store::signer::Signer;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// How long a presigned address works (redirect mode).
const PRESIGNED_FOR: Duration = Duration::from_secs(15 * 60);

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// No such object.
    #[error("{0} is not in the store")]
    NotFound(String),
    /// The store could not be reached or answered with an error; a retry
    /// may succeed.
    #[error("the object store is unavailable")]
    Unavailable(#[source] object_store::Error),
    /// The address or a name is not one the store takes.
    #[error("{0}")]
    Invalid(String),
    /// An object is larger than the caller reads whole.
    #[error("{what} is {size} bytes, more than the {limit} allowed")]
    TooLarge {
        /// The object.
        what: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
}

impl StorageError {
    fn of(what: &str, e: object_store::Error) -> Self {
        match e {
            object_store::Error::NotFound { .. } => Self::NotFound(what.to_owned()),
            other => Self::Unavailable(other),
        }
    }
}

/// Result of this module.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// An object the service reads or writes.
#[derive(Debug, Clone, Copy)]
pub enum Object<'a> {
    /// An uploaded image, by its content-addressed name (`<sha256>.<ext>`),
    /// at the store's root (today's layout of the uploads folder).
    Upload(&'a str),
    /// A release archive, by its key under the root (`releases/...`).
    Release(&'a str),
    /// An object a lab's item names as `s3://bucket/key` in the store's own
    /// bucket: its key in the bucket (not under the prefix).
    InBucket(&'a str),
    /// A backup archive or its mark, by its file name, at the root of a
    /// store that keeps backups (`--backup-dir s3://...`).
    Backup(&'a str),
}

impl Object<'_> {
    fn describe(&self) -> String {
        match self {
            Self::Upload(name) => format!("image {name}"),
            Self::Release(key) => format!("release archive {key}"),
            Self::InBucket(key) => format!("object {key}"),
            Self::Backup(name) => format!("backup {name}"),
        }
    }
}

/// A fetched object: its size and its bytes as they stream in.
pub struct Fetched {
    /// Size in bytes.
    pub size: u64,
    /// The content, chunk by chunk.
    pub stream: BoxStream<'static, Result<Bytes>>,
}

/// The service's store (cheap to clone).
#[derive(Clone)]
pub struct Storage(Arc<Inner>);

struct Inner {
    location: Location,
    /// Rooted at the folder, or at the bucket's prefix.
    rooted: Arc<dyn ObjectStore>,
    /// The whole bucket (S3 only): objects items name, and presigning.
    bucket: Option<Arc<AmazonS3>>,
    /// Whether image requests are answered with a presigned redirect.
    redirect: bool,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage").field("location", &self.0.location.url()).field("redirect", &self.0.redirect).finish()
    }
}

impl Storage {
    /// A folder on this host (made when missing).
    pub fn local(dir: impl Into<std::path::PathBuf>) -> Result<Self> {
        Self::open(&Location::File(dir.into()), &[], false)
    }

    /// Opens the store at `location`; an S3 bucket is configured from
    /// `vars` (the process's `AWS_*` environment, or a test's), with short
    /// timeouts and two retries, so that an unreachable store fails a
    /// request in seconds instead of holding it for minutes. `redirect`:
    /// image requests are answered with a presigned address (S3 only).
    pub fn open(location: &Location, vars: &[(String, String)], redirect: bool) -> Result<Self> {
        let (rooted, bucket): (Arc<dyn ObjectStore>, _) = match location {
            Location::File(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| StorageError::Invalid(format!("{}: {e}", dir.display())))?;
                let fs = LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| StorageError::Invalid(format!("{}: {e}", dir.display())))?;
                (Arc::new(fs), None)
            }
            Location::S3 { bucket, prefix } => {
                let retry =
                    RetryConfig { max_retries: 2, retry_timeout: Duration::from_secs(10), ..Default::default() };
                let options = ClientOptions::new()
                    .with_timeout(Duration::from_secs(30))
                    .with_connect_timeout(Duration::from_secs(3));
                let mut builder = AmazonS3Builder::new().with_client_options(options).with_retry(retry);
                for (key, value) in vars.iter().filter(|(k, _)| k.starts_with("AWS_")) {
                    if let Ok(config) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
                        builder = builder.with_config(config, value);
                    }
                }
                let s3 = Arc::new(
                    builder
                        .with_bucket_name(bucket)
                        .build()
                        .map_err(|e| StorageError::Invalid(format!("{}: {e}", location.url())))?,
                );
                let rooted: Arc<dyn ObjectStore> = if prefix.is_empty() {
                    s3.clone()
                } else {
                    Arc::new(PrefixStore::new(s3.clone(), prefix.as_str()))
                };
                (rooted, Some(s3))
            }
        };
        if redirect && bucket.is_none() {
            return Err(StorageError::Invalid("presigned redirects need an S3 store (s3://bucket/prefix)".into()));
        }
        Ok(Self(Arc::new(Inner { location: location.clone(), rooted, bucket, redirect })))
    }

    /// Opens the store an address names, configured from the process's
    /// environment.
    pub fn from_address(address: &str, redirect: bool) -> Result<Self> {
        let location = Location::parse(address).map_err(StorageError::Invalid)?;
        let vars: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("AWS_")).collect();
        Self::open(&location, &vars, redirect)
    }

    /// Where it is.
    pub fn location(&self) -> &Location {
        &self.0.location
    }

    /// Whether release archives go to the store. A folder keeps them in
    /// PostgreSQL, as before the store existed (nothing to migrate); a
    /// bucket takes them, so that every host shares them without the
    /// database holding their bytes.
    pub fn keeps_releases(&self) -> bool {
        self.0.bucket.is_some()
    }

    /// The bucket items may name images in (`s3://<bucket>/key`), if any.
    pub fn bucket_name(&self) -> Option<&str> {
        match &self.0.location {
            Location::S3 { bucket, .. } => Some(bucket),
            Location::File(_) => None,
        }
    }

    /// Whether image requests are answered with a presigned redirect.
    pub fn redirects(&self) -> bool {
        self.0.redirect
    }

    fn target(&self, object: Object<'_>) -> Result<(Arc<dyn ObjectStore>, Path)> {
        let checked = |key: &str| -> Result<Path> {
            if key.is_empty() || key.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
                return Err(StorageError::Invalid(format!("`{key}` is not an object name")));
            }
            Path::parse(key).map_err(|e| StorageError::Invalid(format!("`{key}`: {e}")))
        };
        match object {
            Object::Upload(name) if name.contains('/') => {
                Err(StorageError::Invalid(format!("`{name}` is not an image name")))
            }
            Object::Backup(name) if name.contains('/') => {
                Err(StorageError::Invalid(format!("`{name}` is not a backup's name")))
            }
            Object::Upload(key) | Object::Release(key) | Object::Backup(key) => {
                Ok((self.0.rooted.clone(), checked(key)?))
            }
            Object::InBucket(key) => match &self.0.bucket {
                Some(bucket) => Ok((bucket.clone(), checked(key)?)),
                None => Err(StorageError::NotFound(object.describe())),
            },
        }
    }

    /// Stores an object whole or not at all (one atomic put).
    pub async fn put(&self, object: Object<'_>, bytes: Bytes) -> Result<()> {
        let (store, path) = self.target(object)?;
        store.put(&path, bytes.into()).await.map_err(|e| StorageError::of(&object.describe(), e))?;
        Ok(())
    }

    /// Stores a content-addressed object unless it is there already (the
    /// same name is the same content).
    pub async fn put_if_absent(&self, object: Object<'_>, bytes: Bytes) -> Result<()> {
        match self.size(object).await {
            Ok(_) => Ok(()),
            Err(StorageError::NotFound(_)) => self.put(object, bytes).await,
            Err(e) => Err(e),
        }
    }

    /// Stores a file of this host as an object, streamed in parts (a
    /// multipart upload on S3), never read whole: the object appears only
    /// when the last part is in (no reader sees half of it), and a failed
    /// upload is aborted.
    pub async fn put_file(&self, object: Object<'_>, file: &std::path::Path) -> Result<()> {
        use tokio::io::AsyncWriteExt;
        let (store, path) = self.target(object)?;
        let mut source =
            tokio::fs::File::open(file).await.map_err(|e| StorageError::Invalid(format!("{}: {e}", file.display())))?;
        let mut upload = object_store::buffered::BufWriter::new(store, path);
        let copied = async {
            tokio::io::copy(&mut source, &mut upload).await?;
            upload.shutdown().await
        }
        .await;
        if let Err(e) = copied {
            let _ = upload.abort().await;
            // The cause (the store's, carried in the I/O error) is kept.
            return Err(StorageError::Unavailable(object_store::Error::Generic {
                store: "upload",
                source: Box::new(e),
            }));
        }
        Ok(())
    }

    /// The objects at the store's root (not under a folder), by name with
    /// their sizes: the backups a backup store keeps.
    pub async fn root_objects(&self) -> Result<Vec<(String, u64)>> {
        let listed =
            self.0.rooted.list_with_delimiter(None).await.map_err(|e| StorageError::of("the store's listing", e))?;
        Ok(listed.objects.into_iter().map(|m| (m.location.to_string(), m.size)).collect())
    }

    /// An object's size.
    pub async fn size(&self, object: Object<'_>) -> Result<u64> {
        let (store, path) = self.target(object)?;
        Ok(store.head(&path).await.map_err(|e| StorageError::of(&object.describe(), e))?.size)
    }

    /// An object as it streams in.
    pub async fn get(&self, object: Object<'_>) -> Result<Fetched> {
        let (store, path) = self.target(object)?;
        let what = object.describe();
        let got = store.get(&path).await.map_err(|e| StorageError::of(&what, e))?;
        let size = got.meta.size;
        let stream = got.into_stream().map(move |chunk| chunk.map_err(|e| StorageError::of(&what, e))).boxed();
        Ok(Fetched { size, stream })
    }

    /// An object read whole, refused unread when larger than `limit`.
    pub async fn get_bytes(&self, object: Object<'_>, limit: u64) -> Result<Bytes> {
        let size = self.size(object).await?;
        if size > limit {
            return Err(StorageError::TooLarge { what: object.describe(), size, limit });
        }
        let (store, path) = self.target(object)?;
        let got = store.get(&path).await.map_err(|e| StorageError::of(&object.describe(), e))?;
        got.bytes().await.map_err(|e| StorageError::of(&object.describe(), e))
    }

    /// Deletes an object (a missing one is fine).
    pub async fn delete(&self, object: Object<'_>) -> Result<()> {
        let (store, path) = self.target(object)?;
        match store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StorageError::of(&object.describe(), e)),
        }
    }

    /// A presigned GET address for an image (redirect mode on an S3 store
    /// only; `None` otherwise).
    pub async fn presigned(&self, object: Object<'_>) -> Result<Option<String>> {
        let Some(bucket) = self.0.bucket.as_ref().filter(|_| self.0.redirect) else { return Ok(None) };
        let (_, path) = self.target(object)?;
        let full = match (&self.0.location, object) {
            (Location::S3 { prefix, .. }, Object::Upload(_) | Object::Release(_)) if !prefix.is_empty() => {
                Path::parse(format!("{prefix}/{path}")).map_err(|e| StorageError::Invalid(e.to_string()))?
            }
            _ => path,
        };
        let url = bucket
            .signed_url(object_store::signer::Method::GET, &full, PRESIGNED_FOR)
            .await
            .map_err(|e| StorageError::of(&object.describe(), e))?;
        Ok(Some(url.to_string()))
    }

    /// The names of the uploaded images at the store's root, as they are
    /// listed (for `storage check` and `storage migrate`).
    pub fn uploads(&self) -> BoxStream<'static, Result<(String, u64)>> {
        self.0
            .rooted
            .list(None)
            .filter_map(|meta| async move {
                match meta {
                    Ok(m) => {
                        let name = m.location.to_string();
                        is_upload_name(&name).then_some(Ok((name, m.size)))
                    }
                    Err(e) => Some(Err(StorageError::of("the store's listing", e))),
                }
            })
            .boxed()
    }
}

/// Whether a name is an uploaded image's: 64 hex digits (its SHA-256) and
/// an image extension; what the upload folder's other files (a write in
/// progress, a release) never are.
pub fn is_upload_name(name: &str) -> bool {
    let Some((hash, ext)) = name.split_once('.') else { return false };
    hash.len() == 64
        && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && matches!(ext, "png" | "jpg" | "gif" | "webp")
}

/// The key of a release archive: its campaign, number and content hash.
pub fn release_key(campaign: uuid::Uuid, number: i32, sha256: &str) -> String {
    format!("releases/{campaign}/v{number}-{}.tar.gz", &sha256[..sha256.len().min(16)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_folder_store_keeps_todays_layout_and_refuses_names_that_leave_it() {
        let dir = tempfile::tempdir().expect("dir");
        let storage = Storage::local(dir.path()).expect("store");
        let name = format!("{}.png", "ab".repeat(32));
        storage.put_if_absent(Object::Upload(&name), Bytes::from_static(b"png")).await.expect("put");
        assert_eq!(std::fs::read(dir.path().join(&name)).expect("file"), b"png", "the upload folder's layout");
        storage.put_if_absent(Object::Upload(&name), Bytes::from_static(b"other")).await.expect("again");
        assert_eq!(storage.get_bytes(Object::Upload(&name), 10).await.expect("read"), Bytes::from_static(b"png"));
        assert!(matches!(
            storage.get_bytes(Object::Upload(&name), 2).await,
            Err(StorageError::TooLarge { size: 3, limit: 2, .. })
        ));
        for bad in ["../x.png", "a/../../b.png", "", "a//b"] {
            assert!(storage.put(Object::Release(bad), Bytes::new()).await.is_err(), "{bad}");
        }
        assert!(storage.put(Object::Upload("sub/x.png"), Bytes::new()).await.is_err());
        assert!(matches!(storage.size(Object::Upload("missing.png")).await, Err(StorageError::NotFound(_))));
        let listed: Vec<String> = storage.uploads().map(|r| r.expect("listed").0).collect::<Vec<_>>().await;
        assert_eq!(listed, [name]);
        assert!(!storage.keeps_releases() && storage.presigned(Object::Upload("x.png")).await.expect("none").is_none());
    }
}
