#!/usr/bin/env python3
"""Writes eval/ask-extra.jsonl: Ask cases of the shapes the dev set lacks — business words
("past due", "unpaid", "still in play", "open", "won"), calendar phrases (a month, a year, a
half-year, "before the end of June"), names with a word that is also a picklist value ("Bluth
Partners"), words inside text fields, and fields of a parent ("accounts in Germany").

Expected ids are computed here from the demo fixture (fixtures/demo/data/*.csv) by the rules
each case states, with the demo's access rules: opportunities are private to their owner except
for ava (view all), the other objects are readable by everyone in the cases below. The case
format is the one `countersign-cli eval ask --cases` reads: {id, user, question, expected_ids,
ordered}. Run: python3 eval/make_ask_extra.py  (writes eval/ask-extra.jsonl).
"""

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "fixtures" / "demo" / "data"


def rows(obj):
    with open(DATA / f"{obj}.csv", newline="") as f:
        return list(csv.DictReader(f))


account, contact, opportunity, invoice, note = (rows(o) for o in ["account", "contact", "opportunity", "invoice", "note"])
acc_by_id = {a["id"]: a for a in account}
acc_by_name = {a["name"]: a["id"] for a in account}

# The demo's business words, as these cases mean them.
UNPAID = {"sent", "overdue"}
CLOSED = {"closed_won", "closed_lost"}


def is_key(a):
    """A key account: a customer with an annual revenue of 30 million or more."""
    return a["type"] == "customer" and float(a["annual_revenue"] or 0) >= 30_000_000


def visible_opportunities(user):
    return [o for o in opportunity if user == "ava" or o["owner"] == user]


def in_range(date, start, end):
    return bool(date) and start <= date[:10] <= end


cases = [
    ("ava", "Which invoices are past due?", "invoice",
     [i for i in invoice if i["status"] == "overdue"]),
    ("cara", "Show the unpaid invoices of Monarch Holdings.", "invoice",
     [i for i in invoice if i["account"] == acc_by_name["Monarch Holdings"] and i["status"] in UNPAID]),
    ("cara", "Unpaid invoices in EUR.", "invoice",
     [i for i in invoice if i["status"] in UNPAID and i["currency_code"] == "EUR"]),
    ("ava", "Which opportunities of Acme Industries are still in play?", "opportunity",
     [o for o in visible_opportunities("ava") if o["account"] == acc_by_name["Acme Industries"] and o["stage"] not in CLOSED]),
    ("ben", "Which of my opportunities are still open?", "opportunity",
     [o for o in visible_opportunities("ben") if o["stage"] not in CLOSED]),
    ("ava", "Which deals did we win in 2025?", "opportunity",
     [o for o in visible_opportunities("ava") if o["stage"] == "closed_won" and o["close_date"].startswith("2025")]),
    ("ava", "Opportunities lost in 2026.", "opportunity",
     [o for o in visible_opportunities("ava") if o["stage"] == "closed_lost" and o["close_date"].startswith("2026")]),
    ("ava", "Open opportunities closing in the first half of 2026.", "opportunity",
     [o for o in visible_opportunities("ava") if o["stage"] not in CLOSED and in_range(o["close_date"], "2026-01-01", "2026-06-30")]),
    ("ava", "Invoices due in March 2026.", "invoice",
     [i for i in invoice if in_range(i["due_date"], "2026-03-01", "2026-03-31")]),
    ("cara", "Invoices issued in the second half of 2025.", "invoice",
     [i for i in invoice if in_range(i["issue_date"], "2025-07-01", "2025-12-31")]),
    ("cara", "Invoices paid before the end of June 2025.", "invoice",
     [i for i in invoice if i["paid_date"] and i["paid_date"] <= "2025-06-30"]),
    ("ava", "Notes written in October 2026.", "note",
     [n for n in note if n["written_at"].startswith("2026-10")]),
    ("ava", "List the contacts at Bluth Partners.", "contact",
     [c for c in contact if c["account"] == acc_by_name["Bluth Partners"]]),
    ("ava", "List the contacts at Stark Partners.", "contact",
     [c for c in contact if c["account"] == acc_by_name["Stark Partners"]]),
    ("ava", "Notes about payment delays.", "note",
     [n for n in note if n["title"] == "Payment delay"]),
    ("ben", "Notes about expansion interest.", "note",
     [n for n in note if n["title"] == "Expansion interest"]),
    ("ava", "Contacts at accounts in Germany.", "contact",
     [c for c in contact if acc_by_id[c["account"]]["billing_country"] == "Germany"]),
    ("ava", "Overdue invoices of accounts in France.", "invoice",
     [i for i in invoice if i["status"] == "overdue" and acc_by_id[i["account"]]["billing_country"] == "France"]),
    ("ben", "Which accounts in Canada are customers?", "account",
     [a for a in account if a["type"] == "customer" and a["billing_country"] == "Canada"]),
    ("ava", "Which opportunities of Monarch Holdings are in negotiation or proposal?", "opportunity",
     [o for o in visible_opportunities("ava") if o["account"] == acc_by_name["Monarch Holdings"] and o["stage"] in {"negotiation", "proposal"}]),
    ("ava", "Which key accounts are in Germany?", "account",
     [a for a in account if is_key(a) and a["billing_country"] == "Germany"]),
    ("ava", "Contacts at key accounts.", "contact",
     [c for c in contact if is_key(acc_by_id[c["account"]])]),
    ("ava", "Former customers in Germany.", "account",
     [a for a in account if a["type"] == "churned" and a["billing_country"] == "Germany"]),
    ("ava", "Outstanding invoices with a total over 10000.", "invoice",
     [i for i in invoice if i["status"] in UNPAID and float(i["total"]) > 10000]),
    ("ava", "Lost deals with an amount above 100000.", "opportunity",
     [o for o in visible_opportunities("ava") if o["stage"] == "closed_lost" and float(o["amount"] or 0) > 100000]),
    ("ava", "Notes about support escalations.", "note",
     [n for n in note if n["title"] == "Support escalation"]),
    ("ben", "Customers in the software industry.", "account",
     [a for a in account if a["type"] == "customer" and a["industry"] == "software"]),
    ("cara", "Which of Monarch Holdings' invoices are still owed?", "invoice",
     [i for i in invoice if i["account"] == acc_by_name["Monarch Holdings"] and i["status"] in UNPAID]),
]

