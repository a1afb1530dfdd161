import AuthloadCore

/// One end of an open WebSocket as a state machine without I/O: bytes in, actions out.
///
/// The socket code around it (client or server) feeds it what the stream delivers and carries out
/// the actions it returns, in order: write bytes, deliver a message, or close the connection. It
/// answers pings, echoes a peer's Close, fails the connection with the codec's close code (1002,
/// 1007, 1009) on a protocol violation, and masks every frame a client sends with a fresh key.
/// Keeping the rules here means both ends behave the same and tests need no socket.
///
/// ```swift
/// var channel = WebSocketChannel(role: .client)
/// for action in channel.received(bytes) {
///     switch action {
///     case .write(let frame): output.append(contentsOf: frame)
///     case .deliver(let message): queue.append(message)
///     case .closeConnection(let closed): flushThenDrop(reporting: closed)
///     }
/// }
/// try channel.send(.text("hello"), into: &output)
/// ```
public struct WebSocketChannel: Sendable {
    /// Which end this is: a client masks what it sends and reads unmasked frames; a server the reverse.
    public enum Role: Sendable, Hashable {
        case client
        case server
    }

    public enum State: Sendable, Hashable {
        /// Messages flow both ways.
        case open
        /// This end sent a Close with `code` and waits for the peer's answer.
        case closeSent(code: Int)
        /// The closing handshake finished, or the connection failed or dropped.
        case closed(WebSocketClosed)
    }

    /// What the socket code must do, in the order given.
    public enum Action: Sendable, Hashable {
        /// Write these bytes (a pong, a Close) after anything already queued.
        case write([UInt8])
        /// Hand this data message to the application.
        case deliver(WebSocketMessage)
        /// The WebSocket is over: write what is queued, then drop the connection and report `closed`.
        case closeConnection(WebSocketClosed)
    }

    public let role: Role
    public private(set) var state = State.open
    private var decoder: WebSocketFrameDecoder
    private var assembler = WebSocketMessageAssembler()
    private var maskKeys = MaskKeyPool()

    /// - Parameter maxMessageSize: Largest frame or message accepted; larger fails the connection with 1009.
    public init(role: Role, maxMessageSize: Int = 16 * 1024 * 1024) {
        self.role = role
        decoder = WebSocketFrameDecoder(
            role: role == .client ? .client : .server,
            maxFrameSize: maxMessageSize, maxMessageSize: maxMessageSize)
    }

    public var isClosed: Bool {
        if case .closed = state { true } else { false }
    }

    /// Bytes of memory held for input now: the frame decoder's buffer and a fragmented message's pieces so far; none
    /// between messages.
    public var retainedInputCapacity: Int { decoder.retainedCapacity + assembler.retainedCapacity }

    // MARK: Input

    /// Takes bytes from the stream and returns what to do about the frames they complete.
    public mutating func received(_ bytes: UnsafeRawBufferPointer) -> [Action] {
        guard !isClosed else { return [] }
        decoder.feed(bytes)
        return drainFrames()
    }

    /// Takes bytes from the stream, e.g. those that arrived with the handshake.
    public mutating func received(_ bytes: [UInt8]) -> [Action] {
        bytes.withUnsafeBytes { received($0) }
    }

    /// The stream ended or failed without a closing handshake: 1006, unless the WebSocket had already closed.
    public mutating func connectionEnded() -> [Action] {
        guard !isClosed else { return [] }
        return finish(WebSocketClosed(code: WebSocketClosed.abnormal, reason: "the connection dropped without a closing handshake"))
    }

    /// The peer did not answer this end's Close in time: give up on it (reported as 1006).
    public mutating func closeTimedOut() -> [Action] {
        guard case .closeSent(let code) = state else { return [] }
        return finish(WebSocketClosed(code: WebSocketClosed.abnormal, reason: "no Close came back in time after sending Close \(code)"))
    }

    private mutating func drainFrames() -> [Action] {
        var actions: [Action] = []
        do throws(WebSocketError) {
            while !isClosed, case .frame(let frame) = try decoder.next() {
                guard let message = try assembler.append(frame) else { continue }
                handle(message, into: &actions)
            }
        } catch {
            fail(error, into: &actions)
        }
        return actions
    }

