import GaugeProtocol
import GaugeTranslators

/// APT's Status-Fd and dpkg's --status-fd lines, as `gaugectl apt` reads them.
extension FuzzTarget {
    static let aptStatus = FuzzTarget(
        name: "apt-status",
        summary: "APT and dpkg status lines (whole and in pieces): the same items, held-back bytes bounded, "
            + "problems short, the translator's requests valid, its bar never going back and never full before the end",
        maxLength: 40_000,
        dictionary: [
            "dlstatus:", "pmstatus:", "pmerror:", "pmconffile:", "media-change: ", "processing: ", "status: ",
            ":100.0000:", ":44.4444:", ":0:", " : error : ", " : conffile-prompt : ", ": installed", ": unpacked",
            "configure: ", "install: ", "\n", "\r\n", ":", "-5", "1e30", "nan",
        ],
        seeds: {
            [Array(("dlstatus:1:0.0000:Retrieving file 1 of 2\ndlstatus:2:49.9998:Retrieving file 2 of 2\n"
                + "pmstatus:dpkg-exec:0.0000:Running dpkg\npmstatus:hello:11.1111:Unpacking hello (amd64)\n"
                + "pmconffile:/etc/hello.conf:20.0000:'/etc/hello.conf' '/etc/hello.conf.dpkg-new' 1 1\n"
                + "pmerror:hello:60.0000:installed hello package post-installation script subprocess returned error exit status 1\n").utf8),
             Array(("processing: install: hello\nstatus: hello: unpacked\nprocessing: configure: hello\n"
                + "status: hello : error : boom\nmedia-change: disc:/media/cdrom:Insert it\nnot a status line\n").utf8)]
        }
    ) { input, probe throws(FuzzFailure) in
        var whole = AptStatusReader()
        let all = whole.consume(input) + whole.finish()
        var pieces = AptStatusReader()
        var items: [AptStatusReader.Item] = []
        for chunk in FuzzBytes.chunks(input) {
            items += pieces.consume(chunk)
            try check(pieces.pendingByteCount <= AptStatusReader.maxLineBytes, "the reader holds \(pieces.pendingByteCount) bytes")
        }
        items += pieces.finish()
        try check(items == all, "fed in pieces, the reader made other items than fed at once")

        let steps = input.first.map { Int($0 % 5) }
        var translator = AptStatusTranslator(
            settings: .init(stallSeconds: 1, creepHalfSeconds: 1), dpkg: steps != nil, dpkgSteps: steps)
        var shown = 0.0
        var now: UInt64 = 0
        func follow(_ requests: [Request], ending: Bool = false) throws(FuzzFailure) {
            for request in requests {
                probe.hit("request", NativeSamples.kind(of: request))
                try FuzzBytes.checkValid(request, from: "apt-status")
                if case .progress(let value, _) = request {
                    try check(value > shown || value == 0, "the bar went from \(shown) to \(value)")
                    try check(value < 100, "the bar was full at \(value) before the command ended")
                    shown = value
                }
                if case .state(.success, _) = request { try check(ending, "success before the command ended") }
            }
        }
        try follow(translator.start(message: "Running apt-get", at: now))
        for item in all {
            switch item {
            case .problem(let text):
                probe.hit("problem", String(text.prefix(20)))
                try FuzzBytes.checkLogLine(text, from: "apt-status")
            case .event(let event):
                probe.hit("event", String(String(describing: event).prefix { $0 != "(" }))
                try follow(translator.requests(for: event, at: now))
                now += 300_000_000
                try follow(translator.tick(at: now))
            }
        }
        try follow(translator.finish(failure: input.count % 2 == 0 ? nil : "apt-get failed (exit status 100)"), ending: true)
    }
}
