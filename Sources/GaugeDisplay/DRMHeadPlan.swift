/// Which connectors light up, at which mode, on which CRTC: the choices `DRMDisplay`
/// makes from what the card reports, as a pure function over plain values so the rules
/// are testable without a card.
///
/// The rules:
/// - Every connected connector with at least one mode is a head, in the card's order,
///   except outputs marked non-desktop (VR headsets: a desktop leaves them alone), which
///   are named in `skipped`.
/// - Each head shows the whole picture at its own mode: the one the kernel command line
///   asked for (`video=CONNECTOR:WxH`, flagged user-defined), else the one flagged
///   preferred, else its first. Heads never mirror or crop one another's frame.
/// - CRTC: the one the connector's current encoder drives, if free; else the first free
///   CRTC in `possible_crtcs` of the connector's encoders, in their order. A connector
///   no free CRTC can drive is skipped.
package struct DRMHeadPlan: Equatable, Sendable {
    package struct Mode: Equatable, Sendable {
        package var width: Int
        package var height: Int
        /// Vertical refresh in Hz as the kernel reports it.
        package var refresh: Int
        package var preferred: Bool
        /// Asked for on the kernel command line (`video=`): it wins over `preferred`.
        package var userDefined: Bool

        package init(width: Int, height: Int, refresh: Int = 60, preferred: Bool = false, userDefined: Bool = false) {
            self.width = width
            self.height = height
            self.refresh = refresh
            self.preferred = preferred
            self.userDefined = userDefined
        }
    }

    package struct Connector: Equatable, Sendable {
        package var id: UInt32
        package var name: String
        package var connected: Bool
        package var modes: [Mode]
        /// The encoder driving it now (0 for none).
        package var currentEncoder: UInt32
        package var encoders: [UInt32]
        /// The connector's "non-desktop" property: a head-mounted display, not a screen.
        package var nonDesktop: Bool

        package init(
            id: UInt32, name: String = "", connected: Bool = true, modes: [Mode],
            currentEncoder: UInt32 = 0, encoders: [UInt32] = [], nonDesktop: Bool = false
        ) {
            self.id = id
            self.name = name.isEmpty ? "connector-\(id)" : name
            self.connected = connected
            self.modes = modes
            self.currentEncoder = currentEncoder
            self.encoders = encoders
            self.nonDesktop = nonDesktop
        }
    }

    package struct Encoder: Equatable, Sendable {
        package var id: UInt32
        /// The CRTC it drives now (0 for none).
        package var crtc: UInt32
        /// Bit i set: it can drive `crtcs[i]` of the card's resources.
        package var possibleCrtcs: UInt32

        package init(id: UInt32, crtc: UInt32 = 0, possibleCrtcs: UInt32) {
            self.id = id
            self.crtc = crtc
            self.possibleCrtcs = possibleCrtcs
        }
    }

    package struct Head: Equatable, Sendable {
        package var connector: UInt32
        package var connectorName: String
        package var crtc: UInt32
        /// Index into the connector's `modes`.
        package var modeIndex: Int
    }

    package var heads: [Head]
    /// Connected connectors left dark, each with the reason.
    package var skipped: [String]

    /// The plan for a card, or nil (with the reason) when nothing can be lit.
    package static func make(
        connectors: [Connector], encoders: [Encoder], crtcs: [UInt32]
    ) -> Result<DRMHeadPlan, DisplayError> {
        let connected = connectors.filter { $0.connected && !$0.modes.isEmpty }
        var used = Set<UInt32>()
        var heads: [Head] = []
        var skipped: [String] = []
        for connector in connected {
            guard !connector.nonDesktop else {
                skipped.append("\(connector.name): a non-desktop output")
                continue
            }
            guard let crtc = pickCrtc(for: connector, encoders: encoders, crtcs: crtcs, used: used) else {
                skipped.append("\(connector.name): no free CRTC")
                continue
            }
            used.insert(crtc)
            heads.append(Head(
                connector: connector.id, connectorName: connector.name, crtc: crtc,
                modeIndex: chosenModeIndex(connector.modes)))
        }
        guard !heads.isEmpty else {
            if connected.isEmpty { return .failure(DisplayError("no connected connector with a mode")) }
            return .failure(DisplayError("no head to light (\(skipped.joined(separator: "; ")))"))
        }
        return .success(DRMHeadPlan(heads: heads, skipped: skipped))
    }

    /// The mode `video=` asked for, else the one flagged preferred, else the first (the
    /// kernel lists the best first).
    static func chosenModeIndex(_ modes: [Mode]) -> Int {
        modes.firstIndex(where: { $0.userDefined }) ?? modes.firstIndex(where: { $0.preferred }) ?? 0
    }

    /// The current encoder's CRTC if free, else the first free CRTC any of the
    /// connector's encoders can drive.
    static func pickCrtc(
        for connector: Connector, encoders: [Encoder], crtcs: [UInt32], used: Set<UInt32>
    ) -> UInt32? {
        if connector.currentEncoder != 0,
           let current = encoders.first(where: { $0.id == connector.currentEncoder }),
           current.crtc != 0, crtcs.contains(current.crtc), !used.contains(current.crtc) {
            return current.crtc
        }
        for encoderID in connector.encoders {
            guard let encoder = encoders.first(where: { $0.id == encoderID }) else { continue }
            for (index, crtc) in crtcs.enumerated() where index < 32 {
                if encoder.possibleCrtcs & (1 << UInt32(index)) != 0, !used.contains(crtc) {
                    return crtc
                }
            }
        }
        return nil
    }
}
