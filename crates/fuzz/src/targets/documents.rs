//! Documents: every format's reader fed mutated seeds and generated PDFs; a read either returns
//! a well-formed document within the limits or fails with a typed `document.*` error.

use super::*;

pub(super) struct Documents {
    pub(super) name: String,
    pub(super) extension: &'static str,
    pub(super) seeds: Vec<Vec<u8>>,
    /// For DOCX: the seed's `document.xml`, mutated and re-zipped.
    pub(super) docx_xml: Option<Vec<u8>>,
    pub(super) tokens: Vec<&'static [u8]>,
    pub(super) limits: Limits,
}

impl Documents {
    pub(super) fn new(name: &str) -> Result<Documents, Error> {
        let extension = match name {
            "documents-text" => "txt",
            "documents-markdown" => "md",
            "documents-html" => "html",
            "documents-email" => "eml",
            "documents-pdf" => "pdf",
            _ => "docx",
        };
        let seeds: Vec<Vec<u8>> = SEED_DOCUMENTS
            .iter()
            .filter(|(n, _)| n.ends_with(&format!(".{extension}")))
            .map(|(_, b)| b.to_vec())
            .collect();
        let docx_xml = (extension == "docx").then(|| {
            let mut zip = zip::ZipArchive::new(std::io::Cursor::new(seeds[0].clone())).expect("seed docx");
            let mut xml = vec![];
            std::io::Read::read_to_end(&mut zip.by_name("word/document.xml").expect("seed xml"), &mut xml)
                .expect("seed xml reads");
            xml
        });
        let tokens: Vec<&'static [u8]> = match extension {
            "pdf" => vec![
                b"[",
                b"]",
                b"<<",
                b">>",
                b"(",
                b")",
                b"\\",
                b"/Filter /FlateDecode",
                b" 0 R ",
                b"stream\n",
                b"endstream",
                b"obj",
                b"endobj",
                b"xref",
                b"trailer",
                b"/Parent 2 0 R",
                b"/Kids [3 0 R 3 0 R]",
                b"99999999999",
                b"-1",
                b"/Length 999999",
                b"BT",
                b"ET",
                b"Tj",
                b"TJ",
                b"Do",
                b"%%EOF",
            ],
            "html" => vec![
                b"<script>",
                b"</script>",
                b"<style>",
                b"<!--",
                b"-->",
                b"<p>",
                b"<td>",
                b"</td>",
                b"&#x",
                b"&#",
                b"&amp;",
                b";",
                b"<",
                b">",
                b"<head>",
                b"\xff\xfe",
            ],
            "eml" => vec![
                b"\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n",
                b"\r\n--b\r\n",
                b"--b--",
                b"=?utf-8?B?",
                b"?=",
                b"Content-Transfer-Encoding: base64\r\n",
                b"Content-Transfer-Encoding: quoted-printable\r\n",
                b"=\r\n",
                b"=FF",
                b"\r\n\r\n",
                b"Subject: ",
                b"From: <",
                b"text/html",
            ],
            "docx" => vec![
                b"<w:p>",
                b"</w:p>",
                b"<w:p/>",
                b"<w:t>",
                b"</w:t>",
                b"<w:tab/>",
                b"<w:br/>",
                b"&amp;",
                b"&#0;",
                b"<!DOCTYPE x [<!ENTITY a \"aaaa\">]>",
                b"&a;",
                b"<![CDATA[",
                b"]]>",
                b"<",
                b"\"",
            ],
            _ => vec![
                b"\n",
                b"\r\n",
                b"\r",
                b"\t",
                b"\xef\xbb\xbf",
                b"\xff",
                b"\x00",
                b"# ",
                b"| a | b |",
                b"Total due: ",
            ],
        };
        let limits = Limits { deadline: std::time::Duration::from_secs(5), ..Limits::default() };
        Ok(Documents { name: name.into(), extension, seeds, docx_xml, tokens, limits })
    }

    pub(super) fn bytes(&self, rng: &mut Rng) -> Vec<u8> {
        if self.extension == "pdf" && rng.chance(0.7) {
            let seed = rng.pick(&self.seeds).clone();
            return pdf::rebuild(rng, &seed, &self.tokens);
        }
        if let (Some(xml), true) = (&self.docx_xml, rng.chance(0.6)) {
            let mut xml = xml.clone();
            gen::mutate(rng, &mut xml, &self.tokens);
            let mut out = std::io::Cursor::new(Vec::new());
            let mut w = zip::ZipWriter::new(&mut out);
            let opts = zip::write::SimpleFileOptions::default();
            let _ = w.start_file("word/document.xml", opts);
            let _ = std::io::Write::write_all(&mut w, &xml);
            let _ = w.finish();
            return out.into_inner();
        }
        let mut data = rng.pick(&self.seeds).clone();
        gen::mutate(rng, &mut data, &self.tokens);
        data
    }
}

