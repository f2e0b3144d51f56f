# quizapp: exercise=debug_no_shuffle
# expect: fail matches-fixed-run: "of the 192 training samples were never drawn" "sampling with replacement"
import torch.nn.functional as F
from torch.utils.data import DataLoader, RandomSampler

# A near miss: samples drawn with replacement, so some come twice in an epoch and others never.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    sampler = RandomSampler(dataset, replacement=True, generator=generator)
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
