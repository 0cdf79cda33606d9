#!/usr/bin/env python3
"""Writes eval/ask-grammar.jsonl: Ask cases for each kind of reading the question reader must do
by grammar rather than by lists, at least 15 wordings a kind, about a third of them in German,
French or Spanish (asked by users whose locale is English):

1. the trust contract: a word nothing in the workspace holds makes the answer a clarification
   (`expect_clarification`), never a table;
2. the object from the question's nouns (synonyms, other languages, the head noun) and
   conditions through a parent;
3. negation (not, n't, without, except, other than, neither … nor; nicht, ohne; pas, sans; no,
   sin) and blank / not blank;
4. superlatives and top N (one row in the singular, ordered);
5. numbers in words, a range's unit, quarters and relative years;
6. other languages: objects, values, fields, numbers and dates in German, French and Spanish;
7. what the query language cannot say (an average, two fields compared, a follow-up): a plain
   refusal (`expect_refusal`).

Expected ids are computed here from the demo fixture (fixtures/demo/data/*.csv) with the demo's
access rules: opportunities are private to their owner except for ava and cara (view all); the
other objects are readable by everyone asking below. Dates are absolute. The format is the one
`countersign-cli eval ask --cases` reads. Run: python3 eval/make_ask_grammar.py
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from demo_fixture import acc, account, by_name, contact, inv, invoice, line, note, num, opps, opportunity  # noqa: E402


def top(rows_, key, n, reverse=True):
    """The first n rows by key; None when a tie at the cut makes the answer ambiguous."""
    s = sorted(rows_, key=key, reverse=reverse)
    if len(s) > n and key(s[n - 1]) == key(s[n]):
        return None
    return s[:n]


def quarter(d, year, q):
    return d.startswith(str(year)) and (int(d[5:7]) - 1) // 3 + 1 == q


GLOBEX = by_name["Globex Holdings"]
INITECH = by_name["Initech GmbH"]

cases = []


def add(kind, user, question, obj, expected=None, ordered=False, **extra):
    cases.append((kind, user, question, obj, expected, ordered, extra))


# 1. The trust contract: words nothing holds.
for user, q, obj in [
    ("ava", "Contacts in sales at Zorblaxco", "contact"),
    ("ava", "Accounts in Blorpville", "account"),
    ("ava", "Opportunities for the Quuxly rollout", "opportunity"),
    ("cara", "Invoices flagged as fraudulent", "invoice"),
    ("ava", "Accounts with a platinum loyalty badge", "account"),
    ("ava", "Contacts who play golf", "contact"),
    ("ava", "Opportunities from the Frobnicate campaign", "opportunity"),
    ("cara", "Invoices approved by the steering board", "invoice"),
    ("ava", "Accounts in the diamond tier", "account"),
    ("ava", "Engineers at Wibblecorp", "contact"),
    ("ava", "Konten in Blorpstadt", "account"),
    ("cara", "Rechnungen mit Treuebonus", "invoice"),
    ("ava", "comptes à Blorpville", "account"),
    ("cara", "factures signalées comme frauduleuses", "invoice"),
    ("ava", "cuentas en Blorpilla", "account"),
    ("ava", "contactos que juegan al golf", "contact"),
]:
    add(1, user, q, obj, expect_clarification=True)

# 2. The object from the question's nouns; conditions through a parent.
contacts_at = lambda name: [c for c in contact if c["account"] == by_name[name]]
add(2, "ava", "Who are our people at Globex Holdings?", "contact", contacts_at("Globex Holdings"))
add(2, "ava", "Contacts at Initech GmbH", "contact", contacts_at("Initech GmbH"))
add(2, "ava", "Notes about Globex Holdings", "note", [n for n in note if n["account"] == GLOBEX])
add(2, "ava", "Deals of Initech GmbH", "opportunity", [o for o in opps("ava") if o["account"] == INITECH])
add(2, "ava", "Contacts at accounts in Lyon", "contact",
    [c for c in contact if acc[c["account"]]["billing_city"] == "Lyon"])
add(2, "cara", "Invoices of accounts in Germany", "invoice",
    [i for i in invoice if acc[i["account"]]["billing_country"] == "Germany"])
add(2, "ava", "Opportunities of retail accounts", "opportunity",
    [o for o in opps("ava") if acc[o["account"]]["industry"] == "retail"])
add(2, "cara", "Bills of Globex Holdings", "invoice", [i for i in invoice if i["account"] == GLOBEX])
add(2, "cara", "Invoice lines on invoices of Globex Holdings", "invoice_line",
    [x for x in line if inv[x["invoice"]]["account"] == GLOBEX])
add(2, "ava", "Companies in Lyon", "account", [a for a in account if a["billing_city"] == "Lyon"])
add(2, "ava", "Kontakte bei Globex Holdings", "contact", contacts_at("Globex Holdings"))
add(2, "cara", "Rechnungen von Initech GmbH", "invoice", [i for i in invoice if i["account"] == INITECH])
add(2, "ava", "les contacts de Globex Holdings", "contact", contacts_at("Globex Holdings"))
add(2, "ava", "les affaires d'Initech GmbH", "opportunity", [o for o in opps("ava") if o["account"] == INITECH])
add(2, "cara", "las facturas de Globex Holdings", "invoice", [i for i in invoice if i["account"] == GLOBEX])
add(2, "ava", "notas sobre Initech GmbH", "note", [n for n in note if n["account"] == INITECH])

# 3. Negation, blank and not blank.
add(3, "ava", "Accounts that are not in Lyon", "account", [a for a in account if a["billing_city"] != "Lyon"])
add(3, "ava", "Opportunities that aren't in negotiation or proposal", "opportunity",
    [o for o in opps("ava") if o["stage"] not in ("negotiation", "proposal")])
add(3, "ava", "Which accounts are not customers?", "account", [a for a in account if a["type"] != "customer"])
add(3, "ava", "Contacts not in sales", "contact", [c for c in contact if c["department"] != "sales"])
add(3, "cara", "Invoices other than paid ones", "invoice", [i for i in invoice if i["status"] != "paid"])
add(3, "cara", "Invoices that are neither paid nor void", "invoice",
    [i for i in invoice if i["status"] not in ("paid", "void")])
add(3, "cara", "Invoices without a PO number", "invoice", [i for i in invoice if not i["po_number"]])
add(3, "cara", "Invoices with a PO number", "invoice", [i for i in invoice if i["po_number"]])
add(3, "ava", "Opportunities with no next step", "opportunity", [o for o in opps("ava") if not o["next_step"]])
add(3, "ava", "Accounts except those in retail", "account", [a for a in account if a["industry"] != "retail"])
add(3, "ava", "Non-customer accounts", "account", [a for a in account if a["type"] != "customer"])
add(3, "ava", "Konten, die nicht in Lyon sind", "account", [a for a in account if a["billing_city"] != "Lyon"])
add(3, "cara", "Rechnungen ohne Bestellnummer", "invoice", [i for i in invoice if not i["po_number"]])
add(3, "ava", "comptes qui ne sont pas à Lyon", "account", [a for a in account if a["billing_city"] != "Lyon"])
add(3, "ava", "cuentas que no están en Lyon", "account", [a for a in account if a["billing_city"] != "Lyon"])
add(3, "ava", "oportunidades sin próximo paso", "opportunity", [o for o in opps("ava") if not o["next_step"]])

# 4. Superlatives and top N.
def sup(kind, user, q, obj, rows_, key, n, reverse=True):
    t = top(rows_, key, n, reverse)
    if t is not None:
        add(kind, user, q, obj, t, ordered=True)


sup(4, "cara", "What is the largest invoice?", "invoice", invoice, lambda x: num(x["total"]), 1)
sup(4, "ava", "Which account has the highest annual revenue?", "account", account,
    lambda x: num(x["annual_revenue"]), 1)
sup(4, "ava", "The five biggest opportunities", "opportunity", opps("ava"), lambda x: num(x["amount"]), 5)
sup(4, "ben", "My largest opportunity", "opportunity", opps("ben"), lambda x: num(x["amount"]), 1)
sup(4, "ava", "The account with the most employees", "account", account, lambda x: int(x["employees"]), 1)
sup(4, "ava", "The smallest opportunity", "opportunity", opps("ava"), lambda x: num(x["amount"]), 1, False)
sup(4, "cara", "Top 10 invoices by total", "invoice", invoice, lambda x: num(x["total"]), 10)
sup(4, "cara", "The 3 smallest invoices", "invoice", invoice, lambda x: num(x["total"]), 3, False)
sup(4, "ava", "Which deal has the latest close date?", "opportunity", opps("ava"), lambda x: x["close_date"], 1)
sup(4, "ava", "The two accounts with the lowest credit limit", "account", account,
    lambda x: num(x["credit_limit"]), 2, False)
sup(4, "cara", "die größte Rechnung", "invoice", invoice, lambda x: num(x["total"]), 1)
sup(4, "ava", "das Konto mit den meisten Mitarbeitern", "account", account, lambda x: int(x["employees"]), 1)
sup(4, "cara", "la facture la plus élevée", "invoice", invoice, lambda x: num(x["total"]), 1)
sup(4, "ava", "les trois plus grandes opportunités", "opportunity", opps("ava"), lambda x: num(x["amount"]), 3)
sup(4, "cara", "la factura más alta", "invoice", invoice, lambda x: num(x["total"]), 1)
sup(4, "ava", "la cuenta con más empleados", "account", account, lambda x: int(x["employees"]), 1)

# 5. Numbers in words, ranges, quarters.
add(5, "ava", "Accounts with more than fifteen thousand employees", "account",
    [a for a in account if int(a["employees"]) > 15000])
add(5, "ava", "Opportunities between 100 and 300 thousand", "opportunity",
    [o for o in opps("ava") if 100_000 <= num(o["amount"]) <= 300_000])
add(5, "cara", "Invoices over one hundred fifty thousand", "invoice", [i for i in invoice if num(i["total"]) > 150_000])
add(5, "cara", "Invoice lines of Globex Holdings with a quantity over a dozen", "invoice_line",
    [x for x in line if num(x["quantity"]) > 12 and inv[x["invoice"]]["account"] == GLOBEX])
add(5, "cara", "Invoices issued in Q3 2025", "invoice", [i for i in invoice if quarter(i["issue_date"], 2025, 3)])
add(5, "cara", "Invoices issued in the third quarter of 2025", "invoice",
    [i for i in invoice if quarter(i["issue_date"], 2025, 3)])
add(5, "cara", "Invoices issued in Q1 last year", "invoice", [i for i in invoice if quarter(i["issue_date"], 2025, 1)])
add(5, "cara", "Invoices issued in the last quarter of 2025", "invoice",
    [i for i in invoice if quarter(i["issue_date"], 2025, 4)])
add(5, "ava", "Accounts with fewer than two thousand employees", "account",
    [a for a in account if int(a["employees"]) < 2000])
add(5, "ava", "Opportunities worth between 1 and 2 hundred thousand", "opportunity",
    [o for o in opps("ava") if 100_000 <= num(o["amount"]) <= 200_000])
add(5, "cara", "Rechnungen über hunderttausend", "invoice", [i for i in invoice if num(i["total"]) > 100_000])
add(5, "ava", "Konten mit mehr als fünfzehntausend Mitarbeitern", "account",
    [a for a in account if int(a["employees"]) > 15000])
add(5, "cara", "factures de plus de cent mille", "invoice", [i for i in invoice if num(i["total"]) > 100_000])
add(5, "cara", "factures émises au troisième trimestre 2025", "invoice",
    [i for i in invoice if quarter(i["issue_date"], 2025, 3)])
add(5, "cara", "facturas de más de cien mil", "invoice", [i for i in invoice if num(i["total"]) > 100_000])
add(5, "ava", "cuentas con menos de dos mil empleados", "account", [a for a in account if int(a["employees"]) < 2000])

# 6. Other languages.
add(6, "cara", "bezahlte Rechnungen von Globex Holdings", "invoice",
    [i for i in invoice if i["status"] == "paid" and i["account"] == GLOBEX])
add(6, "cara", "Rechnungen, die nicht bezahlt sind", "invoice", [i for i in invoice if i["status"] != "paid"])
add(6, "cara", "Rechnungen im März 2026", "invoice", [i for i in invoice if i["issue_date"].startswith("2026-03")])
add(6, "ava", "Kontakte in der Abteilung Vertrieb", "contact", [c for c in contact if c["department"] == "sales"])
add(6, "ava", "Konten in der Branche Einzelhandel", "account", [a for a in account if a["industry"] == "retail"])
add(6, "cara", "les factures payées", "invoice", [i for i in invoice if i["status"] == "paid"])
add(6, "cara", "factures en retard de Globex Holdings", "invoice",
    [i for i in invoice if i["status"] == "overdue" and i["account"] == GLOBEX])
add(6, "ava", "les comptes du secteur santé", "account", [a for a in account if a["industry"] == "healthcare"])
add(6, "cara", "factures émises en mars 2026", "invoice", [i for i in invoice if i["issue_date"].startswith("2026-03")])
add(6, "ava", "opportunités en négociation", "opportunity", [o for o in opps("ava") if o["stage"] == "negotiation"])
add(6, "cara", "facturas pagadas", "invoice", [i for i in invoice if i["status"] == "paid"])
add(6, "cara", "facturas vencidas", "invoice", [i for i in invoice if i["status"] == "overdue"])
add(6, "ava", "contactos del departamento de finanzas", "contact", [c for c in contact if c["department"] == "finance"])
add(6, "cara", "facturas emitidas en marzo de 2026", "invoice",
    [i for i in invoice if i["issue_date"].startswith("2026-03")])
add(6, "ava", "oportunidades en negociación", "opportunity", [o for o in opps("ava") if o["stage"] == "negotiation"])

# 7. What the language cannot say yet: a plain refusal.
for user, q, obj in [
    ("cara", "What is the average invoice total?", "invoice"),
    ("ava", "Sum of opportunity amounts per account", "opportunity"),
    ("cara", "Average total of the paid invoices", "invoice"),
    ("ava", "The median deal size", "opportunity"),
    ("cara", "Invoices whose due date is before the issue date", "invoice"),
    ("cara", "Invoices whose paid date is after the due date", "invoice"),
    ("ava", "and in March?", "opportunity"),
    ("ava", "what about Globex Holdings?", "account"),
    ("cara", "and the overdue ones?", "invoice"),
    ("ava", "same for Initech GmbH", "account"),
    ("cara", "Durchschnitt der Rechnungsbeträge", "invoice"),
    ("cara", "Summe der offenen Rechnungen pro Konto", "invoice"),
    ("cara", "moyenne des factures payées", "invoice"),
    ("cara", "promedio de las facturas", "invoice"),
    ("cara", "suma de las facturas por cuenta", "invoice"),
]:
    add(7, user, q, obj, expect_refusal=True)


def main():
    out = ROOT / "eval" / "ask-grammar.jsonl"
    n = 0
    with open(out, "w") as f:
        for kind, user, question, obj, expected, ordered, extra in cases:
            n += 1
            case = {"id": f"ask-grammar-{kind}-{n:03d}", "user": user, "question": question, "object": obj}
            if expected is not None:
                ids = [r["id"] for r in expected]
                case["expected_ids"] = ids if ordered else sorted(ids)
                case["ordered"] = ordered
            case.update(extra)
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds = {}
    for c in cases:
        kinds[c[0]] = kinds.get(c[0], 0) + 1
    print(f"{n} cases written to {out}: {kinds}")


if __name__ == "__main__":
    main()
