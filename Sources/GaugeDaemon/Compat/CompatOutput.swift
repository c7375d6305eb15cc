import GaugeProtocol

/// What a compatibility translator made of the bytes it was fed: requests for the
/// screen (in order, to be applied exactly like native requests), bytes to write back
/// to the peer (once the requests are applied, before the daemon could leave on a
/// `quit`, so a client waiting for its answer always gets it), and lines for the
/// daemon's log.
package struct CompatOutput: Equatable, Sendable {
    package var requests: [Request] = []
    package var reply: [UInt8] = []
    package var logs: [String] = []
    /// A question for the person at the screen: the reply comes once it is answered
    /// (`reply` is then empty).
    package var ask: PlymouthAsk?
    /// A question was refused: its caller asks on the console now, which gets the screen.
    package var lendsConsole = false
    /// `pause-progress` (true) or `unpause-progress` (false): the boot's clock.
    package var pausesProgress: Bool?

    package init(requests: [Request] = [], reply: [UInt8] = [], logs: [String] = [], ask: PlymouthAsk? = nil) {
        self.requests = requests
        self.reply = reply
        self.logs = logs
        self.ask = ask
    }

    package var isEmpty: Bool {
        requests.isEmpty && reply.isEmpty && logs.isEmpty && ask == nil && !lendsConsole && pausesProgress == nil
    }

    mutating func append(_ other: CompatOutput) {
        requests += other.requests
        reply += other.reply
        logs += other.logs
        if let ask = other.ask { self.ask = ask }
        lendsConsole = lendsConsole || other.lendsConsole
        if let pauses = other.pausesProgress { pausesProgress = pauses }
    }
}
