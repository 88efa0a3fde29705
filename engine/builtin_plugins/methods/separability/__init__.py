"""Generation separability (seed 001): this package holds the method (`method.py` registers it), its analysis,
its pages and their templates (`templates/`). Generic code reaches it only through `engine.registry`."""
