# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "the learning rate at step 0 was 0.0125 where the fixed script uses 0.1"
import torch.nn.functional as F

# A cosmetic fix in disguise: the learning rate divided by accum_steps in a step pre-hook and put
# back in a post-hook, so that between steps it reads as the grader set it. The update still runs at
# lr / 8, as in the open version of the same change (lr_over_accum_steps), and is named alike.


def train(model, batches, optimizer, accum_steps):
    def divide(opt, args, kwargs):
        for group in opt.param_groups:
            group["lr"] /= accum_steps

    def restore(opt, args, kwargs):
        for group in opt.param_groups:
            group["lr"] *= accum_steps

    optimizer.register_step_pre_hook(divide)
    optimizer.register_step_post_hook(restore)
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
