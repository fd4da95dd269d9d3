"""Which claims are timing claims: their verdict rests on how fast the machine is.

A claim says so itself, `Claim(..., timing=True)` in its job's module (verify/job.py says what it
means); nothing else lists it. A timing claim can flip on a CPU with fewer cores or without AVX-512
although no sentence is wrong; where a record from other hardware than the committed one decides
such a claim otherwise, the verdicts layer reports a hardware difference instead of a contradiction
(verify/verdicts/hardware.py), the release bisection measures both ends on one machine first, and the
live sample notes it. This is how a differing verdict is read, never how it is decided: marking a
claim timing leaves every record fresh (verify/evidence/inputs.py).
"""


def timing_claims(job) -> frozenset[str]:
    """The ids of the job's timing claims."""
    return frozenset(c.id for c in job.claims if c.timing)
