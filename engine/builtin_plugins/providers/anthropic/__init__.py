"""The built-in `anthropic` provider: its modules are named in `engine.plugin_tables.PROVIDERS`."""
