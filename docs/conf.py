"""Sphinx configuration: the spec's Markdown is included as-is (myst)."""

project = "tether"
author = "the tether developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = "tether"
exclude_patterns = ["_build"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
nitpicky = False
suppress_warnings = ["myst.xref_missing"]
