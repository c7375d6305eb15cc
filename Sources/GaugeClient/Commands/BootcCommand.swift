import CGaugeLinux
import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// `gaugectl bootc`: reads bootc's `--progress-fd` stream (stdin, an inherited
/// descriptor or a file/FIFO) and drives gauged with it through one honest bar (see
/// `BootcProgressTranslator`). Runs until the stream ends.
enum BootcCommand {
    enum Input: Equatable {
        case standardInput
        case descriptor(Int32)
        case path(String)
        /// A command gaugectl runs, writing into its descriptor `descriptor`.
        case command([String], descriptor: Int32)
    }

    struct Options {
        var input: Input = .standardInput
        var ending: BootcProgressTranslator.Ending = .auto
        var successMessage = "Update ready"
        var failureMessage = "Update stopped before it finished"
        var bar = HonestBar.Settings()
    }

    static func run(_ options: Options, invocation: Invocation) -> Never {
        unblockSignals()
        let (fd, producer) = openInput(options, invocation: invocation)
        let requests = RequestStream(invocation: invocation, label: "bootc")
        var translator = BootcProgressTranslator(settings: requests.withThemeStall(options.bar))
        follow(fd, requests, &translator)
        guard let producer else {
            requests.send(translator.finish(
                options.ending, successMessage: options.successMessage, failureMessage: options.failureMessage))
            finish(requests.exitStatus)
        }
        // The command's exit status is the outcome: the stream may stop short of it.
        let end = producer.wait()
        if let failure = Producer.failure(producer.name, end) {
            printError("gaugectl: bootc: \(failure)")
            let ending: BootcProgressTranslator.Ending = options.ending == .keep ? .keep : .failure
            requests.send(translator.finish(ending, successMessage: nil, failureMessage: "\(options.failureMessage): \(failure)"))
            exit(Producer.exitCode(end))
        }
        let ending: BootcProgressTranslator.Ending = options.ending == .auto ? .success : options.ending
        requests.send(translator.finish(
            ending, successMessage: options.successMessage, failureMessage: options.failureMessage))
        finish(requests.exitStatus)
    }

    /// Where the progress stream comes from: stdin, a descriptor, a file, or the command
    /// started here (a problem is reported and ends gaugectl).
    private static func openInput(_ options: Options, invocation: Invocation) -> (Int32, Producer?) {
        switch options.input {
        case .standardInput:
            return (0, nil)
        case .descriptor(let number):
            guard (try? Syscall.fcntl(number, F_GETFD)) != nil else {
                printError("gaugectl: bootc: descriptor \(number) is not open (start bootc with --progress-fd \(number))")
                finish(.usage)
            }
            return (number, nil)
        case .path(let path):
            do throws(SystemError) {
                return (try Syscall.open(path, flags: O_RDONLY | O_NOCTTY | O_CLOEXEC, mode: 0), nil)
            } catch {
                printError("gaugectl: bootc: cannot open \(path): \(errnoText(error.errno))")
                finish(.daemonError)
            }
        case .command(let command, let descriptor):
            do throws(SystemError) {
                let (producer, fd) = try Producer.start(command, descriptor: descriptor)
                return (fd, producer)
            } catch {
                let (message, code) = Producer.startFailure(error)
                printError("gaugectl: bootc: \(message)")
                let requests = RequestStream(invocation: invocation, label: "bootc")
                requests.send(.state(.failure, message: CompatText.clean(message)))
                exit(code)
            }
        }
    }

    /// Reads bootc's progress stream on `fd` to its end, sending what it says, and the
    /// translator's ticks (the stall) between reads.
    private static func follow(_ fd: Int32, _ requests: RequestStream, _ translator: inout BootcProgressTranslator) {
        var reader = BootcProgressReader()
        var buffer = [UInt8](repeating: 0, count: 16384)

        func handle(_ items: [BootcProgressReader.Item], _ translator: inout BootcProgressTranslator) {
            for item in items {
                switch item {
                case .event(let event):
                    requests.send(translator.requests(for: event, at: Deadline.now()))
                case .problem(let text):
                    requests.complaints.report(text)
                }
            }
        }

        while true {
            let now = Deadline.now()
            requests.send(translator.tick(at: now))
            let wait = ProgressTicks.milliseconds(until: translator.nextTick(after: now))
            guard let ready = try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: wait) else { break }
            guard ready != 0 else { continue }
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
            }
            switch result {
            case .success(nil):
                continue
            case .success(0?):
                break
            case .success(let count?):
                handle(reader.consume(buffer[..<count]), &translator)
                continue
            case .failure(let error):
                printError("gaugectl: bootc: cannot read the progress stream: \(errnoText(error.errno))")
            }
            break
        }
        handle(reader.finish(), &translator)
        requests.complaints.flush()
    }
}