# A right answer to each case, as a plan of Ask's prompt version 3 (terms, dates picked from the
# phrases the kernel reads): the kernel must accept each at once and find exactly the expected
# records (`vocabulary::the_kernel_accepts_every_reference_plan_at_once`). Written by hand; the
# expected ids above are not derived from them.
def plan(obj, terms=(), *filters):
    return {"object": obj, "terms": list(terms),
            "filters": [dict(zip(("field", "op", "value"), f)) for f in filters], "sort": [], "limit": None}


PLANS = [
    plan("invoice", ["overdue_invoice"]),
    plan("invoice", ["unpaid_invoice"], ("account", "eq", "Monarch Holdings")),
    plan("invoice", ["unpaid_invoice"], ("currency_code", "eq", "EUR")),
    plan("opportunity", ["open_opportunity"], ("account", "eq", "Acme Industries")),
    plan("opportunity", ["mine", "open_opportunity"]),
    plan("opportunity", ["won_opportunity"], ("close_date", "during", "2025")),
    plan("opportunity", ["lost_opportunity"], ("close_date", "during", "2026")),
    plan("opportunity", ["open_opportunity"], ("close_date", "during", "the first half of 2026")),
    plan("invoice", [], ("due_date", "during", "March 2026")),
    plan("invoice", [], ("issue_date", "during", "the second half of 2025")),
    plan("invoice", ["paid_invoice"], ("paid_date", "during", "before the end of June 2025")),
    plan("note", [], ("written_at", "during", "October 2026")),
    plan("contact", [], ("account", "eq", "Bluth Partners")),
    plan("contact", [], ("account", "eq", "Stark Partners")),
    plan("note", [], ("title", "eq", "Payment delay")),
    plan("note", [], ("title", "eq", "Expansion interest")),
    plan("contact", [], ("account.billing_country", "eq", "Germany")),
    plan("invoice", ["overdue_invoice"], ("account.billing_country", "eq", "France")),
    plan("account", ["customer"], ("billing_country", "eq", "Canada")),
    plan("opportunity", [], ("account", "eq", "Monarch Holdings"), ("stage", "in", ["negotiation", "proposal"])),
    plan("account", ["key_account"], ("billing_country", "eq", "Germany")),
    plan("contact", ["account.key_account"]),
    plan("account", ["former_customer"], ("billing_country", "eq", "Germany")),
    plan("invoice", ["unpaid_invoice"], ("total", "gt", 10000)),
    plan("opportunity", ["lost_opportunity"], ("amount", "gt", 100000)),
    plan("note", [], ("title", "eq", "Support escalation")),
    plan("account", ["customer"], ("industry", "eq", "software")),
    plan("invoice", ["unpaid_invoice"], ("account", "eq", "Monarch Holdings")),
]
assert len(PLANS) == len(cases)

out = ROOT / "eval" / "ask-extra.jsonl"
with open(out, "w") as f:
    for n, ((user, question, obj, found), reference) in enumerate(zip(cases, PLANS), 1):
        ids = sorted(r["id"] for r in found)
        assert 0 < len(ids) <= 100, (question, len(ids))  # Ask returns at most 100 rows unless asked
        f.write(json.dumps({"id": f"ask-extra-{n:02}", "user": user, "question": question, "object": obj,
                            "expected_ids": ids, "ordered": False, "plan": reference}) + "\n")
print(f"{len(cases)} cases written to {out.relative_to(ROOT)}")
