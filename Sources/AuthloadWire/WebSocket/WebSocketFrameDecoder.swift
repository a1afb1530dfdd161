/// Reads RFC 6455 frames from a connection's byte stream, incrementally and without I/O.
///
/// Feed it bytes as the socket delivers them and pull frames until it needs more data. It checks
/// everything a frame header can get wrong, as early as the bytes allow, and checks sizes before
/// buffering a payload, so a forged length cannot make it allocate. Nothing a peer sends can crash
/// it: every problem is a thrown ``WebSocketError`` carrying the close code to fail the connection
/// with, after which the decoder keeps throwing that error.
///
/// Lengths that use more bytes than needed (say 5 written in the 16-bit form) are accepted. RFC 6455
/// §5.2 obliges senders to use the minimal form but names no receiver duty, and refusing them would
/// only break a sloppy peer that is otherwise understood.
///
/// It does not track fragmentation order (``WebSocketMessageAssembler`` does), but it does add up
/// the payloads of a fragmented message, so `maxMessageSize` is enforced before a fragment is buffered.
///
/// ```swift
/// var decoder = WebSocketFrameDecoder(role: .client)
/// decoder.feed(received)                      // an UnsafeRawBufferPointer or a [UInt8]
/// while case .frame(let frame) = try decoder.next() {
///     if let message = try assembler.append(frame) { deliver(message) }
/// }
/// ```
public struct WebSocketFrameDecoder: Sendable {
    /// Which end of the connection is reading: a server reads masked frames, a client unmasked ones.
    public enum Role: Sendable, Hashable {
        case client
        case server
    }

    /// What the decoder has to offer after the bytes fed so far.
    public enum Event: Sendable, Hashable {
        /// No complete frame is buffered; feed more bytes.
        case needMoreData
        /// A complete frame, its payload unmasked.
        case frame(WebSocketFrame)
    }

    public let role: Role
    /// Largest payload accepted in one frame.
    public let maxFrameSize: Int
    /// Largest data message accepted, summed over its fragments.
    public let maxMessageSize: Int

    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Stream offset of `buffer[0]`, so errors can name the byte counted from the connection's start.
    private var bufferBase = 0
    /// Payload bytes so far of the fragmented data message that is still open.
    private var messageSize = 0
    private var failure: WebSocketError?

    /// Creates a decoder for one connection.
    ///
    /// - Parameters:
    ///   - role: The reading side; `.server` requires masked frames, `.client` unmasked ones (1002 otherwise).
    ///   - maxFrameSize: Largest payload of one frame; larger fails with 1009.
    ///   - maxMessageSize: Largest data message over all its fragments; larger fails with 1009.
    public init(role: Role, maxFrameSize: Int = 16 * 1024 * 1024, maxMessageSize: Int = 16 * 1024 * 1024) {
        self.role = role
        self.maxFrameSize = max(0, maxFrameSize)
        self.maxMessageSize = max(0, maxMessageSize)
    }

    /// Appends received bytes.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes.
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Bytes fed but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Bytes of memory the decoder holds for its buffer now: none once every byte fed has been returned as frames.
    public var retainedCapacity: Int { buffer.capacity }

