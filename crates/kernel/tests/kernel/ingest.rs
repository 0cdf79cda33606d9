//! Document ingestion: every format of the demo and eval documents, the source map, and
//! malformed, encrypted, oversized and unknown files as typed errors — never a crash or a hang.

use countersign_kernel::ingest::{html_paragraphs, ingest, DocumentKind, Limits, Location};
use countersign_kernel::Code;
use std::path::PathBuf;
use std::time::Duration;

fn documents() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![];
    for dir in ["fixtures/demo/documents", "../shared/eval/extract-dev"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in rd.flatten() {
            if e.path().extension().is_some_and(|x| x != "jsonl") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    files
}

fn read(path: &PathBuf) -> countersign_kernel::Result<countersign_kernel::ingest::Document> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    ingest(&name, std::fs::read(path).unwrap(), &Limits::default())
}

#[test]
fn every_demo_document_reads_with_its_source_map() {
    let files = documents();
    assert!(files.len() >= 6, "the demo documents are in the repository");
    for path in &files {
        let doc = read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let number = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (start, _) = doc
            .find(&number)
            .unwrap_or_else(|| panic!("{number} not in the text of {}:\n{}", path.display(), doc.text));
        assert!(doc.text.contains("Total due"), "{}:\n{}", path.display(), doc.text);
        let at = doc.locate(start).unwrap_or_else(|| panic!("no source for {number} in {}", path.display()));
        match (doc.kind, at) {
            (DocumentKind::Pdf, Location::Page { n: 1, .. }) => {}
            (DocumentKind::Docx | DocumentKind::Html, Location::Paragraph { n: 1 }) => {}
            (DocumentKind::Text | DocumentKind::Markdown, Location::Line { n: 1 }) => {}
            (DocumentKind::Email, Location::Header { name }) if name == "subject" => {}
            (kind, loc) => panic!("{}: {kind:?} located at {loc:?}", path.display()),
        }
        // Segments are in order, on char boundaries, and cover what they say.
        for s in &doc.segments {
            assert!(
                s.start <= s.end && doc.text.is_char_boundary(s.start) && doc.text.is_char_boundary(s.end)
            );
        }
        assert!(doc.sha256.starts_with("sha256:"));
    }
}

#[test]
fn multipart_mail_uses_the_text_part_and_lists_attachments_it_cannot_read() {
    let mail = "From: Billing <billing@example.com>\r\nTo: ap@example.com\r\nSubject: Invoice 7\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n\
--b2\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nTotal due: 1.200,00 \u{20ac}\r\n--b2\r\nContent-Type: text/html\r\n\r\n\
<p>Total due: <b>HTML</b></p>\r\n--b2--\r\n--b1\r\nContent-Type: application/pdf; name=\"inv.pdf\"\r\n\
Content-Disposition: attachment; filename=\"inv.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n--b1--\r\n";
    let doc = ingest("m.eml", mail.as_bytes().to_vec(), &Limits::default()).unwrap();
    assert!(doc.text.contains("Total due: 1.200,00 €"), "{}", doc.text);
    assert!(!doc.text.contains("HTML"), "the HTML alternative is not read twice");
    // A damaged PDF attachment is listed with why it was not read; the message still reads.
    assert_eq!(doc.attachments.len(), 1);
    assert!(doc.attachments[0].starts_with("inv.pdf (not read: "), "{:?}", doc.attachments);
    assert!(
        doc.text.contains("Subject: Invoice 7") && doc.text.contains("From: Billing <billing@example.com>")
    );
    let (i, _) = doc.find("Total due").unwrap();
    assert_eq!(doc.locate(i), Some(&Location::Line { n: 1 }));
}

#[test]
fn html_drops_scripts_and_decodes_entities() {
    let p = html_paragraphs(
        "<html><head><title>x</title><style>p{}</style></head><body><script>alert('<p>no</p>')</script>\
         <p>Fish &amp; Chips &#8364;5&nbsp;only</p><!-- <p>hidden</p> --><table><tr><td>Qty</td><td>2</td></tr></table></body></html>",
    );
    assert_eq!(p, ["Fish & Chips €5 only", "", "Qty | 2"]);
}

