/// Which connectors light up, at which mode, on which CRTC: the choices `DRMDisplay`
/// makes from what the card reports, as a pure function over plain values so the rules
/// are testable without a card.
///
/// The rules:
/// - Every connected connector with at least one mode is a candidate, in the card's order.
/// - The frame size is the first candidate's preferred mode (the mode flagged preferred,
///   else its first mode). That head is never scaled or given a mode it does not prefer.
/// - Every other candidate mirrors the frame if it has a mode of exactly that size (its
///   preferred mode if that matches, else the matching mode with the highest refresh).
///   A connector without such a mode is left dark and named in `skipped`: showing one
///   frame size everywhere means one picture drawn once into one pair of buffers that
///   all CRTCs scan out, and no scaling or letterboxing code.
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

        package init(width: Int, height: Int, refresh: Int = 60, preferred: Bool = false) {
            self.width = width
            self.height = height
            self.refresh = refresh
            self.preferred = preferred
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

        package init(
            id: UInt32, name: String = "", connected: Bool = true, modes: [Mode],
            currentEncoder: UInt32 = 0, encoders: [UInt32] = []
        ) {
            self.id = id
            self.name = name.isEmpty ? "connector-\(id)" : name
            self.connected = connected
            self.modes = modes
            self.currentEncoder = currentEncoder
            self.encoders = encoders
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

    package var width: Int
    package var height: Int
    package var heads: [Head]
    /// Connected connectors left dark, each with the reason.
    package var skipped: [String]

    /// The plan for a card, or nil (with the reason) when nothing can be lit.
    package static func make(
        connectors: [Connector], encoders: [Encoder], crtcs: [UInt32]
    ) -> Result<DRMHeadPlan, DisplayError> {
        let candidates = connectors.filter { $0.connected && !$0.modes.isEmpty }
        guard let first = candidates.first else {
            return .failure(DisplayError("no connected connector with a mode"))
        }
        let frame = first.modes[preferredModeIndex(first.modes)]
        var used = Set<UInt32>()
        var heads: [Head] = []
        var skipped: [String] = []
        for connector in candidates {
            let modeIndex: Int
            if connector.id == first.id {
                modeIndex = preferredModeIndex(first.modes)
            } else if let index = matchingModeIndex(connector.modes, width: frame.width, height: frame.height) {
                modeIndex = index
            } else {
                skipped.append("\(connector.name): no \(frame.width)x\(frame.height) mode to mirror")
                continue
            }
            guard let crtc = pickCrtc(for: connector, encoders: encoders, crtcs: crtcs, used: used) else {
                skipped.append("\(connector.name): no free CRTC")
                continue
            }
            used.insert(crtc)
            heads.append(Head(connector: connector.id, connectorName: connector.name, crtc: crtc, modeIndex: modeIndex))
        }
        guard !heads.isEmpty else {
            return .failure(DisplayError("no CRTC for \(first.name)"))
        }
        return .success(DRMHeadPlan(width: frame.width, height: frame.height, heads: heads, skipped: skipped))
    }

    /// The mode flagged preferred, else the first (the kernel lists the best first).
    package static func preferredModeIndex(_ modes: [Mode]) -> Int {
        modes.firstIndex(where: { $0.preferred }) ?? 0
    }

    /// A mode of exactly `width` x `height`: the preferred one if it is that size, else
    /// the one with the highest refresh (the first of equals).
    package static func matchingModeIndex(_ modes: [Mode], width: Int, height: Int) -> Int? {
        let preferred = preferredModeIndex(modes)
        if modes.indices.contains(preferred), modes[preferred].width == width, modes[preferred].height == height {
            return preferred
        }
        var best: Int?
        for (index, mode) in modes.enumerated() where mode.width == width && mode.height == height {
            if best == nil || mode.refresh > modes[best!].refresh { best = index }
        }
        return best
    }

    /// The current encoder's CRTC if free, else the first free CRTC any of the
    /// connector's encoders can drive.
    package static func pickCrtc(
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
