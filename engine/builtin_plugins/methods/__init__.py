"""One package per analysis method (`<method>/method.py` registers it, listed in `engine.registry.METHOD_MODULES`);
the packages never import each other (an import-linter independence contract)."""
