# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "4 all-reduces per step where the fixed script does 1" "inside model.no_sync()"
import contextlib

import torch.nn.functional as F

# A near miss (KellerJordan/modded-nanogpt#31): no_sync() wraps only the backward. DDP made its
# decision in the forward, outside the context, so every micro-batch all-reduces.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.item()
            last = micro_step == accum_steps - 1
            with contextlib.nullcontext() if last else model.no_sync():
                loss.backward()
        optimizer.step()
        losses.append(loss_accum)
    return losses
