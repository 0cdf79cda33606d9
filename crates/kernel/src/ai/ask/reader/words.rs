//! The question's words: tokens (as written, lower-cased, stemmed), runs of words, and the
//! word lists the reader leaves out or reads as an order.

use super::*;
use crate::locale::Language;

/// One word of the question: as written, lower-cased, and stemmed (in English, and in each
/// language the reader reads).
#[derive(Debug, Clone)]
pub struct Token {
    pub text: String,
    pub lower: String,
    pub stem: String,
    /// The Snowball stem in each of `Language::ALL`, in that order, made when first asked for
    /// (most words are only ever compared in English).
    stems: std::sync::OnceLock<[String; 4]>,
}

impl Token {
    /// The word's stem in `language`, without its accents.
    pub fn stem_in(&self, language: Language) -> &str {
        let stems = self.stems.get_or_init(|| {
            Language::ALL.map(|l| fold(&rust_stemmers::Stemmer::create(algorithm(l)).stem(&self.lower)))
        });
        &stems[slot(language)]
    }
}

/// The question's words, split as the value index splits stored values.
pub fn tokens(text: &str) -> Vec<Token> {
    crate::records::value_index::words(text).iter().map(|w| token(w)).collect()
}

fn algorithm(language: Language) -> rust_stemmers::Algorithm {
    match language {
        Language::En => rust_stemmers::Algorithm::English,
        Language::De => rust_stemmers::Algorithm::German,
        Language::Fr => rust_stemmers::Algorithm::French,
        Language::Es => rust_stemmers::Algorithm::Spanish,
    }
}

/// Where a language's stem is kept in `Token::stems`.
fn slot(language: Language) -> usize {
    Language::ALL.iter().position(|l| *l == language).unwrap_or(0)
}

pub(super) fn token(text: &str) -> Token {
    let lower = text.to_lowercase();
    let stem = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English).stem(&lower).into_owned();
    Token { text: text.to_string(), stem, lower, stems: std::sync::OnceLock::new() }
}

/// A question word says a word of a label written in `language`: the same word, the same stem
/// in that language, or (both at least five letters) one edit apart.
pub(super) fn says_in(q: &Token, p: &Token, language: Language) -> bool {
    if language == Language::En {
        return says(q, p);
    }
    // Short words share stems across languages by chance ("not" and French "note").
    let long = q.lower.chars().count() >= 4 && p.lower.chars().count() >= 4;
    q.lower == p.lower
        || fold(&q.lower) == fold(&p.lower)
        || (long && !q.stem_in(language).is_empty() && q.stem_in(language) == p.stem_in(language))
        || (q.lower.chars().count() >= 5
            && p.lower.chars().count() >= 5
            && q.lower.chars().all(char::is_alphabetic)
            && strsim::damerau_levenshtein(&fold(&q.lower), &fold(&p.lower)) <= 1)
}

/// A word without its accents (`locale::without_accents`).
pub(super) fn fold(w: &str) -> String {
    crate::locale::without_accents(w)
}

/// Where `phrase`, written in `language`, stands in the question as a run of words.
pub(super) fn runs_in(question: &[Token], phrase: &[Token], language: Language) -> Vec<usize> {
    if phrase.is_empty() || phrase.len() > question.len() {
        return vec![];
    }
    (0..=question.len() - phrase.len())
        .filter(|&at| phrase.iter().enumerate().all(|(i, p)| says_in(&question[at + i], p, language)))
        .collect()
}

