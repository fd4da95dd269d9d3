"""The `verify` command line.

    verify list [--json]            every job and its claims, timing claims marked
    verify run [IDS...] [--all]     run jobs whose inputs changed (or all) against a live server
    verify releases                 find the release where each cross-release difference came in (bisection)
    verify check                    fail where a page and its evidence disagree
    verify status                   every claim's verdict, age, and the inputs that made it stale
    verify pages                    rewrite generated pages from the evidence, list new anchors (no server)
    verify render [--out DIR]       the site's sources with the evidence rendered in, for any generator
    verify prepare                  install the profile's vLLM release and convert the embedded model (no server)
    verify serve                    start the embedded server and keep it up until Ctrl-C
    verify bench                    start-up, first-token and memory figures
    verify floor                    the least time a full re-measure could take, from the committed records
    verify probe URL                the streaming article's path checks against any endpoint
    verify programs [MODE]          the programs (proxies, Prometheus, a browser) each command needs
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from verify.errors import VerifyError
from verify.config.profiles import DEFAULT_PROFILE, PROFILES, VARIANTS, get_profile, runs_on


def _progress(msg: str) -> None:
    print(msg, flush=True)


def cmd_list(args) -> int:
    from verify.registry import all_jobs
    jobs = all_jobs()
    if args.json:
        rows = [{"id": j.id, "title": j.title, "article": j.article, "runs_on": j.runs_on,
                 "profiles": [p for p in PROFILES if runs_on(j.profiles, p)], "pages": list(j.pages),
                 "claims": [c.id for c in j.claims], "timing_claims": [c.id for c in j.claims if c.timing]}
                for j in jobs.values()]
        print(json.dumps(rows if not args.ids_only else [j.id for j in jobs.values()]))
        return 0
    for j in jobs.values():
        print(f"{j.id:<26} {j.title}  [{j.article}; {j.runs_on}]")
        for c in j.claims:
            print(f"    {c.id}" + ("  (timing)" if c.timing else ""))
    return 0


def cmd_run(args) -> int:
    from verify.runner.run import run
    from verify.site.pages import write_pages  # pages generated from a record follow it
    sample = ()
    if args.sample:
        from verify.config.sample import SAMPLE
        sample = SAMPLE
    code = run(args.ids or None, get_profile(args.profile), run_all=args.all, server_url=args.server_url,
               port=args.port, evidence_root=args.evidence_dir, progress=_progress, sample=sample,
               sample_root=args.sample_dir, on_record=write_pages)
    _append_published_anchors("verify run")  # a new claim is measured here, so its anchor is listed here
    return code


def _append_published_anchors(command: str) -> None:
    from verify.paths import ROOT
    from verify.site.published_anchors import LIST, append_new
    new = append_new()
    if new:
        print(f"{command}: {len(new)} anchor(s) appended to {LIST.relative_to(ROOT)}"
              + "".join(f"\n  {a}" for a in new))


def cmd_releases(args) -> int:
    from verify.runner.run import run
    from verify.runner.bisect import bisect
    from verify.site.pages import write_pages
    targets = bisect(lambda ids, profile, run_all: run(ids, profile, run_all=run_all, progress=_progress,
                                                       on_record=write_pages),
                     say=_progress, remove_environments=args.remove_environments)
    return 1 if any(not t.outcome.startswith("changed in") for t in targets) else 0


def cmd_check(args) -> int:
    from verify.verdicts.agreement import HardwareDifference
    from verify.verdicts.check import problems, write_job_summary
    found = problems(get_profile(args.profile), evidence_root=args.evidence_dir)
    hardware = [p for p in found if isinstance(p, HardwareDifference)]
    found = [p for p in found if not isinstance(p, HardwareDifference)]
    for p in hardware:
        print(f"verify check: note: {p}", file=sys.stderr)
    write_job_summary(hardware)
    for p in found:
        print(f"verify check: {p}", file=sys.stderr)
    if found:
        return 1
    print(f"verify check: every claim on every page agrees with fresh {args.profile} evidence"
          + (f" ({len(hardware)} timing verdict(s) differ on this hardware, reported above)" if hardware else ""))
    return 0


def cmd_status(args) -> int:
    from verify.verdicts.status import status_rows
    rows = status_rows(args.evidence_dir)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        for prof, s in r["profiles"].items():
            changed = f"  changed: {', '.join(s['changed'])}" if s["stale"] else ""
            print(f"{r['claim']:<42} {prof:<4} {s['verdict']:<13} {'STALE' if s['stale'] else 'fresh':<6} "
                  f"{(s.get('date') or '')[:19]}{changed}")
    return 0


def cmd_review(args) -> int:
    from verify.verdicts.review import review
    print("\n\n".join(review(c, args.profile, args.evidence_dir, keep=None if args.full else 8)
                       for c in args.claims))
    return 0


def cmd_pages(args) -> int:
    from verify.site.pages import regenerate_pages
    written = regenerate_pages()
    print(f"verify pages: {len(written)} generated page(s) rewritten from evidence" +
          "".join(f"\n  {p}" for p in written))
    _append_published_anchors("verify pages")
    return 0


def cmd_render(args) -> int:
    from verify.site.render_tree import render_tree
    from verify.verdicts.agreement import HardwareDifference
    pages, found = render_tree(args.out)
    # As in `verify check` and the MkDocs build: a timing verdict on other hardware is reported, not failed.
    for p in (p for p in found if isinstance(p, HardwareDifference)):
        print(f"verify render: note: {p}", file=sys.stderr)
    found = [p for p in found if not isinstance(p, HardwareDifference)]
    for p in found:
        print(f"verify render: {p}", file=sys.stderr)
    if found:
        print(f"verify render: {len(found)} problem(s); the tree in {args.out} shows them", file=sys.stderr)
        return 1
    print(f"verify render: {pages} pages rendered into {args.out}/docs; build with: "
          f"zensical build -f {args.out}/mkdocs.yml")
    return 0


def cmd_prepare(args) -> int:
    """Everything a run needs on disk, without starting anything: the release's environment and the model."""
    profile = get_profile(args.profile)
    python = profile.python(_progress)
    print(f"verify prepare: vLLM {profile.distribution}=={profile.release} runs on {python}")
    if profile.model_source != "embedded":
        print(f"verify prepare: profile {profile.name} loads {profile.model_source} itself; nothing to prepare")
        return 0
    from verify.live.model import prepare_embedded_model
    folder, facts = prepare_embedded_model(progress=_progress)
    print(f"verify prepare: model ready in {folder} ({facts['conversion']})")
    if args.tools:  # installed now, a full re-measure's wall time holds none of it
        from verify.config import tools
        seconds = tools.prepare_for([job for jobs in tools.USED_BY.values() for job in jobs], _progress)
        print(f"verify prepare: benchmark tools ready ({', '.join(f'{n}=={r}' for n, r in tools.USED_BY)}; "
              f"{seconds:.0f} s)")
    return 0


