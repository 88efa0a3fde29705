"""The README's example analysis method as a package: `method.py` registers it, `templates/` holds its section.
tests/test_methods.py adds its one registry line and runs it end to end."""