/// A question word says a word of a label or value: the same word, the same stem, or (both at
/// least five letters) one edit apart.
pub(super) fn says(q: &Token, p: &Token) -> bool {
    if q.lower == p.lower {
        return true;
    }
    // A verb's forms share a stem but not a meaning: "closing" or "close" (the close date)
    // does not say "closed" (a stage), nor "closed" "closing".
    let ends = |t: &Token, e: &str| t.lower.len() > e.len() + 2 && t.lower.ends_with(e);
    let participle = |t: &Token| ends(t, "ed") && !ends(t, "eed");
    if (participle(p) && !participle(q)) || (participle(q) && ends(p, "ing")) {
        return false;
    }
    if q.stem == p.stem && !q.stem.is_empty() {
        return true;
    }
    // A verb's irregular forms say each other ("lose" and "lost", "win" and "won").
    if lemma(&q.lower).is_some() && lemma(&q.lower) == lemma(&p.lower) {
        return true;
    }
    // An acronym in the plural: "CFOs" says "CFO".
    let acronym = q.text.strip_suffix('s').is_some_and(|b| {
        b.chars().count() >= 2 && b.chars().all(|c| c.is_ascii_uppercase()) && b.to_lowercase() == p.lower
    });
    if acronym {
        return true;
    }
    let letters = |t: &Token| t.lower.chars().all(char::is_alphabetic);
    let near = |a: &str, b: &str| {
        a.chars().count() >= 5 && b.chars().count() >= 5 && strsim::damerau_levenshtein(a, b) <= 1
    };
    letters(q) && letters(p) && (near(&q.lower, &p.lower) || near(&q.stem, &p.stem))
}

/// Where `phrase` stands in the question as a run of words.
pub(super) fn runs(question: &[Token], phrase: &[Token]) -> Vec<usize> {
    if phrase.is_empty() || phrase.len() > question.len() {
        return vec![];
    }
    (0..=question.len() - phrase.len())
        .filter(|&at| phrase.iter().enumerate().all(|(i, p)| says(&question[at + i], p)))
        .collect()
}

/// Words that carry no condition: a question's framing, articles, prepositions.
pub const FILLER: &[&str] = &[
    "a",
    "about",
    "accounts",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "each",
    "every",
    "find",
    "for",
    "from",
    "get",
    "give",
    "had",
    "has",
    "have",
    "how",
    "i",
    "in",
    "is",
    "it",
    "its",
    "let",
    "list",
    "many",
    "me",
    "much",
    "need",
    "of",
    "on",
    "or",
    "our",
    "please",
    "record",
    "records",
    "s",
    "see",
    "show",
    "some",
    "still",
    "tell",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "us",
    "want",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "whose",
    "with",
    "would",
    "you",
    "your",
    "marked",
    "based",
    "located",
    "currently",
    "now",
    "ones",
    "one",
    "whole",
    // The same framing in German, French and Spanish (a locale's reader asks in its language).
    "im",
    "der",
    "die",
    "das",
    "den",
    "dem",
    "ein",
    "eine",
    "mit",
    "von",
    "für",
    "alle",
    "zeige",
    "welche",
    "les",
    "le",
    "la",
    "du",
    "avec",
    "pour",
    "tous",
    "toutes",
    "quelles",
    "quels",
    "el",
    "los",
    "las",
    "del",
    "con",
    "para",
    "todos",
    "todas",
    "muestra",
];

/// Pronouns that stand for records named elsewhere: in the question itself ("opportunités sauf
/// *celles* en négociation"), or in an earlier question Ask does not have ("and *those* in Berlin?").
pub const POINTING: &[&str] = &[
    "them", "those", "these", "ones", "diese", "jene", "denen", "ceux", "celles", "ceux-ci", "esos", "esas",
    "estos", "estas",
];

