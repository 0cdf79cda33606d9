//! PDF: the text layer, by page and laid out by position ([`super::pdf_layout`]), after the checks that keep a hostile file from running the
//! text output without bounds (page-tree loops, self-drawing forms, nesting, inflation).

use super::*;

pub(super) fn pdf(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let name = b.name;
    if bytes.windows(8).any(|w| w == b"/Encrypt") {
        return Err(Error::new(
            Code::DocumentEncrypted,
            format!("{name} is an encrypted PDF; save an unprotected copy to extract it"),
        ));
    }
    if let Some(depth) = pdf_nesting_over(bytes, MAX_PDF_NESTING) {
        return Err(invalid(
            name,
            format_args!("its objects nest {depth} deep; at most {MAX_PDF_NESTING} levels are read"),
        ));
    }
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| invalid(name, e))?;
    b.budget.check(name, b.limits)?;
    // The page tree is walked once for the checks (the text output walks it again itself).
    let page_tree = doc.get_pages();
    if let Some(why) = page_tree_problem(&doc, &page_tree) {
        return Err(invalid(name, why));
    }
    check_page_contents(&doc, &page_tree, b)?;
    if let Some(why) = form_cycle(&doc, &page_tree) {
        return Err(invalid(name, why));
    }
    let mut pages = PdfPages::new(b.budget, name, b.limits);
    let outcome = pdf_extract::output_doc(&doc, &mut pages);
    b.budget.check(name, b.limits)?;
    // As a reader would: the pages before one that cannot be read are still text.
    let texts = pages.finish();
    if outcome.is_err() && texts.iter().all(|t| t.trim().is_empty()) {
        return Err(invalid(name, outcome.err().map_or(String::new(), |e| e.to_string())));
    }
    let before = b.text.len();
    let mut scanned = 0;
    for n in 1..=page_tree.len().max(texts.len()) as u32 {
        let page = texts.get(n as usize - 1).map_or("", String::as_str);
        if page.trim().is_empty() {
            // A page without a text layer that draws a picture (a scan) is read by OCR, when the
            // text output read the whole file (a damaged one keeps what it gave).
            if outcome.is_ok() && page_tree.get(&n).is_some_and(|id| draws_picture(&doc, *id)) {
                pdf_page(b, bytes, n)?;
                scanned += 1;
            }
            continue;
        }
        // The text layer spaces lines with blank ones; keep only lines with text.
        for (line, l) in page.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).enumerate() {
            b.push(l, Location::Page { n, line: line as u32 + 1 })?;
        }
    }
    if b.text.len() == before {
        return Err(invalid(
            name,
            if scanned > 0 {
                "the PDF has no text layer, and OCR found no text on its pages"
            } else {
                "the PDF has neither text nor pictures of text"
            },
        ));
    }
    Ok(())
}

/// Whether a page draws a picture: an image among its XObjects, or in a form it draws (one
/// level down, as scanners and office suites wrap them).
fn draws_picture(doc: &lopdf::Document, page: lopdf::ObjectId) -> bool {
    let Ok(dict) = doc.get_dictionary(page) else { return false };
    xobjects_in(doc, resources_of(doc, dict)).iter().any(|id| match subtype_of(doc, *id) {
        Some(b"Image") => true,
        Some(b"Form") => matches!(doc.get_object(*id), Ok(lopdf::Object::Stream(form))
            if xobjects_in(doc, resources_of(doc, &form.dict)).iter().any(|i| subtype_of(doc, *i) == Some(b"Image"))),
        _ => false,
    })
}

/// A page's or a form's resources dictionary (its own, not inherited).
fn resources_of<'a>(doc: &'a lopdf::Document, d: &'a lopdf::Dictionary) -> Option<&'a lopdf::Dictionary> {
    match d.get(b"Resources").ok()? {
        lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok(),
        lopdf::Object::Dictionary(r) => Some(r),
        _ => None,
    }
}

