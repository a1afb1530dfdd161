/// The 64-bit FNV-1a hash of bytes: cheap, and the same in every process (unlike `Hasher`, seeded per process), for
/// the services' small tables, whose order must replay the same way in a simulation.
enum FNV1a {
    static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }
}
