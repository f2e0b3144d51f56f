# quizapp: exercise=debug_no_shuffle
# expect: pass
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler

# A right fix written another way: an explicit RandomSampler drawing from the generator.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    sampler = RandomSampler(dataset, generator=generator)
    loader = DataLoader(dataset, batch_size=BATCH, sampler=sampler, generator=generator)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
