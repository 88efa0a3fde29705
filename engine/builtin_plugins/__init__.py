"""vibe's own plug-ins, by kind: judge kinds, dataset formats, providers, analysis methods and exporters.

They are written as an outside plug-in is: each imports only the public API (`engine.api`) and its own module or
package (an import-linter contract generated from the tables checks it), and generic code reaches them only by
name, through `engine.plugin_tables`. Nothing here is imported until a spec names it."""
