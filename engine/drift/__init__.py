"""Behaviour drift between two runs: `vibe compare` pairs their answers, judges the pairs and gates the shift."""
