#!/usr/bin/env python3
"""Writes eval/ask-worded.jsonl: Ask cases worded the way people talk, one group per kind of
wording the question reader (Ask's prompt version 4) must connect to the data:

- picklist values in another form: plurals, inflections, a typo, a job word for a department;
- words only the data knows: a city, a country, a product code or description, a job title;
- countries said by nationality;
- people: a workspace user as the owner;
- quantities with units and ranges ("250k", "half a million", "between 10k and 20k",
  "at least", "under $1,000", percentages);
- currencies said in words ("in pounds", "in euros");
- related records ("with no notes", "that have overdue invoices", "with at least 5 contacts");
- text to find in notes ("that mention outages", "about a budget freeze", a quoted phrase): the
  expected notes are those whose body holds every given word stem, in any form;
- combinations of the above.

Expected ids are computed here from the demo fixture (fixtures/demo/data/*.csv) by the rule
each case states, with the demo's access rules: opportunities are private to their owner except
for ava and cara (view all); the other objects are readable by everyone asking below. Dates are
absolute (the eval runs on today's clock). The format is the one `countersign-cli eval ask
--cases` reads. Run: python3 eval/make_ask_worded.py  (writes eval/ask-worded.jsonl).
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from demo_fixture import CLOSED, UNPAID, acc, account, contact, inv, invoice, line, note, num, opps, opportunity  # noqa: E402


def says(text, *stems):
    words = [w.strip(".,;()").lower() for w in text.split()]
    return all(any(w.startswith(s) for w in words) for s in stems)


def children(rows_, parent):
    ids = {}
    for r in rows_:
        ids.setdefault(r[parent], []).append(r)
    return ids


notes_of, contacts_of, opps_of, invoices_of = (
    children(note, "account"),
    children(contact, "account"),
    children(opportunity, "account"),
    children(invoice, "account"),
)

cases = [
    # Picklist values in another form.
    ("ava", "Contacts who are engineers.", "contact", [c for c in contact if c["department"] == "engineering"]),
    ("ava", "Which contacts work in sales?", "contact", [c for c in contact if c["department"] == "sales"]),
    ("ava", "Accounts rated warm.", "account", [a for a in account if a["rating"] == "warm"]),
    ("ava", "Which accounts are prospcts?", "account", [a for a in account if a["type"] == "prospect"]),
    ("ava", "Opportunities that came from referrals.", "opportunity",
     [o for o in opps("ava") if o["lead_source"] == "referral"]),
    ("cara", "Which invoices were voided?", "invoice", [i for i in invoice if i["status"] == "void"]),
    ("ava", "Accounts in logistics.", "account", [a for a in account if a["industry"] == "logistics"]),
    ("ben", "My opportunities in qualification.", "opportunity",
     [o for o in opps("ben") if o["stage"] == "qualification"]),
    # Words only the data knows.
    ("ava", "Accounts in Munich.", "account", [a for a in account if a["billing_city"] == "Munich"]),
    ("ava", "Which accounts are based in the Netherlands?", "account",
     [a for a in account if a["billing_country"] == "Netherlands"]),
    ("ava", "Contacts with the title Controller.", "contact", [c for c in contact if c["title"] == "Controller"]),
    ("cara", "Invoice lines for training days.", "invoice_line",
     [l for l in line if l["description"] == "Training day"]),
    ("cara", "Invoice lines with product code HW-GW.", "invoice_line",
     [l for l in line if l["product_code"] == "HW-GW"]),
    ("ava", "Contacts of accounts in Toronto.", "contact",
     [c for c in contact if acc[c["account"]]["billing_city"] == "Toronto"]),
    # Countries by nationality.
    ("ava", "German accounts.", "account", [a for a in account if a["billing_country"] == "Germany"]),
    ("ava", "Which French customers do we have?", "account",
     [a for a in account if a["billing_country"] == "France" and a["type"] == "customer"]),
    ("ava", "Spanish accounts in retail.", "account",
     [a for a in account if a["billing_country"] == "Spain" and a["industry"] == "retail"]),
    # People.
    ("ava", "Opportunities owned by Eve.", "opportunity", [o for o in opps("ava") if o["owner"] == "eve"]),
    ("ava", "Which accounts does Ben own?", "account", [a for a in account if a["owner"] == "ben"]),
    ("cara", "Open opportunities of Ava.", "opportunity",
     [o for o in opps("cara") if o["owner"] == "ava" and o["stage"] not in CLOSED]),
    # Quantities with units and ranges.
    ("ava", "Opportunities worth more than 250k.", "opportunity",
     [o for o in opps("ava") if num(o["amount"]) > 250_000]),
    ("ava", "Opportunities over half a million.", "opportunity",
     [o for o in opps("ava") if num(o["amount"]) > 500_000]),
    ("ava", "Accounts with annual revenue above 30 million.", "account",
     [a for a in account if num(a["annual_revenue"]) > 30_000_000]),
    ("cara", "Invoices with a total between 10k and 20k.", "invoice",
     [i for i in invoice if 10_000 <= num(i["total"]) <= 20_000]),
    ("ava", "Opportunities with an amount of at least 200,000.", "opportunity",
     [o for o in opps("ava") if num(o["amount"]) >= 200_000]),
    ("cara", "Invoices under $5,000.", "invoice", [i for i in invoice if i["total"] and num(i["total"]) < 5_000]),
    ("ava", "Accounts with more than 10000 employees.", "account",
     [a for a in account if num(a["employees"]) > 10_000]),
    ("ava", "Opportunities with a probability of at least 75 percent.", "opportunity",
     [o for o in opps("ava") if num(o["probability"]) >= 75]),
    # Currencies in words.
    ("cara", "Overdue invoices in pounds.", "invoice",
     [i for i in invoice if i["status"] == "overdue" and i["currency_code"] == "GBP"]),
    ("cara", "Paid invoices in euros over 50k.", "invoice",
     [i for i in invoice if i["status"] == "paid" and i["currency_code"] == "EUR" and num(i["total"]) > 50_000]),
    ("cara", "Unpaid invoices in dollars.", "invoice",
     [i for i in invoice if i["status"] in UNPAID and i["currency_code"] == "USD"]),
    # Related records.
    ("ava", "Accounts with no opportunities.", "account", [a for a in account if a["id"] not in opps_of]),
    ("ava", "Which accounts have no notes?", "account", [a for a in account if a["id"] not in notes_of]),
    ("cara", "Accounts that have overdue invoices.", "account",
     [a for a in account if any(i["status"] == "overdue" for i in invoices_of.get(a["id"], []))]),
    ("ava", "Accounts with at least 5 contacts.", "account",
     [a for a in account if len(contacts_of.get(a["id"], [])) >= 5]),
    ("ava", "Customers without contacts.", "account",
     [a for a in account if a["type"] == "customer" and a["id"] not in contacts_of]),
    # Text to find: the notes whose body holds every stem listed.
    ("ava", "Notes that mention outages.", "note", [n for n in note if says(n["body"], "outage")]),
    ("ava", "Which notes talk about a budget freeze?", "note", [n for n in note if says(n["body"], "budget", "freez")]),
    ("cara", "Notes saying invoices are paid in batches.", "note",
     [n for n in note if says(n["body"], "invoice", "paid", "batch")]),
    ("ava", "Which notes mention a champion?", "note", [n for n in note if says(n["body"], "champion")]),
    ("ben", "Notes about more seats.", "note", [n for n in note if says(n["body"], "more", "seat")]),
    ("ava", "Notes with “want a credit”.", "note", [n for n in note if says(n["body"], "want", "credit")]),
    # Combinations.
    ("ava", "Hot prospects in Germany.", "account",
     [a for a in account if a["rating"] == "hot" and a["type"] == "prospect" and a["billing_country"] == "Germany"]),
    ("ava", "Retail customers with revenue over 20 million.", "account",
     [a for a in account if a["industry"] == "retail" and a["type"] == "customer" and num(a["annual_revenue"]) > 20_000_000]),
    ("cara", "Euro invoices issued in 2025 that are still unpaid.", "invoice",
     [i for i in invoice if i["currency_code"] == "EUR" and i["issue_date"].startswith("2025") and i["status"] in UNPAID]),
    ("ava", "Lost deals from web leads.", "opportunity",
     [o for o in opps("ava") if o["stage"] == "closed_lost" and o["lead_source"] == "web"]),
    ("ben", "My open deals above 100k.", "opportunity",
     [o for o in opps("ben") if o["stage"] not in CLOSED and num(o["amount"]) > 100_000]),
    ("ava", "Engineers at accounts in the United Kingdom.", "contact",
     [c for c in contact if c["department"] == "engineering" and acc[c["account"]]["billing_country"] == "United Kingdom"]),
]


def main():
    out = ROOT / "eval" / "ask-worded.jsonl"
    with open(out, "w") as f:
        for n, (user, question, obj, expected) in enumerate(cases, 1):
            case = {
                "id": f"ask-worded-{n:02d}",
                "user": user,
                "question": question,
                "object": obj,
                "expected_ids": sorted(r["id"] for r in expected),
                "ordered": False,
            }
            f.write(json.dumps(case) + "\n")
    print(f"{len(cases)} cases written to {out}")


if __name__ == "__main__":
    main()
