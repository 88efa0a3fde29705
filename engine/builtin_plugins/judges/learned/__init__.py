"""The learned judge (`kind: learned`), a package: its kind, its fit to labelled pairs and to recorded ratings."""
