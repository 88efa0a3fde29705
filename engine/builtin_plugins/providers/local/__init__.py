"""The built-in `local` provider: its modules are named in `engine.plugin_tables.PROVIDERS`."""