extension CommandSpec {
    static let bootc = CommandSpec(
        name: "bootc", argumentsSynopsis: "[--fd N | --file PATH] [--on-eof auto|success|failure|keep] [-- CMD...]",
        summary: "Show bootc's progress (its --progress-fd JSON Lines) until the stream ends",
        details: """
            Reads what bootc writes to --progress-fd (JSON Lines, org.containers.bootc.progress/v1
            or the later stream opening with a Start event) from stdin, an inherited descriptor
            (--fd) or a file or FIFO (--file), and shows one bar for the whole operation: the
            image download (ProgressBytes) is its first 80 %, weighted by bytes, with the
            megabytes on the message's second line; the steps after it (ProgressSteps:
            merging, deploying) share the rest. The bar never goes back, creeps inside a
            silent step and shows the indeterminate style after the stall time without
            progress (the theme's stall_time, or --stall). At the end of the stream --on-eof decides: auto (the default) shows
            success when bootc finished every step it announced and failure otherwise (a
            stream with no event at all changes nothing); keep leaves the screen for a
            script that shows the outcome from bootc's exit status.

            With -- COMMAND [ARG...] gaugectl runs bootc itself, giving it the stream's pipe
            as its descriptor --fd (default 3), and bootc's exit status is the outcome: 0
            shows success (or what --on-eof says other than auto), anything else failure
            naming it, as does a COMMAND that cannot be started, and gaugectl exits with
            COMMAND's status (127 not found, 128+N killed by signal N), which the first
            command of a pipeline cannot give:

              gaugectl bootc -- bootc upgrade --progress-fd 3

            Reading a pipe instead: bootc upgrade --progress-fd 3 3>&1 >&2 | gaugectl bootc

            Exit status: 0 all ok, 1 an err reply or an unreadable file, 2 usage or a
            descriptor not open, 3 an update not delivered; with COMMAND, COMMAND's own
            when it fails.
            """,
        options: [
            OptionSpec(name: "--fd", valueName: "N", help: "Read the descriptor N this command inherited (default: stdin); with COMMAND, COMMAND's descriptor N (default 3)"),
            OptionSpec(name: "--file", valueName: "PATH", help: "Read PATH, a file or a FIFO bootc writes into"),
            OptionSpec(name: "--on-eof", valueName: "auto|success|failure|keep", help: "What the end of the stream shows (default auto)"),
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message on success (default 'Update ready')"),
            OptionSpec(name: "--failure-message", valueName: "TEXT", help: "The message on failure (default 'Update stopped before it finished')"),
        ] + ProgressTicks.options,
        runsCommand: true,
        makeAction: { arguments throws(UsageError) in
            var options = BootcCommand.Options()
            switch (arguments.values["--fd"], arguments.values["--file"]) {
            case (let text, nil) where arguments.command != nil:
                let number: Int64? = if let text { DecimalDigits.value(text, maxDigits: 4) } else { 3 }
                guard let number, number < 1024 else {
                    throw UsageError("--fd needs a descriptor number, not '\(text ?? "")'")
                }
                options.input = .command(arguments.command ?? [], descriptor: Int32(number))
            case (_, _?) where arguments.command != nil:
                throw UsageError("give --file or a COMMAND to run, not both")
            case (nil, nil):
                break
            case (let text?, nil):
                guard let number = DecimalDigits.value(text, maxDigits: 9) else {
                    throw UsageError("--fd needs a descriptor number, not '\(text)'")
                }
                options.input = number == 0 ? .standardInput : .descriptor(Int32(number))
            case (nil, let path?):
                guard !path.isEmpty else { throw UsageError("--file needs a path") }
                options.input = .path(path)
            case (_?, _?):
                throw UsageError("give --fd or --file, not both")
            }
            let word = arguments.values["--on-eof"] ?? BootcProgressTranslator.Ending.auto.rawValue
            guard let ending = BootcProgressTranslator.Ending(rawValue: word) else {
                throw UsageError("--on-eof must be auto, success, failure or keep, not '\(word)'")
            }
            options.ending = ending
            if let text = arguments.values["--success-message"] { options.successMessage = try oneLine(text) }
            if let text = arguments.values["--failure-message"] { options.failureMessage = try oneLine(text) }
            options.bar = try ProgressTicks.settings(arguments)
            let chosen = options
            return .run { invocation in BootcCommand.run(chosen, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("bootc is not one request") })
}
