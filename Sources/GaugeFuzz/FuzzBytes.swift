import GaugeProtocol

/// Helpers the bodies share.
enum FuzzBytes {
    /// `input` cut into pieces whose sizes follow from the input itself (so a replay cuts
    /// it the same way): mostly a few bytes, sometimes one byte at a time, sometimes large;
    /// no smaller than needed to make at most `maxPieces`.
    static func chunks(_ input: [UInt8], maxPieces: Int = .max) -> [ArraySlice<UInt8>] {
        let least = maxPieces == .max ? 1 : (input.count + maxPieces - 1) / maxPieces
        var random = SplitMix64(seed: MutationFuzzer.hash(String(decoding: input.prefix(64), as: UTF8.self)) ^ UInt64(input.count))
        let style = random.below(4)
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while start < input.count {
            let size: Int
            switch style {
            case 0: size = 1
            case 1: size = 1 + Int(random.below(16))
            case 2: size = 1 + Int(random.below(5000))
            default: size = random.below(2) == 0 ? 1 + Int(random.below(8)) : 1 + Int(random.below(20000))
            }
            let end = min(input.count, start + max(size, least))
            pieces.append(input[start..<end])
            start = end
        }
        return pieces
    }

    /// Checks that a request a translator made is one the native protocol could carry:
    /// its line fits, parses back to the same request, and its values are in range.
    static func checkValid(_ request: Request, from source: String) throws(FuzzFailure) {
        let line = request.encoded
        try check(line.utf8.count <= Limits.maxLineBytes, "\(source) made a request line of \(line.utf8.count) bytes")
        let parsed = Request.parse(line)
        try check(parsed == .success(request), "\(source) made \(request), whose line '\(line)' parses as \(parsed)")
        if case .progress(let value, _) = request {
            try check(Request.progressRange.contains(value), "\(source) made progress \(value)")
        }
    }

    /// Checks that a log line about peer input stays short (it quotes at most a snippet).
    static func checkLogLine(_ line: String, from source: String, limit: Int = 400) throws(FuzzFailure) {
        try check(line.utf8.count <= limit, "\(source) logged a line of \(line.utf8.count) bytes: \(line.prefix(120))…")
        try check(!line.unicodeScalars.contains(where: Request.isForbiddenControl),
                  "\(source) logged a control character: \(line.debugDescription.prefix(200))")
    }
}

/// Reads an input as a sequence of choices, for bodies that build a value from bytes:
/// every read succeeds, with zeros once the input runs out.
struct FuzzReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func below(_ bound: Int) -> Int { Int(byte()) % max(bound, 1) }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func u16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }

    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// Up to `maxBytes` bytes, the count read first.
    mutating func bytes(maxBytes: Int) -> [UInt8] {
        let wanted = Int(u16()) % (maxBytes + 1)
        let start = min(position, bytes.count)
        let count = min(wanted, bytes.count - start)
        position = start + count
        return Array(bytes[start..<(start + count)])
    }

    /// Text of up to `maxBytes` UTF-8 bytes, whole scalars only, with the characters
    /// `excluded` dropped.
    mutating func text(maxBytes: Int, excluding excluded: (Unicode.Scalar) -> Bool = { _ in false }) -> String {
        var view = String.UnicodeScalarView()
        var width = 0
        for scalar in String(decoding: bytes(maxBytes: maxBytes), as: UTF8.self).unicodeScalars where !excluded(scalar) {
            width += UTF8.width(scalar)
            if width > maxBytes { break }
            view.append(scalar)
        }
        return String(view)
    }
}
