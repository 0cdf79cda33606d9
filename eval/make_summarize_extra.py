#!/usr/bin/env python3
"""Writes eval/summarize-extra.jsonl: Summarize cases for accounts and readers the first dev set
lacks (ben and eve, sales reps who read only their own opportunities; cara, a finance reviewer
who reads them all), with the key facts a reader of each account needs, computed here from the
demo fixture (fixtures/demo/data/*.csv) by three rules:

- open_pipeline: the account's opportunities the reader can read whose stage is not closed_won
  or closed_lost; `total` their summed amount, `each` their amounts;
- overdue: the account's invoices with status overdue; `total` per currency, `each` their totals;
- latest_note: the title of the account's newest note (by written_at).

A rule that does not apply to an account leaves its fact out; an account with none is skipped.
The format is the one `countersign-cli eval summarize --cases` reads. Run:
python3 eval/make_summarize_extra.py  (writes eval/summarize-extra.jsonl).
"""

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "fixtures" / "demo" / "data"


def rows(obj):
    with open(DATA / f"{obj}.csv", newline="") as f:
        return list(csv.DictReader(f))


account, opportunity, invoice, note = rows("account"), rows("opportunity"), rows("invoice"), rows("note")
CLOSED = {"closed_won", "closed_lost"}
# Who may read an opportunity: its owner, or anyone with view all (ava, cara).
VIEW_ALL = {"ava", "cara"}


def money(x):
    return f"{x:.2f}"


def key_facts(acc, user):
    facts = []
    opps = [o for o in opportunity if o["account"] == acc and o["stage"] not in CLOSED
            and (user in VIEW_ALL or o["owner"] == user)]
    if opps:
        amounts = [float(o["amount"]) for o in opps]
        facts.append({"key": "open_pipeline", "total": [money(sum(amounts))], "each": [money(a) for a in amounts],
                      "count": len(opps)})
    late = [i for i in invoice if i["account"] == acc and i["status"] == "overdue"]
    if late:
        per = {}
        for i in late:
            per[i["currency_code"]] = per.get(i["currency_code"], 0.0) + float(i["total"])
        facts.append({"key": "overdue", "total": [money(v) for v in per.values()],
                      "each": [money(float(i["total"])) for i in late], "count": len(late)})
    notes = sorted((n for n in note if n["account"] == acc), key=lambda n: n["written_at"])
    if notes:
        facts.append({"key": "latest_note", "title": notes[-1]["title"]})
    return facts


readers = ["ben", "eve", "cara"]
out = ROOT / "eval" / "summarize-extra.jsonl"
n = 0
with open(out, "w") as f:
    for i, acc in enumerate(a["id"] for a in account[20:44]):
        user = readers[i % len(readers)]
        facts = key_facts(acc, user)
        if facts:
            f.write(json.dumps({"object": "account", "id": acc, "user": user, "facts": facts}) + "\n")
            n += 1
print(f"{n} cases written to {out.relative_to(ROOT)}")