/// The XObjects a resources dictionary names, by reference.
fn xobjects_in(doc: &lopdf::Document, resources: Option<&lopdf::Dictionary>) -> Vec<lopdf::ObjectId> {
    let xobjects = resources.and_then(|r| r.get(b"XObject").ok()).and_then(|x| match x {
        lopdf::Object::Reference(id) => doc.get_dictionary(*id).ok(),
        lopdf::Object::Dictionary(d) => Some(d),
        _ => None,
    });
    xobjects.map_or(vec![], |x| x.iter().filter_map(|(_, v)| v.as_reference().ok()).collect())
}

/// An XObject's `/Subtype` (`Form`, `Image`).
fn subtype_of(doc: &lopdf::Document, id: lopdf::ObjectId) -> Option<&[u8]> {
    match doc.get_object(id).ok()? {
        lopdf::Object::Stream(s) => s.dict.get(b"Subtype").and_then(lopdf::Object::as_name).ok(),
        _ => None,
    }
}

/// A PDF's pages by number.
pub(super) type Pages = std::collections::BTreeMap<u32, lopdf::ObjectId>;

/// Page trees deeper than this are refused (real ones have a few levels).
pub(super) const MAX_PAGE_TREE_DEPTH: usize = 64;

/// A page whose chain of `/Parent`s loops or runs past [`MAX_PAGE_TREE_DEPTH`]: the text
/// output looks inherited attributes up that chain without end (a 1.5 KB file kept a core busy
/// until the deadline; found by the fuzzer).
pub(super) fn page_tree_problem(doc: &lopdf::Document, pages: &Pages) -> Option<String> {
    for (&n, &id) in pages {
        let mut seen = std::collections::HashSet::new();
        let mut at = id;
        while let Ok(parent) =
            doc.get_dictionary(at).and_then(|d| d.get(b"Parent")).and_then(lopdf::Object::as_reference)
        {
            if !seen.insert(parent) {
                return Some(format!("page {n}'s parents loop"));
            }
            if seen.len() > MAX_PAGE_TREE_DEPTH {
                return Some(format!(
                    "page {n} is more than {MAX_PAGE_TREE_DEPTH} levels deep in the page tree"
                ));
            }
            at = parent;
        }
    }
    None
}

/// Inflate each page's content streams as the text output will (a stream drawn twice counts
/// twice) within `max_inflated` per page, and refuse nesting past [`MAX_PDF_NESTING`] in them, before
/// the text output inflates and parses them without bounds. Streams in filters other than
/// Flate are left to the reader process's limits.
pub(super) fn check_page_contents(doc: &lopdf::Document, pages: &Pages, b: &Builder) -> Result<()> {
    let (name, limits) = (b.name, b.limits);
    for (&n, &page) in pages {
        b.budget.check(name, limits)?;
        // Per page: the text output holds one page's content at a time.
        let mut inflated: u64 = 0;
        let mut content = Vec::new();
        for id in doc.get_page_contents(page) {
            let Ok(lopdf::Object::Stream(stream)) = doc.get_object(id) else { continue };
            let filters = stream.filters().unwrap_or_default();
            let left = limits.max_inflated.saturating_sub(inflated);
            let before = content.len();
            match filters.as_slice() {
                [] => {
                    content.extend_from_slice(&stream.content[..stream.content.len().min(left as usize + 1)])
                }
                [f] if *f == b"FlateDecode" => {
                    let _ = flate2::read::ZlibDecoder::new(stream.content.as_slice())
                        .take(left + 1)
                        .read_to_end(&mut content);
                }
                _ => continue,
            }
            inflated += (content.len() - before) as u64;
            if inflated > limits.max_inflated {
                return Err(too_large(
                    name,
                    format_args!(
                        "draws page {n} from more than {} bytes of inflated content",
                        limits.max_inflated
                    ),
                ));
            }
        }
        if let Some(depth) = pdf_nesting_over(&content, MAX_PDF_NESTING) {
            return Err(invalid(
                name,
                format_args!(
                    "page {n}'s content nests {depth} deep; at most {MAX_PDF_NESTING} levels are read"
                ),
            ));
        }
    }
    Ok(())
}

