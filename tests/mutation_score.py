"""The mutation score of the verdict rules, from `mutmut results --all true` (run by tests/mutation.sh).

Counts the mutants of rule functions only: a job's factory (its titles and claim sentences), its
collect/run code and its headline figures are not rules (and what a page shows is not in
verify/jobs/ at all), so their mutants are left out and listed as such. Prints the score, and the surviving mutants per function.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

# Functions that are not verdict rules: what a job measures, how it is shown, how it is declared.
NOT_RULES = re.compile(r"(^collect$|^server_phase$|^run$|_job$|^fragment|_fragment$|^figure|_svg$|^table|_table$)")
LINE = re.compile(r"^\s*(?P<module>[\w.]+)\.x_(?P<function>\w+?)__mutmut_\d+: (?P<status>[\w ]+)$")


def main(path: str) -> int:
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
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