#[test]
fn an_html_row_stays_one_line_and_a_merged_cell_keeps_the_grid() {
    let p = html_paragraphs(
        "<table><tr><th>Description</th><th>Qty</th><th>Unit price</th><th>Amount</th></tr>\
         <tr><td>Consulting hour<br><small>SVC-HR</small></td><td>10</td><td><p>£150.00</p></td><td>£1,500.00</td></tr>\
         <tr><td colspan=\"3\">Total</td><td>£1,500.00</td></tr></table><p>Thanks</p>",
    );
    let rows: Vec<&String> = p.iter().filter(|l| !l.is_empty()).collect();
    assert_eq!(rows[1], "Consulting hour SVC-HR | 10 | £150.00 | £1,500.00");
    assert_eq!(rows[2].split('|').count(), 4, "{rows:?}");
    assert_eq!(rows[3], "Thanks");
    let reading = countersign_kernel::ai::extract::candidates::read(&p.join("\n"), &[]);
    assert_eq!(reading.tables.len(), 1);
    assert_eq!(reading.tables[0].rows.len(), 1, "the colspan total is no line");
}

#[test]
fn bad_files_are_typed_errors_that_lose_nothing() {
    let limits = Limits::default();
    let code = |name: &str, bytes: &[u8]| ingest(name, bytes.to_vec(), &limits).unwrap_err().code;
    assert_eq!(code("a.xlsx", b"PK\x03\x04"), Code::DocumentUnsupported);
    assert_eq!(code("a.pdf", b"not a pdf at all"), Code::DocumentInvalid);
    assert_eq!(code("a.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog"), Code::DocumentInvalid);
    assert_eq!(code("a.pdf", b"%PDF-1.4\ntrailer << /Encrypt 5 0 R >>"), Code::DocumentEncrypted);
    assert_eq!(code("a.docx", b"PK\x03\x04garbage"), Code::DocumentInvalid);
    assert_eq!(code("a.docx", &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]), Code::DocumentEncrypted);
    assert_eq!(code("a.eml", b""), Code::DocumentInvalid);
    // A zip that is not a Word document.
    let mut zipped = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut zipped);
        w.start_file("hello.txt", zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut w, b"hi").unwrap();
        w.finish().unwrap();
    }
    assert_eq!(code("a.docx", zipped.get_ref()), Code::DocumentInvalid);
    let small = Limits { max_bytes: 10, ..Limits::default() };
    assert_eq!(ingest("a.txt", vec![b'x'; 11], &small).unwrap_err().code, Code::DocumentTooLarge);
    let few = Limits { max_chars: 3, ..Limits::default() };
    assert_eq!(ingest("a.txt", b"abcd".to_vec(), &few).unwrap_err().code, Code::DocumentTooLarge);
    // Not UTF-8: read as Windows-1252 rather than refused.
    assert_eq!(ingest("a.txt", b"Caf\xe9 \x80 5".to_vec(), &limits).unwrap().text, "Café € 5");
}

#[test]
fn a_zip_bomb_is_refused_by_its_inflated_size() {
    let mut zipped = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut zipped);
        let opts =
            zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file("word/document.xml", opts).unwrap();
        std::io::Write::write_all(&mut w, &vec![b' '; 4 << 20]).unwrap();
        w.finish().unwrap();
    }
    assert!(zipped.get_ref().len() < 64 << 10, "it compresses well");
    let limits = Limits { max_inflated: 1 << 20, ..Limits::default() };
    assert_eq!(ingest("b.docx", zipped.into_inner(), &limits).unwrap_err().code, Code::DocumentTooLarge);
}