/// Forms (`/Subtype /Form` XObjects) that draw themselves, directly or through other forms: the
/// text output follows `Do` into a form without a depth limit. A form's edges are the forms its
/// own resources name, or — when it has none and inherits them — the forms any page names.
/// Deeper than [`MAX_PAGE_TREE_DEPTH`] counts as a loop.
pub(super) fn form_cycle(doc: &lopdf::Document, pages: &Pages) -> Option<String> {
    use lopdf::{Object, ObjectId};
    use std::collections::HashMap;
    let is_form = |id: &ObjectId| subtype_of(doc, *id) == Some(b"Form");
    let page_forms: Vec<ObjectId> = pages
        .values()
        .filter_map(|p| doc.get_dictionary(*p).ok())
        .flat_map(|p| xobjects_in(doc, resources_of(doc, p)))
        .filter(is_form)
        .collect();
    let edges = |id: ObjectId| -> Vec<ObjectId> {
        let Ok(Object::Stream(s)) = doc.get_object(id) else { return vec![] };
        match resources_of(doc, &s.dict) {
            Some(r) => xobjects_in(doc, Some(r)).into_iter().filter(is_form).collect(),
            None => page_forms.clone(),
        }
    };
    // Depth-first, iteratively: 1 = on the current path, 2 = done.
    let mut state: HashMap<ObjectId, u8> = HashMap::new();
    for &root in &page_forms {
        let mut stack: Vec<(ObjectId, Vec<ObjectId>)> = vec![];
        if state.contains_key(&root) {
            continue;
        }
        state.insert(root, 1);
        stack.push((root, edges(root)));
        while let Some((id, next)) = stack.last_mut() {
            match next.pop() {
                Some(child) => match state.get(&child) {
                    Some(1) => return Some(format!("a form (object {}) draws itself", child.0)),
                    Some(_) => {}
                    None if stack.len() >= MAX_PAGE_TREE_DEPTH => {
                        return Some(format!("forms draw forms more than {MAX_PAGE_TREE_DEPTH} deep"))
                    }
                    None => {
                        state.insert(child, 1);
                        let e = edges(child);
                        stack.push((child, e));
                    }
                },
                None => {
                    state.insert(*id, 2);
                    stack.pop();
                }
            }
        }
    }
    None
}

/// Arrays and dictionaries nested deeper than this are refused before the PDF parser (which
/// recurses once per level) sees them. Real documents nest a handful of levels.
pub(super) const MAX_PDF_NESTING: usize = 100;

/// The first nesting depth of `[` / `<<` past `max` in PDF syntax (strings, comments and stream
/// data skipped), if any: of the file itself, and of each page's inflated content.
pub(super) fn pdf_nesting_over(bytes: &[u8], max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                    i += 1;
                }
            }
            b'(' => {
                // A literal string: balanced parentheses, backslash escapes.
                let mut open = 0usize;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 1,
                        b'(' => open += 1,
                        b')' => {
                            open -= 1;
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                depth += 1;
                i += 1;
            }
            b'<' => {
                while i < bytes.len() && bytes[i] != b'>' {
                    i += 1;
                }
            }
            b'>' if bytes.get(i + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            // Inline image data (`BI … ID <binary> EI` in content) is not syntax.
            b'I' if bytes[i..].starts_with(b"ID")
                && i > 0
                && bytes[i - 1].is_ascii_whitespace()
                && bytes.get(i + 2).is_some_and(u8::is_ascii_whitespace) =>
            {
                let rest = &bytes[i + 2..];
                let end = rest.windows(4).position(|w| {
                    w[0].is_ascii_whitespace() && &w[1..3] == b"EI" && w[3].is_ascii_whitespace()
                });
                match end {
                    Some(end) => i += 2 + end + 3,
                    None => return None,
                }
            }
            b's' if bytes[i..].starts_with(b"stream") && !bytes[..i].ends_with(b"end") => {
                let rest = &bytes[i + 6..];
                match rest.windows(9).position(|w| w == b"endstream") {
                    Some(end) => i += 6 + end + 8,
                    None => return None,
                }
            }
            _ => {}
        }
        if depth > max {
            return Some(depth);
        }
        i += 1;
    }
    None
}

