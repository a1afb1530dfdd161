import AuthloadCore
import AuthloadWire

extension GCCSService: WebSocketService {
    /// Accepts `/ws/v3/app/websocket?deviceId=…&channelKey=…` for a channel that `POST /auth` opened.
    public func upgrade(_ request: HTTPRequest, offeredProtocols: [String], peer: any WebSocketPeer) -> WebSocketUpgrade {
        guard request.path == options.paths.socket else {
            return .reject(.json(status: 404, ["error": .string("no WebSocket endpoint at \(request.path)")]))
        }
        let query = Self.queryPairs(of: request.target) ?? []
        let deviceID = query.first { $0.0 == "deviceId" }?.1 ?? ""
        let channelKey = query.first { $0.0 == "channelKey" }?.1 ?? ""
        if let refusal = attach(deviceID: deviceID, channelKey: channelKey, peer: peer) { return .reject(refusal) }
        let subprotocol = offeredProtocols.first { $0 == "v12.stomp" } ?? offeredProtocols.first { $0 == "v11.stomp" }
        return .accept(handler: GCCSSocketSession(service: self, deviceID: deviceID, peer: peer), subprotocol: subprotocol)
    }
}

/// The STOMP side of one device's socket: CONNECT, SUBSCRIBE to the status queue, UNSUBSCRIBE, DISCONNECT.
///
/// Anything else, or bytes that are not STOMP, get an ERROR frame and a close, as STOMP 1.2 requires.
final class GCCSSocketSession: WebSocketSessionHandler {
    private let service: GCCSService
    private let deviceID: String
    private let peer: any WebSocketPeer
    /// Calls for one session never overlap (the host's promise); the lock makes the decoder Sendable.
    private let decoder = Locked(StompFrameDecoder(maxHeaderBytes: 8 * 1024, maxBodyBytes: 64 * 1024))

    init(service: GCCSService, deviceID: String, peer: any WebSocketPeer) {
        self.service = service
        self.deviceID = deviceID
        self.peer = peer
    }

    func received(_ message: WebSocketMessage) {
        let frames = decoder.withLock { decoder in
            switch message {
            case .text(let text): decoder.feed(text.utf8)
            case .binary(let bytes): decoder.feed(bytes)
            }
            return Self.drain(&decoder)
        }
        switch frames {
        case .success(let frames):
            for frame in frames { handle(frame) }
        case .failure(let error):
            fail("malformed frame", detail: "\(error)")
        }
    }

    private static func drain(_ decoder: inout StompFrameDecoder) -> Result<[StompFrame], StompError> {
        var frames: [StompFrame] = []
        do throws(StompError) {
            while true {
                switch try decoder.next() {
                case .frame(let frame): frames.append(frame)
                case .heartBeat: continue
                case .needMoreData: return .success(frames)
                }
            }
        } catch {
            return .failure(error)
        }
    }

    func closed(code: Int) {
        service.detach(deviceID: deviceID)
    }

    private func handle(_ frame: StompFrame) {
        switch frame.command {
        case .connect, .stomp:
            guard let version = StompVersion.negotiate(acceptVersion: frame.headers["accept-version"]) else {
                return fail("unsupported STOMP version", detail: "supported versions are 1.1,1.2")
            }
            send(.connected(version: version, session: deviceID))
        case .subscribe:
            guard frame.headers["destination"] == service.options.paths.queue else {
                return fail("unknown destination", detail: "subscribe to \(service.options.paths.queue)")
            }
            service.subscribe(deviceID: deviceID, id: frame.headers["id"] ?? service.options.paths.queue)
            receipt(for: frame)
        case .unsubscribe:
            service.subscribe(deviceID: deviceID, id: nil)
            receipt(for: frame)
        case .disconnect:
            receipt(for: frame)
        default:
            fail("unexpected frame", detail: "\(frame.command.rawValue) is not handled here")
        }
    }

    private func receipt(for frame: StompFrame) {
        if let id = frame.headers["receipt"] { send(.receipt(id: id)) }
    }

    private func send(_ frame: StompFrame) {
        peer.send(.text(String(decoding: StompFrameEncoder.encode(frame), as: UTF8.self)))
    }

    private func fail(_ message: String, detail: String) {
        send(.error(message: message, body: Array(detail.utf8)))
        peer.close(code: 1002, reason: message)
    }
}
