# quizapp: exercise=debug_ddp_sync_flag
# expect: fail honest-fix: "32 of 32 forward passes called model.module directly"
# expect: says honest-fix: "dist.all_reduce was called by hand 128 times"
import torch.distributed as dist
import torch.nn.functional as F

# A workaround: go around DDP (model.module) and average the gradients by hand after every
# micro-batch's backward.


def train(model, batches, optimizer, accum_steps):
    net = model.module
    net.train()
    world = dist.get_world_size()
    losses = []
    for start in range(0, len(batches), accum_steps):
        optimizer.zero_grad()
        loss_accum = 0.0
        for micro_step in range(accum_steps):
            x, y = batches[start + micro_step]
            before = [p.grad.clone() if p.grad is not None else 0 for p in net.parameters()]
            loss = F.mse_loss(net(x), y) / accum_steps
            loss_accum += loss.item()
            loss.backward()
            for p, old in zip(net.parameters(), before):
                new = p.grad - old
                dist.all_reduce(new)
                p.grad.copy_(old + new / world)
        optimizer.step()
        losses.append(loss_accum)
    return losses