def cmd_serve(args) -> int:
    from verify.live.server import managed_server
    with managed_server(get_profile(args.profile), port=args.port, progress=_progress, variant=args.variant) as server:
        print(f"serving {server.api} (model name: chat); Ctrl-C to stop", flush=True)
        while True:
            time.sleep(3600)


def cmd_bench(args) -> int:
    from verify.live.bench import bench
    return bench(get_profile(args.profile), progress=_progress)


def cmd_floor(args) -> int:
    from verify.runner.floor import floor
    for line in floor(get_profile(args.profile), args.evidence_dir).lines():
        print(line)
    return 0


def cmd_programs(args) -> int:
    """The external programs a bootstrap mode needs; with --missing, just the Debian packages to install."""
    from verify.config import programs
    wanted = programs.needed(args.mode)
    if args.missing:
        for package in programs.packages(programs.missing(wanted)):
            print(package)
        return 0
    for p in wanted:
        where = programs.location(p) or "NOT INSTALLED"
        users = ", ".join(p.jobs) if p.jobs else "the tests"
        print(f"{p.name:<11} {p.package:<11} {where:<24} {p.purpose}; run by {users}")
    return 0


def cmd_probe(args) -> int:
    from verify.probe.run import probe
    return probe(args.url, api_key_env=args.api_key_env, model=args.model, metrics_url=args.metrics_url,
                 ca_file=args.ca_file, report_path=args.report, time_limit_s=args.time_limit,
                 watch_drain_s=args.watch_drain, progress=lambda m: print(m, file=sys.stderr, flush=True))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verify", description="Verify the site's claims against a live vLLM server.")
    sub = p.add_subparsers(dest="command", required=True)
    prof = dict(default=DEFAULT_PROFILE, help=f"server profile ({', '.join(PROFILES)}; default {DEFAULT_PROFILE})")

    s = sub.add_parser("list", help="list jobs and claims (timing claims marked)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--ids-only", action="store_true", help="with --json: just the job ids (for a CI matrix)")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("run", help="run jobs against a live server")
    s.add_argument("ids", nargs="*", metavar="JOB")
    s.add_argument("--all", action="store_true", help="run even jobs whose record is fresh")
    s.add_argument("--profile", **prof)
    s.add_argument("--server-url", help="use this running server instead of starting one (or set VERIFY_SERVER_URL)")
    s.add_argument("--port", type=int, help="port for the started server (default: a free one)")
    s.add_argument("--evidence-dir", type=Path, help="where records are read and written (default: docs/evidence)")
    s.add_argument("--sample", action="store_true",
                   help="also measure the live sample (verify/config/sample.py) again and require its verdicts "
                        "to agree with the committed records; ends with what rests on committed records")
    s.add_argument("--sample-dir", type=Path, default=Path("build/sample-evidence"),
                   help="where the sample's records go (default: build/sample-evidence; never docs/evidence)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("releases", help="run the oldest and newest release in full, then bisect every difference "
                                        "over the releases between",
                       description="Exit status: 0 when every difference was placed at one release, 1 when one "
                                   "could only be placed between two (a release in between could not be measured).")
    s.add_argument("--remove-environments", action="store_true",
                   help="delete each release's own environment between the ends once its runs are done (small disks)")
    s.set_defaults(func=cmd_releases)

    s = sub.add_parser("check", help="fail where pages and evidence disagree")
    s.add_argument("--profile", **prof)
    s.add_argument("--evidence-dir", type=Path, help="where records are read (default: docs/evidence)")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("status", help="verdict and freshness of every claim")
    s.add_argument("--json", action="store_true")
    s.add_argument("--evidence-dir", type=Path, help="where records are read (default: docs/evidence)")
    s.set_defaults(func=cmd_status)

    s = sub.add_parser("review", help="print what the page says of a claim and its record's raw data, without the "
                                      "rule or its verdict: for a read against the record alone")
    s.add_argument("claims", nargs="+", metavar="CLAIM")
    s.add_argument("--profile", **prof)
    s.add_argument("--evidence-dir", type=Path, help="where records are read (default: docs/evidence)")
    s.add_argument("--full", action="store_true", help="print the whole section and every item of the record's data "
                        "(default: a list of numbers longer than 60 shows its first and last 20, a longer list of "
                        "records its first and last eight)")
    s.set_defaults(func=cmd_review)

    s = sub.add_parser("pages", help="rewrite generated pages (the executed notebook) from the evidence, and "
                                     "append new claim and symptom anchors to tests/published_anchors.txt")
    s.set_defaults(func=cmd_pages)

    s = sub.add_parser("render", help="write the site's sources with the evidence rendered in (for Zensical)")
    s.add_argument("--out", type=Path, default=Path("build/rendered"), help="where (default: build/rendered)")
    s.set_defaults(func=cmd_render)

    s = sub.add_parser("prepare", help="install the profile's vLLM release and convert the embedded model now (CI caches both)")
    s.add_argument("--profile", **prof)
    s.add_argument("--tools", action="store_true", help="also install the benchmark tools the jobs run (GuideLLM)")
    s.set_defaults(func=cmd_prepare)

    s = sub.add_parser("serve", help="run the profile's server until Ctrl-C")
    s.add_argument("--profile", **prof)
    s.add_argument("--port", type=int)
    s.add_argument("--variant", default="default", choices=sorted(VARIANTS),
                   help="how the server is started (default: the profile as it is)")
    s.set_defaults(func=cmd_serve)

    s = sub.add_parser("bench", help="print start-up, first-token and memory figures")
    s.add_argument("--profile", **prof)
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("floor", help="the least wall time a full re-measure could take, from the committed records")
    s.add_argument("--profile", **prof)
    s.add_argument("--evidence-dir", type=Path, default=None, help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_floor)

    s = sub.add_parser("programs", help="the programs that are not Python packages, what needs them, whether "
                                        "they are installed (standard library only)")
    s.add_argument("mode", nargs="?", default="test", choices=["install", "site", "test"],
                   help="the bootstrap mode whose programs to list (default: test, which needs them all)")
    s.add_argument("--missing", action="store_true", help="print only the Debian packages still to install")
    s.set_defaults(func=cmd_programs)

    s = sub.add_parser("probe", help="run the streaming article's path checks against any OpenAI-compatible endpoint",
                       description="A few small requests (bounded in number, size and time) against URL, the "
                                   "OpenAI base ending in /v1. Exit status: 0 when every check that ran agrees with "
                                   "the site, 3 when one differs, 4 when none differs but one could not be told "
                                   "from what came back, 1 on an error.")
    s.add_argument("url", metavar="URL", help="the endpoint's OpenAI base URL, e.g. https://llm.example/v1")
    s.add_argument("--api-key-env", metavar="NAME", help="environment variable holding the API key (never printed)")
    s.add_argument("--model", help="model name to use (default: the first one /models lists)")
    s.add_argument("--metrics-url", metavar="URL", help="the engine's /metrics, to check that cancellation reaches it")
    s.add_argument("--ca-file", metavar="PATH", help="a CA certificate to trust for a private TLS endpoint")
    s.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    s.add_argument("--time-limit", type=float, default=120.0, metavar="SECONDS", help="stop after this long (default 120)")
    s.add_argument("--watch-drain", type=float, metavar="SECONDS",
                   help="after the checks, poll /health, /v1/models and a one-token completion for this long while "
                        "you drain the endpoint (a rollout, a pod deleted, SIGTERM), and report what each got")
    s.set_defaults(func=cmd_probe)
    return p


def main(argv: list[str] | None = None) -> int:
    from verify.live.processes import unwind_on_signals
    unwind_on_signals()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except VerifyError as e:
        print(f"verify: error: {e.message}", file=sys.stderr)
        if e.detail:
            print("\n".join("  | " + line for line in e.detail.splitlines()), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("verify: interrupted; evidence of unfinished jobs left as it was", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
