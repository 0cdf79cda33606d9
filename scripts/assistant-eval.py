#!/usr/bin/env python3
"""The assistant's dev set (tests/assistant/conversations.json) on a real local model, through
the CLI: each conversation on a fresh demo workspace with the model at MODEL_URL pinned, its
turns taken with `countersign-cli assist say`, and its end state checked. Prints each
conversation, the share that reached its end state, and the latency per turn (p50, p90).

    scripts/assistant-eval.py MODEL_URL [--cli target/debug/countersign-cli] [--only ID]

Writes target/assistant-eval.json.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

root = Path(__file__).resolve().parent.parent


def run(cli, ws, *args):
    out = subprocess.run([cli, "--workspace", ws, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:4])}: {out.stderr.strip()}")
    return json.loads(out.stdout) if out.stdout.strip() else None


def reached(expect, turn):
    """Whether the last turn's steps reach the expected end state, and why not."""
    steps = [s["outcome"] for s in turn["steps"]]
    kinds = [s["kind"] for s in steps]
    if "table" in expect:
        tables = [s for s in steps if s["kind"] == "table"]
        if not tables:
            return False, f"no table ({kinds})"
        got = sorted(tables[-1]["set"]["ids"])
        want = sorted(expect["table"]["ids"])
        return got == want, f"{len(got)} records, want {len(want)}"
    if "proposal" in expect:
        e = expect["proposal"]
        for s in steps:
            if s["kind"] == "proposal" and (s.get("record") or {}).get("id") == e["id"]:
                after = {c["field"]: c["after"] for c in s["changes"]}
                return after == e["changes"], f"changes {after}"
        return False, f"no proposal on {e['id']} ({json.dumps(steps)[:200]})"
    if "summary" in expect:
        e = expect["summary"]
        for s in steps:
            if s["kind"] == "summary" and s["record"]["id"] == e["id"]:
                return bool(s["sentences"]) or bool(s.get("insufficient")), "summary"
        return False, f"no summary of {e['id']} ({json.dumps(steps)[:200]})"
    if "notes" in expect:
        for s in steps:
            if s["kind"] == "notes":
                return len(s["hits"]) >= expect["notes"]["min_hits"], f"{len(s['hits'])} hits"
        return False, f"no search ({kinds})"
    return False, "unknown expectation"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_url")
    ap.add_argument("--cli", default=str(root / "target/debug/countersign-cli"))
    ap.add_argument("--only")
    args = ap.parse_args()
    served = json.load(urllib.request.urlopen(f"{args.model_url}/models"))["data"][0]["id"]
    conversations = json.load(open(root / "tests/assistant/conversations.json"))["conversations"]
    results, latencies = [], []
    for c in conversations:
        if args.only and c["id"] != args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            ws = str(Path(tmp) / "eval.countersign")
            run(args.cli, ws, "init", "--demo")
            run(args.cli, ws, "--as", "ava", "provider", "add", "local", "--kind", "openai", "--url", args.model_url)
            run(args.cli, ws, "--as", "ava", "model", "pin", "local", "--provider", "local", "--model", served)
            conversation, turn, error = None, None, None
            for text in c["turns"]:
                say = ["--as", c["user"], "assist", "say", text]
                if conversation:
                    say += ["--conversation", conversation]
                if c.get("on"):
                    say += ["--on", c["on"]]
                try:
                    turn = run(args.cli, ws, *say)
                except RuntimeError as e:
                    error = str(e)
                    break
                conversation = turn["conversation"]
                latencies.append(turn["totalMs"])
                actions = [json.dumps(s["action"]) for s in turn["steps"]]
                print(f"  {c['id']}: \"{text}\" → {', '.join(actions)} ({turn['totalMs'] / 1000:.1f} s)", flush=True)
            ok, why = (False, error) if error else reached(c["expect"], turn)
            results.append({"id": c["id"], "reached": ok, "why": why})
            print(f"{'REACHED' if ok else 'MISSED '} {c['id']}: {why}", flush=True)
    share = sum(r["reached"] for r in results) / max(1, len(results))
    p50 = statistics.median(latencies) if latencies else 0
    p90 = sorted(latencies)[int(0.9 * (len(latencies) - 1))] if latencies else 0
    summary = {"model": served, "conversations": len(results), "reached": sum(r["reached"] for r in results),
               "share": share, "turns": len(latencies), "p50TurnMs": p50, "p90TurnMs": p90, "results": results}
    (root / "target").mkdir(exist_ok=True)
    (root / "target/assistant-eval.json").write_text(json.dumps(summary, indent=2))
    print(f"reached {summary['reached']}/{len(results)} ({share:.0%}); {len(latencies)} turns, p50 {p50 / 1000:.1f} s, p90 {p90 / 1000:.1f} s")


if __name__ == "__main__":
    sys.exit(main())
