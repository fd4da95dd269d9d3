"""List the metrics a vLLM server exports: each family's type, help text and series names."""

import os

import httpx
from prometheus_client.parser import text_string_to_metric_families

SERVER = os.environ.get("SERVER", "http://localhost:8000")


def families(server: str) -> dict[str, dict]:
    """{family: {"type", "help", "samples": {series name: value summed over labels}}}, vllm: only.

    The parser names a counter's family without its _total suffix; the series keep it."""
    text = httpx.get(server + "/metrics", timeout=10).raise_for_status().text
    out: dict[str, dict] = {}
    for family in text_string_to_metric_families(text):
        # *_created series are when a counter or histogram was created, not a metric of their own.
        if not family.name.startswith("vllm:") or family.name.endswith("_created"):
            continue
        entry = out.setdefault(family.name, {"type": family.type, "help": family.documentation, "samples": {}})
        for sample in family.samples:
            entry["samples"][sample.name] = entry["samples"].get(sample.name, 0.0) + sample.value
    return out


if __name__ == "__main__":
    for name, family in sorted(families(SERVER).items()):
        print(f"{family['type']:10} {name:45} {', '.join(sorted(family['samples']))}")
