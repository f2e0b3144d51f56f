# quizapp: exercise=debug_no_shuffle
# expect: pass
import torch.nn.functional as F
from torch.utils.data import BatchSampler, DataLoader, RandomSampler

# A right fix written another way: a BatchSampler over a RandomSampler drawing from the generator.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    batches = BatchSampler(RandomSampler(dataset, generator=generator), batch_size=BATCH, drop_last=False)
    loader = DataLoader(dataset, batch_sampler=batches, generator=generator)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
