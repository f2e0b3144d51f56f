# quizapp: exercise=debug_no_shuffle
# expect: fail batches-mix-classes: "48 of your 48 batches held a single class"
# expect: may-not-pass matches-fixed-run
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A near miss: the order of the (single-class) batches is shuffled, not the samples.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    loader = DataLoader(dataset, batch_size=BATCH)
    losses = []
    for _ in range(EPOCHS):
        batches = list(loader)
        for i in torch.randperm(len(batches), generator=generator).tolist():
            x, y = batches[i]
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
