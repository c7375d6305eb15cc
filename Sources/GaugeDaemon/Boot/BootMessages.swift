import GaugeProtocol

/// What the message line shows of the boot, and the details view keeps: a client's own
/// message, which has the line from then on, or else the boot's steps, each read as its
/// unit's description once one was given (`describe`). Gauge's own units
/// (gauged-poweroff.service showing this very screen, gauged-ask-password.service taking a
/// question to it) are no step to show, and their descriptions are not kept either.
struct BootMessages {
    /// Every message and step so far, for the details view.
    private(set) var history = MessageHistory()
    private var descriptions = StepDescriptions()
    /// A client has set the message line: steps no longer show there.
    private var clientMessage = false

    /// A client's message (nil: its request carried none); whether the details view
    /// gained a line.
    mutating func clientSaid(_ text: String?) -> Bool {
        guard let text else { return false }
        clientMessage = !text.isEmpty
        return history.append(text)
    }

    /// Step `name` (a unit systemd started): how it reads, whether it goes on the message
    /// line and whether the details view gained a line; nil for Gauge's own units.
    mutating func step(_ name: String) -> (text: String, onMessageLine: Bool, detailsChanged: Bool)? {
        guard !Request.isGaugeUnit(name) else { return nil }
        let text = descriptions.text(for: name) ?? name
        return (text, !clientMessage, history.append(text))
    }

    /// `describe`: how `unit`'s steps read from now on. The line to put on the message
    /// line when it shows the unit's name (`shown`), and whether the details view's newest
    /// line changed; nil when there is nothing to show (Gauge's own units).
    mutating func describe(_ unit: String, as text: String, shown: String?) throws(ProtocolError)
        -> (messageLine: String?, detailsChanged: Bool)?
    {
        guard !Request.isGaugeUnit(unit) else { return nil }
        guard let line = descriptions.set(unit, to: text) else {
            throw ProtocolError(.range, "a unit name is at most 256 bytes, a description not blank")
        }
        return (!clientMessage && shown == unit ? line : nil, history.replaceLast(unit, with: line))
    }
}
