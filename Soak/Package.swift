// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so Kite's package identity is the name of the
// folder the repository was cloned into.
let kite = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

// Kite's soak run (issue 32): one process, a mixed workload against real servers on loopback for an hour,
// resident memory, descriptors and threads recorded every minute. Kept apart so the library's build and CI
// never build it; run it from the repository root with `Soak/soak.sh MINUTES`.
let package = Package(
    name: "KiteSoak",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "KiteSoak",
            dependencies: [
                "CMallocInfo",
                .product(name: "Kite", package: kite),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/KiteSoak"
        ),
        // glibc's mallinfo2, for the live heap beside resident memory.
        .target(name: "CMallocInfo", path: "Sources/CMallocInfo"),
    ]
)
