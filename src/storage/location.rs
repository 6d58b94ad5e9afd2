//! Where a store is: a folder (`file://DIR`) or an S3 bucket with an
//! optional prefix (`s3://bucket/prefix`), parsed once at the boundary.

use std::path::PathBuf;

/// A parsed storage address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A folder on this host (today's layout: `<data-dir>/uploads`).
    File(PathBuf),
    /// An S3 (or S3-compatible) bucket; objects under `prefix/` when given.
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without slashes at its ends (may be empty).
        prefix: String,
    },
}

impl Location {
    /// Parses `file://DIR`, a plain path, or `s3://bucket[/prefix]`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            let valid_bucket = (3..=63).contains(&bucket.len())
                && bucket.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
            if !valid_bucket {
                return Err(format!(
                    "`{text}`: `{bucket}` is not an S3 bucket name (3 to 63 lower-case letters, digits, `-`, `.`)"
                ));
            }
            let prefix = prefix.trim_matches('/');
            if prefix.split('/').any(|s| s == ".." || s == ".") {
                return Err(format!("`{text}`: the prefix may not hold `.` or `..` segments"));
            }
            return Ok(Self::S3 { bucket: bucket.to_owned(), prefix: prefix.to_owned() });
        }
        if let Some(scheme) = text.split_once("://").map(|(s, _)| s).filter(|s| *s != "file") {
            return Err(format!(
                "`{text}`: `{scheme}://` is not a store this build reads (file://DIR or s3://bucket/prefix)"
            ));
        }
        let path = text.strip_prefix("file://").unwrap_or(text);
        if path.is_empty() {
            return Err("the storage address is empty (file://DIR or s3://bucket/prefix)".into());
        }
        Ok(Self::File(PathBuf::from(path)))
    }

    /// The address as written back (for logs and `storage check`).
    pub fn url(&self) -> String {
        match self {
            Self::File(dir) => format!("file://{}", dir.display()),
            Self::S3 { bucket, prefix } if prefix.is_empty() => format!("s3://{bucket}"),
            Self::S3 { bucket, prefix } => format!("s3://{bucket}/{prefix}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_buckets_are_told_apart_and_bad_addresses_refused() {
        assert_eq!(Location::parse("file:///var/atelier/uploads"), Ok(Location::File("/var/atelier/uploads".into())));
        assert_eq!(Location::parse("data/uploads"), Ok(Location::File("data/uploads".into())));
        assert_eq!(
            Location::parse("s3://lab-images/atelier/"),
            Ok(Location::S3 { bucket: "lab-images".into(), prefix: "atelier".into() })
        );
        assert_eq!(Location::parse("s3://lab-images").map(|l| l.url()), Ok("s3://lab-images".into()));
        for bad in ["s3://UPPER/x", "s3://a", "s3://ok-bucket/../x", "gs://bucket", ""] {
            assert!(Location::parse(bad).is_err(), "{bad}");
        }
    }
}
