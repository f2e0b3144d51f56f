# quizapp: exercise=debug_no_shuffle
# expect: fail matches-fixed-run: "all 2 epochs visited the samples in the same order"
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A near miss: one permutation drawn from the generator, reused every epoch.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    order = torch.randperm(len(dataset), generator=generator)
    loader = DataLoader(torch.utils.data.Subset(dataset, order.tolist()), batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