impl crate::Target for Documents {
    fn name(&self) -> &str {
        &self.name
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        let bytes = self.bytes(rng);
        keep_input(case, self.extension, &bytes);
        match ingest(&format!("fuzz.{}", self.extension), bytes, &self.limits) {
            Ok(doc) => match document_problem(&doc, &self.limits) {
                Some(p) => Outcome::Finding("invalid_document", p),
                None => Outcome::Passed,
            },
            Err(e) if e.code.as_str().starts_with("document.") => Outcome::Refused(e),
            Err(e) => Outcome::Finding("untyped", format!("{}: {}", e.code.as_str(), clip(&e.message))),
        }
    }
}

/// PDFs taken apart into objects, mutated where the parsers look (dictionaries, and the
/// inflated content streams the text is drawn by), and put back together with a correct
/// cross-reference table and stream lengths, so most cases get past the file structure.
mod pdf {
    use crate::gen::{self, Rng};
    use std::io::{Read, Write};

    /// Operators and operands of content streams.
    pub(super) const CONTENT: &[&[u8]] = &[
        b"BT ",
        b" ET",
        b"/F1 12 Tf ",
        b"72 720 Td ",
        b"(Invoice 7) Tj ",
        b"[(A) -120 (B)] TJ ",
        b"[",
        b"]",
        b"(",
        b")",
        b"\\",
        b"<48656c6c6f> Tj ",
        b"T* ",
        b"' ",
        b"q ",
        b" Q",
        b"1 0 0 1 0 0 cm ",
        b"/X0 Do ",
        b"BI ",
        b" ID ",
        b" EI",
        b"99999999999 ",
        b"-0.0 ",
        b"1e400 ",
    ];

    fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
        hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
    }

    /// `(number, body)` of each `N G obj … endobj`, and the root object's number.
    fn objects(pdf: &[u8]) -> (Vec<(u32, Vec<u8>)>, u32) {
        let mut out = vec![];
        let mut at = 0;
        while let Some(o) = find(pdf, b" obj", at) {
            let line_start = pdf[..o].iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
            let head = String::from_utf8_lossy(&pdf[line_start..o]).to_string();
            let num = head.split_whitespace().next().and_then(|n| n.parse::<u32>().ok());
            let Some(end) = find(pdf, b"endobj", o) else { break };
            if let Some(n) = num {
                out.push((n, pdf[o + 4..end].to_vec()));
            }
            at = end + 6;
        }
        let root = find(pdf, b"/Root ", 0)
            .and_then(|i| {
                String::from_utf8_lossy(&pdf[i + 6..(i + 16).min(pdf.len())])
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse().ok())
            })
            .unwrap_or(1);
        (out, root)
    }

    /// The stream of a body, inflated when it is Flate-encoded: `(dict, data, was_flate)`.
    fn stream(body: &[u8]) -> Option<(Vec<u8>, Vec<u8>, bool)> {
        let s = find(body, b"stream", 0)?;
        let e = find(body, b"endstream", s)?;
        let dict = body[..s].to_vec();
        let mut data_start = s + 6;
        while body.get(data_start).is_some_and(|b| *b == b'\r' || *b == b'\n') {
            data_start += 1;
        }
        let data = body[data_start..e.max(data_start)].to_vec();
        let flate = find(&dict, b"FlateDecode", 0).is_some();
        if flate {
            let mut inflated = vec![];
            flate2::read::ZlibDecoder::new(data.as_slice()).take(1 << 20).read_to_end(&mut inflated).ok()?;
            return Some((dict, inflated, true));
        }
        Some((dict, data, false))
    }

    fn with_length(dict: &[u8], len: usize, flate: bool) -> Vec<u8> {
        let text = String::from_utf8_lossy(dict).to_string();
        let mut out = String::new();
        let mut words = text.split("/Length").collect::<Vec<_>>().into_iter();
        out.push_str(words.next().unwrap_or_default());
        for rest in words {
            // Drop the old length's number.
            let rest = rest.trim_start();
            let skip = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            out.push_str(&rest[skip..]);
        }
        if !flate {
            out = out.replace("/Filter /FlateDecode", "");
        }
        let close = out.rfind(">>").unwrap_or(out.len());
        out.insert_str(close, &format!(" /Length {len} "));
        out.into_bytes()
    }

    pub fn rebuild(rng: &mut Rng, seed: &[u8], tokens: &[&'static [u8]]) -> Vec<u8> {
        let (mut objs, root) = objects(seed);
        if objs.is_empty() {
            return seed.to_vec();
        }
        for _ in 0..1 + rng.below(3) {
            let i = rng.below(objs.len());
            let body = objs[i].1.clone();
            objs[i].1 = match stream(&body) {
                Some((dict, mut data, flate)) if rng.chance(0.7) => {
                    gen::mutate(rng, &mut data, CONTENT);
                    let keep_flate = flate && rng.chance(0.8);
                    let data = if keep_flate {
                        let mut z = flate2::write::ZlibEncoder::new(vec![], flate2::Compression::fast());
                        let _ = z.write_all(&data);
                        z.finish().unwrap_or_default()
                    } else {
                        data
                    };
                    let mut b = with_length(&dict, data.len(), keep_flate);
                    b.extend_from_slice(b"stream\n");
                    b.extend_from_slice(&data);
                    b.extend_from_slice(b"\nendstream");
                    b
                }
                Some(_) => body,
                None => {
                    let mut b = body;
                    gen::mutate(rng, &mut b, tokens);
                    b
                }
            };
        }
        if rng.chance(0.1) {
            let copy = objs[rng.below(objs.len())].clone();
            let n = objs.iter().map(|o| o.0).max().unwrap_or(0) + 1;
            objs.push((n, copy.1));
        }
        let mut out = b"%PDF-1.4\n".to_vec();
        let max = objs.iter().map(|o| o.0).max().unwrap_or(0).min(100_000);
        let mut offsets = vec![None; max as usize + 1];
        for (n, body) in &objs {
            if let Some(slot) = offsets.get_mut(*n as usize) {
                *slot = Some(out.len());
            }
            let _ = write!(out, "{n} 0 obj");
            out.extend_from_slice(body);
            out.extend_from_slice(b"endobj\n");
        }
        let xref = out.len();
        let _ = write!(out, "xref\n0 {}\n", offsets.len());
        for (i, o) in offsets.iter().enumerate() {
            match o {
                Some(at) => {
                    let _ = writeln!(out, "{at:010} 00000 n ");
                }
                None => {
                    let _ = writeln!(out, "0000000000 {} f ", if i == 0 { 65535 } else { 0 });
                }
            }
        }
        let _ = write!(
            out,
            "trailer\n<< /Size {} /Root {root} 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            offsets.len()
        );
        out
    }
}

/// What a read document must be: text within the limits, segments in order, on char
/// boundaries, inside the text.
pub(super) fn document_problem(doc: &Document, limits: &Limits) -> Option<String> {
    if doc.text.is_empty() {
        return Some("a document with no text was returned".into());
    }
    if doc.text.chars().count() > limits.max_chars || doc.segments.len() > limits.max_segments {
        return Some(format!("{} chars, {} segments past the limits", doc.text.len(), doc.segments.len()));
    }
    let mut last = 0;
    for s in &doc.segments {
        if s.start < last
            || s.start > s.end
            || s.end > doc.text.len()
            || !doc.text.is_char_boundary(s.start)
            || !doc.text.is_char_boundary(s.end)
        {
            return Some(format!(
                "segment {s:?} is out of order or outside the text ({} bytes)",
                doc.text.len()
            ));
        }
        last = s.end;
    }
    None
}
