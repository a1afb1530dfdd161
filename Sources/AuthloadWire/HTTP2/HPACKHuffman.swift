/// The static Huffman code of RFC 7541 Appendix B, which shortens typical header text by about a fifth.
///
/// Decoding walks a table built once from the code's tree, four bits at a time; the padding rule (at most
/// 7 bits, all ones) is which states a string may end in.
enum HPACKHuffman {
    /// Code and bit length of each symbol 0–255, then EOS (256), as RFC 7541 Appendix B lists them.
    static let codes: [(code: UInt32, bits: UInt8)] = [
        (0x1ff8, 13), (0x7fffd8, 23), (0xfffffe2, 28), (0xfffffe3, 28), (0xfffffe4, 28), (0xfffffe5, 28), (0xfffffe6, 28), (0xfffffe7, 28),
        (0xfffffe8, 28), (0xffffea, 24), (0x3ffffffc, 30), (0xfffffe9, 28), (0xfffffea, 28), (0x3ffffffd, 30), (0xfffffeb, 28),
        (0xfffffec, 28),
        (0xfffffed, 28), (0xfffffee, 28), (0xfffffef, 28), (0xffffff0, 28), (0xffffff1, 28), (0xffffff2, 28), (0x3ffffffe, 30),
        (0xffffff3, 28),
        (0xffffff4, 28), (0xffffff5, 28), (0xffffff6, 28), (0xffffff7, 28), (0xffffff8, 28), (0xffffff9, 28), (0xffffffa, 28),
        (0xffffffb, 28),
        (0x14, 6), (0x3f8, 10), (0x3f9, 10), (0xffa, 12), (0x1ff9, 13), (0x15, 6), (0xf8, 8), (0x7fa, 11),
        (0x3fa, 10), (0x3fb, 10), (0xf9, 8), (0x7fb, 11), (0xfa, 8), (0x16, 6), (0x17, 6), (0x18, 6),
        (0x0, 5), (0x1, 5), (0x2, 5), (0x19, 6), (0x1a, 6), (0x1b, 6), (0x1c, 6), (0x1d, 6),
        (0x1e, 6), (0x1f, 6), (0x5c, 7), (0xfb, 8), (0x7ffc, 15), (0x20, 6), (0xffb, 12), (0x3fc, 10),
        (0x1ffa, 13), (0x21, 6), (0x5d, 7), (0x5e, 7), (0x5f, 7), (0x60, 7), (0x61, 7), (0x62, 7),
        (0x63, 7), (0x64, 7), (0x65, 7), (0x66, 7), (0x67, 7), (0x68, 7), (0x69, 7), (0x6a, 7),
        (0x6b, 7), (0x6c, 7), (0x6d, 7), (0x6e, 7), (0x6f, 7), (0x70, 7), (0x71, 7), (0x72, 7),
        (0xfc, 8), (0x73, 7), (0xfd, 8), (0x1ffb, 13), (0x7fff0, 19), (0x1ffc, 13), (0x3ffc, 14), (0x22, 6),
        (0x7ffd, 15), (0x3, 5), (0x23, 6), (0x4, 5), (0x24, 6), (0x5, 5), (0x25, 6), (0x26, 6),
        (0x27, 6), (0x6, 5), (0x74, 7), (0x75, 7), (0x28, 6), (0x29, 6), (0x2a, 6), (0x7, 5),
        (0x2b, 6), (0x76, 7), (0x2c, 6), (0x8, 5), (0x9, 5), (0x2d, 6), (0x77, 7), (0x78, 7),
        (0x79, 7), (0x7a, 7), (0x7b, 7), (0x7ffe, 15), (0x7fc, 11), (0x3ffd, 14), (0x1ffd, 13), (0xffffffc, 28),
        (0xfffe6, 20), (0x3fffd2, 22), (0xfffe7, 20), (0xfffe8, 20), (0x3fffd3, 22), (0x3fffd4, 22), (0x3fffd5, 22), (0x7fffd9, 23),
        (0x3fffd6, 22), (0x7fffda, 23), (0x7fffdb, 23), (0x7fffdc, 23), (0x7fffdd, 23), (0x7fffde, 23), (0xffffeb, 24), (0x7fffdf, 23),
        (0xffffec, 24), (0xffffed, 24), (0x3fffd7, 22), (0x7fffe0, 23), (0xffffee, 24), (0x7fffe1, 23), (0x7fffe2, 23), (0x7fffe3, 23),
        (0x7fffe4, 23), (0x1fffdc, 21), (0x3fffd8, 22), (0x7fffe5, 23), (0x3fffd9, 22), (0x7fffe6, 23), (0x7fffe7, 23), (0xffffef, 24),
        (0x3fffda, 22), (0x1fffdd, 21), (0xfffe9, 20), (0x3fffdb, 22), (0x3fffdc, 22), (0x7fffe8, 23), (0x7fffe9, 23), (0x1fffde, 21),
        (0x7fffea, 23), (0x3fffdd, 22), (0x3fffde, 22), (0xfffff0, 24), (0x1fffdf, 21), (0x3fffdf, 22), (0x7fffeb, 23), (0x7fffec, 23),
        (0x1fffe0, 21), (0x1fffe1, 21), (0x3fffe0, 22), (0x1fffe2, 21), (0x7fffed, 23), (0x3fffe1, 22), (0x7fffee, 23), (0x7fffef, 23),
        (0xfffea, 20), (0x3fffe2, 22), (0x3fffe3, 22), (0x3fffe4, 22), (0x7ffff0, 23), (0x3fffe5, 22), (0x3fffe6, 22), (0x7ffff1, 23),
        (0x3ffffe0, 26), (0x3ffffe1, 26), (0xfffeb, 20), (0x7fff1, 19), (0x3fffe7, 22), (0x7ffff2, 23), (0x3fffe8, 22), (0x1ffffec, 25),
        (0x3ffffe2, 26), (0x3ffffe3, 26), (0x3ffffe4, 26), (0x7ffffde, 27), (0x7ffffdf, 27), (0x3ffffe5, 26), (0xfffff1, 24),
        (0x1ffffed, 25),
        (0x7fff2, 19), (0x1fffe3, 21), (0x3ffffe6, 26), (0x7ffffe0, 27), (0x7ffffe1, 27), (0x3ffffe7, 26), (0x7ffffe2, 27), (0xfffff2, 24),
        (0x1fffe4, 21), (0x1fffe5, 21), (0x3ffffe8, 26), (0x3ffffe9, 26), (0xffffffd, 28), (0x7ffffe3, 27), (0x7ffffe4, 27),
        (0x7ffffe5, 27),
        (0xfffec, 20), (0xfffff3, 24), (0xfffed, 20), (0x1fffe6, 21), (0x3fffe9, 22), (0x1fffe7, 21), (0x1fffe8, 21), (0x7ffff3, 23),
        (0x3fffea, 22), (0x3fffeb, 22), (0x1ffffee, 25), (0x1ffffef, 25), (0xfffff4, 24), (0xfffff5, 24), (0x3ffffea, 26), (0x7ffff4, 23),
        (0x3ffffeb, 26), (0x7ffffe6, 27), (0x3ffffec, 26), (0x3ffffed, 26), (0x7ffffe7, 27), (0x7ffffe8, 27), (0x7ffffe9, 27),
        (0x7ffffea, 27),
        (0x7ffffeb, 27), (0xffffffe, 28), (0x7ffffec, 27), (0x7ffffed, 27), (0x7ffffee, 27), (0x7ffffef, 27), (0x7fffff0, 27),
        (0x3ffffee, 26),
        (0x3fffffff, 30)
    ]

