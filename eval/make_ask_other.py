#!/usr/bin/env python3
"""Writes eval/ask-other.jsonl: Ask cases of kinds no issue named, worded as people type them —
a record by its name alone, "my", OR of two values, a country by its code, a job title in the
plural, relative weeks and days, holidays, combinations of a term, a parent and an amount. They
measure whether the reader is general; they are not tuned to (each is written once, from the
fixture, before it is run).

Expected ids are computed from the demo fixture (fixtures/demo/data/*.csv) with the demo's access
rules (opportunities private to their owner but for ava and cara). Today is the clock's today:
the date cases compute their range from it. Run: python3 eval/make_ask_other.py
"""

import datetime as dt
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from demo_fixture import CLOSED, UNPAID, acc, account, by_name, contact, invoice, line, note, num, opps, opportunity  # noqa: E402

today = dt.date.today()


def quarter_of(d):
    q = (d.month - 1) // 3
    start = dt.date(d.year, q * 3 + 1, 1)
    end = (dt.date(d.year + (q == 3), (q * 3 + 3) % 12 + 1, 1)) - dt.timedelta(days=1)
    return start, end


def within(day, start, end):
    return day and start.isoformat() <= day[:10] <= end.isoformat()


monday = today - dt.timedelta(days=today.weekday())
next_week = (monday + dt.timedelta(days=7), monday + dt.timedelta(days=13))
q_start, q_end = quarter_of(today)
open_by_account = {}
for o in opportunity:
    if o["stage"] not in CLOSED:
        open_by_account[o["account"]] = open_by_account.get(o["account"], 0) + 1
GLOBEX = by_name["Globex Holdings"]

cases = [
    ("ava", "Show me Globex Holdings", "account", [a for a in account if a["id"] == GLOBEX]),
    ("ava", "open deals closing this quarter", "opportunity",
     [o for o in opps("ava") if o["stage"] not in CLOSED and within(o["close_date"], q_start, q_end)]),
    ("ben", "my open opportunities", "opportunity", [o for o in opps("ben") if o["stage"] not in CLOSED]),
    ("cara", "invoices in GBP or EUR", "invoice", [i for i in invoice if i["currency_code"] in ("GBP", "EUR")]),
    ("ava", "accounts in the US", "account", [a for a in account if a["billing_country"] == "United States"]),
    ("ava", "contacts at Globex Holdings in finance", "contact",
     [c for c in contact if c["account"] == GLOBEX and c["department"] == "finance"]),
    ("cara", "invoices due next week", "invoice", [i for i in invoice if within(i["due_date"], *next_week)]),
    ("ava", "hot prospects in Germany", "account",
     [a for a in account if a["rating"] == "hot" and a["type"] == "prospect" and a["billing_country"] == "Germany"]),
    ("cara", "unpaid invoices of accounts in Lyon", "invoice",
     [i for i in invoice if i["status"] in UNPAID and acc[i["account"]]["billing_city"] == "Lyon"]),
    ("ava", "deals worth over 300k that are still open", "opportunity",
     [o for o in opps("ava") if num(o["amount"]) > 300_000 and o["stage"] not in CLOSED]),
    ("cara", "draft or void invoices from 2025", "invoice",
     [i for i in invoice if i["status"] in ("draft", "void") and i["issue_date"].startswith("2025")]),
    ("ava", "CFOs", "contact", [c for c in contact if c["title"] == "CFO"]),
    ("cara", "invoice lines for SUB-STD", "invoice_line", [x for x in line if x["product_code"] == "SUB-STD"]),
    ("ava", "opportunities closing after Christmas", "opportunity",
     [o for o in opps("ava") if o["close_date"] >= dt.date(today.year, 12, 26).isoformat()]),
    ("ava", "accounts that are not customers in Germany", "account",
     [a for a in account if a["type"] != "customer" and a["billing_country"] == "Germany"]),
    ("ava", "the 3 newest notes", "note", sorted(note, key=lambda n: n["written_at"], reverse=True)[:3]),
    ("cara", "overdue invoices of Globex Holdings or Initech GmbH", "invoice",
     [i for i in invoice if i["status"] == "overdue" and i["account"] in (GLOBEX, by_name["Initech GmbH"])]),
    ("ava", "customers in retail or healthcare", "account",
     [a for a in account if a["type"] == "customer" and a["industry"] in ("retail", "healthcare")]),
    ("ava", "Engineers at accounts in London", "contact",
     [c for c in contact if c["department"] == "engineering" and acc[c["account"]]["billing_city"] == "London"]),
    ("cara", "Rechnungen von Globex Holdings, die überfällig sind", "invoice",
     [i for i in invoice if i["status"] == "overdue" and i["account"] == GLOBEX]),
]


def main():
    out = ROOT / "eval" / "ask-other.jsonl"
    with open(out, "w") as f:
        for n, (user, question, obj, expected) in enumerate(cases, 1):
            ordered = question.startswith("the 3")
            ids = [r["id"] for r in expected]
            case = {"id": f"ask-other-{n:02d}", "user": user, "question": question, "object": obj,
                    "expected_ids": ids if ordered else sorted(ids), "ordered": ordered}
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {out}")


if __name__ == "__main__":
    main()
