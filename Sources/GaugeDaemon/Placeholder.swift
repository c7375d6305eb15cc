// GaugeDaemon
