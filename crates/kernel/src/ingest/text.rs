//! Plain text: decoding (UTF-8, else Windows-1252) and the [`Builder`] every format writes its
//! text and segments through, under the limits.

use super::*;

/// UTF-8 (with or without BOM); otherwise Windows-1252, which maps every byte.
pub(super) fn decode_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::WINDOWS_1252.decode(bytes).0.into_owned(),
    }
}

/// Text with its segments, built line by line under the limits. Blank lines get no segment,
/// and a run of them is kept as one, so a flood of empty lines or paragraphs costs nothing.
pub(super) struct Builder<'a> {
    pub(super) name: &'a str,
    pub(super) limits: &'a Limits,
    pub(super) budget: &'a Budget,
    pub(super) text: String,
    pub(super) chars: usize,
    pub(super) segments: Vec<Segment>,
    pub(super) attachments: Vec<String>,
    pub(super) blank: bool,
    pub(super) paragraphs: u32,
}

impl<'a> Builder<'a> {
    pub(super) fn new(name: &'a str, limits: &'a Limits, budget: &'a Budget) -> Self {
        Builder {
            name,
            limits,
            budget,
            text: String::new(),
            chars: 0,
            segments: vec![],
            attachments: vec![],
            blank: false,
            paragraphs: 0,
        }
    }

    pub(super) fn tick(&self) -> Result<()> {
        self.budget.tick(self.name, self.limits)
    }

    pub(super) fn push(&mut self, line: &str, location: Location) -> Result<()> {
        self.tick()?;
        if line.trim().is_empty() {
            self.blank_line();
            return Ok(());
        }
        if self.segments.len() >= self.limits.max_segments {
            return Err(too_large(
                self.name,
                format_args!("has more than {} lines or paragraphs", self.limits.max_segments),
            ));
        }
        if !self.text.is_empty() {
            self.text.push_str(if self.blank { "\n\n" } else { "\n" });
            self.chars += 1 + usize::from(self.blank);
        }
        self.blank = false;
        self.chars += line.chars().count();
        if self.chars > self.limits.max_chars {
            return Err(too_much_text(self.name, self.limits));
        }
        let start = self.text.len();
        self.text.push_str(line);
        self.segments.push(Segment { start, end: self.text.len(), location });
        Ok(())
    }

    /// A break between blocks (kept as one empty line in the text, only between text).
    pub(super) fn blank_line(&mut self) {
        self.blank = !self.text.is_empty();
    }

    /// The lines of a plain text, each located by its number (from 1).
    pub(super) fn lines(&mut self, text: &str) -> Result<()> {
        for (i, line) in text.lines().enumerate() {
            self.push(line.trim_end_matches('\r'), Location::Line { n: i as u32 + 1 })?;
        }
        Ok(())
    }

    /// A paragraph, numbered among the non-empty ones (from 1); an empty one is a break.
    pub(super) fn paragraph(&mut self, p: &str) -> Result<()> {
        if p.trim().is_empty() {
            self.tick()?;
            self.blank_line();
            return Ok(());
        }
        self.paragraphs += 1;
        self.push(p, Location::Paragraph { n: self.paragraphs })
    }

    pub(super) fn finish(self) -> Result<Parsed> {
        if self.text.is_empty() {
            return Err(invalid(self.name, "it holds no text"));
        }
        Ok((self.text, self.segments, self.attachments))
    }
}
