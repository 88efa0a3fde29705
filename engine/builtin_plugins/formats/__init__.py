"""The built-in dataset formats, one module each (`engine.plugin_tables.DATASET_FORMATS`); each imports only the
public API (`engine.api`) and itself."""
