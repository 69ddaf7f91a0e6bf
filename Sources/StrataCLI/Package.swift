// swift-tools-version:6.0
// The `strata` command-line tool: a package of its own, so that apps that depend on the Strata
// library never fetch its dependencies (SwiftPM resolves every dependency of a package it
// depends on, whichever products are used). It reads any file, whatever its schema, through
// the C ABI and the module's core wrappers (`@_spi(StrataCore)`: not public API).
import PackageDescription

let package = Package(
    name: "StrataTool",
    products: [
        .executable(name: "strata", targets: ["StrataCLI"]),
    ],
    dependencies: [
        .package(name: "Strata", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/console-kit", from: "4.16.2"),
        .package(url: "https://github.com/ordo-one/TextTable", from: "0.0.2"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV", from: "0.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StrataCLI",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "CCore", package: "Strata"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ConsoleKitTerminal", package: "console-kit"),
                .product(name: "TextTable", package: "TextTable"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
            ],
            path: "Tool"
        ),
    ],
    swiftLanguageModes: [.v6]
)
