/// Writes RFC 6455 frames: header, extended length, optional masking key and payload.
///
/// It writes what it is given without judging it, so tests and the staging server's fault injection
/// can send oversized control frames, set RSV bits or mask in the wrong direction on purpose.
/// Clients mask every frame with a fresh key; servers never mask.
///
/// ```swift
/// var out: [UInt8] = []
/// WebSocketFrameEncoder.encode(.text("Hello"), maskKey: nil, into: &out)
/// // 81 05 48 65 6c 6c 6f
/// WebSocketFrameEncoder.encode(.binary(bytes), maskKey: WebSocketFrameEncoder.randomMaskKey(), into: &out)
/// ```
public enum WebSocketFrameEncoder {
    /// Appends `frame` to `buffer`, masked with `maskKey` when one is given.
    ///
    /// Lengths use the shortest form: 7 bits up to 125, 16 bits up to 65,535, 64 bits beyond.
    /// `frame.maskKey` is ignored; the key to send with is always the argument.
    ///
    /// - Parameters:
    ///   - maskKey: The four key bytes read big-endian (`0x37FA213D` for `37 fa 21 3d`), or nil to send unmasked.
    ///   - buffer: Where the bytes go; existing contents are kept.
    public static func encode(_ frame: WebSocketFrame, maskKey: UInt32?, into buffer: inout [UInt8]) {
        let length = frame.payload.count
        buffer.reserveCapacity(buffer.count + headerLength(payloadLength: length, masked: maskKey != nil) + length)

        var first = frame.opcode.rawValue
        if frame.fin { first |= 0x80 }
        if frame.rsv1 { first |= 0x40 }
        if frame.rsv2 { first |= 0x20 }
        if frame.rsv3 { first |= 0x10 }
        buffer.append(first)

        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        switch length {
        case ...125:
            buffer.append(maskBit | UInt8(length))
        case ...0xFFFF:
            buffer.append(maskBit | 126)
            appendBigEndian(UInt64(length), count: 2, to: &buffer)
        default:
            buffer.append(maskBit | 127)
            appendBigEndian(UInt64(length), count: 8, to: &buffer)
        }

        guard let maskKey else {
            buffer.append(contentsOf: frame.payload)
            return
        }
        appendBigEndian(UInt64(maskKey), count: 4, to: &buffer)
        let payloadStart = buffer.count
        buffer.append(contentsOf: frame.payload)
        WebSocketMasking.maskInPlace(&buffer, payloadStart..<buffer.count, key: maskKey)
    }

    /// Returns the bytes of `frame`; see ``encode(_:maskKey:into:)``.
    public static func encode(_ frame: WebSocketFrame, maskKey: UInt32?) -> [UInt8] {
        var buffer: [UInt8] = []
        encode(frame, maskKey: maskKey, into: &buffer)
        return buffer
    }

    /// Returns an unpredictable masking key, as RFC 6455 §5.3 requires for every client frame.
    public static func randomMaskKey() -> UInt32 {
        Digest.secureRandomBytes(count: 4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The bytes a frame header takes: 2, plus 2 or 8 for an extended length, plus 4 for a key.
    public static func headerLength(payloadLength: Int, masked: Bool) -> Int {
        let lengthBytes = payloadLength <= 125 ? 0 : payloadLength <= 0xFFFF ? 2 : 8
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    private static func appendBigEndian(_ value: UInt64, count: Int, to buffer: inout [UInt8]) {
        for shift in stride(from: 8 * (count - 1), through: 0, by: -8) {
            buffer.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