#[test]
fn damaged_copies_of_real_documents_never_crash_or_hang() {
    // Flip, cut and splice bytes of every demo document; each read ends in a document or a typed
    // error within the deadline.
    let limits = Limits { deadline: Duration::from_secs(10), ..Limits::default() };
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut outcomes = (0, 0);
    for path in documents() {
        let original = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for trial in 0..12 {
            let mut bytes = original.clone();
            match trial % 3 {
                0 => {
                    for _ in 0..8 {
                        let i = (next() as usize) % bytes.len();
                        bytes[i] = next() as u8;
                    }
                }
                1 => bytes.truncate((next() as usize) % bytes.len()),
                _ => {
                    let i = (next() as usize) % bytes.len();
                    let j = (next() as usize) % bytes.len();
                    let chunk: Vec<u8> = bytes[i.min(j)..i.max(j)].to_vec();
                    bytes.splice(i..i, chunk);
                }
            }
            match ingest(&name, bytes, &limits) {
                Ok(_) => outcomes.0 += 1,
                Err(e) => {
                    assert!(
                        matches!(
                            e.code,
                            Code::DocumentInvalid
                                | Code::DocumentEncrypted
                                | Code::DocumentTooLarge
                                | Code::DocumentTimeout
                        ),
                        "{name}: {e}"
                    );
                    outcomes.1 += 1;
                }
            }
        }
    }
    assert!(outcomes.0 + outcomes.1 > 0);
    eprintln!("damaged documents: {} read, {} refused with a typed error", outcomes.0, outcomes.1);
}

#[test]
fn blank_line_floods_keep_one_break_and_no_segment_past_the_text() {
    let doc =
        ingest("a.txt", b"Invoice 7\r\n\r\n\n\n   \nTotal 5\n\n\n\n".to_vec(), &Limits::default()).unwrap();
    assert_eq!(doc.text, "Invoice 7\n\nTotal 5");
    assert_eq!(doc.segments.len(), 2, "blank lines get no segment");
    assert_eq!(doc.locate(doc.find("Total").unwrap().0), Some(&Location::Line { n: 6 }));
    for s in &doc.segments {
        assert!(s.end <= doc.text.len(), "{s:?} is past the text");
    }
    let flood = [b"x\n".as_slice(), &[b'\n'; 1 << 20]].concat();
    let doc = ingest("a.txt", flood, &Limits::default()).unwrap();
    assert_eq!((doc.text.as_str(), doc.segments.len()), ("x", 1));
    let empty = ingest("a.txt", vec![b'\n'; 1 << 20], &Limits::default()).unwrap_err();
    assert_eq!(empty.code, Code::DocumentInvalid, "{empty}");
    assert!(empty.message.contains("no text"), "{empty}");
}

#[test]
fn the_source_map_and_the_text_are_bounded_while_they_are_built() {
    let few = Limits { max_segments: 10, ..Limits::default() };
    let e = ingest("a.txt", "x\n".repeat(11).into_bytes(), &few).unwrap_err();
    assert_eq!(e.code, Code::DocumentTooLarge);
    assert!(e.message.contains("10 lines or paragraphs"), "{e}");
    assert!(ingest("a.txt", "x\n".repeat(10).into_bytes(), &few).is_ok());
    let paragraphs = "<p>x</p>".repeat(11);
    assert_eq!(ingest("a.html", paragraphs.into_bytes(), &few).unwrap_err().code, Code::DocumentTooLarge);
}

#[test]
fn a_reader_past_its_deadline_stops_with_a_typed_timeout() {
    let none = Limits { deadline: Duration::ZERO, ..Limits::default() };
    let e = ingest("a.txt", "x\n".repeat(100_000).into_bytes(), &none).unwrap_err();
    assert_eq!(e.code, Code::DocumentTimeout, "{e}");
    let e = ingest("a.html", "<span>".repeat(100_000).into_bytes(), &none).unwrap_err();
    assert_eq!(e.code, Code::DocumentTimeout, "{e}");
}

