//! Uploaded images: content-addressed files under the upload directory,
//! checked to be the image type they claim to be.

use super::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::Path;

/// Largest image accepted.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// A stored image.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct StoredImage {
    /// Where the image is served; use it in item payloads.
    pub url: String,
    /// SHA-256 of the content (the file name).
    pub sha256: String,
    /// Size in bytes.
    pub bytes: usize,
    /// The checked content type.
    pub content_type: String,
}

/// The file extension for a supported content type whose magic bytes match.
fn sniff(content_type: &str, data: &[u8]) -> Option<&'static str> {
    let (ext, magic): (&str, &[&[u8]]) = match content_type {
        "image/png" => ("png", &[b"\x89PNG\r\n\x1a\n"]),
        "image/jpeg" => ("jpg", &[b"\xff\xd8\xff"]),
        "image/gif" => ("gif", &[b"GIF87a", b"GIF89a"]),
        "image/webp" => ("webp", &[b"RIFF"]),
        _ => return None,
    };
    let ok =
        magic.iter().any(|m| data.starts_with(m)) && (content_type != "image/webp" || data.get(8..12) == Some(b"WEBP"));
    ok.then_some(ext)
}

/// Checks and stores an image; storing the same bytes twice is harmless.
pub async fn store(dir: &Path, content_type: &str, data: &[u8]) -> Result<StoredImage> {
    if data.len() > MAX_IMAGE_BYTES {
        return Err(Error::invalid(
            "image_too_large",
            format!("images may be at most {} MB", MAX_IMAGE_BYTES / 1024 / 1024),
        ));
    }
    let content_type = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let ext = sniff(&content_type, data).ok_or_else(|| {
        Error::invalid("unsupported_image", "send a PNG, JPEG, GIF or WebP image with the matching Content-Type")
    })?;
    let sha256 = hex::encode(Sha256::digest(data));
    let name = format!("{sha256}.{ext}");
    tokio::fs::create_dir_all(dir).await.map_err(|e| Error::Internal(format!("creating {}: {e}", dir.display())))?;
    let path = dir.join(&name);
    if tokio::fs::metadata(&path).await.is_err() {
        // Write then rename, so a reader never sees half a file.
        let tmp = dir.join(format!(".{name}.tmp"));
        tokio::fs::write(&tmp, data).await.map_err(|e| Error::Internal(format!("writing image: {e}")))?;
        tokio::fs::rename(&tmp, &path).await.map_err(|e| Error::Internal(format!("storing image: {e}")))?;
    }
    Ok(StoredImage { url: format!("/images/{name}"), sha256, bytes: data.len(), content_type })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_must_match_the_declared_type() {
        assert_eq!(sniff("image/png", b"\x89PNG\r\n\x1a\nrest"), Some("png"));
        assert_eq!(sniff("image/png", b"<svg>"), None);
        assert_eq!(sniff("image/svg+xml", b"<svg>"), None, "SVG could carry scripts");
        assert_eq!(sniff("image/webp", b"RIFF\0\0\0\0WEBPVP8 "), Some("webp"));
        assert_eq!(sniff("image/webp", b"RIFF\0\0\0\0WAVE"), None);
    }
}
