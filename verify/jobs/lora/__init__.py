"""Jobs of "Serving LoRA Adapters" (docs/lora.md)."""
