"""Sphinx configuration of capslint's documentation site.

`scripts/docs` builds the site: it stages the README, the changelog, the license, these pages and the rule
pages of `rules/` in one source directory laid out as the repository is (so every relative link works both
on GitHub and on the site), generates the rule index and the navigation, and runs Sphinx with warnings as
errors.
"""

project = "capslint"
author = "The capslint authors"
copyright = "2026, The capslint authors"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
# The README is the home page; `scripts/docs` appends the navigation to the staged copy.
root_doc = "README"

# Anchors for headings down to `####`, as GitHub makes them, so that `page.md#section` links resolve and a
# link to a missing section is a warning.
myst_heading_anchors = 4
# Quotes and dashes are shown as written.
smartquotes = False

html_theme = "alabaster"
html_title = "capslint"
html_theme_options = {
    "description": "Stops CPU oversubscription on Kubernetes",
    "fixed_sidebar": True,
    "page_width": "1200px",
}
