"""Models, ensemble-batched: query-vector heads (A2), CLS transformer (A3), selector (B2).

For a plain PyTorch loop, three ``nn.Module``s (``parameters()`` for any ``torch.optim``
optimizer; float64 by default):

* :class:`QueryHeadsModel` — one query-heads model (SPEC A2): ``model(x)``, ``x`` of shape
  ``n x d``, gives ``n`` predictions; ``theta`` (``H x m``) is its only parameter.
* :class:`Selector` — one selector (SPEC B2): ``f, s = selector(X, P, y)`` with ``X``
  ``B x T x d``, ``P`` ``B x T x m_p``, ``y`` ``B x q``; ``W`` (``D x D``) its parameter.
* :class:`ClsTransformer` — the standard attention block with a CLS token (SPEC A3), kept
  ensemble-first: ``block(x)`` with ``x`` of shape ``E x n x d`` gives ``E x n``; build it
  with ``ClsTransformer.from_query_heads(*model.ensemble())`` from a ``QueryHeadsModel``
  (``E = 1``); ``W_Q``, ``W_K``, ``W_V`` are its parameters (the structural mask zeroes the
  gradients of the masked entries).
"""

from .cls_transformer import ClsTransformer
from .modules import QueryHeadsModel, Selector

__all__ = ["ClsTransformer", "QueryHeadsModel", "Selector"]
