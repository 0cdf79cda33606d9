//! Fetching a model file: with progress, resumable (an interrupted download continues from the
//! bytes it has, with an HTTP range request), cancellable (what was fetched stays for the next
//! try), and checked against its pinned sha256 before it is used (a mismatch is refused and the
//! file removed). The file appears under its final name only once it is whole and checked.

use crate::ai::provider::Cancel;
use crate::error::{Code, Error, Result};
use futures_util::StreamExt;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to fetch and what it must be.
#[derive(Debug, Clone)]
pub struct Wanted<'a> {
    pub url: &'a str,
    pub size: u64,
    pub sha256: &'a str,
}

/// How far a download is: bytes held of the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct Progress {
    #[ts(type = "number")]
    pub done: u64,
    #[ts(type = "number")]
    pub total: u64,
}

/// The file beside `target` that holds a download until it is whole and checked.
pub fn partial_path(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    target.with_file_name(name)
}

/// Fetch `wanted` into `target`. Returns at once if `target` already holds the right file.
pub async fn fetch(
    wanted: &Wanted<'_>,
    target: &Path,
    cancel: &Cancel,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    if target.exists() {
        return check_file(target, wanted);
    }
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let partial = partial_path(target);
    let mut file =
        std::fs::OpenOptions::new().create(true).truncate(false).read(true).write(true).open(&partial)?;
    let mut have = file.seek(SeekFrom::End(0))?;
    if have > wanted.size {
        file.set_len(0)?;
        have = file.seek(SeekFrom::Start(0))?;
    }
    if have < wanted.size {
        have = fetch_rest(wanted, &mut file, have, cancel, on_progress).await?;
    }
    file.sync_all()?;
    drop(file);
    if have != wanted.size {
        return Err(Error::new(
            Code::IntegrationTruncated,
            format!(
                "the download of {} ended at {have} of {} bytes; try again to resume",
                wanted.url, wanted.size
            ),
        ));
    }
    on_progress(Progress { done: have, total: wanted.size });
    if let Err(e) = check_file(&partial, wanted) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, target)?;
    tracing::info!(bytes = wanted.size, "model file fetched and checked");
    Ok(())
}

/// Append what `file` lacks (it holds `have` bytes) from the server; returns the bytes held.
async fn fetch_rest(
    wanted: &Wanted<'_>,
    file: &mut std::fs::File,
    mut have: u64,
    cancel: &Cancel,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<u64> {
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| Error::internal(format!("HTTP client: {e}")))?;
    let mut request = client.get(wanted.url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = tokio::select! {
        r = request.send() => r.map_err(|e| unreachable_source(wanted.url, &e))?,
        _ = cancel.cancelled() => return Err(cancelled()),
    };
    match response.status().as_u16() {
        206 => {}
        // The server sends the whole file (it ignored the range, or there was none).
        200 => {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            have = 0;
        }
        status => {
            let refused = Error::new(
                Code::IntegrationRejected,
                format!("{} answered HTTP {status} to the model download", wanted.url),
            );
            return Err(Error { retriable: status >= 500, ..refused });
        }
    }
    on_progress(Progress { done: have, total: wanted.size });
    let mut body = response.bytes_stream();
    loop {
        let chunk = tokio::select! {
            c = body.next() => c,
            _ = cancel.cancelled() => {
                file.sync_all()?;
                return Err(cancelled());
            }
        };
        let Some(chunk) = chunk else { break };
        let Ok(chunk) = chunk else { break }; // the connection dropped: keep what arrived
        if have + chunk.len() as u64 > wanted.size {
            file.set_len(0)?;
            return Err(checksum(wanted, "the server sent more bytes than the model has"));
        }
        file.write_all(&chunk)?;
        have += chunk.len() as u64;
        on_progress(Progress { done: have, total: wanted.size });
    }
    Ok(have)
}

/// The file at `path` is `wanted`'s: its size and sha256.
pub fn check_file(path: &Path, wanted: &Wanted<'_>) -> Result<()> {
    let size = std::fs::metadata(path)?.len();
    if size != wanted.size {
        return Err(checksum(wanted, &format!("it has {size} bytes, not {}", wanted.size)));
    }
    let digest = crate::digest::file_sha256(path)?;
    if digest != wanted.sha256 {
        return Err(checksum(wanted, &format!("its sha256 is {digest}, not {}", wanted.sha256)));
    }
    Ok(())
}

fn checksum(wanted: &Wanted<'_>, why: &str) -> Error {
    Error::new(
        Code::ModelChecksum,
        format!("the model file from {} is not the pinned one: {why}; it was removed", wanted.url),
    )
}

fn cancelled() -> Error {
    Error::new(Code::Cancelled, "the download was cancelled; what was fetched is kept for the next try")
}

fn unreachable_source(url: &str, e: &reqwest::Error) -> Error {
    let what = if e.is_timeout() { "did not answer in time" } else { "cannot be reached" };
    Error {
        retriable: true,
        ..Error::new(Code::IntegrationUnreachable, format!("the model source {url} {what}"))
    }
}
