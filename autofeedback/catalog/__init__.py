"""The API catalog: :class:`~autofeedback.catalog._catalog.ApiCatalog` (a loaded spec of
any format), its tool names, its schemas as tools and its OpenAPI 3.1 export.

May import ``core``, ``_specs`` and ``_parse``; never ``checks``, ``flow``, ``scanner``,
``serve``, ``decide``, ``loop``, ``audit``, ``integrations`` or ``cli``. Inside, the
export (``_openapi``) imports the catalog (``_catalog``) and the schemas (``_schema``);
the catalog imports only the schemas.
"""
