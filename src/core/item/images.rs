//! Uploaded images: content-addressed objects in the service's store (the
//! upload folder, or a bucket), checked to be the image type they claim to
//! be and decoded, within limits, by the `image` crate (a 177-byte PNG
//! declaring 65535×65535 pixels is refused, not sent to workers' browsers);
//! and the images of a lab's own bucket that items name (`s3://bucket/key`),
//! checked the same way when they are imported.

use crate::error::Code;
use crate::error::{Error, Result};
use crate::storage::{Object, Storage};
use sha2::{Digest, Sha256};

/// Where uploaded images are named in items, and served from to admins.
pub const UPLOADED: &str = "/images/";

/// Where images of the lab's bucket are named in items (`s3://bucket/key`).
pub const IN_BUCKET: &str = "s3://";

/// Largest image accepted.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// Largest width or height accepted, in pixels.
pub const MAX_SIDE: u32 = 12_000;
/// Most pixels accepted (about 40 megapixels: a phone's browser decodes it).
pub const MAX_PIXELS: u64 = 40_000_000;

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

/// The supported formats: content type, file extension, leading magic bytes.
const FORMATS: [(&str, &str, &[&[u8]]); 4] = [
    ("image/png", "png", &[b"\x89PNG\r\n\x1a\n"]),
    ("image/jpeg", "jpg", &[b"\xff\xd8\xff"]),
    ("image/gif", "gif", &[b"GIF87a", b"GIF89a"]),
    ("image/webp", "webp", &[b"RIFF"]),
];

/// The file extension for a supported content type whose magic bytes match.
fn sniff(content_type: &str, data: &[u8]) -> Option<&'static str> {
    let (_, ext, magic) = FORMATS.iter().find(|(t, _, _)| *t == content_type)?;
    let ok =
        magic.iter().any(|m| data.starts_with(m)) && (content_type != "image/webp" || data.get(8..12) == Some(b"WEBP"));
    ok.then_some(*ext)
}

/// The content type of a stored image, by its file name's extension.
pub fn content_type_of(file: &str) -> &'static str {
    let ext = file.rsplit_once('.').map_or(String::new(), |(_, e)| e.to_ascii_lowercase());
    let ext = if ext == "jpeg" { "jpg" } else { ext.as_str() };
    FORMATS.iter().find(|(_, e, _)| *e == ext).map_or("application/octet-stream", |(t, _, _)| *t)
}

/// An image that passed [`check`], ready to [`store_checked`].
pub struct CheckedImage<'a> {
    content_type: String,
    ext: &'static str,
    data: &'a [u8],
}

/// Checks an image as [`store`] does, storing nothing (so that several
/// uploaded together are stored only when every one is good).
pub async fn check<'a>(content_type: &str, data: &'a [u8]) -> Result<CheckedImage<'a>> {
    if data.len() > MAX_IMAGE_BYTES {
        return Err(Error::invalid(
            Code::ImageTooLarge,
            format!("images may be at most {} MB", MAX_IMAGE_BYTES / 1024 / 1024),
        ));
    }
    let content_type = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let ext = sniff(&content_type, data).ok_or_else(|| {
        Error::invalid(Code::UnsupportedImage, "send a PNG, JPEG, GIF or WebP image with the matching Content-Type")
    })?;
    let owned = data.to_vec();
    tokio::task::spawn_blocking(move || decodes(&owned))
        .await
        .map_err(|e| Error::internal("storing an image", e))?
        .map_err(|m| Error::invalid(Code::InvalidImage, m))?;
    Ok(CheckedImage { content_type, ext, data })
}

/// Checks and stores an image; storing the same bytes twice is harmless.
pub async fn store(storage: &Storage, content_type: &str, data: &[u8]) -> Result<StoredImage> {
    store_checked(storage, check(content_type, data).await?).await
}

/// Stores an image that passed [`check`] under its content's SHA-256 (one
/// atomic put: a reader never sees half an image).
pub async fn store_checked(storage: &Storage, image: CheckedImage<'_>) -> Result<StoredImage> {
    let CheckedImage { content_type, ext, data } = image;
    let sha256 = hex::encode(Sha256::digest(data));
    let name = format!("{sha256}.{ext}");
    storage.put_if_absent(Object::Upload(&name), bytes::Bytes::copy_from_slice(data)).await?;
    Ok(StoredImage { url: format!("/images/{name}"), sha256, bytes: data.len(), content_type })
}

