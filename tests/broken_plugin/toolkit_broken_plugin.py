"""A plugin whose import fails, as a plugin with a missing dependency does."""

raise ImportError("Don't hide me! (toolkit_broken_plugin needs a module that is not installed)")
