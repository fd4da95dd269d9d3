"""The mutation score of the verdict rules, from `mutmut results --all true` (run by tests/mutation.sh).

Counts the mutants of rule functions only: a job's factory (its titles and claim sentences), its
collect/run code and its headline figures are not rules (and what a page shows is not in
verify/jobs/ at all), so their mutants are left out and listed as such. Prints the score, and the surviving mutants per function.

With --record PATH --commit SHA it also writes the run's record (the score, the mutants counted, the
commit the run mutated and when it ended), which the status page shows: the figure is never typed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from verify.evidence.store import write_atomic  # noqa: E402  (the records' own atomic write)

# Functions that are not verdict rules: what a job measures, how it is shown, how it is declared.
NOT_RULES = re.compile(r"(^collect$|^server_phase$|^run$|_job$|^fragment|_fragment$|^figure|_svg$|^table|_table$)")
LINE = re.compile(r"^\s*(?P<module>[\w.]+)\.x_(?P<function>\w+?)__mutmut_\d+: (?P<status>[\w ]+)$")


def main(path: str, record: str | None = None, commit: str | None = None, seconds: int | None = None,
         note: str | None = None) -> int:
    rules, others, survivors = Counter(), Counter(), Counter()
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        function = m["function"].removeprefix("ǁ")
        bucket = others if NOT_RULES.search(function) else rules
        bucket[m["status"]] += 1
        if bucket is rules and m["status"] == "survived":
            survivors[f"{m['module']}.{function}"] += 1
    tried = sum(n for status, n in rules.items() if status in ("killed", "survived", "timeout"))
    killed = rules["killed"] + rules["timeout"]  # a mutant that hangs the tests is caught too
    print(f"rule mutants: {dict(rules)}")
    print(f"other mutants (titles, collect code): {dict(others)}")
    if not tried:
        print("mutation score: no rule mutant was tried")
        return 1
    print(f"mutation score of the rules: {killed} of {tried} killed = {100 * killed / tried:.1f} %")
    for name, n in survivors.most_common(40):
        print(f"  {n:4d} survived in {name}")
    if record:
        write_atomic(Path(record), json.dumps({
            "generated": "written by tests/mutation.sh (tests/mutation_score.py); do not edit by hand",
            "commit": commit,
            "finished": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "duration_s": seconds,
            "tool": "mutmut 3.8.1",
            **({"note": note} if note else {}),
            "killed": killed,
            "tried": tried,
            "score_percent": round(100 * killed / tried, 1),
            "rule_mutants": dict(rules),
            "survivors": dict(survivors.most_common()),
        }, indent=1, sort_keys=False) + "\n")
        print(f"mutation: record written to {record}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="the output of `mutmut results --all true`")
    parser.add_argument("--record", help="write the run's record here (JSON)")
    parser.add_argument("--commit", help="the commit the run mutated")
    parser.add_argument("--seconds", type=int, help="how long mutmut ran")
    parser.add_argument("--note", help="how the results were made, when not by one full run")
    args = parser.parse_args()
    sys.exit(main(args.results, args.record, args.commit, args.seconds, args.note))