/// Words that carry no condition of their own, beyond `FILLER`: the verbs that only link ("work
/// in", "came from", "did we …"), pronouns and politeness, in English, German, French and
/// Spanish. A question's word that is none of these and that no reading uses is a content
/// word the answer must place, or ask about. Negation cues are never here: a "not" that
/// negates nothing is asked about.
pub const LIGHT_WORDS: &[&str] = &[
    // English
    // A flag's own verb: "flagged do not call", "marked as hot".
    "flagged",
    "marked",
    "tagged",
    "labelled",
    "labeled",
    "markiert",
    "gekennzeichnet",
    "marqué",
    "marquée",
    "marqués",
    "marquées",
    "marcado",
    "marcada",
    "marcados",
    "marcadas",
    "work",
    "works",
    "working",
    "worked",
    "come",
    "comes",
    "came",
    "coming",
    "go",
    "goes",
    "going",
    "went",
    "get",
    "gets",
    "got",
    "make",
    "makes",
    "made",
    "do",
    "done",
    "doing",
    "been",
    "being",
    "show",
    "shows",
    "listing",
    "gave",
    "given",
    "found",
    "looking",
    "look",
    "know",
    "belong",
    "belongs",
    "belonging",
    "sit",
    "sits",
    "exist",
    "exists",
    "live",
    "lives",
    "happen",
    "happened",
    "just",
    "only",
    "kindly",
    "here",
    "should",
    "will",
    "shall",
    "may",
    "might",
    "dürfen",
    "darf",
    "können",
    "kann",
    "sollen",
    "soll",
    "müssen",
    "muss",
    "must",
    "he",
    "she",
    "him",
    "her",
    "his",
    "hers",
    "who",
    "whom",
    "whose",
    "then",
    "so",
    "such",
    "like",
    "than",
    "ones",
    "anything",
    "something",
    "stuff",
    "thing",
    "things",
    "kind",
    "kinds",
    "right",
    "now",
    "currently",
    "any",
    "there",
    "were",
    "everything",
    "everyone",
    "belonging",
    "registered",
    "listed",
    "recorded",
    "stored",
    "entered",
    "all",
    "total",
    "how",
    "many",
    "number",
    "count",
    // German
    "sind",
    "ist",
    "war",
    "waren",
    "hat",
    "haben",
    "hatte",
    "gibt",
    "gib",
    "zeig",
    "zeigen",
    "liste",
    "finde",
    "finden",
    "arbeiten",
    "arbeitet",
    "kommen",
    "kommt",
    "kam",
    "kamen",
    "wurde",
    "wurden",
    "werden",
    "wird",
    "bitte",
    "welcher",
    "welches",
    "welchen",
    "mir",
    "uns",
    "unsere",
    "unser",
    "unseren",
    "wir",
    "ich",
    "es",
    "auch",
    "mal",
    "schon",
    "nur",
    "alles",
    "was",
    "wer",
    "wie",
    "viele",
    "gibt's",
    "an",
    "in",
    "auf",
    "bei",
    "zu",
    "zum",
    "zur",
    "aus",
    "vom",
    "am",
    "ins",
    "sich",
    "sie",
    "ihre",
    "ihr",
    "einem",
    "einer",
    "eines",
    "diesem",
    "dieser",
    "dieses",
    "des",
    "dass",
    "als",
    "wo",
    // French
    "sont",
    "est",
    "était",
    "étaient",
    "ont",
    "avait",
    "montre",
    "montrez",
    "montre-moi",
    "affiche",
    "afficher",
    "lister",
    "trouve",
    "trouver",
    "travaillent",
    "travaille",
    "viennent",
    "vient",
    "venu",
    "quel",
    "quelle",
    "nous",
    "nos",
    "notre",
    "je",
    "moi",
    "qui",
    "que",
    "qu",
    "dont",
    "où",
    "tout",
    "des",
    "de",
    "l",
    "d",
    "en",
    "à",
    "au",
    "aux",
    "par",
    "sur",
    "dans",
    "vous",
    "plaît",
    "svp",
    "il",
    "elle",
    "ils",
    "elles",
    "leur",
    "leurs",
    "ces",
    "ce",
    "cette",
    "un",
    "une",
    "y",
    "a",
    "combien",
    "sont-ils",
    "ne",
    // Spanish
    "son",
    "es",
    "está",
    "están",
    "era",
    "eran",
    "fue",
    "fueron",
    "tiene",
    "tienen",
    "tenía",
    "muéstrame",
    "mostrar",
    "lista",
    "listar",
    "encuentra",
    "encontrar",
    "trabajan",
    "trabaja",
    "vienen",
    "vino",
    "cuáles",
    "cuál",
    "qué",
    "nuestros",
    "nuestras",
    "nuestro",
    "nosotros",
    "yo",
    "me",
    "en",
    "al",
    "por",
    "sobre",
    "favor",
    "su",
    "sus",
    "lo",
    "les",
    "hay",
    "cuántos",
    "cuántas",
    "este",
    "esta",
    "estos",
    "estas",
    "uno",
    "unos",
    "unas",
    // Verbs that only introduce another reading (an owner, an amount, words to find).
    "own",
    "owns",
    "owned",
    "owner",
    "owning",
    "worth",
    "valued",
    "costing",
    "mention",
    "mentions",
    "mentioning",
    "mentioned",
    "say",
    "says",
    "saying",
    "said",
    "talk",
    "talks",
    "talking",
    "discuss",
    "discusses",
    "discussing",
    "refer",
    "refers",
    "referring",
    "gehören",
    "gehört",
    "erwähnen",
    "erwähnt",
    "wert",
    "appartiennent",
    "appartient",
    "mentionnent",
    "mentionne",
    "parlent",
    "parle",
    "pertenecen",
    "pertenece",
    "mencionan",
    "menciona",
    "hablan",
    "habla",
    // What is left of a verb before "n't" (the tokenizer splits "aren't" in two).
    "aren",
    "isn",
    "don",
    "doesn",
    "didn",
    "wasn",
    "weren",
    "haven",
    "hasn",
    "hadn",
    "couldn",
    "wouldn",
    "shouldn",
    "can",
    "could",
    "would",
    "onwards",
    "onward",
    "yet",
    "already",
    "ever",
];

