# quizapp: exercise=scaled_loop
def train(model, loader):
    raise NotImplementedError
