/// The 64-bit FNV-1a hash of bytes: cheap, and the same in every process (unlike `Hasher`, seeded per process), for
/// the services' small tables, whose order must replay the same way in a simulation.
enum FNV1a {
    /// The hash of no bytes, which ``adding(_:to:)`` extends one byte at a time.
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash = offsetBasis
        for byte in bytes { hash = adding(byte, to: hash) }
        return hash
    }

    /// The hash of some bytes and then `byte`, from the hash of those bytes.
    @inline(__always)
    static func adding(_ byte: UInt8, to hash: UInt64) -> UInt64 {
        (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }
}
