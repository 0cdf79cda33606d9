//! Model files for the built-in runtime, fetched from a local HTTP server: a download that is cut
//! off resumes where it stopped, a cancelled one keeps what it fetched, a file that is not the
//! pinned one is refused and removed, and the catalog's entries are well-formed.

use countersign_kernel::ai::provider::Cancel;
use countersign_kernel::ai::runtime::catalog::{self, CATALOG};
use countersign_kernel::ai::runtime::download::{fetch, partial_path, Progress, Wanted};
use countersign_kernel::error::Code;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the server behaves.
#[derive(Clone, Copy)]
enum Serve {
    /// Everything asked for (honouring `Range`).
    Whole,
    /// The first request is cut off after this many bytes; later ones are whole.
    CutFirstAt(usize),
    /// In small pieces, slowly.
    Slowly,
}

/// A local HTTP server of `body`; returns its URL and the `Range` header of each request.
fn serve(body: Vec<u8>, how: Serve) -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/model.gguf", listener.local_addr().unwrap());
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                    range = Some(v.trim().trim_end_matches('-').to_string());
                }
            }
            seen.lock().unwrap().push(range.clone());
            let from: usize = range.as_deref().map_or(0, |r| r.parse().unwrap());
            let status = if from > 0 { "206 Partial Content" } else { "200 OK" };
            let rest = &body[from..];
            let head =
                format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", rest.len());
            let _ = stream.write_all(head.as_bytes());
            match how {
                Serve::CutFirstAt(cut) if n == 0 => {
                    let _ = stream.write_all(&rest[..cut]);
                    let _ = stream.flush();
                    drop(stream); // the connection drops mid-body
                }
                Serve::Slowly => {
                    for piece in rest.chunks(16 * 1024) {
                        if stream.write_all(piece).is_err() {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                _ => {
                    let _ = stream.write_all(rest);
                }
            }
        }
    });
    (url, ranges)
}

fn blob(len: usize) -> (Vec<u8>, String) {
    let body: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    let sha = format!("{:x}", Sha256::digest(&body));
    (body, sha)
}

#[tokio::test]
async fn a_download_cut_off_resumes_where_it_stopped_and_is_checked() {
    let (body, sha) = blob(3 << 20);
    let (url, ranges) = serve(body.clone(), Serve::CutFirstAt(1 << 20));
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("models/model.gguf");
    let wanted = Wanted { url: &url, size: body.len() as u64, sha256: &sha };
    let mut seen: Vec<Progress> = Vec::new();

    let cut = fetch(&wanted, &target, &Cancel::default(), &mut |p| seen.push(p)).await.unwrap_err();
    assert_eq!(cut.code, Code::IntegrationTruncated, "{cut:?}");
    assert!(!target.exists(), "an incomplete file never takes the model's name");
    assert_eq!(std::fs::metadata(partial_path(&target)).unwrap().len(), 1 << 20);

    seen.clear();
    fetch(&wanted, &target, &Cancel::default(), &mut |p| seen.push(p)).await.unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), body);
    assert!(!partial_path(&target).exists());
    assert_eq!(
        *ranges.lock().unwrap(),
        vec![None, Some((1usize << 20).to_string())],
        "the second request asks for the rest"
    );
    assert_eq!(seen.first().unwrap().done, 1 << 20, "progress starts from what was kept");
    assert_eq!(*seen.last().unwrap(), Progress { done: body.len() as u64, total: body.len() as u64 });

    // Fetching a file that is already there and right asks the server nothing.
    fetch(&wanted, &target, &Cancel::default(), &mut |_| {}).await.unwrap();
    assert_eq!(ranges.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_file_that_is_not_the_pinned_one_is_refused_and_removed() {
    let (body, _) = blob(1 << 20);
    let (_, other_sha) = blob(1 << 19);
    let (url, _) = serve(body.clone(), Serve::Whole);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model.gguf");
    let wanted = Wanted { url: &url, size: body.len() as u64, sha256: &other_sha };
    let e = fetch(&wanted, &target, &Cancel::default(), &mut |_| {}).await.unwrap_err();
    assert_eq!(e.code, Code::ModelChecksum, "{e:?}");
    assert!(e.message.contains("sha256"), "{}", e.message);
    assert!(!target.exists() && !partial_path(&target).exists(), "the wrong file is removed");

    // A server that sends more than the model's size is refused too.
    let wanted = Wanted { url: &url, size: body.len() as u64 - 10, sha256: &other_sha };
    let e = fetch(&wanted, &target, &Cancel::default(), &mut |_| {}).await.unwrap_err();
    assert_eq!(e.code, Code::ModelChecksum, "{e:?}");
    assert!(!target.exists());
}

#[tokio::test]
async fn a_cancelled_download_keeps_what_it_fetched_for_the_next_try() {
    let (body, sha) = blob(2 << 20);
    let (url, ranges) = serve(body.clone(), Serve::Slowly);
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("model.gguf");
    let wanted = Wanted { url: &url, size: body.len() as u64, sha256: &sha };
    let cancel = Cancel::default();
    let stop = cancel.clone();
    let e = fetch(&wanted, &target, &cancel, &mut |p| {
        if p.done >= 256 * 1024 {
            stop.cancel();
        }
    })
    .await
    .unwrap_err();
    assert_eq!(e.code, Code::Cancelled, "{e:?}");
    let kept = std::fs::metadata(partial_path(&target)).unwrap().len();
    assert!(kept >= 256 * 1024 && kept < body.len() as u64, "kept {kept} bytes");
    fetch(&wanted, &target, &Cancel::default(), &mut |_| {}).await.unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), body);
    assert_eq!(ranges.lock().unwrap()[1], Some(kept.to_string()));
}

