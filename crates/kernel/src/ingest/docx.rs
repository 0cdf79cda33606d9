//! DOCX: `word/document.xml`, by paragraph.

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
    let mut buf = Vec::new();
    loop {
        use quick_xml::events::Event;
        b.tick()?;
        match reader.read_event_into(&mut buf).map_err(|e| invalid(name, e))? {
            Event::Start(e) if e.name().0 == "w:t" => in_text = true,
            Event::End(e) if e.name().0 == "w:t" => in_text = false,
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
