"""Infrastructure: job specs and grids, executors (inline / process / ray), the SQLite store."""