/// The glyphs pdf-extract reports, laid out page by page ([`page_text`]), checking the
/// deadline and the amount of text as it goes (an error ends the walk; what was read so far is
/// kept).
pub(super) struct PdfPages<'a> {
    pub(super) pages: Vec<String>,
    pub(super) glyphs: Vec<Glyph>,
    /// Glyphs reported in all, placed or not.
    pub(super) seen: usize,
    /// Pages begun.
    pub(super) seen_pages: usize,
    pub(super) budget: &'a Budget,
    pub(super) name: &'a str,
    pub(super) limits: &'a Limits,
}

impl<'a> PdfPages<'a> {
    pub(super) fn new(budget: &'a Budget, name: &'a str, limits: &'a Limits) -> Self {
        PdfPages { pages: vec![], glyphs: vec![], seen: 0, seen_pages: 0, budget, name, limits }
    }

    pub(super) fn guard(&self) -> std::result::Result<(), pdf_extract::OutputError> {
        let stop = |why: &str| Err(pdf_extract::OutputError::IoError(std::io::Error::other(why.to_string())));
        if self.budget.tick(self.name, self.limits).is_err() {
            return stop("deadline");
        }
        if self.seen > self.limits.max_chars.saturating_mul(4) {
            return stop("too much text");
        }
        Ok(())
    }

    fn end(&mut self) {
        if !self.glyphs.is_empty() || self.pages.len() < self.seen_pages {
            self.pages.push(page_text(&std::mem::take(&mut self.glyphs)));
        }
    }

    /// The text of each page begun, the one in progress when the walk stopped included.
    pub(super) fn finish(mut self) -> Vec<String> {
        self.end();
        self.pages
    }
}

impl pdf_extract::OutputDev for PdfPages<'_> {
    fn begin_page(
        &mut self,
        _page_num: u32,
        _media_box: &pdf_extract::MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> std::result::Result<(), pdf_extract::OutputError> {
        self.budget
            .check(self.name, self.limits)
            .map_err(|e| pdf_extract::OutputError::IoError(std::io::Error::other(e.message)))?;
        self.seen_pages += 1;
        Ok(())
    }
    fn end_page(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        self.end();
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> std::result::Result<(), pdf_extract::OutputError> {
        self.seen += 1;
        self.guard()?;
        self.glyphs.extend(Glyph::placed(trm, width, font_size, char));
        Ok(())
    }
    fn begin_word(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> std::result::Result<(), pdf_extract::OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::pdf_nesting_over;

    #[test]
    pub(super) fn pdf_nesting_counts_arrays_and_dictionaries_not_strings_comments_or_streams() {
        assert_eq!(pdf_nesting_over(b"<< /A [ [ << /B 1 >> ] ] >>", 3), Some(4));
        assert_eq!(pdf_nesting_over(b"<< /A [ [ << /B 1 >> ] ] >>", 4), None);
        assert_eq!(pdf_nesting_over(b"[ ] [ ] [ ] [ ] [ ]", 1), None, "siblings are not nesting");
        let hidden =
            b"<< /T (x ([[[[) \\) y) /H <5B5B5B> >> % [[[[[[\n<< /Length 4 >>\nstream\n[[[[\nendstream [";
        assert_eq!(pdf_nesting_over(hidden, 1), None, "strings, hex strings, comments and stream data");
        assert_eq!(pdf_nesting_over(hidden, 0), Some(1), "and the scan goes on after them");
        assert_eq!(pdf_nesting_over(&b"[".repeat(101), 100), Some(101));
        let image = [b"BT ET BI /W 8 /H 8 ID ".as_slice(), &[b'['; 500], b" EI Q"].concat();
        assert_eq!(pdf_nesting_over(&image, 1), None, "inline image data");
    }
}
