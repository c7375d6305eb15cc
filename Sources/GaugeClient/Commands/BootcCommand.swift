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
