//! An uploaded archive spooled to a temporary file before it is read.

use crate::error::Code;

/// A request body written to a temporary file as it arrives (removed when dropped).
pub(crate) async fn spool(body: axum::body::Body) -> crate::http::error::AppResult<tempfile_path::Spool> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let spool = tempfile_path::Spool::new()?;
    let mut file = tokio::fs::File::create(spool.path())
        .await
        .map_err(|e| crate::error::Error::internal("spooling the upload", e))?;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            if e.to_string().contains("length limit") {
                crate::http::error::AppError::TooLarge
            } else {
                crate::http::error::AppError::BadRequest { code: Code::UnreadableBody, message: e.to_string() }
            }
        })?;
        file.write_all(&chunk).await.map_err(|e| crate::error::Error::internal("spooling the upload", e))?;
    }
    file.flush().await.map_err(|e| crate::error::Error::internal("spooling the upload", e))?;
    Ok(spool)
}

/// A temporary file path removed on drop.
pub(crate) mod tempfile_path {
    /// The spool file.
    pub struct Spool(std::path::PathBuf);

    impl Spool {
        /// A fresh path in the system's temporary directory.
        pub fn new() -> Result<Self, crate::error::Error> {
            Ok(Self(std::env::temp_dir().join(format!("atelier-upload-{}.json", uuid::Uuid::new_v4()))))
        }

        /// Its path.
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Spool {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
