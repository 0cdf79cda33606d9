//! CSV import: generated and mutated files imported; a dry run or a refused import writes no
//! history, and every value an import stores is valid for its field.

use super::*;

pub(super) struct CsvImport {
    pub(super) dir: std::path::PathBuf,
    pub(super) ws: Workspace,
    pub(super) rows: HashMap<String, (Vec<String>, Vec<Vec<String>>)>,
    pub(super) vocab: Vocabulary,
    pub(super) cases_on_ws: u64,
}

impl CsvImport {
    pub(super) fn new(dir: &std::path::Path) -> Result<CsvImport, Error> {
        let mut rows = HashMap::new();
        for (path, text) in DEMO_DATA {
            let object = path.trim_start_matches("data/").trim_end_matches(".csv");
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let headers: Vec<String> =
                r.headers().map(|h| h.iter().map(String::from).collect()).unwrap_or_default();
            let body: Vec<Vec<String>> =
                r.records().flatten().map(|rec| rec.iter().map(String::from).collect()).collect();
            rows.insert(object.to_string(), (headers, body));
        }
        Ok(CsvImport {
            dir: dir.to_path_buf(),
            ws: fresh_demo(dir, "csv-import")?,
            rows,
            vocab: Vocabulary::of(&demo_definition()),
            cases_on_ws: 0,
        })
    }

    pub(super) fn csv(&self, rng: &mut Rng, object: &str) -> Vec<u8> {
        let (headers, body) = &self.rows[object];
        let mut headers = headers.clone();
        let mut body = body.clone();
        if rng.chance(0.7) {
            // New records: without the id column, rows are creates.
            if let Some(i) = headers.iter().position(|h| h == "id") {
                headers.remove(i);
                for row in body.iter_mut() {
                    if i < row.len() {
                        row.remove(i);
                    }
                }
            }
        }
        if rng.chance(0.1) {
            let i = rng.below(headers.len());
            headers[i] =
                if rng.chance(0.5) { gen::nasty(rng) } else { headers[rng.below(headers.len())].clone() };
        }
        let mut lines: Vec<Vec<String>> = vec![headers.clone()];
        for _ in 0..rng.size(4, 300) {
            let mut row = rng.pick(&body).clone();
            for cell in row.iter_mut() {
                if rng.chance(0.15) {
                    *cell = match rng.below(3) {
                        0 => gen::nasty(rng),
                        1 => gen::date(rng),
                        _ => gen::phrase(rng, &self.vocab.words),
                    };
                }
            }
            if rng.chance(0.05) {
                row.truncate(rng.below(row.len() + 1));
            }
            lines.push(row);
        }
        let mut w = csv::WriterBuilder::new()
            .terminator(if rng.chance(0.3) { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .flexible(true)
            .from_writer(vec![]);
        for l in &lines {
            let _ =
                w.write_record(
                    l.iter().map(|c| if c.is_empty() && l == &headers { " " } else { c.as_str() }),
                );
        }
        let mut out = w.into_inner().unwrap_or_default();
        if rng.chance(0.05) {
            out.splice(0..0, b"\xef\xbb\xbf".iter().copied());
        }
        if rng.chance(0.1) {
            gen::mutate(rng, &mut out, &[b"\"", b",", b"\r\n", b"\n", b"\r", b"=", b"\x00"]);
        }
        out
    }
}

impl crate::Target for CsvImport {
    fn name(&self) -> &str {
        "csv-import"
    }

    fn case(&mut self, rng: &mut Rng, case: u64) -> Outcome {
        self.cases_on_ws += 1;
        if self.cases_on_ws > 2000 {
            match fresh_demo(&self.dir, "csv-import") {
                Ok(ws) => self.ws = ws,
                Err(e) => return Outcome::Finding("setup", e.message),
            }
            self.cases_on_ws = 0;
        }
        let object = OBJECTS[rng.below(OBJECTS.len())];
        let bytes = self.csv(rng, object);
        keep_input(case, "csv", &bytes);
        let user = *rng.pick(USERS);
        let opts = ImportOptions {
            mode: if rng.chance(0.5) { ImportMode::SkipInvalid } else { ImportMode::AllOrNothing },
            dry_run: rng.chance(0.2),
            ..Default::default()
        };
        let since = history_len(&self.ws);
        let last_seq = scalar(self.ws.raw_connection(), "SELECT coalesce(max(seq), 0) FROM data_history");
        let session = match self.ws.session(user) {
            Ok(s) => s,
            Err(e) => return typed(e),
        };
        let result = import_csv(&session, object, bytes.as_slice(), &opts);
        let written = history_len(&self.ws) - since;
        match result {
            Ok(report) => {
                if (opts.dry_run || !report.committed) && written != 0 {
                    return Outcome::Finding(
                        "invalid_write",
                        format!("{written} history rows from an import that wrote nothing"),
                    );
                }
                match stored_values_are_valid(&self.ws, last_seq) {
                    Ok(()) => Outcome::Passed,
                    Err(p) => Outcome::Finding("invalid_write", p),
                }
            }
            Err(e) => {
                if written != 0 {
                    return Outcome::Finding(
                        "invalid_write",
                        format!("{written} history rows from a refused import"),
                    );
                }
                typed(e)
            }
        }
    }
}
