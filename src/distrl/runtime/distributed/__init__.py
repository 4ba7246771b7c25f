"""``runtime=ray``: the serial runtime's parts (worker, replay, learner) placed as Ray actors."""
