# quizapp: exercise=moe_routing
"""Top-k routing for a mixture-of-experts layer, as Mixtral does it. Grade it with: quizapp grade moe_routing.py"""

import torch
import torch.nn.functional as F


def moe_forward(x, router, experts, *, k=2) -> tuple[torch.Tensor, torch.Tensor]:
    """Route each token of x to its top-k experts; return (y, aux_loss).

    x       -- (T, d) tokens, float32 or bfloat16 (the modules share its dtype and device)
    router  -- nn.Linear(d, E), with or without bias
    experts -- nn.ModuleList of E modules, each mapping (n, d) to (n, d)

    probs = F.softmax(router(x), dim=-1, dtype=torch.float32)   (float32 whatever x's dtype)
    Each token's experts are the indices of torch.topk(probs, k, dim=-1) (ties as torch.topk breaks
    them); its gates are those k probabilities divided by their sum, cast to x's dtype.
    y[t] = sum over the token's k experts of gate * expert(x[t]): shape (T, d), x's dtype.
    Each chosen expert is called once per forward, on a 2-D batch of the rows of x of exactly the
    tokens that chose it; an expert no token chose is not called.
    aux_loss = E * sum_i f_i * P_i, a 0-dim float32 tensor (HF's load_balancing_loss_func): f_i is the
    share of tokens that have expert i among their k choices (so sum_i f_i = k), computed without
    gradient; P_i is the mean over tokens of probs[:, i], which carries the gradient.
    Raise ValueError if k < 1 or k > E. Leave x unchanged.
    """
    # TODO: validate k against E = len(experts) (ValueError)
    # TODO: logits = router(x); probs in float32; torch.topk; renormalise the k probabilities; cast to x.dtype
    # TODO: y = zeros like x; for each expert some token chose: gather its tokens' rows, call it once,
    #       weight its output by those tokens' gates and add it into y at their positions (index_add)
    # TODO: f from the chosen indices (one_hot, no gradient), P = probs.mean(0), aux_loss = E * sum(f * P)
    raise NotImplementedError("moe_forward is not written yet: see the TODOs in this file")
