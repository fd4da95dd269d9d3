"""Jobs of "Measuring Latency: what each tool means by TTFT, ITL and TPOT" (docs/latency.md)."""
