# quizapp: exercise=debug_no_shuffle
# expect: fail matches-fixed-run: "another order than the fixed script's" "global random state"
import torch.nn.functional as F
from torch.utils.data import DataLoader

# A near miss: shuffled, but from torch's global random state, not the generator passed in.

BATCH, EPOCHS = 8, 2


def train(model, dataset, optimizer, generator):
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True)
    losses = []
    for _ in range(EPOCHS):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses
