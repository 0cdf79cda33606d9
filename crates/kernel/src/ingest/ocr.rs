//! OCR: images (PNG, JPEG, TIFF — a phone photo, a scan saved as a picture) and the pages of a
//! PDF that have no text layer (a scan) are read by Tesseract, the engine paperless-ngx and
//! OCRmyPDF use, in English, German, French and Spanish (the ones installed of those). A PDF
//! page becomes a picture with poppler's `pdftoppm` first, at 300 dpi. Both run as child
//! processes of the reader with the reader's limits (inherited), fed on stdin and read on stdout
//! (the reader may not write files), and are killed at the reader's deadline.
//!
//! Tesseract gives each word with its box and each line with its baseline (hOCR); the words are laid out like a PDF's glyphs
//! ([`page_text`]), so a scanned table's columns stand where they stand on paper. Every line
//! read so is located as [`Location::Scan`], which the review shows as "read by OCR".

use super::*;
use regex::Regex;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

/// The languages OCR reads, when their data is installed.
const LANGUAGES: [&str; 4] = ["eng", "deu", "fra", "spa"];
/// Resolution a PDF page is drawn at for OCR: Tesseract's own advice for body text.
const DPI: &str = "300";
/// The most a tool may print (a page's hOCR is tens of KB; a 300 dpi page picture a few MB).
const MAX_OUTPUT: usize = 64 << 20;

/// An image document: one page read by OCR.
pub(super) fn image(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let before = b.text.len();
    ocr_page(b, bytes, 1)?;
    if b.text.len() == before {
        return Err(invalid(b.name, "OCR found no text in the picture"));
    }
    Ok(())
}

/// Page `n` of a PDF drawn as a picture and read by OCR.
pub(super) fn pdf_page(b: &mut Builder, pdf: &[u8], n: u32) -> Result<()> {
    let page = n.to_string();
    let picture = run(b, "pdftoppm", &["-r", DPI, "-gray", "-png", "-f", &page, "-l", &page, "fd://0"], pdf)?;
    ocr_page(b, &picture, n)
}

fn ocr_page(b: &mut Builder, picture: &[u8], n: u32) -> Result<()> {
    let languages = languages(b)?;
    let hocr = run(b, "tesseract", &["stdin", "stdout", "-l", &languages, "hocr"], picture)?;
    let words = words(&String::from_utf8_lossy(&hocr));
    for (line, text) in page_text(&words).lines().filter(|l| !l.trim().is_empty()).enumerate() {
        b.push(text.trim_end(), Location::Scan { n, line: line as u32 + 1 })?;
    }
    Ok(())
}

/// `eng+deu+…`: the languages of [`LANGUAGES`] Tesseract has data for (English alone when it
/// lists none of them: its own default).
fn languages(b: &Builder) -> Result<String> {
    static FOUND: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(found) = FOUND.get() {
        return Ok(found.clone());
    }
    let listed = run(b, "tesseract", &["--list-langs"], &[])?;
    let listed = String::from_utf8_lossy(&listed);
    let have: Vec<&str> =
        LANGUAGES.iter().copied().filter(|l| listed.lines().any(|x| x.trim() == *l)).collect();
    let found = if have.is_empty() { "eng".to_string() } else { have.join("+") };
    Ok(FOUND.get_or_init(|| found).clone())
}

/// A line of Tesseract's hOCR: its box and its baseline (`y = bottom + offset + slope·(x − left)`).
struct OcrLine {
    left: f64,
    bottom: f64,
    slope: f64,
    offset: f64,
    size: f64,
}

