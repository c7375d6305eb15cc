import GaugeDisplay

extension DaemonOptions.DisplayChoice {
    /// The display `--display` asks for: a slot following the kernel's devices (`devices`),
    /// or a display of another kind, or none.
    func open(devices: DisplayDevices, loop: EventLoop, log: Log) throws(DaemonError)
        -> (slot: DisplaySlot?, display: (any Display)?)
    {
        guard let policy = devicePolicy else { return (nil, try openDisplay()) }
        let slot = DisplaySlot(policy: policy, devices: devices, loop: loop, log: log)
        return (slot, slot.device)
    }

    /// How `--display` picks a kernel device; nil for the displays that are not one.
    private var devicePolicy: DisplaySlot.Policy? {
        switch self {
        case .auto: .best
        case .drm(let path): .named(DeviceNode(kind: .drm, path: path ?? "/dev/dri/card0"))
        case .fbdev(let path): .named(DeviceNode(kind: .fbdev, path: path ?? "/dev/fb0"))
        case .memory, .terminal, .none: nil
        }
    }

    /// The display that is not a kernel device (memory, terminal); nil for the others.
    private func openDisplay() throws(DaemonError) -> (any Display)? {
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
