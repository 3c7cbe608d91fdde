"""One torch thread for the tests: tiny per-replica ops slow down with more on a busy machine."""

import torch

torch.set_num_threads(1)
