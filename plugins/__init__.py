"""The toolkit's built-in plugins, installed as ``toolkit.plugins``.

Each module registers through the entry-point group ``toolkit.plugins`` exactly as a
third-party package would, and imports only the standard library and ``toolkit`` at module
level; the numerical implementation lives in a sibling module imported on first use.
"""