#[test]
fn an_oversized_file_is_refused_before_a_byte_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    std::fs::File::create(&path).unwrap().set_len(1 << 30).unwrap();
    let e = countersign_kernel::ingest::read_file(&path, &Limits::default()).unwrap_err();
    assert_eq!(e.code, Code::DocumentTooLarge, "{e}");
    std::fs::write(&path, b"Invoice 7").unwrap();
    let doc = countersign_kernel::ingest::read_file(&path, &Limits::default()).unwrap();
    assert_eq!((doc.name.as_str(), doc.text.as_str()), ("big.txt", "Invoice 7"));
}

#[test]
fn a_pdf_nested_past_the_limit_is_refused_before_the_parser_recurses() {
    // The page dictionary of the demo PDF, given an entry nested 5,000 deep; read on this
    // thread's reader (no child process), so without the guard the parser would overflow.
    let original = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/demo/documents/INV-2026-51047.pdf"),
    )
    .unwrap();
    let at = original.windows(12).position(|w| w == b"/Type /Page\n").unwrap();
    for (open, close) in [("[", "]"), ("<< /A ", ">>")] {
        let deep = [open.repeat(5000), close.repeat(5000)].concat();
        let bytes = [&original[..at], b"/X ", deep.as_bytes(), b" ", &original[at..]].concat();
        let e = ingest("deep.pdf", bytes, &Limits::default()).unwrap_err();
        assert_eq!(e.code, Code::DocumentInvalid, "{e}");
        assert!(e.message.contains("nest"), "{e}");
    }
}

#[test]
fn a_pdf_whose_page_parents_loop_is_refused_at_once() {
    // Found by the fuzzer: 1.5 KB whose page's /Parent chain loops; the text output looked
    // inherited attributes up that chain until the deadline, on this thread's reader forever.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/hostile/pdf-parent-loop.pdf");
    let limits = Limits { deadline: Duration::from_secs(3), ..Limits::default() };
    let e = ingest("loop.pdf", std::fs::read(path).unwrap(), &limits).unwrap_err();
    assert_eq!(e.code, Code::DocumentInvalid, "{e}");
    assert!(e.message.contains("loop"), "{e}");
}

/// A Word document whose body is `body` (WordprocessingML inside `w:body`).
fn word_document(body: &str) -> Vec<u8> {
    let mut zipped = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut zipped);
        w.start_file("word/document.xml", zip::write::SimpleFileOptions::default()).unwrap();
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
        );
        std::io::Write::write_all(&mut w, xml.as_bytes()).unwrap();
        w.finish().unwrap();
    }
    zipped.into_inner()
}

#[test]
fn a_word_table_is_read_row_by_row_with_merged_cells_kept_in_their_columns() {
    let p = |t: &str| format!("<w:p><w:r><w:t>{t}</w:t></w:r></w:p>");
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", p(t));
    let row = |cells: &[&str]| format!("<w:tr>{}</w:tr>", cells.iter().map(|c| cell(c)).collect::<String>());
    // A cell of two paragraphs, and a total row whose label spans three columns.
    let two = format!("<w:tc>{}{}</w:tc>", p("Consulting"), p("hour"));
    let total = format!(
        "<w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"3\"/></w:tcPr>{}</w:tc>{}</w:tr>",
        p("Total"),
        cell("1,450.00")
    );
    let body = format!(
        "{}<w:tbl>{}<w:tr>{two}{}{}{}</w:tr>{}{total}</w:tbl>{}",
        p("Invoice INV-1 from Acme"),
        row(&["Description", "Qty", "Unit price", "Amount"]),
        cell("10"),
        cell("125.00"),
        cell("1,250.00"),
        row(&["Training | day", "1", "200.00", "200.00"]),
        p("Thank you"),
    );
    let doc = ingest("lines.docx", word_document(&body), &Limits::default()).unwrap();
    let lines: Vec<&str> = doc.text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines,
        [
            "Invoice INV-1 from Acme",
            "| Description | Qty | Unit price | Amount |",
            "| Consulting hour | 10 | 125.00 | 1,250.00 |",
            "| Training / day | 1 | 200.00 | 200.00 |",
            "| Total |  |  | 1,450.00 |",
            "Thank you",
        ]
    );
    // The table reader sees one table of the two lines; the merged total row ends it, its
    // amount a value outside the table (the total's candidate).
    let reading = countersign_kernel::ai::extract::candidates::read(&doc.text, &[]);
    assert_eq!(reading.tables.len(), 1);
    assert_eq!(reading.tables[0].header, ["Description", "Qty", "Unit price", "Amount"]);
    assert_eq!(reading.tables[0].rows.len(), 2);
    assert!(reading.candidates.iter().any(|c| c.value == "1450.00" && c.cell.is_none()));
}