/// The prefix of an item's reference to an image in the lab's bucket.
pub const BUCKET_PREFIX: &str = "s3://";

/// The key in the store's bucket that an `s3://bucket/key` reference names;
/// refused when it names another bucket (or the store is a folder).
pub fn bucket_key<'a>(storage: &Storage, reference: &'a str) -> Result<&'a str> {
    let rest = reference.strip_prefix(BUCKET_PREFIX).unwrap_or(reference);
    let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
    match storage.bucket_name() {
        Some(ours) if ours == bucket && !key.is_empty() => Ok(key),
        Some(ours) => Err(Error::invalid(
            Code::InvalidImage,
            format!("`{reference}` is not in this service's bucket (s3://{ours}/...)"),
        )),
        None => Err(Error::invalid(
            Code::InvalidImage,
            format!("`{reference}` names a bucket, and this service keeps its images in a folder (start it with --storage s3://bucket/prefix)"),
        )),
    }
}

/// Checks an image an item names in the lab's bucket as an upload is
/// checked (size, type, header and decoding within the pixel limits),
/// reading it whole only when it is within the size limit.
pub async fn check_in_bucket(storage: &Storage, reference: &str) -> Result<()> {
    let key = bucket_key(storage, reference)?;
    let bytes = storage.get_bytes(Object::InBucket(key), MAX_IMAGE_BYTES as u64).await.map_err(|e| match e {
        crate::storage::StorageError::NotFound(_) => {
            Error::invalid(Code::InvalidImage, format!("`{reference}` is not in the bucket"))
        }
        crate::storage::StorageError::TooLarge { .. } => Error::invalid(
            Code::ImageTooLarge,
            format!("`{reference}`: images may be at most {} MB", MAX_IMAGE_BYTES / 1024 / 1024),
        ),
        other => other.into(),
    })?;
    check(content_type_of(key), &bytes).await.map_err(|e| match e {
        Error::Rejected { code, message } => Error::invalid(code, format!("`{reference}`: {message}")),
        other => other,
    })?;
    Ok(())
}

/// Whether the bytes decode as a whole image within [`MAX_SIDE`] and
/// [`MAX_PIXELS`]: the header's dimensions are checked before any pixel is
/// allocated, then the image is decoded under the same limits.
fn decodes(data: &[u8]) -> std::result::Result<(u32, u32), String> {
    let reader = || {
        image::ImageReader::new(std::io::Cursor::new(data))
            .with_guessed_format()
            .map_err(|e| format!("not a readable image: {e}"))
    };
    let (w, h) = reader()?.into_dimensions().map_err(|e| format!("not a readable image: {e}"))?;
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(format!(
            "the image declares {w}x{h} pixels; at most {MAX_SIDE} a side and {} megapixels are accepted",
            MAX_PIXELS / 1_000_000
        ));
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_PIXELS * 4 + 64 * 1024 * 1024);
    let mut decoder = reader()?;
    decoder.limits(limits);
    decoder.decode().map_err(|e| format!("the image does not decode: {e}"))?;
    Ok((w, h))
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

    /// A PNG of `w` x `h` pixels, encoded by the `image` crate.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(w, h).write_to(&mut out, image::ImageFormat::Png).expect("encode");
        out.into_inner()
    }

    #[test]
    fn images_must_decode_within_the_pixel_limits() {
        assert_eq!(decodes(&png(3, 2)), Ok((3, 2)));
        // A 1x1 PNG whose header claims 65535x65535 (the CRC fixed up).
        let mut bomb = png(1, 1);
        bomb[16..20].copy_from_slice(&65535u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&65535u32.to_be_bytes());
        let crc = crc_of(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        let e = decodes(&bomb).expect_err("too many pixels");
        assert!(e.contains("65535x65535"), "{e}");
        let mut truncated = png(40, 40);
        truncated.truncate(truncated.len() / 2);
        assert!(decodes(&truncated).is_err(), "half a file");
        assert!(decodes(b"\x89PNG\r\n\x1a\nnot really").is_err());
    }

    /// PNG's CRC-32 of a chunk's type and data.
    fn crc_of(bytes: &[u8]) -> u32 {
        crc32fast::hash(bytes)
    }
}
