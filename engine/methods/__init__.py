"""One module per analysis method, each registered in `engine.registry.METHOD_MODULES`."""
