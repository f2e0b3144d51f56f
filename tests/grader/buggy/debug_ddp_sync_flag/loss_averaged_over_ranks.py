# quizapp: exercise=debug_ddp_sync_flag
# expect: fail matches-fixed-run: "the weights match the fixed run's, only the returned losses differ"
# A near miss: the fix is right, but the returned loss is averaged over the ranks (as build-nanogpt logs
# it), where the fixed script returns this rank's own loss.
import torch
import torch.distributed as dist
import torch.nn.functional as F


def train(model, batches, optimizer, accum_steps):
    model.train()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = torch.zeros(())
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            model.require_backward_grad_sync = micro_step == accum_steps - 1
            loss = F.mse_loss(model(x), y) / accum_steps
            loss_accum += loss.detach()
            loss.backward()
        dist.all_reduce(loss_accum)
        optimizer.step()
        losses.append(loss_accum.item() / dist.get_world_size())
    return losses
