"""One record: what a job recorded on one profile, and everything asked of it.

Every command that looks at evidence (`verify run` deciding what to re-run,
`verify check`, `verify status`, the rendered pages) goes through this type:
its inputs and which of them changed, its verdicts, its origin line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from verify.evidence import inputs as input_hashes
from verify.evidence import store


@dataclass
class Record:
    raw: dict
    path: Path

    @classmethod
    def load(cls, job_id: str, profile: str, root: Path | None = None) -> "Record | None":
        raw = store.load(job_id, profile, root)
        return cls(raw, store.record_path(job_id, profile, root)) if raw is not None else None

    # --- what it holds
    @property
    def job_id(self) -> str:
        return self.raw["job"]

    @property
    def profile(self) -> str:
        return self.raw["profile"]

    @property
    def data(self) -> dict:
        return self.raw["data"]

    @property
    def provenance(self) -> dict:
        return self.raw["provenance"]

    @property
    def date(self) -> str:
        return self.provenance["date"]

    @property
    def inputs(self) -> dict[str, str]:
        return self.raw.get("inputs") or {}

    def verdict(self, claim_id: str) -> dict:
        return self.raw["claims"].get(claim_id, {"verdict": "missing", "because": "the record has no such claim"})

    # --- freshness
    def changed_inputs(self, job, profile) -> list[str]:
        """Inputs that changed since the record was made; empty when the record is fresh.

        The vLLM release is one of them: a record made on another release than the one
        the profile names now (after an upgrade) is stale. It is compared with the version
        the engine itself reported, so it needs no hash of its own.
        """
        changed = input_hashes.changed(self.inputs, job, profile)
        if self.engine_version is not None and self.engine_version != profile.release:
            changed.append(f"vLLM release ({self.engine_version} recorded, the profile now runs {profile.release})")
        return changed

    def is_fresh(self, job, profile) -> bool:
        return not self.changed_inputs(job, profile)

    # --- where it came from, in one line
    @property
    def engine_version(self) -> str | None:
        p = self.provenance
        return (p.get("server") or p.get("offline_engine") or {}).get("version")

    @property
    def model(self) -> str:
        p = self.provenance
        engine = p.get("server") or p.get("offline_engine") or {}
        return engine.get("profile", {}).get("model", "").split(" (")[0]

    @property
    def runs_on(self) -> str:
        p = self.provenance
        if p.get("offline_engine"):
            return "offline engine and the run's server" if p.get("server") else "offline engine"
        variant = p["server"].get("variant", "default")
        return "server" if variant == "default" else f"server variant {variant}"

    def origin_parts(self, today: date | None = None, own_servers: bool = False) -> list[str]:
        """own_servers: the job starts servers of its own (Job.starts_own_engine); its record's provenance names
        only the offline engine it also used."""
        p = self.provenance
        day = self.date[:10]
        age = ((today or date.today()) - date.fromisoformat(day)).days
        ran = p.get("programs") or {}
        with_programs = ("with " + ", ".join(f"{name} {_short_origin(facts)}" for name, facts in sorted(ran.items()))
                         if ran else "")
        runs_on = "servers the job started itself, from the profile's server command" if own_servers else self.runs_on
        return [f"{self.profile} profile", f"vLLM {self.engine_version}", runs_on, self.model,
                p["hardware"].get("cpu") or "", with_programs, f"{day} ({age} days ago)" if age > 0 else day]

    @property
    def code_tie(self) -> str:
        """What ties the record to the code a reader can see: the hashes of its inputs (code, snippets,
        configuration), compared with the checkout at every build; a commit only when the tree was clean."""
        git = self.provenance.get("git") or {}
        clean = git.get("commit") and not git.get("uncommitted_changes")
        return ("its inputs' hashes (code, snippets, configuration) match this build's"
                + (f"; made at commit {git['commit'][:10]}" if clean else ""))

    def evidence_url(self) -> str:
        """Where the record is published, relative to the site root."""
        return f"evidence/{self.job_id}/{self.profile}.json"


def _short_origin(facts: dict) -> str:
    """A program's origin in a few words: "1.22.1-9+deb12u12 (Debian)", "0.8.1 (PyPI)"."""
    how = facts.get("installed_by", "")
    if how.startswith("Debian package "):
        return how.split()[-1] + " (Debian)"
    if how.startswith("PyPI "):
        return facts.get("version", "") + " (PyPI)"
    return facts.get("version", "")[:40]
