# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "the learning rate at step 0 was 0.0125 where the fixed script uses 0.1"
import torch.nn.functional as F

# A cosmetic fix: the learning rate divided by accum_steps. For plain SGD this cancels the
# 8x gradient exactly, but it changes the set-up (and breaks with weight decay, Adam's epsilon or clipping).


def train(model, batches, optimizer, accum_steps):
    for group in optimizer.param_groups:
        group["lr"] /= accum_steps
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
