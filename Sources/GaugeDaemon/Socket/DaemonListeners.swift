import CGaugeLinux
import GaugeSystem

/// What clients find of `gauged` from its first moments, made before a display is opened or
/// a theme read: its sockets, where a client that connects is queued until the daemon
/// answers (a ping while it starts, `StartingDesk`) rather than refused or told no splash
/// runs, and a second daemon on the same path fails before it takes the display; and what a
/// client that had its answer may use next: psplash's FIFO, open for reading, and
/// Plymouth's pid file.
struct DaemonListeners {
    /// The native socket (`--socket`, or the one systemd passed).
    let native: ListeningSocket
    /// `--group`'s group, let in to the native socket and Plymouth's.
    let groupID: UInt32?
    /// Plymouth's socket (`--plymouth`); nil when not asked for or when another splash holds it.
    let plymouth: ListeningSocket?
    /// psplash's FIFO (`--psplash-fifo`); nil when not asked for or when it cannot be made
    /// (logged: the native socket still serves).
    let psplashFIFO: PsplashFIFO?
    /// Plymouth's pid file, claimed with its socket where the questions are asked on the
    /// screen (`--ask`); nil when not claimed (`CompatInputs.claimPIDFile`).
    let plymouthPIDFile: String?

    /// Binds the native socket (its failure ends the start) and, with `--plymouth`,
    /// Plymouth's; makes psplash's FIFO (`--psplash-fifo`) and claims Plymouth's pid file
    /// (`--ask`). A failure of those is logged: the native socket still serves.
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
        var fifo: PsplashFIFO?
        if let path = options.psplashFIFO {
            do throws(SystemError) {
                fifo = try PsplashFIFO(path: path)
            } catch {
                log.info("cannot open the psplash FIFO \(path): \(error)")
            }
        }
        psplashFIFO = fifo
        var pidFile: String?
        if plymouth != nil, options.ask, let path = options.plymouthPIDFile, CompatInputs.claimPIDFile(path, log: log) {
            pidFile = path
        }
        plymouthPIDFile = pidFile
    }

    /// Undoes what a client could take for a running daemon when the start fails before it
    /// serves: Plymouth's pid file and psplash's FIFO (the sockets close with their owner).
    @inline(never)
    func abandon() {
        if let plymouthPIDFile { PIDFile.remove(plymouthPIDFile, ifNaming: getpid()) }
        psplashFIFO?.close()
    }
}
