"""The built-in exporters, one module each (`engine.plugin_tables.EXPORTERS`); each imports only the public API
(`engine.api`) and itself."""
