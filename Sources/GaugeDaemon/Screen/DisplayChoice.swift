import GaugeDisplay

extension DaemonOptions.DisplayChoice {
    /// How `--display` picks a kernel device; nil for the displays that are not one.
    var devicePolicy: DisplaySlot.Policy? {
        switch self {
        case .auto: .best
        case .drm(let path): .named(DeviceNode(kind: .drm, path: path ?? "/dev/dri/card0"))
        case .fbdev(let path): .named(DeviceNode(kind: .fbdev, path: path ?? "/dev/fb0"))
        case .memory, .terminal, .none: nil
        }
    }

    /// The display that is not a kernel device (memory, terminal); nil for the others.
    func openDisplay() throws(DaemonError) -> (any Display)? {
        switch self {
        case .none, .auto, .drm, .fbdev:
            return nil
        case .memory(let spec):
            do {
                return try MemoryDisplay(spec: spec)
            } catch {
                throw DaemonError("\(error)")
            }
        case .terminal:
            do {
                return try TerminalDisplay(scale: Daemon.terminalScale)
            } catch {
                throw DaemonError("\(error)")
            }
        }
    }
}