    /// Why a Huffman string did not decode.
    enum Failure: Error, Hashable {
        case eos
        case padding
    }

    /// A tree node: the child for each bit (node indexes), or the symbol at a leaf.
    private struct Node {
        var children: (Int32, Int32) = (-1, -1)
        var symbol: Int16 = -1
    }

    /// The code tree, built once from the table; only ``transitions`` is built from it.
    private static func tree() -> [Node] {
        var nodes = [Node()]
        for (symbol, entry) in codes.enumerated() {
            var current = 0
            for shift in stride(from: Int(entry.bits) - 1, through: 0, by: -1) {
                let bit = (entry.code >> UInt32(shift)) & 1
                var next = bit == 0 ? nodes[current].children.0 : nodes[current].children.1
                if next < 0 {
                    nodes.append(Node())
                    next = Int32(nodes.count - 1)
                    if bit == 0 { nodes[current].children.0 = next } else { nodes[current].children.1 = next }
                }
                current = Int(next)
            }
            nodes[current].symbol = Int16(symbol)
        }
        return nodes
    }

    /// A transition: the state after four bits, whether a symbol ended on the way and which, whether EOS did, and
    /// whether the new state may end the string (packed as state | emits << 8 | eos << 9 | accepting << 10 | symbol << 16).
    private static let emits: UInt32 = 1 << 8
    private static let sawEOS: UInt32 = 1 << 9
    private static let accepting: UInt32 = 1 << 10

