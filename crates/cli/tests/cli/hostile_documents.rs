//! Hostile documents through the product's reader (the CLI's `ingest`, which reads in a child
//! process as the app does): each class an attacker would try ends in text or a typed
//! `document.*` error — never a signal — with the whole process tree under 512 MiB.
//!
//! Each file is built here from a recipe (the large ones cannot live in the repository); the
//! small ones found by hand and by the fuzzer are also kept in `tests/hostile/` and read by
//! `the_hostile_corpus_reads_or_is_refused`. Set `COUNTERSIGN_HOSTILE_OUT=DIR` to keep the
//! generated files. Peak memory and time of each case are printed (`--no-capture`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MAX_RSS_KIB: i64 = 512 * 1024;

struct Outcome {
    code: Option<String>,
    chars: usize,
    peak_rss_kib: i64,
    wall: Duration,
    signal: Option<i32>,
}

/// `countersign-cli ingest FILE`, waited for with `wait4` so the peak RSS of the CLI and of
/// the reader child it waited for is known.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which `Child` does not know of
fn ingest(path: &Path) -> Outcome {
    let started = Instant::now();
    let out_path = path.with_extension("out.json");
    let err_path = path.with_extension("err.json");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_countersign-cli"))
        .arg("ingest")
        .arg(path)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let wall = started.elapsed();
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    let code = serde_json::from_str::<serde_json::Value>(&stderr)
        .ok()
        .and_then(|e| e["code"].as_str().map(String::from));
    let chars = serde_json::from_str::<serde_json::Value>(&stdout)
        .ok()
        .and_then(|d| d["text"].as_str().map(|t| t.chars().count()))
        .unwrap_or(0);
    assert!(
        code.is_some() || chars > 0 || signal.is_some(),
        "{}: neither text nor a typed error:\n{}",
        path.display(),
        &stderr[..stderr.len().min(2000)]
    );
    assert!(!stderr.contains("panicked"), "{}: {stderr}", path.display());
    Outcome { code, chars, peak_rss_kib: usage.ru_maxrss, wall, signal }
}

fn check(name: &str, path: &Path, expect: &[&str]) {
    check_reader(name, path, expect, true)
}