#[test]
fn a_stub_text_part_gives_way_to_the_html_and_an_attached_invoice_is_read() {
    use base64::Engine;
    let p = |t: &str| format!("<w:p><w:r><w:t>{t}</w:t></w:r></w:p>");
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", p(t));
    let row = |cs: &[&str]| format!("<w:tr>{}</w:tr>", cs.iter().map(|c| cell(c)).collect::<String>());
    let docx = word_document(&format!(
        "{}<w:tbl>{}{}</w:tbl>",
        p("INVOICE INV-2026-9001"),
        row(&["Description", "Qty", "Unit price", "Amount"]),
        row(&["Training day", "2", "900.00", "1,800.00"])
    ));
    let attached = base64::engine::general_purpose::STANDARD.encode(docx);
    let mail = format!(
        "From: a@example.com\r\nSubject: Fwd: invoice\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n\
--b2\r\nContent-Type: text/plain\r\n\r\nSee the HTML version.\r\n--b2\r\nContent-Type: text/html\r\n\r\n\
<p>Your order:</p><table><tr><td>Item</td><td>Qty</td><td>Total</td></tr><tr><td>Cable</td><td>4</td><td>40.00</td></tr></table>\r\n--b2--\r\n\
--b1\r\nContent-Type: application/vnd.openxmlformats-officedocument.wordprocessingml.document; name=\"inv.docx\"\r\n\
Content-Disposition: attachment; filename=\"inv.docx\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{attached}\r\n--b1--\r\n"
    );
    let doc = ingest("fwd.eml", mail.into_bytes(), &Limits::default()).unwrap();
    assert!(!doc.text.contains("See the HTML version"), "{}", doc.text);
    assert!(doc.text.contains("Item | Qty | Total\n"), "{}", doc.text);
    assert!(doc.text.contains("Attachment: inv.docx"), "{}", doc.text);
    assert!(doc.text.contains("| Training day | 2 | 900.00 | 1,800.00 |"), "{}", doc.text);
    assert!(doc.attachments.is_empty(), "{:?}", doc.attachments);
    let (i, _) = doc.find("Attachment: inv.docx").unwrap();
    assert_eq!(doc.locate(i), Some(&Location::Header { name: "attachment".into() }));
}

/// A PDF of `pages`, each a content stream drawing with Helvetica (/F1).
fn pdf_document(pages: &[&str]) -> Vec<u8> {
    pdf_with_image(pages, None)
}

/// A PDF of `pages`, each a content stream drawing with Helvetica (/F1) and, if given, a grey
/// image (/Im1: width, height, pixels).
fn pdf_with_image(pages: &[&str], image: Option<(usize, usize, &[u8])>) -> Vec<u8> {
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        vec![],
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
    ];
    let mut xobjects = String::new();
    if let Some((w, h, px)) = image {
        let mut o = format!(
            "<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length {} >>\nstream\n",
            px.len()
        )
        .into_bytes();
        o.extend(px);
        o.extend(b"\nendstream");
        objects.push(o);
        xobjects = format!(" /XObject << /Im1 {} 0 R >>", objects.len());
    }
    let mut kids = vec![];
    for content in pages {
        objects.push(format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()).into_bytes());
        let stream = objects.len();
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 842 842] /Resources << /Font << /F1 3 0 R >>{xobjects} >> /Contents {stream} 0 R >>"
        ).into_bytes());
        kids.push(format!("{} 0 R", objects.len()));
    }
    objects[1] = format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), kids.len()).into_bytes();
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = vec![];
    for (n, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", n + 1).bytes());
        out.extend(o);
        out.extend(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").bytes());
    }
    out.extend(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).bytes(),
    );
    out
}

