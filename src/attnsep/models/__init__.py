"""Models, ensemble-batched: query-vector heads (A2), CLS transformer (A3), selector (B2)."""
