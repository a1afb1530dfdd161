/// The XOR masking of RFC 6455 §5.3, which is its own inverse, eight bytes at a time.
///
/// Masking touches every payload byte in both directions, so it works on whole 64-bit words: the
/// four key bytes repeated twice, XORed with each unaligned word, then a byte-wise tail.
enum WebSocketMasking {
    /// Writes `source` XOR the key into `destination`, which may be the same memory.
    ///
    /// - Parameter key: The four key bytes read big-endian; the key's first byte masks `source[0]`.
    static func apply(key: UInt32, from source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawBufferPointer) {
        precondition(destination.count >= source.count)
        let count = source.count
        // `key.bigEndian` has the key bytes in wire order in memory on any host, as does the doubled word.
        let wireOrder = UInt64(key.bigEndian)
        let word = wireOrder | wireOrder << 32
        var index = 0
        while index + 8 <= count {
            let masked = source.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ word
            destination.storeBytes(of: masked, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        // `index` is a multiple of 8 here, so the tail starts in phase with the key.
        while index < count {
            destination[index] = source[index] ^ UInt8(truncatingIfNeeded: key >> (24 - 8 * (index & 3)))
            index += 1
        }
    }

    /// Returns a masked (or unmasked) copy of `bytes`, in one pass.
    static func masked(_ bytes: UnsafeRawBufferPointer, key: UInt32) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { output, initialized in
            apply(key: key, from: bytes, to: UnsafeMutableRawBufferPointer(output))
            initialized = bytes.count
        }
    }

    /// Masks `bytes[range]` in place.
    static func maskInPlace(_ bytes: inout [UInt8], _ range: Range<Int>, key: UInt32) {
        bytes.withUnsafeMutableBytes { raw in
            let region = UnsafeMutableRawBufferPointer(rebasing: raw[range])
            apply(key: key, from: UnsafeRawBufferPointer(region), to: region)
        }
    }
}