/// Tesseract's hOCR as glyphs on the page: each word on its line's baseline (descenders do not
/// move it), the page turned back by the median slope of its lines (a scan fed in askew, a
/// photo taken at an angle), so that one row of a table is one line across its columns. Words
/// that are only rule or speckle marks (`|`, `_`, `-`, `:`) are left out.
fn words(hocr: &str) -> Vec<Glyph> {
    static SPAN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"<span class=['"](ocr[a-z_]*)['"][^>]*?title=['"]([^'"]*)['"][^>]*>([^<]*(?:<(?:strong|em)>[^<]*</(?:strong|em)>[^<]*)*)"#)
            .unwrap()
    });
    let numbers = |title: &str, key: &str| -> Vec<f64> {
        title
            .split(';')
            .map(str::trim)
            .find_map(|p| p.strip_prefix(key))
            .map(|r| {
                r.split_whitespace().filter_map(|n| n.parse::<f64>().ok()).filter(|n| n.is_finite()).collect()
            })
            .unwrap_or_default()
    };
    let mut line: Option<OcrLine> = None;
    // (line index, left, baseline, width, size, text)
    let mut found: Vec<(usize, f64, f64, f64, f64, String)> = vec![];
    let mut slopes = vec![];
    let mut lines = 0;
    for c in SPAN.captures_iter(hocr) {
        let title = &c[2];
        let bbox = numbers(title, "bbox ");
        let [x0, y0, x1, y1] = bbox[..] else { continue };
        if &c[1] == "ocrx_word" {
            let text = unescape(&strip_tags(&c[3]));
            let text = text.trim().trim_matches(|ch| ch == '_' || ch == '|').trim();
            let confident = numbers(title, "x_wconf ").first().is_some_and(|w| *w >= 0.0);
            let mark = text.chars().all(|ch| "|_-:;.,'`~^\"!".contains(ch));
            let Some(l) = line.as_ref().filter(|_| confident && !mark) else { continue };
            let base = l.bottom + l.offset + l.slope * (x0 - l.left);
            found.push((lines, x0, base, (x1 - x0).max(0.0), l.size, text.to_string()));
        } else if title.contains("baseline") {
            let b = numbers(title, "baseline ");
            let (slope, offset) = (b.first().copied().unwrap_or(0.0), b.get(1).copied().unwrap_or(0.0));
            let size = numbers(title, "x_size ").first().copied().unwrap_or((y1 - y0) / 1.2).max(1.0);
            line = Some(OcrLine { left: x0, bottom: y1, slope, offset, size });
            lines += 1;
            if x1 - x0 > 4.0 * size {
                slopes.push(slope.clamp(-0.2, 0.2));
            }
        }
    }
    slopes.sort_by(f64::total_cmp);
    let angle = slopes.get(slopes.len() / 2).copied().unwrap_or(0.0).atan();
    let (sin, cos) = angle.sin_cos();
    found
        .into_iter()
        .map(|(_, x, y, width, size, text)| {
            let chars = text.chars().count().max(1) as f64;
            Glyph {
                turn: 0,
                // Turned back by the page's angle (image y grows downward; v grows upward).
                u: x * cos + y * sin,
                v: -(y * cos - x * sin),
                advance: width,
                size: size / 0.8,
                per_char: width / chars,
                text,
            }
        })
        .collect()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for ch in s.chars() {
        match ch {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Run `program` with `input` on its stdin; its stdout. Killed at the reader's deadline; a
/// program that is not installed is a typed refusal saying what to install.
fn run(b: &Builder, program: &str, args: &[&str], input: &[u8]) -> Result<Vec<u8>> {
    let name = b.name;
    let child = Command::new(program)
        .args(args)
        // One thread each: the reader's CPU limit is per process, and two cores are shared.
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::new(
                Code::DocumentUnsupported,
                format!(
                    "{name} needs OCR (it has no text layer), and {program} is not installed: install Tesseract \
                     (tesseract-ocr, with tesseract-ocr-deu, -fra, -spa) and poppler-utils"
                ),
            ),
            _ => invalid(name, format_args!("OCR could not start ({program}: {e})")),
        })?;
    // The budget is asked directly, not by `tick`: each poll here is 20 ms, not a small step.
    let reader::Exchanged { status, out, .. } = reader::exchange(
        child,
        input.to_vec(),
        reader::Caps { out: MAX_OUTPUT as u64, err: 0 },
        Duration::from_millis(20),
        || b.budget.check(name, b.limits),
        |e| invalid(name, format_args!("OCR failed ({program}: {e})")),
    )?;
    if out.len() > MAX_OUTPUT {
        return Err(too_large(
            name,
            format_args!("gives {program} more than {} MB to read", MAX_OUTPUT >> 20),
        ));
    }
    if !status.success() {
        return Err(invalid(name, format_args!("OCR could not read it ({program} ended with {status})")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hocr_words_sit_on_their_baselines_and_an_askew_page_is_turned_back() {
        // A page scanned 2° askew (slope 0.035): the row's label and its amount are in two
        // blocks whose line boxes differ by 35 px; the descender of "due" lowers its box, not
        // its baseline; a speckle "|" is dropped.
        let line = |l: f64, t: f64, r: f64, b: f64| {
            format!(
                "<span class='ocr_line' id='l' title=\"bbox {l} {t} {r} {b}; baseline 0.035 -8; x_size 30\">"
            )
        };
        let word = |l: f64, t: f64, r: f64, b: f64, w: &str| {
            format!("<span class='ocrx_word' id='w' title='bbox {l} {t} {r} {b}; x_wconf 91'>{w}</span>")
        };
        let hocr = [
            line(100.0, 100.0, 400.0, 150.0),
            word(100.0, 100.0, 220.0, 142.0, "Total"),
            word(240.0, 105.0, 300.0, 150.0, "due"),
            word(320.0, 110.0, 330.0, 150.0, "|"),
            "</span>".to_string(),
            line(1100.0, 135.0, 1300.0, 185.0),
            word(1100.0, 135.0, 1300.0, 177.0, "1,250.00"),
            "</span>".to_string(),
            line(100.0, 200.0, 400.0, 250.0),
            word(100.0, 200.0, 300.0, 242.0, "Thanks &amp; bye"),
        ]
        .concat();
        let text = page_text(&words(&hocr));
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(lines, [vec!["Total", "due", "1,250.00"], vec!["Thanks", "&", "bye"]], "{text}");
        assert!(text.lines().next().unwrap().contains("due  "), "the amount is a column apart: {text}");
    }
}
