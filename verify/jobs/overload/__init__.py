"""Jobs of the article "Overload and Admission Control" (docs/overload.md)."""
