"""Device backends behind the :class:`~distrl.envs.protocol.DeviceEnv` protocol."""