#[test]
fn a_pdf_reads_in_the_order_of_its_page_with_columns_where_they_stand() {
    // A table drawn bottom row first, each cell on its own, right-aligned numbers, no
    // separator characters; and a second page whose text runs upward (a page turned 90°).
    let cell = |x: f64, y: f64, t: &str| format!("BT /F1 10 Tf 1 0 0 1 {x} {y} Tm ({t}) Tj ET");
    let first = [
        cell(50.0, 660.0, "Pen refill"),
        cell(300.0, 660.0, "12"),
        cell(400.0, 660.0, "1,440.00"),
        cell(50.0, 680.0, "Paper, A4"),
        cell(300.0, 680.0, "3"),
        cell(400.0, 680.0, "45.00"),
        cell(50.0, 700.0, "Item"),
        cell(300.0, 700.0, "Qty"),
        cell(400.0, 700.0, "Amount"),
        cell(50.0, 760.0, "INVOICE 42"),
    ]
    .join("\n");
    let turned = |x: f64, y: f64, t: &str| format!("BT /F1 10 Tf 0 1 -1 0 {x} {y} Tm ({t}) Tj ET");
    let second = [turned(120.0, 50.0, "second line"), turned(100.0, 50.0, "first line")].join("\n");
    let doc = ingest("laid-out.pdf", pdf_document(&[&first, &second]), &Limits::default()).unwrap();
    let lines: Vec<&str> = doc.text.lines().collect();
    assert_eq!(
        lines.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>(),
        [
            "INVOICE 42",
            "Item Qty Amount",
            "Paper, A4 3 45.00",
            "Pen refill 12 1,440.00",
            "first line",
            "second line"
        ],
        "{}",
        doc.text
    );
    // Columns stand apart by two spaces or more, each at the place its x gives it.
    assert!(lines[1].contains("Item  ") && lines[2].contains("A4  "), "{}", doc.text);
    assert_eq!(lines[1].find("Qty"), lines[2].find('3'), "{}", doc.text);
    assert_eq!(lines[2].find("45.00"), lines[3].find("1,440.00"), "{}", doc.text);
    let page_of = |needle: &str| {
        let at = doc.text.find(needle).unwrap();
        match doc.locate(at) {
            Some(Location::Page { n, .. }) => *n,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!((page_of("Pen refill"), page_of("first line")), (1, 2));
}

/// `pdf` drawn as an 8-bit grey picture by poppler's pdftoppm (what a scanner gives):
/// (width, height, pixels).
fn scanned(pdf: &[u8], dpi: u32) -> (usize, usize, Vec<u8>) {
    use std::io::Write;
    let mut child = std::process::Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", "-f", "1", "-l", "1", "fd://0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("pdftoppm (poppler-utils) is installed by scripts/setup.sh");
    child.stdin.take().unwrap().write_all(pdf).unwrap();
    let pgm = child.wait_with_output().unwrap().stdout;
    // P5 <width> <height> 255 <pixels>
    let mut fields = pgm.splitn(5, |b| b.is_ascii_whitespace());
    let mut next = || std::str::from_utf8(fields.next().unwrap()).unwrap().to_string();
    let (_, w, h, _) = (next(), next(), next(), next());
    let (w, h): (usize, usize) = (w.parse().unwrap(), h.parse().unwrap());
    (w, h, pgm[pgm.len() - w * h..].to_vec())
}

/// A PNG of grey pixels (no compression beyond zlib's).
fn png(w: usize, h: usize, px: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        let body = [kind, data].concat();
        c.extend(&body);
        c.extend(crc32(&body).to_be_bytes());
        c
    };
    let mut raw = vec![];
    for row in px.chunks(w) {
        raw.push(0);
        raw.extend(row);
    }
    let mut z = flate2::write::ZlibEncoder::new(vec![], flate2::Compression::fast());
    z.write_all(&raw).unwrap();
    let mut head = (w as u32).to_be_bytes().to_vec();
    head.extend((h as u32).to_be_bytes());
    head.extend([8, 0, 0, 0, 0]);
    [
        b"\x89PNG\r\n\x1a\n".to_vec(),
        chunk(b"IHDR", &head),
        chunk(b"IDAT", &z.finish().unwrap()),
        chunk(b"IEND", &[]),
    ]
    .concat()
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
    }
    !c
}

