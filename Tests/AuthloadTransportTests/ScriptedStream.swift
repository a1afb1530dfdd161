import AuthloadCore
import CSystem

@testable import AuthloadTransport

/// A ``ByteStream`` whose reads the test scripts and whose writes it records: the socket of a connection shell
/// running on an ``EmbeddedLoop``.
///
/// Reads hand out what was fed, in order, one fed piece per read at most (a short read, as `recv` returns what
/// has arrived), cut to the reader's buffer; with nothing fed a read would block. An end of stream or a failure,
/// once reached, is what every later read returns. Writes take what ``writeWindow`` allows (the room left in
/// the socket's send buffer), so a test can make the socket take a message in pieces.
final class ScriptedStream: ByteStream {
    enum Read {
        case bytes([UInt8])
        case wouldBlock(interest: UInt32)
        case end
        case failed(TransportError)
    }

    /// Negative, so a call that reaches the system with it (a close with reset sets `SO_LINGER`) touches no real
    /// descriptor of the test process.
    let fd: Int32
    var isSecure = false
    /// What ALPN chose, for a stream that plays TLS.
    var negotiatedProtocol: String?
    /// Results of the next handshake steps, in order; once they run out the handshake is done.
    var handshakeSteps: [StreamResult] = []
    var hasBufferedInput = false
    /// How many more bytes the socket takes before it is full (a write then would block); nil: as many as come.
    var writeWindow: Int?
    /// Every later write fails with this.
    var writeFailure: TransportError?
    /// Everything written, in order.
    private(set) var written: [UInt8] = []
    /// The size of each write the socket took part or all of.
    private(set) var writeSizes: [Int] = []
    private(set) var readCount = 0
    private(set) var shutdowns = 0
    private var script: [Read] = []

    init(fd: Int32 = -7) { self.fd = fd }

    // MARK: Scripting

    func feed(_ bytes: [UInt8]) { script.append(.bytes(bytes)) }
    func feed(_ text: String) { feed(Array(text.utf8)) }
    /// The peer ends the stream (FIN, or TLS `close_notify`).
    func feedEnd() { script.append(.end) }
    func feedFailure(_ error: TransportError) { script.append(.failed(error)) }
    /// A read that would block, though more is scripted behind it (TLS waiting for the rest of a record).
    func feedWouldBlock(interest: UInt32 = EPOLLIN.rawValue) { script.append(.wouldBlock(interest: interest)) }

    /// Fed bytes no read has taken yet.
    var unread: Int {
        script.reduce(0) { total, step in
            if case .bytes(let bytes) = step { total + bytes.count } else { total }
        }
    }

    /// What was written since the last call (of this or ``takeWritten()``), as bytes.
    func takeWrittenBytes() -> [UInt8] {
        defer { written = [] }
        return written
    }

    /// What was written since the last call, as text.
    func takeWritten() -> String {
        defer { written = [] }
        return String(decoding: written, as: UTF8.self)
    }

    // MARK: ByteStream

    func handshake() -> StreamResult { handshakeSteps.isEmpty ? .done(0) : handshakeSteps.removeFirst() }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        readCount += 1
        guard let step = script.first else { return .wouldBlock(interest: EPOLLIN.rawValue) }
        switch step {
        case .bytes(let bytes):
            let count = min(bytes.count, buffer.count)
            buffer.copyBytes(from: bytes[..<count])
            if count == bytes.count { script.removeFirst() } else { script[0] = .bytes(Array(bytes[count...])) }
            return .done(count)
        case .wouldBlock(let interest):
            script.removeFirst()
            return .wouldBlock(interest: interest)
        case .end: return .end
        case .failed(let error): return .failed(error)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        if let writeFailure { return .failed(writeFailure) }
        let count = min(bytes.count, writeWindow ?? .max)
        if count == 0 && !bytes.isEmpty { return .wouldBlock(interest: EPOLLOUT.rawValue) }
        written.append(contentsOf: bytes[..<count])
        writeSizes.append(count)
        writeWindow = writeWindow.map { $0 - count }
        return .done(count)
    }

    func shutdown() { shutdowns += 1 }
}
