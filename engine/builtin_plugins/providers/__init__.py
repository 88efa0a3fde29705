"""The built-in providers, one package each (`engine.plugin_tables.PROVIDERS` names their modules); each imports
only the public API (`engine.api`) and its own package."""
