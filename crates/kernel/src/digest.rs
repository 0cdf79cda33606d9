//! Content digests: a file's sha256, streamed (a model file is half a gigabyte and more).

use crate::error::Result;
use sha2::{Digest, Sha256};
use std::path::Path;

/// sha256 of a local file, hex, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:x}", h.finalize()))
}