/// Words that ask for an order or a count of rows rather than a condition.
pub const ORDER_WORDS: &[&str] = &[
    "largest",
    "biggest",
    "highest",
    "top",
    "most",
    "greatest",
    "smallest",
    "lowest",
    "least",
    "newest",
    "latest",
    "recent",
    "oldest",
    "earliest",
    "first",
    "last",
    "sorted",
    "sort",
    "order",
    "ordered",
    "ascending",
    "descending",
    "by",
];

pub(super) fn words_of(tokens: &[Token], span: &[usize]) -> String {
    span.iter().map(|&i| tokens[i].text.as_str()).collect::<Vec<_>>().join(" ")
}

/// The stems of every word the projection uses for objects, fields, values and terms: a
/// one-word stored value that is also one of these is not taken as said.
pub(super) fn vocabulary_words(p: &Projection) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut add = |text: &str| out.extend(tokens(text).into_iter().map(|t| t.stem));
    for o in &p.objects {
        add(&o.label);
        add(&o.plural_label);
        add(&o.key.replace('_', " "));
        for f in &o.fields {
            add(&f.label);
            for (v, l) in &f.values {
                add(&v.replace('_', " "));
                add(l);
            }
        }
        for term in &o.terms {
            for ph in term.phrases() {
                add(ph);
            }
        }
    }
    for w in FILLER.iter().chain(ORDER_WORDS) {
        add(w);
    }
    out.sort();
    out.dedup();
    out
}

/// A German participle as its infinitive's letters: "angerufen" → "anrufen", "gezahlt" →
/// "zahlt" (the "ge" a participle puts after a separable prefix or before the stem).
pub(super) fn participle_base(w: &str) -> String {
    const PREFIXES: &[&str] = &[
        "an", "ab", "auf", "aus", "ein", "mit", "nach", "vor", "zu", "zurück", "bei", "weg", "her", "hin", "",
    ];
    PREFIXES
        .iter()
        .find_map(|p| {
            let rest = w.strip_prefix(p)?.strip_prefix("ge")?;
            (rest.chars().count() >= 4).then(|| format!("{p}{rest}"))
        })
        .unwrap_or_else(|| w.to_string())
}

/// The base form of an English verb whose past differs from it by more than an ending (the
/// verbs records are won, lost, paid, sent, sold and bought by).
fn lemma(w: &str) -> Option<&'static str> {
    const FORMS: &[(&str, &[&str])] = &[
        ("win", &["win", "wins", "winning", "won"]),
        ("lose", &["lose", "loses", "losing", "lost"]),
        ("pay", &["pay", "pays", "paying", "paid"]),
        ("send", &["send", "sends", "sending", "sent"]),
        ("sell", &["sell", "sells", "selling", "sold"]),
        ("buy", &["buy", "buys", "buying", "bought"]),
        ("spend", &["spend", "spends", "spending", "spent"]),
        ("write", &["write", "writes", "writing", "wrote", "written"]),
        ("begin", &["begin", "begins", "beginning", "began", "begun"]),
    ];
    FORMS.iter().find(|(_, forms)| forms.contains(&w)).map(|(base, _)| *base)
}
