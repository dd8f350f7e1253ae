//! Validation of filesystem paths and object-store URLs, without reaching the store.

use url::Url;

/// Object-store schemes and what their URLs must name.
const SCHEMES: &[(&str, &str)] = &[
    ("s3", "bucket"),
    ("s3a", "bucket"),
    ("gs", "bucket"),
    ("gcs", "bucket"),
    ("abfs", "container"),
    ("abfss", "container"),
    ("az", "container"),
    ("azure", "container"),
    ("adl", "container"),
    ("r2", "bucket"),
];

/// Check that `p` is a local path, a `file://` URL, an `https://` object-store URL, or an
/// object-store URL with a bucket (or container).
pub(crate) fn validate(p: &str) -> Result<(), String> {
    if !p.contains("://") {
        return if p.trim().is_empty() {
            Err("the path is empty".into())
        } else {
            Ok(())
        };
    }
    let url = Url::parse(p).map_err(|e| format!("it is not a valid URL ({e})"))?;
    match url.scheme() {
        "file" => {
            if url.path().is_empty() || url.path() == "/" && url.host_str().is_some() {
                return Err("a file:// URL needs a path, such as file:///data/events".into());
            }
            Ok(())
        }
        "http" | "https" => {
            if url.host_str().is_none_or(str::is_empty) {
                Err("the URL has no host".into())
            } else {
                Ok(())
            }
        }
        scheme => match SCHEMES.iter().find(|(s, _)| *s == scheme) {
            Some((_, what)) if url.host_str().is_none_or(str::is_empty) => Err(format!(
                "the URL names no {what}; write it as {scheme}://{what}/prefix"
            )),
            Some(_) => Ok(()),
            None => {
                let known: Vec<&str> = SCHEMES.iter().map(|(s, _)| *s).collect();
                Err(format!(
                    "unsupported scheme '{scheme}'; supported are file, https, {}",
                    known.join(", ")
                ))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert!(validate("/tmp/data").is_ok());
        assert!(validate("relative/dir").is_ok());
        assert!(validate("file:///tmp/data").is_ok());
        assert!(validate("s3://bucket/prefix").is_ok());
        assert!(validate("abfs://container@account.dfs.core.windows.net/x").is_ok());
        assert!(
            validate("s3:///nobucket")
                .unwrap_err()
                .contains("names no bucket")
        );
        assert!(
            validate("ftp://host/x")
                .unwrap_err()
                .contains("unsupported scheme 'ftp'")
        );
        assert!(validate("").unwrap_err().contains("empty"));
    }
}
