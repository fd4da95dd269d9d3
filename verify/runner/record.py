"""A job's record: its inputs and their hash, its verdicts, its data and where they came from."""

from __future__ import annotations

from verify.config.profiles import Profile
from verify.evidence import inputs as input_hashes
from verify.job import Job


def programs_ran(job: Job) -> dict:
    """The third-party programs and tools the job runs, each with its version and origin (provenance)."""
    from verify.config import programs, tools
    from verify.evidence.provenance import program_facts
    ran = {**program_facts(p.name for p in programs.needed("site", [job.id])), **tools.facts_for(job.id)}
    return {"programs": ran} if ran else {}


def build_record(job: Job, profile: Profile, data: dict, opened: dict[str, str], engine_facts: dict, mfacts: dict,
                 started: str, seconds: float, static_inputs: dict[str, str] | None = None) -> dict:
    static = static_inputs if static_inputs is not None else input_hashes.static_inputs(job, profile)
    inputs = {**static, **dict(sorted(opened.items()))}
    return {
        "job": job.id,
        "profile": profile.name,
        "title": job.title,
        "question": job.question,
        "inputs_hash": input_hashes.digest(inputs),
        "inputs": inputs,
        "claims": job.decide(data),
        "data": data,
        "provenance": {
            "date": started,
            "duration_s": round(seconds, 2),
            "engine": input_hashes.engine_description(job, profile),
            **engine_facts,
            **mfacts,
        },
    }