/// `in_process`: also require the kernel's in-process reader to give the same answer (false
/// for a class that only the reader process's limits contain).
fn check_reader(name: &str, path: &Path, expect: &[&str], in_process: bool) {
    let o = ingest(path);
    eprintln!(
        "hostile {name}: {} bytes -> {} | peak RSS {} MiB | {:.2} s",
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        o.code.clone().unwrap_or_else(|| format!("text ({} chars)", o.chars)),
        o.peak_rss_kib / 1024,
        o.wall.as_secs_f64()
    );
    assert_eq!(o.signal, None, "{name}: killed by a signal");
    assert!(o.peak_rss_kib <= MAX_RSS_KIB, "{name}: peak RSS {} KiB", o.peak_rss_kib);
    let got = o.code.as_deref().unwrap_or("text");
    assert!(expect.contains(&got), "{name}: {got}, expected one of {expect:?}");
    // The kernel's in-process reader (library callers) gives the same answer: its guards do
    // not depend on the child process's limits.
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if in_process && size <= 20 << 20 {
        let bytes = std::fs::read(path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let in_process = countersign_kernel::ingest::ingest(&file, bytes, &Default::default());
        let code = in_process.err().map_or("text".to_string(), |e| e.code.as_str().to_string());
        assert_eq!(code, got, "{name}: in process {code}, in the reader process {got}");
    }
}

fn dir() -> (Option<tempfile::TempDir>, PathBuf) {
    match std::env::var_os("COUNTERSIGN_HOSTILE_OUT") {
        Some(d) => {
            std::fs::create_dir_all(&d).unwrap();
            (None, PathBuf::from(d))
        }
        None => {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

/// A one-page PDF whose page dictionary carries `extra` and whose content stream is `content`
/// (already encoded, with `filter` naming its encoding), with a correct xref table.
fn pdf(extra: &[u8], content: &[u8], filter: &str) -> Vec<u8> {
    pdf_drawing(extra, content, filter, 1)
}

/// The same, drawing the content stream `times` times (the page's `/Contents` is an array
/// naming the one stream that often).
fn pdf_drawing(extra: &[u8], content: &[u8], filter: &str, times: usize) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = vec![];
    let mut obj = |out: &mut Vec<u8>, body: &[u8]| {
        offsets.push(out.len());
        writeln!(out, "{} 0 obj", offsets.len()).unwrap();
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    };
    obj(&mut out, b"<< /Type /Catalog /Pages 2 0 R >>");
    obj(&mut out, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    let contents = "4 0 R ".repeat(times);
    let mut page = format!(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [{contents}] \
/Resources << /Font << /F1 5 0 R >> /XObject << /X0 6 0 R >> >> /X "
    )
    .into_bytes();
    page.extend_from_slice(extra);
    page.extend_from_slice(b" >>");
    obj(&mut out, &page);
    let mut stream = format!("<< /Length {}{filter} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(content);
    stream.extend_from_slice(b"\nendstream");
    obj(&mut out, &stream);
    obj(&mut out, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    // A form that draws itself; harmless until the page's content draws it (`/X0 Do`).
    obj(
        &mut out,
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 6 0 R >> >> \
/Length 6 >>\nstream\n/X0 Do\nendstream",
    );
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1).unwrap();
    for o in &offsets {
        writeln!(out, "{o:010} 00000 n ").unwrap();
    }
    write!(out, "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", offsets.len() + 1)
        .unwrap();
    out
}

fn deflate(chunk: &[u8], times: usize) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..times {
        z.write_all(chunk).unwrap();
    }
    z.finish().unwrap()
}

fn docx(document_xml_chunks: &[(&[u8], usize)]) -> Vec<u8> {
    let mut zipped = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut zipped);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(9))
            .large_file(true);
        w.start_file("word/document.xml", opts).unwrap();
        for (chunk, times) in document_xml_chunks {
            for _ in 0..*times {
                w.write_all(chunk).unwrap();
            }
        }
        w.finish().unwrap();
    }
    zipped.into_inner()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn deeply_nested_pdfs_are_refused_not_crashed() {
    let (_t, d) = dir();
    let text = b"BT /F1 12 Tf 72 720 Td (Invoice 1) Tj ET";
    for (name, depth, open, close) in [
        ("pdf-nested-arrays-1000.pdf", 1_000, "[", "]"),
        ("pdf-nested-arrays-200000.pdf", 200_000, "[", "]"),
        ("pdf-nested-dicts-5000.pdf", 5_000, "<< /A ", ">>"),
        ("pdf-nested-dicts-100000.pdf", 100_000, "<< /A ", ">>"),
    ] {
        let extra = [open.repeat(depth), close.repeat(depth)].concat();
        let p = write(&d, name, &pdf(extra.as_bytes(), text, ""));
        check(name, &p, &["text", "document.invalid"]);
    }
    // Nesting inside the content stream, which is parsed page by page.
    let deep = ["[".repeat(100_000), "]".repeat(100_000), " TJ".into()].concat();
    let p = write(&d, "pdf-nested-content.pdf", &pdf(b"1", deep.as_bytes(), ""));
    check("pdf-nested-content", &p, &["text", "document.invalid"]);
}

#[test]
fn a_form_that_draws_itself_is_refused() {
    // pdf-extract follows `Do` into a form's content without a depth limit: the kernel refuses
    // a form graph that loops before the text output walks it.
    let (_t, d) = dir();
    let p = write(&d, "pdf-form-draws-itself.pdf", &pdf(b"1", b"/X0 Do", ""));
    check("pdf-form-draws-itself", &p, &["document.invalid"]);
}

#[test]
fn pdf_inflate_bombs_are_refused_within_the_memory_limit() {
    let (_t, d) = dir();
    // ~1 MB that inflates to 1 GiB of content.
    let bomb = deflate(&[b' '; 1 << 20], 1024);
    let p = write(&d, "pdf-inflate-bomb-1g.pdf", &pdf(b"1", &bomb, " /Filter /FlateDecode"));
    check("pdf-inflate-bomb-1g", &p, &["document.too_large", "document.invalid"]);
    // The same 1 MB drawn 20 times: 20 GiB of content from a file of 1 MB.
    let p = write(&d, "pdf-inflate-bomb-20x1g.pdf", &pdf_drawing(b"1", &bomb, " /Filter /FlateDecode", 20));
    check("pdf-inflate-bomb-20x1g", &p, &["document.too_large", "document.invalid"]);
}

#[test]
fn docx_bombs_and_empty_paragraph_floods_stay_small() {
    let (_t, d) = dir();
    let head: &[u8] = b"<w:document><w:body>";
    let tail: &[u8] = b"<w:p><w:r><w:t>Invoice 7</w:t></w:r></w:p></w:body></w:document>";
    // 30 KB and ~100 KB of empty paragraphs (the cases: 3.7 GB and an abort at 5.2 GB).
    for (name, n) in
        [("docx-empty-paragraphs-5m.docx", 5_000_000), ("docx-empty-paragraphs-10m.docx", 10_000_000)]
    {
        let p = write(&d, name, &docx(&[(head, 1), (b"<w:p/>", n), (tail, 1)]));
        check(name, &p, &["text", "document.too_large"]);
    }
    // Paragraphs that each hold one character: the source map is bounded.
    let p = write(
        &d,
        "docx-tiny-paragraphs.docx",
        &docx(&[(head, 1), (b"<w:p><w:t>x</w:t></w:p>", 2_000_000), (tail, 1)]),
    );
    check("docx-tiny-paragraphs", &p, &["document.too_large"]);
    let p = write(&d, "docx-inflate-bomb.docx", &docx(&[(head, 1), (&[b' '; 1 << 20], 1024), (tail, 1)]));
    check("docx-inflate-bomb", &p, &["document.too_large"]);
}

#[test]
fn newline_and_tag_floods_are_linear_and_bounded() {
    let (_t, d) = dir();
    let mut flood = b"Invoice 7\n".to_vec();
    flood.extend(std::iter::repeat_n(b'\n', 2 << 20));
    let p = write(&d, "text-newlines-2m.txt", &flood);
    check("text-newlines-2m", &p, &["text"]);
    let p = write(&d, "text-newlines-20m.txt", &vec![b'\n'; 20 << 20]);
    check("text-newlines-20m", &p, &["document.invalid"]);
    let p = write(&d, "text-short-lines.txt", &b"x\n".repeat(5 << 20));
    check("text-short-lines", &p, &["document.too_large"]);
    for (name, tag) in [
        ("html-script-flood.html", &b"<script></script>"[..]),
        ("html-style-flood.html", b"<STYLE>x</STYLE>"),
        ("html-p-flood.html", b"<p>"),
        ("html-unclosed-script.html", b"<script>"),
    ] {
        let mut html = b"<p>Invoice 7</p>".to_vec();
        while html.len() + tag.len() < 10 << 20 {
            html.extend_from_slice(tag);
        }
        let p = write(&d, name, &html);
        check(name, &p, &["text"]);
    }
}

#[test]
fn an_oversized_file_is_refused_before_it_is_read() {
    let (_t, d) = dir();
    let p = d.join("oversized-sparse-1g.txt");
    std::fs::File::create(&p).unwrap().set_len(1 << 30).unwrap();
    check("oversized-sparse-1g", &p, &["document.too_large"]);
    let _ = std::fs::remove_file(&p);
}

#[test]
fn the_hostile_corpus_reads_or_is_refused() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x != "md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus is in the repository");
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        check(
            &name,
            &p,
            &[
                "text",
                "document.invalid",
                "document.too_large",
                "document.timeout",
                "document.encrypted",
                "document.unsupported",
            ],
        );
    }
}
