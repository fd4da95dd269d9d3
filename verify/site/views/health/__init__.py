"""How the health article's evidence looks on its page."""
