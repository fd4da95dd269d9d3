"""`verify migrate` carries a record only across code that provably measures and decides the same.

The comparisons are tested on small sources shaped like job modules (what moved, what must
not change), and the command on the committed records, which are all fresh: nothing to carry.
"""

from __future__ import annotations

from verify.runner import migrate

OLD = '''
"""A job."""
from verify.site import html as render
from verify.job import Claim, Job

MAX_TOKENS = 80
WINDOW = 0.005


def collect(ctx):
    from verify.measure.probe import probe
    return {"a": probe("POST", ctx.url, json={"max_tokens": MAX_TOKENS})}


def _helper(d):
    return d["a"]["status"]


def decide(d):
    return verdict_if(_helper(d) == 200, f"took {render.ms(d['t'])}")


def fragment(record):
    return render.table(["a"], [[record["data"]["a"]]])


JOB = Job(id="x", title="x", question="x", pages=(), collect=collect,
          claims=(Claim("x.y", "text", decide),), fragments={"table": fragment})
'''

NEW = '''
"""A job, presenting nothing."""
from verify.measure import units
from verify.headline import Headline
from verify.job import Claim, Job

MAX_TOKENS = 80
WINDOW = 0.005


def collect(ctx):
    from verify.measure.request import send
    return {"a": send("POST", ctx.url, json={"max_tokens": MAX_TOKENS})}


def _helper(d):
    return d["a"]["status"]


def decide(d):
    return verdict_if(_helper(d) == 200, f"took {units.ms(d['t'])}")


HEADLINE = Headline({"t": lambda d: d["t"]}, 0.3, "why")

JOB = Job(id="x", title="x", question="x", pages=(), collect=collect,
          claims=(Claim("x.y", "text", decide),), headline=HEADLINE)
'''


def test_moved_presentation_renames_and_a_headline_change_nothing_that_counts():
    assert migrate.compare_job_file(OLD, NEW, {"JOB"}) == []


def test_a_constant_collect_uses_is_a_change():
    assert migrate.compare_job_file(OLD, NEW.replace("MAX_TOKENS = 80", "MAX_TOKENS = 81"), {"JOB"}) == ["MAX_TOKENS"]


def test_a_helper_a_rule_uses_is_a_change():
    changed = NEW.replace('return d["a"]["status"]', 'return d["a"].get("status")')
    assert migrate.compare_job_file(OLD, changed, {"JOB"}) == ["_helper"]


def test_a_reason_worded_otherwise_is_a_change():
    assert migrate.compare_job_file(OLD, NEW.replace("took {", "needed {"), {"JOB"}) == ["decide"]


def test_an_unused_constant_and_docstrings_are_not():
    changed = NEW.replace("WINDOW = 0.005", "WINDOW = 0.5").replace('"""A job, presenting nothing."""', "")
    assert migrate.compare_job_file(OLD, changed, {"JOB"}) == []


def test_a_claim_added_to_the_job_is_a_change():
    changed = NEW.replace('(Claim("x.y", "text", decide),)', '(Claim("x.y", "text", decide), Claim("x.z", "t", decide))')
    assert migrate.compare_job_file(OLD, changed, {"JOB"}) == ["JOB"]


def test_what_another_job_module_reaches_is_followed():
    source = "from verify.jobs.streaming.proxy_buffering import _decide, capture_paths\n" \
             "def collect(ctx):\n    return capture_paths(ctx, ())\n" \
             "JOB = Job(collect=collect, claims=(Claim('a', 'b', _decide('p', False)),))\n"
    names, elsewhere = migrate.reachable(source, {"JOB"})
    assert names == {"JOB", "collect", "_decide", "capture_paths"}  # the imports are compared too
    assert elsewhere == {"verify/jobs/streaming/proxy_buffering.py": {"_decide", "capture_paths"}}


def test_a_moved_module_must_hold_its_definitions_unchanged():
    home = 'def ms(seconds) -> str:\n    return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"\n'
    assert migrate.compare_moved(home, '"""Units."""\n' + home) == []
    assert migrate.compare_moved(home, home.replace(":.0f", ":.1f")) == ["ms"]


def test_the_committed_records_need_no_migration():
    out = migrate.migrate("HEAD", ["cpu", "cpu-oldest"], dry_run=True, progress=lambda m: None)
    assert out and {o.detail for o in out} == {"fresh already"}


def test_an_import_bound_to_another_name_is_a_change():
    old = OLD.replace("from verify.job import Claim, Job", "from verify.job import Claim, Job\nfrom x import a, b")
    new = NEW.replace("from verify.job import Claim, Job", "from verify.job import Claim, Job\nfrom x import a as b, b as a")
    new = new.replace('return d["a"]["status"]', 'return b(a(d))')
    old = old.replace('return d["a"]["status"]', 'return b(a(d))')
    assert migrate.compare_job_file(old, new, {"JOB"}) == ["a", "b"]


def test_a_headline_keyword_outside_job_is_a_change():
    """Only Job(...) loses its presentation and headline keywords: anywhere else a keyword may be data."""
    old = OLD.replace('json={"max_tokens": MAX_TOKENS}', 'json={"max_tokens": MAX_TOKENS}, headline=1')
    new = NEW.replace('json={"max_tokens": MAX_TOKENS}', 'json={"max_tokens": MAX_TOKENS}, headline=2')
    assert migrate.compare_job_file(old, new, {"JOB"}) == ["collect"]


def test_a_top_level_statement_that_is_no_binding_makes_the_whole_file_count():
    for extra in ("MAX_TOKENS += 10", "if True:\n    MAX_TOKENS = 90", "LIMITS = {}\nLIMITS['a'] = 1"):
        assert migrate.compare_job_file(OLD, NEW + "\n" + extra + "\n", {"JOB"}) == ["(the whole file)"], extra


def test_a_name_bound_twice_is_compared_with_every_binding():
    new = NEW + "\ndecide = wrap(decide)\n"
    assert migrate.compare_job_file(OLD, new, {"JOB"}) == ["decide"]


def test_a_relative_import_makes_the_whole_file_count():
    assert migrate.compare_job_file(OLD, NEW + "\nfrom . import other\n", {"JOB"}) == ["(the whole file)"]
