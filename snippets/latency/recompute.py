"""Recompute vllm bench serve's medians and goodput from its --save-detailed result file."""

import json
import sys
from statistics import median


def recompute(result: dict, ttft_slo_s: float, tpot_slo_s: float) -> dict:
    ok = [i for i, e in enumerate(result["errors"]) if not e]
    ttft = [result["ttfts"][i] for i in ok]
    tpot = [(result["latencies"][i] - result["ttfts"][i]) / (result["output_lens"][i] - 1) for i in ok]
    good = sum(1 for a, b in zip(ttft, tpot) if a <= ttft_slo_s and b <= tpot_slo_s)  # every objective met
    return {"median_ttft_ms": median(ttft) * 1000,
            "median_itl_ms": median(g for i in ok for g in result["itls"][i]) * 1000,  # all gaps, pooled
            "median_tpot_ms": median(tpot) * 1000,
            "request_goodput": good / result["duration"]}


if __name__ == "__main__":
    saved = json.load(open(sys.argv[1]))
    for key, value in recompute(saved, float(sys.argv[2]) / 1000, float(sys.argv[3]) / 1000).items():
        print(f"{key:<16} recomputed {value:9.3f}   printed {saved[key]:9.3f}")
