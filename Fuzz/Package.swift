// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so Kite's package identity is the name of the
// folder the repository was cloned into.
let kite = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

// Kite's libFuzzer targets, kept apart so the library's build never builds them. One binary holds every target
// (`KITE_FUZZ_TARGET` chooses one); build and run them from the repository root with `Fuzz/fuzz.sh`.
let package = Package(
    name: "KiteFuzz",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "KiteFuzz",
            dependencies: [
                .product(name: "Kite", package: kite),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/KiteFuzz",
            // libFuzzer brings `main`: the module must not make one.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ]
)
