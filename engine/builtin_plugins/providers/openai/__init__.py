"""The built-in `openai` provider: its modules are named in `engine.plugin_tables.PROVIDERS`."""
