"""Views of the jobs of "Serving LoRA Adapters"."""