fn invoice_page() -> Vec<u8> {
    let cell = |x: f64, y: f64, t: &str| format!("BT /F1 12 Tf 1 0 0 1 {x} {y} Tm ({t}) Tj ET");
    let content = [
        cell(60.0, 780.0, "INVOICE INV-2026-88001"),
        cell(60.0, 750.0, "Invoice date: March 17, 2026"),
        cell(60.0, 700.0, "Description"),
        cell(320.0, 700.0, "Qty"),
        cell(450.0, 700.0, "Amount"),
        cell(60.0, 680.0, "Gateway appliance"),
        cell(320.0, 680.0, "2"),
        cell(450.0, 680.0, "6,400.00"),
        cell(60.0, 660.0, "Consulting hour"),
        cell(320.0, 660.0, "10"),
        cell(450.0, 660.0, "1,500.00"),
        cell(300.0, 620.0, "Total due: 7,900.00 EUR"),
    ]
    .join("\n");
    pdf_document(&[&content])
}

#[test]
fn a_picture_and_a_scanned_pdf_are_read_by_ocr_with_their_table_in_columns() {
    // Real Tesseract and pdftoppm (installed by scripts/setup.sh; the .deb depends on them).
    let (w, h, px) = scanned(&invoice_page(), 200);
    let check = |doc: &countersign_kernel::ingest::Document| {
        for words in ["INV-2026-88001", "March 17, 2026", "Total due: 7,900.00 EUR"] {
            assert!(doc.text.contains(words), "{words:?} in {}", doc.text);
        }
        let row = doc.text.lines().find(|l| l.contains("Gateway")).unwrap();
        assert!(
            row.contains("appliance  ") && row.trim_end().ends_with("6,400.00"),
            "{row:?} in {}",
            doc.text
        );
        let at = doc.text.find("6,400.00").unwrap();
        assert!(matches!(doc.locate(at), Some(Location::Scan { n: 1, .. })), "{:?}", doc.locate(at));
    };
    let picture = ingest("photo.png", png(w, h, &px), &Limits::default()).unwrap();
    assert_eq!(picture.kind, DocumentKind::Image);
    check(&picture);
    // The same page as a scanner's PDF: one grey image, no text layer.
    let scan = pdf_with_image(&["q 842 0 0 842 0 0 cm /Im1 Do Q"], Some((w, h, &px)));
    let doc = ingest("scan.pdf", scan, &Limits::default()).unwrap();
    assert_eq!(doc.kind, DocumentKind::Pdf);
    check(&doc);
    // A picture OCR finds nothing in is refused with that reason, not an empty document.
    let blank = ingest("blank.png", png(200, 200, &[255; 200 * 200]), &Limits::default()).unwrap_err();
    assert_eq!(blank.code, Code::DocumentInvalid, "{blank}");
    assert!(blank.message.contains("OCR found no text"), "{blank}");
}

#[test]
fn an_html_only_message_is_read_as_html_with_its_table_in_rows() {
    let mail = "From: billing@example.com\r\nSubject: Your invoice\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n\
<p>Invoice INV-7</p><table><tr><th>Item</th><th>Qty</th><th>Amount</th></tr><tr><td>Cable</td><td>4</td><td>40.00</td></tr></table>\r\n";
    let doc = ingest("only-html.eml", mail.as_bytes().to_vec(), &Limits::default()).unwrap();
    assert!(doc.text.contains("Item | Qty | Amount\n"), "{}", doc.text);
    assert!(doc.text.contains("Cable | 4 | 40.00"), "{}", doc.text);
}
