# quizapp: exercise=debug_half_adam_eps
# expect: fail honest-fix: "Adam's eps at step 0 was 0.0001 where the grader's optimizer has 1e-08"
# expect: says honest-fix: "the weights it updated are still float16"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix in disguise: Adam's eps raised to 1e-4 in a step pre-hook and put back in a
# post-hook, so that between steps it reads as the grader set it; the update still uses 1e-4.


def train(model, batches, optimizer, log=None):
    model.half()

    def raise_eps(opt, args, kwargs):
        for group in opt.param_groups:
            group["eps"] = 1e-4

    def put_back(opt, args, kwargs):
        for group in opt.param_groups:
            group["eps"] = 1e-8

    optimizer.register_step_pre_hook(raise_eps)
    optimizer.register_step_post_hook(put_back)
    losses = []
    for x, y in batches:
        loss = F.cross_entropy(model(x.half()).float(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
