"""The report: figures, an HTML page and ``claims.json`` built from stored records."""
