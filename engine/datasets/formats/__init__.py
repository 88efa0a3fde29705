"""The built-in dataset formats, one module each (registered in `engine.formats.FORMAT_MODULES`)."""
