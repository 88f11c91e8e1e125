//! `file:` URIs to paths and back, as editors write them: percent-encoding of everything but the
//! unreserved characters and `/`, an optional host (`file://host/path`, `file:///path`).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The path a `file:` URI names; `None` for another scheme or a URI whose path is not valid UTF-8.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let text = uri.as_str();
    let rest = text.strip_prefix("file://").or_else(|| text.strip_prefix("FILE://"))?;
    // `file://host/path`: the path starts at the first slash; a query or fragment is not part of it.
    let path = &rest[rest.find('/')?..];
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let decoded = percent_decode(path)?;
    Some(PathBuf::from(decoded))
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let text = path.to_str()?;
    let mut uri = String::with_capacity(text.len() + 8);
    uri.push_str("file://");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&uri).ok()
}

/// `%XX` sequences decoded; `None` when the bytes are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = (bytes[at] == b'%').then(|| text.get(at + 1..at + 3)).flatten();
        match hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()) {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        let path = Path::new("/tmp/a dir/ü/train.py");
        let uri = from_path(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20dir/%C3%BC/train.py");
        assert_eq!(to_path(&uri).unwrap(), path);
    }

    #[test]
    fn a_host_and_other_schemes() {
        let uri = Uri::from_str("file://localhost/srv/x.py").unwrap();
        assert_eq!(to_path(&uri).unwrap(), Path::new("/srv/x.py"));
        assert_eq!(to_path(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
    }
}
