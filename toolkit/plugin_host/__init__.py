"""The plugin host: hook specifications, the plugin manager (entry points), the component registry,
capabilities, and lookup of registered components by name."""
