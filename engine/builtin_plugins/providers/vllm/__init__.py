"""The built-in `vllm` provider: its modules are named in `engine.plugin_tables.PROVIDERS`."""
