"""REST services over frazil's catalogs: :mod:`frazil.rest.server` (``frazil serve``)."""
