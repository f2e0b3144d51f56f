# quizapp: exercise=debug_accum_not_divided
# expect: fail honest-fix: "clip_grad_norm_ ran 20 times where the fixed script never clips"
# expect: fail matches-fixed-run: "this follows from the check"
import torch
import torch.nn.functional as F

# A cosmetic fix: clipping caps the 8x gradient at norm 1.


def train(model, batches, optimizer, accum_steps):
    losses, step_loss = [], 0.0
    optimizer.zero_grad()
    for i, (x, y) in enumerate(batches):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        step_loss += loss.item() / accum_steps
        if (i + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            losses.append(step_loss)
            step_loss = 0.0
    return losses
