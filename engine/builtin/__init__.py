"""Specs the package ships, named `vibe:NAME` from any folder: the offline panel base and the embedded default."""
