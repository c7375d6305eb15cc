import CGaugeLinux
import GaugeClient
import GaugeDaemon

// One executable for the daemon and its clients, as busybox is for its applets: installed as
// gauged with gaugectl and plymouth symbolic links to it, it runs the program its name says
// (the last component of argv[0]); under any other name it is the daemon.
let arguments = (0..<Int(CGL_argc())).map { String(cString: CGL_argv()[$0]!) }
let name = arguments.first?.split(separator: "/").last ?? ""
if name == "gaugectl" {
    Gaugectl.main(Array(arguments.dropFirst()))
} else if name == "plymouth" {
    PlymouthCommand.main(Array(arguments.dropFirst()))
} else {
    Gauged.main(Array(arguments.dropFirst()))
}
