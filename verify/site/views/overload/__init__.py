"""How the overload article's evidence looks on its page."""
