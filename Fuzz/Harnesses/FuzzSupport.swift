// Shared by every harness: reading control bytes off the front of an input, cutting a stream into
// pieces, and failing loudly when an invariant does not hold.

/// A fuzz input read front to back: a few control bytes pick the parameters, the rest is the stream.
struct FuzzInput {
    private var bytes: ArraySlice<UInt8>

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size))[...] } ?? []
    }

    /// The next byte, or 0 once the input is used up, so short inputs still make a valid run.
    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }

    /// The next two bytes, big-endian.
    mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Everything not read as a control byte.
    var rest: [UInt8] { Array(bytes) }
}

/// Stops the run with a message libFuzzer shows, so a broken invariant is a finding like a crash.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz invariant: \(message())") }
}

/// Cuts `count` bytes in two at `split` (clamped).
func pieces(_ count: Int, splitAt split: Int) -> [Range<Int>] {
    let split = min(max(split, 0), count)
    return [0..<split, split..<count]
}

/// Cuts `count` bytes into pieces of 1 to 16 bytes, their sizes drawn from `seed`: a socket that delivers odd reads.
func pieces(_ count: Int, seed: UInt8) -> [Range<Int>] {
    var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    var result: [Range<Int>] = []
    var start = 0
    while start < count {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        let end = min(count, start + 1 + Int(state % 16))
        result.append(start..<end)
        start = end
    }
    return result
}
