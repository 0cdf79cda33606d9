//! DOCX: `word/document.xml`, by paragraph. A table (`w:tbl`) comes out one line per row,
//! its cells between `|` as the table reader reads them: a cell's paragraphs joined by spaces,
//! a cell merged across columns (`w:gridSpan`) followed by empty cells so every row keeps the
//! grid's column count, a table inside a cell read as that cell's text. (Word writes each cell
//! as its own paragraph; read that way, no line of an invoice's table was ever a row.)

use super::*;

pub(super) fn docx(b: &mut Builder, bytes: &[u8]) -> Result<()> {
    let (name, limits) = (b.name, b.limits);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| invalid(name, e))?;
    let mut entry = zip
        .by_name("word/document.xml")
        .map_err(|_| invalid(name, "it has no word/document.xml (not a Word document)"))?;
    let inflates = || too_large(name, format_args!("inflates to more than {} bytes", limits.max_inflated));
    if entry.size() > limits.max_inflated {
        return Err(inflates());
    }
    let mut xml = Vec::new();
    (&mut entry).take(limits.max_inflated + 1).read_to_end(&mut xml).map_err(|e| invalid(name, e))?;
    if xml.len() as u64 > limits.max_inflated {
        return Err(inflates());
    }
    let mut reader = quick_xml::Reader::from_reader(xml.as_slice());
    let mut cur = String::new();
    let mut in_text = false;
    // Tables: how deep, the row and cell being read, the cell's column span.
    let mut depth = 0usize;
    let mut row: Vec<String> = vec![];
    let mut cell = String::new();
    let mut span = 1usize;
    let mut buf = Vec::new();
    loop {
        use quick_xml::events::Event;
        b.tick()?;
        match reader.read_event_into(&mut buf).map_err(|e| invalid(name, e))? {
            Event::Start(e) if e.name().0 == "w:t" => in_text = true,
            Event::End(e) if e.name().0 == "w:t" => in_text = false,
            Event::Start(e) if e.name().0 == "w:tbl" => depth += 1,
            Event::End(e) if e.name().0 == "w:tbl" => depth = depth.saturating_sub(1),
            Event::Start(e) if e.name().0 == "w:tr" && depth == 1 => row.clear(),
            Event::Start(e) if e.name().0 == "w:tc" && depth == 1 => {
                cell.clear();
                span = 1;
            }
            Event::Empty(e) if e.name().0 == "w:gridSpan" && depth == 1 => {
                span = e
                    .try_get_attribute("w:val")
                    .ok()
                    .flatten()
                    .and_then(|a| a.value.parse::<usize>().ok())
                    .unwrap_or(1)
                    .clamp(1, 64);
            }
            Event::End(e) if e.name().0 == "w:p" && depth >= 1 => {
                let text = std::mem::take(&mut cur);
                let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if !text.is_empty() {
                    if !cell.is_empty() {
                        cell.push(' ');
                    }
                    cell.push_str(&text);
                }
            }
            Event::End(e) if e.name().0 == "w:tc" && depth == 1 => {
                // A `|` inside a cell would split it.
                row.push(std::mem::take(&mut cell).replace('|', "/"));
                row.extend(std::iter::repeat_n(String::new(), span - 1));
            }
            Event::End(e) if e.name().0 == "w:tr" && depth == 1 => {
                if row.iter().any(|c| !c.is_empty()) {
                    b.paragraph(&format!("| {} |", row.join(" | ")))?;
                }
                row.clear();
            }
            Event::End(e) if e.name().0 == "w:p" => b.paragraph(&std::mem::take(&mut cur))?,
            Event::Empty(e) if e.name().0 == "w:p" => b.paragraph("")?,
            Event::Empty(e) if e.name().0 == "w:tab" => cur.push('\t'),
            Event::Empty(e) if e.name().0 == "w:br" => cur.push(' '),
            Event::Text(t) if in_text => {
                let raw: &str = t.as_ref();
                cur.push_str(&decode_entities(raw));
            }
            Event::GeneralRef(r) if in_text => {
                let raw: &str = r.as_ref();
                cur.push_str(&decode_entities(&format!("&{raw};")));
            }
            Event::Eof => break,
            _ => {}
        }
        if cur.len() > limits.max_chars.saturating_mul(4) {
            return Err(too_much_text(name, limits));
        }
        buf.clear();
    }
    b.paragraph(&cur)
}