    /// The tree walked four bits at a time: 16 transitions for each of its 256 inner nodes (the states).
    ///
    /// No code is shorter than 5 bits, so four bits end at most one symbol. A state may end the string when the
    /// bits since the last symbol are at most 7 and all ones (RFC 7541 §5.2's padding): the root, and the nodes
    /// 1 to 7 steps down the all-ones path.
    private static let transitions: [UInt32] = {
        let nodes = tree()
        var stateOf = [Int](repeating: -1, count: nodes.count)
        var inner: [Int] = []
        for (index, node) in nodes.enumerated() where node.symbol < 0 {
            stateOf[index] = inner.count
            inner.append(index)
        }
        var acceptingNodes: Set<Int> = [0]
        var onesPath = 0
        for _ in 0..<7 {
            onesPath = Int(nodes[onesPath].children.1)
            acceptingNodes.insert(onesPath)
        }
        var table = [UInt32](repeating: 0, count: inner.count * 16)
        for (state, start) in inner.enumerated() {
            for nibble in 0..<16 {
                var node = start
                var entry: UInt32 = 0
                for shift in stride(from: 3, through: 0, by: -1) {
                    let bit = (nibble >> shift) & 1
                    node = Int(bit == 0 ? nodes[node].children.0 : nodes[node].children.1)
                    let symbol = nodes[node].symbol
                    if symbol == 256 {
                        entry |= sawEOS
                        node = 0
                    } else if symbol >= 0 {
                        entry |= emits | UInt32(symbol) << 16
                        node = 0
                    }
                }
                entry |= UInt32(stateOf[node])
                if acceptingNodes.contains(node) { entry |= accepting }
                table[state * 16 + nibble] = entry
            }
        }
        return table
    }()

    /// The number of bytes `bytes` takes Huffman coded.
    static func encodedCount(_ bytes: some Sequence<UInt8>) -> Int {
        var bits = 0
        for byte in bytes { bits += Int(codes[Int(byte)].bits) }
        return (bits + 7) / 8
    }

    /// Appends the Huffman code of `bytes` to `output`, padded with the high bits of EOS.
    static func encode(_ bytes: some Sequence<UInt8>, into output: inout [UInt8]) {
        var accumulator: UInt64 = 0
        var pending = 0
        for byte in bytes {
            let entry = codes[Int(byte)]
            accumulator = accumulator << UInt64(entry.bits) | UInt64(entry.code)
            pending += Int(entry.bits)
            while pending >= 8 {
                pending -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(pending)))
            }
        }
        if pending > 0 {
            output.append(UInt8(truncatingIfNeeded: accumulator << UInt64(8 - pending)) | UInt8(0xFF >> pending))
        }
    }

    /// Decodes a Huffman string, refusing EOS and padding that is longer than 7 bits or not all ones.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(Failure) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 8 / 5)
        try decode(bytes) { output.append($0) }
        return output
    }

    /// Decodes a Huffman string into `symbol`, one byte at a time; throws as ``decode(_:)`` does.
    ///
    /// The string is read four bits at a time through a transition table, a quarter of the steps of a walk down the
    /// tree (see docs/development.md, Measured design choices). The table is walked through a buffer pointer:
    /// indexing the global array itself retains and releases it at every step.
    @inline(__always)
    static func decode(_ bytes: ArraySlice<UInt8>, into symbol: (UInt8) -> Void) throws(Failure) {
        let failure: Failure? = transitions.withUnsafeBufferPointer { table in
            var entry: UInt32 = accepting // the root: an empty string ends well
            for byte in bytes {
                entry = table[Int(entry & 0xFF) << 4 | Int(byte >> 4)]
                if entry & sawEOS != 0 { return .eos }
                if entry & emits != 0 { symbol(UInt8(truncatingIfNeeded: entry >> 16)) }
                entry = table[Int(entry & 0xFF) << 4 | Int(byte & 0xF)]
                if entry & sawEOS != 0 { return .eos }
                if entry & emits != 0 { symbol(UInt8(truncatingIfNeeded: entry >> 16)) }
            }
            return entry & accepting != 0 ? nil : .padding
        }
        if let failure { throw failure }
    }
}
