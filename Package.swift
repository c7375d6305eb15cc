// swift-tools-version: 6.0
import PackageDescription

/// `gauged` and `gaugectl` are one multi-call executable (target `gauge`) that runs the
/// program its name says; both products build it, so each name has its binary in the build
/// directory. Installed, `gaugectl` is a symbolic link to `gauged`.
/// Release builds: tools/build-release.
let package = Package(
    name: "Gauge",
    products: [
        .executable(name: "gauged", targets: ["gauge"]),
        .executable(name: "gaugectl", targets: ["gauge"]),
    ],
    targets: [
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CPixman", pkgConfig: "pixman-1", providers: [.apt(["libpixman-1-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        // The C library interface of every Swift module (their only one: no Glibc overlay).
        .target(name: "CGaugeLinux", linkerSettings: [.linkedLibrary("m")]),
        // sd-bus for gaugectl's D-Bus progress sources, loaded at run time (CGaugeBus) so the
        // executable does not depend on libsystemd; linked only by the tests' replay service.
        .target(name: "CGaugeBus"),
        // libqrencode for the failure screen's QR code, loaded at run time (CGaugeQR).
        .target(name: "CGaugeQR"),
        // HarfBuzz and FriBidi for text that needs shaping and direction, loaded at run time (CGaugeShape).
        .target(name: "CGaugeShape"),
        // HarfBuzz's subsetter, for the initramfs's copy of a font, loaded at run time (CGaugeSubset).
        .target(name: "CGaugeSubset"),
        // pixman, FreeType, libpng, libdrm and libudev, loaded at run time (CGaugeLibraries): the
        // executable defines the functions it calls, so a client starts without them. Their
        // modules (CPixman...) give the headers only.
        .target(name: "CGaugeLibraries", dependencies: ["CDRM", "CPixman", "CFreeType", "CPNG", "CUdev"]),
        // libpng's low-level writer behind one C call that holds its setjmp (PNG snapshots row by row).
        .target(name: "CGaugePNG", dependencies: ["CPNG", "CGaugeLibraries"]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        .target(name: "GaugeSystem", dependencies: ["CGaugeLinux"]),
        .target(name: "GaugeProtocol", dependencies: ["GaugeSystem"]),
        .target(name: "GaugeRender", dependencies: ["GaugeSystem", "GaugeProtocol", "CGaugeLinux", "CPixman", "CFreeType", "CPNG", "CGaugePNG", "CGaugeQR", "CGaugeShape", "CGaugeSubset", "CGaugeLibraries"]),
        .target(name: "GaugeDisplay", dependencies: ["GaugeSystem", "GaugeProtocol", "GaugeRender", "CPixman", "CDRM", "CGaugeLinux", "CGaugeLibraries"]),
        .target(name: "GaugeDaemon", dependencies: ["GaugeSystem", "GaugeProtocol", "GaugeRender", "GaugeDisplay", "CGaugeLinux", "CUdev", "CGaugeLibraries"]),

        // The update tools' and dialog's progress, translated into Gauge's requests (gaugectl's).
        .target(name: "GaugeTranslators", dependencies: ["GaugeProtocol"]),
        .target(name: "GaugeClient", dependencies: ["GaugeSystem", "GaugeProtocol", "GaugeTranslators", "GaugeRender", "CGaugeLinux", "CGaugeBus"]),

        // --as-needed: the C libraries' pkg-config links are left out, as CGaugeLibraries
        // defines what the program calls (tools/build-release links none of them).
        .executableTarget(
            name: "gauge", dependencies: ["GaugeDaemon", "GaugeClient", "CGaugeLinux"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--as-needed"])]),
        .executableTarget(name: "GaugeBench", dependencies: ["CGaugeLinux", "GaugeSystem", "GaugeRender"]),
        .executableTarget(name: "GaugeGallery", dependencies: ["GaugeRender", "GaugeDisplay"]),

        // Fuzzing of every parser: the targets and the built-in engine (run by the
        // GaugeFuzzTests in CI), and `gauge-fuzz` for long runs (tools/bench/fuzz).
        .target(name: "CGaugeFuzz"),
        .target(
            name: "GaugeFuzz",
            dependencies: ["CGaugeFuzz", "CGaugeLinux", "GaugeSystem", "GaugeProtocol", "GaugeTranslators", "GaugeRender", "GaugeDisplay", "GaugeDaemon"]
        ),
        .executableTarget(name: "gauge-fuzz", dependencies: ["GaugeFuzz", "CGaugeFuzz", "CGaugeLinux", "GaugeSystem", "GaugeProtocol"]),

        // A D-Bus service replaying an update tool's interface, for the D-Bus sources' tests.
        .executableTarget(name: "gauge-dbus-replay", dependencies: ["CSystemd"], path: "Tests/DBusReplay"),

        // What the tests that run the built programs share: finding and running them, scratch
        // directories, and the fake daemons more than one target talks to.
        .target(name: "GaugeTestSupport", dependencies: ["GaugeTranslators"], path: "Tests/GaugeTestSupport"),

        .testTarget(name: "GaugeProtocolTests", dependencies: ["GaugeProtocol"]),
        // gaugectl, the built executable against fake daemons.
        .testTarget(name: "GaugeClientTests", dependencies: ["GaugeProtocol", "GaugeTranslators", "GaugeTestSupport"]),
        .testTarget(name: "GaugeTranslatorsTests", dependencies: ["GaugeProtocol", "GaugeTranslators"]),
        .testTarget(
            name: "GaugeRenderTests",
            dependencies: ["GaugeSystem", "GaugeProtocol", "GaugeRender", "GaugeDisplay"],
            resources: [.copy("Golden")]
        ),
        .testTarget(name: "GaugeDisplayTests", dependencies: ["GaugeDisplay", "GaugeRender"]),
        .testTarget(
            name: "GaugeDaemonTests",
            dependencies: ["GaugeSystem", "GaugeDaemon", "GaugeProtocol", "GaugeTranslators", "GaugeRender", "GaugeDisplay", "GaugeTestSupport"],
            exclude: ["Keymaps"]),
        // The repository's own checks: the README's examples, the man pages, the integration
        // files, the help texts and the house rules (tools/check/check-rules).
        .testTarget(
            name: "RepositoryTests",
            dependencies: ["GaugeDaemon", "GaugeProtocol", "GaugeRender", "GaugeTestSupport"]),
        .testTarget(name: "GaugeSystemTests", dependencies: ["GaugeSystem"]),
        .testTarget(name: "GaugeFuzzTests", dependencies: ["GaugeFuzz", "CGaugeFuzz", "GaugeProtocol"]),
    ],
    swiftLanguageModes: [.v6]
)