    private mutating func handle(_ message: WebSocketMessageAssembler.Message, into actions: inout [Action]) {
        switch message {
        case .text(let text):
            actions.append(.deliver(.text(text)))
        case .binary(let bytes):
            actions.append(.deliver(.binary(bytes)))
        case .ping(let data):
            // After our Close nothing more may be sent; the peer is about to close anyway.
            if state == .open { actions.append(.write(encode(.pong(data)))) }
        case .pong:
            break
        case .close(let code, let reason):
            // RFC 6455 §5.5.1: answer with a Close, normally echoing the code; an empty Close is echoed empty.
            if state == .open { actions.append(.write(encode(.close(code: code)))) }
            let closed = WebSocketClosed(code: Int(code?.rawValue ?? WebSocketCloseCode.noStatusReceived.rawValue), reason: reason)
            actions += finish(closed)
        }
    }

    /// Fails the connection (RFC 6455 §7.1.7): send Close with the codec's code unless one was sent, then drop.
    private mutating func fail(_ error: WebSocketError, into actions: inout [Action]) {
        if state == .open { actions.append(.write(encode(.close(code: error.closeCode, reason: error.description)))) }
        actions += finish(WebSocketClosed(code: Int(error.closeCode.rawValue), reason: error.description))
    }

    private mutating func finish(_ closed: WebSocketClosed) -> [Action] {
        state = .closed(closed)
        return [.closeConnection(closed)]
    }

    // MARK: Output

    /// Appends one data message as a single frame (masked when this is a client) to `output`.
    ///
    /// - Throws: ``WebSocketClosed`` once this end has sent a Close or the WebSocket has closed.
    public mutating func send(_ message: WebSocketMessage, into output: inout [UInt8]) throws(WebSocketClosed) {
        switch state {
        case .open: break
        case .closeSent(let code): throw WebSocketClosed(code: code, reason: "the closing handshake has begun; nothing more can be sent")
        case .closed(let closed): throw closed
        }
        let frame: WebSocketFrame =
            switch message {
            case .text(let text): .text(text)
            case .binary(let bytes): .binary(bytes)
            }
        WebSocketFrameEncoder.encode(frame, maskKey: nextMaskKey(), into: &output)
    }

    /// Starts the closing handshake: returns the Close frame to write, or nothing if one was already sent.
    ///
    /// `code` goes on the wire only when it may be sent (see ``WebSocketCloseCode/mayBeSent``);
    /// otherwise the Close is empty and the peer reports 1005.
    public mutating func startClose(code: Int, reason: String) -> [Action] {
        guard state == .open else { return [] }
        let wireCode = UInt16(exactly: code).map(WebSocketCloseCode.init(rawValue:))
        state = .closeSent(code: code)
        return [.write(encode(.close(code: wireCode, reason: reason)))]
    }

    private mutating func encode(_ frame: WebSocketFrame) -> [UInt8] {
        WebSocketFrameEncoder.encode(frame, maskKey: nextMaskKey())
    }

    private mutating func nextMaskKey() -> UInt32? {
        role == .client ? maskKeys.next() : nil
    }
}

/// Masking keys drawn from OpenSSL's generator in batches, one `RAND_bytes` call per 16 frames.
///
/// RFC 6455 §10.3 wants each key unpredictable from the ones before, so they come from the CSPRNG,
/// not a seeded generator; batching keeps that cheap on the send path. The pool stays empty (no
/// memory) until the first frame, and a batch is small, since it stays with every held socket and most
/// sockets of a load test send a few frames a minute.
struct MaskKeyPool: Sendable {
    /// A client sends a few frames on a held socket (CONNECT, SUBSCRIBE, the goodbye): a larger batch is memory each
    /// of thousands of sockets keeps unused.
    private static let batch = 4
    private var keys: [UInt32] = []
    private var index = 0

    mutating func next() -> UInt32 {
        if index == keys.count {
            let bytes = Digest.secureRandomBytes(count: 4 * Self.batch)
            keys = (0..<Self.batch).map { slot in
                bytes[4 * slot..<4 * slot + 4].reduce(0) { $0 << 8 | UInt32($1) }
            }
            index = 0
        }
        defer { index += 1 }
        return keys[index]
    }
}
