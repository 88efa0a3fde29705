"""The built-in judge kinds, one module each (`engine.plugin_tables.JUDGE_KINDS`); each imports only the public
API (`engine.api`) and itself."""
