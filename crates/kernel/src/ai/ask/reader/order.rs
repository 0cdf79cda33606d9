//! Superlatives and top N, read by the kernel: "the largest invoice", "the five biggest deals",
//! "which client pays the most", "the oldest open opportunities", "die größte Rechnung", "la
//! facture la plus récente", "el cliente más antiguo". The word says the direction and the kind
//! of field (an amount or a number; a date); the field is the one the question names, else the
//! object's first field of that kind. A singular ("the largest invoice", "the most") is one row.

use super::*;
use crate::records::query::Direction;

/// What a superlative sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// An amount or a number.
    Magnitude,
    /// A date.
    Time,
}

/// An order the question asks for on one object.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderReading {
    pub object: String,
    pub field: String,
    pub direction: Direction,
    /// One row (a singular superlative), or the count the question says ("the 5 largest").
    pub limit: Option<u32>,
    /// The words that say it.
    pub span: Vec<usize>,
}

/// The superlative at word `i`: its kind, direction and how many words it takes.
fn superlative_at(t: &[Token], i: usize) -> Option<(Scale, Direction, usize)> {
    use Direction::{Asc, Desc};
    let w = t[i].lower.as_str();
    let next = t.get(i + 1).map(|x| x.lower.as_str()).unwrap_or("");
    // "most recent", "least expensive", "plus récente", "más antiguo": a comparative word and
    // an adjective.
    let adjective = |a: &str| -> Option<(Scale, bool)> {
        const TIME_UP: &[&str] = &[
            "recent",
            "récent",
            "récente",
            "récents",
            "récentes",
            "reciente",
            "recientes",
            "nuevo",
            "nueva",
            "nuevos",
            "nuevas",
            "nouveau",
            "nouvelle",
            "nouveaux",
            "nouvelles",
        ];
        const TIME_DOWN: &[&str] = &[
            "ancien",
            "ancienne",
            "anciens",
            "anciennes",
            "antiguo",
            "antigua",
            "antiguos",
            "antiguas",
            "viejo",
            "vieja",
            "vieux",
            "vieille",
        ];
        const UP: &[&str] = &[
            "expensive",
            "valuable",
            "profitable",
            "cher",
            "chère",
            "chers",
            "chères",
            "caro",
            "cara",
            "caros",
            "caras",
            "grand",
            "grande",
            "grands",
            "grandes",
            "gros",
            "grosse",
            "élevé",
            "élevée",
            "élevés",
            "élevées",
            "alto",
            "alta",
            "altos",
            "altas",
            "important",
            "importante",
            "importants",
            "importantes",
        ];
        const DOWN: &[&str] = &[
            "petit",
            "petite",
            "petits",
            "petites",
            "pequeño",
            "pequeña",
            "pequeños",
            "pequeñas",
            "bas",
            "basse",
            "bajo",
            "baja",
            "bajos",
            "bajas",
            "faible",
            "faibles",
        ];
        Some(if TIME_UP.contains(&a) {
            (Scale::Time, true)
        } else if TIME_DOWN.contains(&a) {
            (Scale::Time, false)
        } else if UP.contains(&a) {
            (Scale::Magnitude, true)
        } else if DOWN.contains(&a) {
            (Scale::Magnitude, false)
        } else {
            return None;
        })
    };
    if matches!(w, "most" | "plus" | "más" | "mas" | "meist") {
        if let Some((scale, up)) = adjective(next) {
            return Some((scale, if up { Desc } else { Asc }, 2));
        }
    }
    // "con más empleados", "el que más factura", "le plus de contacts": the most of a number.
    let before = i.checked_sub(1).map(|b| t[b].lower.as_str()).unwrap_or("");
    if matches!(w, "más" | "mas") && !matches!(next, "de" | "que") {
        return Some((Scale::Magnitude, Desc, 1));
    }
    if w == "plus" && matches!(before, "le" | "la" | "les") && matches!(next, "de" | "d") {
        return Some((Scale::Magnitude, Desc, 2));
    }
    if matches!(w, "least" | "moins" | "menos") {
        if let Some((scale, up)) = adjective(next) {
            return Some((scale, if up { Asc } else { Desc }, 2));
        }
    }
    let stem = t[i].stem.as_str();
    let one = |s: Scale, d: Direction| Some((s, d, 1));
    match w {
        "largest" | "biggest" | "highest" | "greatest" | "top" | "most" | "maximum" | "max" | "priciest"
        | "best" | "meilleur" | "meilleure" | "meilleurs" | "meilleures" | "mejor" | "mejores" => {
            one(Scale::Magnitude, Desc)
        }
        "smallest" | "lowest" | "least" | "cheapest" | "minimum" | "min" | "fewest" | "bottom" | "worst"
        | "pire" | "pires" | "peor" | "peores" => one(Scale::Magnitude, Asc),
        "newest" | "latest" | "youngest" => one(Scale::Time, Desc),
        "oldest" | "earliest" => one(Scale::Time, Asc),
        "mayor" | "mayores" => one(Scale::Magnitude, Desc),
        "menor" | "menores" => one(Scale::Magnitude, Asc),
        _ => {
            // German superlatives in their inflections: "größte", "höchsten", "neueste".
            let de = ["größt", "grösst", "höchst", "meist", "teuerst", "wertvollst", "best"];
            let de_low = ["kleinst", "niedrigst", "geringst", "billigst", "wenigst", "schlechtest"];
            let de_new = ["neuest", "jüngst", "letzt", "aktuellst"];
            let de_old = ["ältest", "frühest"];
            let starts = |xs: &[&str]| xs.iter().any(|x| w.starts_with(x));
            if starts(&de) {
                one(Scale::Magnitude, Desc)
            } else if starts(&de_low) {
                one(Scale::Magnitude, Asc)
            } else if starts(&de_new) {
                one(Scale::Time, Desc)
            } else if starts(&de_old) {
                one(Scale::Time, Asc)
            } else if stem == "top" {
                one(Scale::Magnitude, Desc)
            } else {
                None
            }
        }
    }
}

