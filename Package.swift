// swift-tools-version: 6.0
import PackageDescription

/// Release builds of the executables link the Swift runtime statically
/// (`swift build -c release --static-swift-stdlib`); see tools/build-release.
let package = Package(
    name: "Gauge",
    products: [
        .executable(name: "gauged", targets: ["gauged"]),
        .executable(name: "gaugectl", targets: ["gaugectl"]),
    ],
    targets: [
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CPixman", pkgConfig: "pixman-1", providers: [.apt(["libpixman-1-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CUdev", pkgConfig: "libudev", providers: [.apt(["libudev-dev"])]),
        .target(name: "CGaugeLinux"),

        .target(name: "GaugeSystem", dependencies: ["CGaugeLinux"]),
        .target(name: "GaugeProtocol"),
        .target(name: "GaugeRender", dependencies: ["GaugeSystem", "GaugeProtocol", "CPixman", "CFreeType", "CPNG"]),
        .target(name: "GaugeDisplay", dependencies: ["GaugeSystem", "GaugeRender", "CPixman", "CDRM", "CGaugeLinux"]),
        .target(name: "GaugeDaemon", dependencies: ["GaugeSystem", "GaugeProtocol", "GaugeRender", "GaugeDisplay", "CGaugeLinux", "CUdev"]),

        .executableTarget(name: "gauged", dependencies: ["GaugeDaemon", "CGaugeLinux"]),
        .executableTarget(name: "gaugectl", dependencies: ["GaugeSystem", "GaugeProtocol", "CGaugeLinux"]),
        .executableTarget(name: "GaugeBench", dependencies: ["GaugeRender", "GaugeDisplay", "CPixman"]),
        .executableTarget(name: "GaugeGallery", dependencies: ["GaugeRender", "GaugeDisplay"]),

        .testTarget(name: "GaugeProtocolTests", dependencies: ["GaugeProtocol"]),
        .testTarget(
            name: "GaugeRenderTests",
            dependencies: ["GaugeSystem", "GaugeRender", "GaugeDisplay"],
            resources: [.copy("Golden")]
        ),
        .testTarget(name: "GaugeDisplayTests", dependencies: ["GaugeSystem", "GaugeDisplay", "GaugeRender"]),
        .testTarget(name: "GaugeDaemonTests", dependencies: ["GaugeSystem", "GaugeDaemon", "GaugeProtocol", "GaugeRender", "GaugeDisplay"]),
    ],
    swiftLanguageModes: [.v6]
)