    /// Returns the next complete frame, or `.needMoreData`.
    ///
    /// - Throws: ``WebSocketError`` naming the stream offset of the offending byte; the same error again
    ///   on every later call.
    public mutating func next() throws(WebSocketError) -> Event {
        if let failure { throw failure }
        do {
            let event = try decodeFrame()
            if case .needMoreData = event { keepOnlyUnconsumed() }
            return event
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func decodeFrame() throws(WebSocketError) -> Event {
        let start = readIndex
        let available = buffer.count - start
        let offset = bufferBase + start
        guard available >= 1 else { return .needMoreData }

        // Each check needs only the bytes before it, so the error is the same however the stream is split.
        let first = buffer[start]
        guard first & 0x70 == 0 else {
            throw .frame(.reservedBits, at: offset, "RSV bits 0x\(String(first >> 4 & 7, radix: 16)) set without a negotiated extension")
        }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw .frame(.reservedOpcode, at: offset, "reserved opcode 0x\(String(first & 0x0F, radix: 16, uppercase: true))")
        }
        let fin = first & 0x80 != 0
        guard fin || !opcode.isControl else {
            throw .frame(.fragmentedControlFrame, at: offset, "fragmented \(opcode) frame: control frames must have FIN set")
        }

        guard available >= 2 else { return .needMoreData }
        let second = buffer[start + 1]
        let masked = second & 0x80 != 0
        switch (role, masked) {
        case (.server, false):
            throw .frame(.unmaskedFrame, at: offset + 1, "unmasked frame from the client")
        case (.client, true):
            throw .frame(.maskedFrame, at: offset + 1, "masked frame from the server")
        default:
            break
        }
        let shortLength = second & 0x7F
        guard shortLength <= 125 || !opcode.isControl else {
            throw .frame(.controlFrameTooLong, at: offset + 1, "\(opcode) frame longer than 125 bytes")
        }

        var headerLength = 2
        let length: UInt64
        switch shortLength {
        case 126:
            headerLength = 4
            guard available >= headerLength else { return .needMoreData }
            length = bigEndian(start + 2, count: 2)
        case 127:
            headerLength = 10
            guard available >= headerLength else { return .needMoreData }
            length = bigEndian(start + 2, count: 8)
            guard length >> 63 == 0 else {
                throw .frame(.invalidLength, at: offset + 2, "64-bit payload length with the most significant bit set")
            }
        default:
            length = UInt64(shortLength)
        }

        guard length <= UInt64(maxFrameSize) else {
            throw .frame(
                .frameTooLarge, at: offset + 1, "frame payload of \(length) bytes exceeds the \(maxFrameSize)-byte limit",
                code: .messageTooBig)
        }
        let payloadLength = Int(length)
        let priorMessageSize = opcode == .continuation ? messageSize : 0
        if !opcode.isControl, payloadLength > maxMessageSize - priorMessageSize {
            throw .frame(
                .messageTooLarge, at: offset + 1,
                "message of at least \(priorMessageSize + payloadLength) bytes exceeds the \(maxMessageSize)-byte limit",
                code: .messageTooBig)
        }

        if masked { headerLength += 4 }
        guard available - headerLength >= payloadLength else { return .needMoreData }
        let maskKey: UInt32? = masked ? UInt32(truncatingIfNeeded: bigEndian(start + headerLength - 4, count: 4)) : nil

        let payloadRange = start + headerLength..<start + headerLength + payloadLength
        let payload: [UInt8] =
            if let maskKey {
                buffer.withUnsafeBytes { WebSocketMasking.masked(UnsafeRawBufferPointer(rebasing: $0[payloadRange]), key: maskKey) }
            } else {
                Array(buffer[payloadRange])
            }
        readIndex = payloadRange.upperBound
        if !opcode.isControl { messageSize = fin ? 0 : priorMessageSize + payloadLength }

        return .frame(
            WebSocketFrame(
                fin: fin, rsv1: false, rsv2: false, rsv3: false, opcode: opcode, payload: payload, maskKey: maskKey
            ))
    }

    /// Reads `count` bytes at `index` as a big-endian number; callers have checked they are buffered.
    private func bigEndian(_ index: Int, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in buffer[index..<index + count] { value = value << 8 | UInt64(byte) }
        return value
    }

    /// Once the decoder waits for more, keeps only the bytes not yet returned as frames: none between messages, and
    /// an unfinished frame's bytes in a buffer of their size rather than in one a large frame before it grew.
    ///
    /// A WebSocket a load test holds open hears a message every few seconds and waits in between: a buffer kept for the
    /// next message would cost every held socket its largest message's bytes. The next read's bytes get a buffer of
    /// their own size; one allocation per read is nothing beside the read's system call.
    private mutating func keepOnlyUnconsumed() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer = []
        } else if buffer.capacity > 4096, (buffer.count - readIndex) * 4 <= buffer.capacity {
            buffer = Array(buffer[readIndex...])
        } else {
            return
        }
        bufferBase += readIndex
        readIndex = 0
    }

    /// Drops consumed bytes before new ones are appended, moving what is left only when that is
    /// cheap relative to what was consumed.
    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer = []
        } else if readIndex >= 4096, readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
        } else {
            return
        }
        bufferBase += readIndex
        readIndex = 0
    }
}
