# quizapp: exercise=loss_scaler
# expect: fail scale-trajectory skip-on-overflow return-value clean-step-update missing-grads scale-loss
# expect: skip growth-only-if-finite
"""Does nothing: never scales, never unscales, never steps, and says every step went through."""


class DynamicLossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale = init_scale

    def scale_loss(self, loss):
        return loss

    def step(self, optimizer) -> bool:
        return True
