#!/usr/bin/env python3
"""Writes eval/ask-heldout7.jsonl: a seventh set of Ask cases kept apart, written (2026-12-07)
after the fixes that heldout6's first run led to and before any result on this set was seen —
its first run is the measure the closing note reports; never tuned to. Wordings chosen to differ
from every other set: questions as commands and as full sentences, 'whose', 'lacking', 'no
longer', ordinal quarters, 'last N days', number words in German, French and Spanish, margins,
titles in the plural, parents two hops up, and two things the language cannot say.
Run: python3 eval/make_ask_heldout7.py
"""

import datetime as dt

from demo_fixture import CLOSED, UNPAID, acc, acc_of, account, by_name, contact, inv, invoice, line, note, num, opps, top, with_ties, write_ask_cases

today = dt.date.today()
ava_opps = opps("ava")
ben_opps = opps("ben")


def days_ago(n):
    return (today - dt.timedelta(days=n)).isoformat()


cases = [
    # negation
    ("ava", "list the accounts that aren't prospects", "account", [a for a in account if a["type"] != "prospect"]),
    ("ava", "opportunities not won", "opportunity", [o for o in ava_opps if o["stage"] != "closed_won"]),
    ("cara", "invoices except paid ones", "invoice", [i for i in invoice if i["status"] != "paid"]),
    ("ava", "Kontakte, die kein CEO sind", "contact", [c for c in contact if c["title"] != "CEO"]),
    ("ava", "comptes qui ne sont pas dans le commerce de détail", "account", [a for a in account if a["industry"] != "retail"]),
    ("cara", "facturas que no están pagadas", "invoice", [i for i in invoice if i["status"] != "paid"]),
    # blank / not blank
    ("cara", "invoices lacking a paid date", "invoice", [i for i in invoice if not i["paid_date"]]),
    ("ava", "opportunities where the next step is empty", "opportunity", [o for o in ava_opps if not o["next_step"]]),
    ("cara", "Rechnungen mit Bestellnummer", "invoice", [i for i in invoice if i["po_number"]]),
    # superlatives and top N
    ("ava", "show the 4 accounts with the lowest credit limit", "account", None),  # a tie at the cut: asked back or refused
    ("ava", "the deal with the best margin", "opportunity", top(ava_opps, lambda o: num(o["margin_pct"]), 1, True)),
    ("cara", "the 10 most expensive invoice lines", "invoice_line", None),  # ties: set below
    ("ava", "las tres cuentas con más empleados", "account", top(account, lambda a: num(a["employees"]), 3, True)),
    ("ava", "les deux notes les plus anciennes", "note", top(note, lambda n: n["written_at"], 2, False)),
    # numbers
    ("ava", "accounts whose revenue exceeds 40 million", "account", [a for a in account if num(a["annual_revenue"]) > 40_000_000]),
    ("ava", "Verkaufschancen über dreihunderttausend", "opportunity", [o for o in ava_opps if num(o["amount"]) > 300000]),
    ("ava", "opportunités de plus de trois cent cinquante mille", "opportunity", [o for o in ava_opps if num(o["amount"]) > 350000]),
    ("cara", "facturas de menos de dos mil", "invoice", [i for i in invoice if num(i["total"]) < 2000]),
    ("ava", "deals with a margin above 50%", "opportunity", [o for o in ava_opps if num(o["margin_pct"]) > 50]),
    # dates
    ("cara", "invoices issued in the third quarter of 2025", "invoice",
     [i for i in invoice if "2025-07-01" <= i["issue_date"] <= "2025-09-30"]),
    ("ava", "notes from the last 60 days", "note", [n for n in note if n["written_at"][:10] >= days_ago(60)]),
    ("cara", "invoices due next month", "invoice", [i for i in invoice if i["due_date"].startswith("2027-01")]),
    ("ava", "Verkaufschancen, die im Juni 2026 schließen", "opportunity",
     [o for o in ava_opps if o["close_date"].startswith("2026-06")]),
    ("cara", "factures émises entre janvier et mars 2026", "invoice",
     [i for i in invoice if "2026-01-01" <= i["issue_date"] <= "2026-03-31"]),
    # the object from the head noun, parents
    ("ava", "people at Sterling Corp", "contact", [c for c in contact if c["account"] == by_name["Sterling Corp"]]),
    ("cara", "invoices for customers in London", "invoice",
     [i for i in invoice if acc_of(i, "type", "customer") and acc_of(i, "billing_city", "London")]),
    ("cara", "invoice lines of invoices for accounts in Spain", "invoice_line",
     [x for x in line if acc[inv[x["invoice"]]["account"]]["billing_country"] == "Spain"]),
    ("ava", "opportunities of retail accounts that are hot", "opportunity",
     [o for o in ava_opps if acc_of(o, "industry", "retail") and acc_of(o, "rating", "hot")]),
    ("ava", "oportunidades de cuentas en Francia", "opportunity", [o for o in ava_opps if acc_of(o, "billing_country", "France")]),
    # kinds no issue names
    ("ben", "show my opportunities in negotiation", "opportunity",
     [o for o in ben_opps if o["owner"] == "ben" and o["stage"] == "negotiation"]),
    ("ava", "I need the controllers", "contact", [c for c in contact if c["title"] == "Controller"]),
    ("ava", "Which contacts are sales managers?", "contact", [c for c in contact if c["title"] == "Sales Manager"]),
    ("ava", "notes titled payment delay", "note", [n for n in note if n["title"] == "Payment delay"]),
    ("cara", "invoices owned by Ben", "invoice", [i for i in invoice if i["owner"] == "ben"]),
    ("ava", "accounts in manufacturing, finance or logistics", "account",
     [a for a in account if a["industry"] in ("manufacturing", "finance", "logistics")]),
    ("ava", "opportunites gagnees", "opportunity", [o for o in ava_opps if o["stage"] == "closed_won"]),
    ("cara", "invoices with the product code HW-GW on a line", "invoice",
     [i for i in invoice if any(x["invoice"] == i["id"] and x["product_code"] == "HW-GW" for x in line)]),
    # what cannot be said yet
    ("ava", "how much revenue do our customers make in total?", "account", None),
    ("ava", "opportunities whose amount is more than the account's credit limit", "opportunity", None),
    ("cara", "the invoice that took longest to be paid", "invoice", None),
]

# The two cases whose count cuts through equal values. Written first as "asked back" (None); the
# kernel was then given SQL's WITH TIES reading (every record tying at the cut is shown, the
# count becoming a condition), and these two expectations were corrected to that reading after
# the first run — the first run's figure in the note counts them as written. Their rows are
# unordered within a tie, so the cases are judged unordered.
TIES = {10, 12}
cases[9] = (cases[9][0], cases[9][1], cases[9][2], with_ties(account, lambda a: num(a["credit_limit"]), 4, False))
cases[11] = (cases[11][0], cases[11][1], cases[11][2], with_ties(line, lambda x: num(x["amount"]), 10, True))

if __name__ == "__main__":
    for user, question, obj, expected in cases:
        if expected is not None and not expected:
            raise SystemExit(f"no expected rows: {question}")
    write_ask_cases(
        "ask-heldout7", cases, ("lowest", "best", "most expensive", "más empleados", "plus anciennes"), unordered=TIES
    )
