# quizapp: exercise=debug_ddp_sync_flag
# expect: pass
import contextlib

import torch.nn.functional as F

# A right fix written another way: every micro-batch but the last runs forward AND backward inside
# model.no_sync(), so DDP all-reduces once, after the last backward.


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            last = micro_step == accum_steps - 1
            with contextlib.nullcontext() if last else model.no_sync():
                loss = F.mse_loss(model(x), y) / accum_steps
                loss.backward()
            loss_accum += loss.item()
        optimizer.step()
        losses.append(loss_accum)
    return losses