#[test]
fn the_catalog_pins_each_model_by_size_and_sha256_and_knows_what_fits() {
    for m in CATALOG {
        assert_eq!(m.sha256.len(), 64, "{}", m.name);
        assert!(m.sha256.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{}", m.name);
        assert!(m.file.ends_with(".gguf") && m.size > 0 && m.memory > m.size, "{}", m.name);
        assert!(m.url.starts_with("https://") && m.url.ends_with(m.file), "{}", m.name);
        assert_eq!(catalog::model(m.name).unwrap(), m);
    }
    let small = catalog::model("qwen2.5-coder-0.5b").unwrap();
    assert!(small.fits(small.memory) && !small.fits(small.memory - 1));
    let e = catalog::model("qwen-latest").unwrap_err();
    assert_eq!(e.code, Code::InvalidValue);
    assert!(e.message.contains("qwen2.5-coder-1.5b"), "{}", e.message);
}

#[test]
fn the_server_program_is_the_configured_one_else_the_environments_else_the_packages_and_a_missing_one_is_a_typed_error(
) {
    use countersign_kernel::ai::runtime::process::find_server;
    let e = find_server(Some(std::path::Path::new("/nonexistent/llama-server"))).unwrap_err();
    assert_eq!(e.code, Code::RuntimeUnavailable);
    assert!(e.message.contains("/nonexistent/llama-server"), "{}", e.message);
    // COUNTERSIGN_LLAMA_SERVER is read by the runtime only (each test runs in its own process
    // under nextest).
    let dir = tempfile::tempdir().unwrap();
    let server = dir.path().join("llama-server");
    std::fs::write(&server, b"#!/bin/sh\n").unwrap();
    std::env::set_var("COUNTERSIGN_LLAMA_SERVER", &server);
    assert_eq!(find_server(None).unwrap(), server);
    std::env::set_var("COUNTERSIGN_LLAMA_SERVER", dir.path().join("gone"));
    let e = find_server(None).unwrap_err();
    assert_eq!(e.code, Code::RuntimeUnavailable, "{e:?}");
    // Without the variable, the one the app's package ships (among its resources).
    std::env::remove_var("COUNTERSIGN_LLAMA_SERVER");
    let shipped = dir.path().join("resources/llama-server/llama-server");
    std::fs::create_dir_all(shipped.parent().unwrap()).unwrap();
    std::fs::write(&shipped, b"#!/bin/sh\n").unwrap();
    countersign_kernel::ai::runtime::process::ship_server_at(shipped.clone());
    assert_eq!(find_server(None).unwrap(), shipped);
}
