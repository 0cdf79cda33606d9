#!/usr/bin/env python3
"""Writes eval/ask-heldout9.jsonl: a ninth set of Ask cases kept apart, written (2026-12-08)
after heldout8's fixes and before any run on it — its first run is the measure the closing note
reports; never tuned to. Wordings chosen to differ from every other set: imperative and
telegraphic questions, 'any', 'whose … isn't', 'not yet', values before their field, 'or more' /
'or less' after a number, a month and a day, 'since last year', quarters in words in other
languages, parents by name and by a field, ownership in other languages, and sums per group.
Run: python3 eval/make_ask_heldout9.py
"""

import datetime as dt

from demo_fixture import CLOSED, UNPAID, acc, acc_of, account, by_name, contact, inv, invoice, line, note, num, opps, top, write_ask_cases

today = dt.date.today()
ava_opps = opps("ava")


cases = [
    # negation
    ("ava", "contacts whose department isn't sales", "contact", [c for c in contact if c["department"] != "sales"]),
    ("ava", "opportunities not yet closed", "opportunity", [o for o in ava_opps if o["stage"] not in CLOSED]),
    ("cara", "invoices not in draft", "invoice", [i for i in invoice if i["status"] != "draft"]),
    ("ava", "prospects not in London", "account",
     [a for a in account if a["type"] == "prospect" and a["billing_city"] != "London"]),
    ("ava", "Verkaufschancen, die nicht von Partnern kommen", "opportunity", [o for o in ava_opps if o["lead_source"] != "partner"]),
    ("ava", "comptes qui ne sont pas des clients", "account", [a for a in account if a["type"] != "customer"]),
    ("ava", "contactos que no son ingenieros", "contact", [c for c in contact if c["title"] != "Engineer"]),
    # blank / not blank
    ("ava", "any deals with no next step set?", "opportunity", [o for o in ava_opps if not o["next_step"]]),
    ("cara", "paid invoices that have a PO number", "invoice", [i for i in invoice if i["status"] == "paid" and i["po_number"]]),
    ("cara", "factures sans numéro de commande", "invoice", [i for i in invoice if not i["po_number"]]),
    # superlatives and top N
    ("ava", "biggest 3 opportunities from events", "opportunity",
     top([o for o in ava_opps if o["lead_source"] == "event"], lambda o: num(o["amount"]), 3, True)),
    ("ava", "which customer has the highest annual revenue?", "account",
     top([a for a in account if a["type"] == "customer"], lambda a: num(a["annual_revenue"]), 1, True)),
    ("cara", "the smallest overdue invoice", "invoice",
     top([i for i in invoice if i["status"] == "overdue"], lambda i: num(i["total"]), 1, False)),
    ("ava", "die neueste Notiz", "note", top(note, lambda n: n["written_at"], 1, True)),
    ("ava", "el negocio más grande de Initech GmbH", "opportunity",
     top([o for o in ava_opps if o["account"] == by_name["Initech GmbH"]], lambda o: num(o["amount"]), 1, True)),
    # numbers
    ("cara", "lines with 20 units or more", "invoice_line", [x for x in line if num(x["quantity"]) >= 20]),
    ("ava", "accounts with 10,000 employees or less", "account", [a for a in account if num(a["employees"]) <= 10000]),
    ("ava", "deals worth a quarter of a million or more", "opportunity", [o for o in ava_opps if num(o["amount"]) >= 250000]),
    ("ava", "Konten mit einem Kreditlimit über 400.000", "account", [a for a in account if num(a["credit_limit"]) > 400000]),
    ("ava", "oportunidades de entre cien mil y doscientos mil", "opportunity",
     [o for o in ava_opps if 100000 <= num(o["amount"]) <= 200000]),
    # dates
    ("cara", "invoices issued on 9 January 2025", "invoice", [i for i in invoice if i["issue_date"] == "2025-01-09"]),
    ("ava", "deals closing since last year", "opportunity", [o for o in ava_opps if o["close_date"] >= f"{today.year - 1}-01-01"]),
    ("cara", "invoices issued in Q2", "invoice", [i for i in invoice if f"{today.year}-04-01" <= i["issue_date"] <= f"{today.year}-06-30"]),
    ("cara", "Rechnungen aus dem dritten Quartal 2026", "invoice",
     [i for i in invoice if "2026-07-01" <= i["issue_date"] <= "2026-09-30"]),
    ("ava", "notes du deuxième trimestre 2026", "note",
     [n for n in note if "2026-04-01" <= n["written_at"][:10] <= "2026-06-30"]),
    # head noun and parents
    ("ava", "Initech GmbH contacts", "contact", [c for c in contact if c["account"] == by_name["Initech GmbH"]]),
    ("cara", "lines for Summit Systems", "invoice_line",
     [x for x in line if inv[x["invoice"]]["account"] == by_name["Summit Systems"]]),
    ("ava", "opportunities with software companies", "opportunity", [o for o in ava_opps if acc_of(o, "industry", "software")]),
    ("ava", "notes about churned accounts", "note", [n for n in note if acc_of(n, "type", "churned")]),
    ("cara", "facturas de clientes en Madrid", "invoice",
     [i for i in invoice if acc_of(i, "type", "customer") and acc_of(i, "billing_city", "Madrid")]),
    # kinds no issue names
    ("ava", "partner-sourced deals", "opportunity", [o for o in ava_opps if o["lead_source"] == "partner"]),
    ("ava", "Eves Konten", "account", [a for a in account if a["owner"] == "eve"]),
    ("ava", "les comptes de Ben", "account", [a for a in account if a["owner"] == "ben"]),
    ("ava", "engineers in operations", "contact",
     [c for c in contact if c["title"] == "Engineer" and c["department"] == "operations"]),
    ("cara", "invoices: overdue, in euros", "invoice",
     [i for i in invoice if i["status"] == "overdue" and i["currency_code"] == "EUR"]),
    ("ava", "warm healthcare accounts in the US or Canada", "account",
     [a for a in account if a["rating"] == "warm" and a["industry"] == "healthcare" and a["billing_country"] in ("United States", "Canada")]),
    ("ava", "deals in proposal or negotiation worth over 200k", "opportunity",
     [o for o in ava_opps if o["stage"] in ("proposal", "negotiation") and num(o["amount"]) > 200000]),
    # what cannot be said yet
    ("ava", "total pipeline by stage", "opportunity", None),
    ("cara", "average invoice total per currency", "invoice", None),
    ("ava", "which account has the most notes?", "account", None),
]

if __name__ == "__main__":
    for user, question, obj, expected in cases:
        if expected is not None and not expected:
            raise SystemExit(f"no expected rows: {question}")
    write_ask_cases("ask-heldout9", cases, ("biggest", "highest", "smallest", "neueste", "más grande"))
