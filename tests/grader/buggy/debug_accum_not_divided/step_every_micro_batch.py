# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "160 optimizer steps ran where the fixed script takes 20" "drops the accumulation"
# expect: fail matches-fixed-run: "this follows from the check"
import torch.nn.functional as F

# A cosmetic fix: an optimizer step after every micro-batch, so nothing accumulates.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
