# quizapp: exercise=debug_no_shuffle
# expect: pass
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A right fix written another way: the shuffling loader built anew every epoch.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    losses = []
    for _ in range(EPOCHS):
        loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=generator)
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
