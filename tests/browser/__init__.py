"""Browser tests. A package, so that pytest imports this folder's conftest as
``browser.conftest``: as a second top-level ``conftest`` it would replace the unit tests' one, and
``pytest tests`` would fail to import the unit tests that read their fixtures from it."""
