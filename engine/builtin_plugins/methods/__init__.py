"""The built-in analysis methods, one package each (`<method>/method.py` registers it, listed in
`engine.plugin_tables.METHODS`); each imports only the public API (`engine.api`) and its own package, never
another method (import-linter contracts)."""
