import GaugeSystem

/// The sockets `gauged` listens on, bound first thing, before a display is opened or a
/// theme read: from its first moments a client that connects is queued until the daemon
/// answers (a ping before the first frame, `StartingDesk`) rather than refused or told no
/// splash runs, and a second daemon on the same path fails before it takes the display.
struct DaemonListeners {
    /// The native socket (`--socket`, or the one systemd passed).
    let native: ListeningSocket
    /// `--group`'s group, let in to the native socket and Plymouth's.
    let groupID: UInt32?
    /// Plymouth's socket (`--plymouth`); nil when not asked for or when another splash holds it.
    let plymouth: ListeningSocket?

    /// Binds the native socket (its failure ends the start) and, with `--plymouth`,
    /// Plymouth's (its failure is logged: the native socket still serves).
    init(_ options: DaemonOptions, log: Log) throws(DaemonError) {
        groupID = try PeerPolicy.groupID(named: options.group)
        native = try ListeningSocket.forDaemon(options, groupID: groupID)
        var plymouth: ListeningSocket?
        if options.plymouth {
            do throws(DaemonError) {
                plymouth = try CompatInputs.bindPlymouthSocket()
            } catch {
                log.info("\(error)")
            }
        }
        self.plymouth = plymouth
    }
}
