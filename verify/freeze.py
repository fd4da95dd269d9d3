"""Input hashes: when a job's record is still valid without re-running it.

A record stores the hash of everything that could change its outcome: the
job's module, the shared measurement helpers, the snippets it runs, the nginx
configs of the proxy set-ups it uses, and the server profile. Unlike a hash of
the page alone, a change in any included file makes the record stale.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

from verify.job import Job
from verify.paths import ROOT, SNIPPETS
from verify.profiles import Profile

MEASURE_DIR = ROOT / "verify" / "measure"
# Bump when the record format changes in a way that needs fresh records.
RECORD_FORMAT = 1


def input_files(job: Job) -> list[tuple[str, Path]]:
    """(label, file) for every input of the job; the label, not the absolute path, is hashed."""
    from verify.proxy import NGINX_DIR, SETUPS
    job_file = Path(job.module_file)
    files = [("job", job_file)]
    files += [(f"measure/{p.name}", p) for p in sorted(MEASURE_DIR.glob("*.py"))]
    # A shared builder (verify/jobs/_*.py) that defines the job's collect or decide functions.
    builders = {Path(inspect.getsourcefile(f)) for f in (job.collect, *(c.decide for c in job.claims))}
    files += [(f"jobs/{p.name}", p) for p in sorted(builders - {job_file})]
    files += [(f"snippets/{s}", SNIPPETS / s) for s in job.snippets]
    files += [(f"nginx/{SETUPS[p][0]}", NGINX_DIR / SETUPS[p][0]) for p in job.proxies]
    return files


def input_hash(job: Job, profile: Profile) -> str:
    h = hashlib.sha256()
    h.update(f"record-format:{RECORD_FORMAT}\n".encode())
    h.update(json.dumps(profile.as_record(), sort_keys=True).encode())
    for label, path in input_files(job):
        h.update(f"\n--- {label}\n".encode())
        # A missing file hashes differently from an empty one.
        h.update(path.read_bytes() if path.exists() else b"<missing>")
    return h.hexdigest()
