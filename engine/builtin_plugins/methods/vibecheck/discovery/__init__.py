"""VibeCheck's discovery: proposing vibes from the training pairs of an analysis, statistically (measured
properties, phrase lexicons, embedding clusters) or with an LLM proposer, and the train/test split it reads."""