/// Words before or after a superlative that only strengthen it.
const INTENSIFIERS: &[&str] = &[
    "single",
    "very",
    "absolute",
    "absolutely",
    "overall",
    "ultimate",
    "ever",
    "seul",
    "seule",
    "único",
    "única",
    "unico",
    "unica",
    "absolut",
];

/// The orders the question asks for, one per object in scope that has a field of the kind.
pub(super) fn orders_said(
    t: &[Token],
    taken: &[usize],
    counts: &[(usize, usize, u32)],
    mentions: &[super::objects::Mention],
    in_scope: &[&ProjectedObject],
) -> Vec<OrderReading> {
    let Some((at, (scale, direction, len))) =
        (0..t.len()).filter(|i| !taken.contains(i)).find_map(|i| superlative_at(t, i).map(|s| (i, s)))
    else {
        return vec![];
    };
    // Words that only strengthen it are its own: "our *single* largest", "the largest *ever*".
    let mut first = at;
    while first > 0 && !taken.contains(&(first - 1)) && INTENSIFIERS.contains(&t[first - 1].lower.as_str()) {
        first -= 1;
    }
    let mut end = at + len;
    while end < t.len() && !taken.contains(&end) && INTENSIFIERS.contains(&t[end].lower.as_str()) {
        end += 1;
    }
    let span: Vec<usize> = (first..end).collect();
    let (at, len) = (first, end - first);
    // "the five largest", "top 3", "les trois plus grandes": the count said next to it.
    let near_count =
        counts.iter().find(|(from, to, _)| *to + 1 == at || *from == at + len).map(|(_, _, n)| *n);
    // "the account with the most contacts": a superlative of other records (a count of them)
    // is no field's order; the kernel reads none, and the word is asked about.
    let counted: Vec<&str> = mentions
        .iter()
        .filter(|m| m.span[0] >= at + len && m.span[0] <= at + len + 3)
        .filter(|m| {
            (at + len..m.span[0])
                .all(|i| matches!(t[i].lower.as_str(), "of" | "the" | "number" | "de" | "der" | "an"))
        })
        .map(|m| m.object.as_str())
        .collect();
    let mut out = vec![];
    for o in in_scope.iter().filter(|o| !counted.iter().any(|c| *c != o.key)) {
        let fits = |f: &&ProjectedField| match scale {
            Scale::Magnitude => matches!(f.field_type, FieldType::Currency | FieldType::Number),
            Scale::Time => matches!(f.field_type, FieldType::Date | FieldType::Datetime),
        };
        let kind: Vec<&ProjectedField> = o.fields.iter().filter(fits).collect();
        let named = kind.iter().copied().find(|f| names_field(t, f));
        let field = named.or_else(|| match scale {
            Scale::Magnitude => kind
                .iter()
                .copied()
                .find(|f| f.field_type == FieldType::Currency)
                .or_else(|| kind.first().copied()),
            Scale::Time => kind.first().copied(),
        });
        let Some(field) = field else { continue };
        // In the singular ("the largest invoice", "die größte Rechnung"): one row.
        let said = mentions.iter().find(|m| m.object == o.key).and_then(|m| m.plural).map(|p| !p);
        let singular =
            said.unwrap_or_else(|| at > 0 && matches!(t[at - 1].lower.as_str(), "the" | "le" | "la" | "el"));
        let limit = near_count.or(if singular && near_count.is_none() { Some(1) } else { None });
        out.push(OrderReading {
            object: o.key.clone(),
            field: field.key.clone(),
            direction,
            limit,
            span: span.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superlatives_in_four_languages() {
        let kinds = |q: &str| {
            let t = tokens(q);
            (0..t.len()).find_map(|i| superlative_at(&t, i)).map(|(s, d, _)| (s, d))
        };
        use Direction::{Asc, Desc};
        assert_eq!(kinds("the biggest deal"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("who pays the most"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("the most recent invoice"), Some((Scale::Time, Desc)));
        assert_eq!(kinds("the least expensive line"), Some((Scale::Magnitude, Asc)));
        assert_eq!(kinds("die größte Rechnung"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("die älteste Rechnung"), Some((Scale::Time, Asc)));
        assert_eq!(kinds("la facture la plus récente"), Some((Scale::Time, Desc)));
        assert_eq!(kinds("el cliente más antiguo"), Some((Scale::Time, Asc)));
        assert_eq!(kinds("la factura mayor"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("la cuenta con más empleados"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("le compte qui a le plus de contacts"), Some((Scale::Magnitude, Desc)));
        assert_eq!(kinds("facturas de más de 5000"), None);
        assert_eq!(kinds("invoices of Acme"), None);
    }
}
