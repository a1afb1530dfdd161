import AuthloadCore
import AuthloadWire

/// The server side of GCCS authentication (docs/protocols.md, GCCS): REST under `/api/v3` and the STOMP status stream.
///
/// `POST /auth` opens a channel for a device; the client connects to `/ws/v3/app/websocket` and
/// subscribes to `/user/queue`; `POST /auth/nodes` starts the stream `CreateChannel → SelectNodes →
/// StartVerificationOfNodes → CompleteVerificationOfNodes`, one status per `nodeDelay`; `POST
/// /auth/complete` is answered and followed by `AuthCompleted`; `GET /auth` hands out the token once;
/// `DELETE /auth` cancels (`AuthCanceled`) or answers 5019 when nothing is pending.
///
/// The behaviours of §C.4 are options, each a share of authentications: `AuthFailed` (5022),
/// verification that never completes (5001 afterwards), a second auth colliding (2010), a cancel that
/// loses the race to completion, a STOMP ERROR or a 1011 close midway, and a refused handshake.
public final class GCCSService: Sendable {
    public struct Options: Sendable, Equatable {
        public var paths = GCCSPaths()
        /// How long each REST call takes.
        public var latency = LatencyModel.none
        /// The time between two statuses of the stream (and before the first): how slow the nodes are.
        public var nodeDelay = LatencyModel.fixed(.milliseconds(200))
        /// `authTimeRemaining` told to the client by `auth/nodes`.
        public var authTimeRemaining: Duration = .seconds(60)
        /// When set, any other client key is refused with 2000.
        public var clientKey: String?
        public var failureRate = 0.0
        public var timeoutRate = 0.0
        /// `POST /auth` answered 2010, as if another authentication of the user were running.
        public var busyRate = 0.0
        /// A cancel after verification completes the authentication instead (`AuthCompleted`, then 5019).
        public var cancelRaceRate = 0.0
        public var stompErrorRate = 0.0
        public var socketDropRate = 0.0
        /// The WebSocket handshake answered 503.
        public var rejectRate = 0.0
        /// Whether `auth/nodes` decrypts `enCodeCK`, `enCodeBK` and `enCodeDK` (AES-256-CBC under the channel key)
        /// and refuses with rtCode 5020 when they are not the channel key, block key and device id.
        public var verifyEncodedFields = true
        /// Verification statuses not pushed over STOMP, as a server that leaves `CreateChannel` and `SelectNodes`
        /// to the SDK would (docs/protocols.md, GCCS): the client must count them missing, not wait for them.
        public var skipStatuses: Set<GCCSStatus> = []
        /// Every status pushed twice, which the client must tolerate.
        public var repeatStatuses = false
        /// Share of `auth/nodes` answers whose `authType` asks the app for a secondary authentication; completion
        /// must then say `isSecondaryCertification: true`, and `false` otherwise, or it is refused with 2002.
        public var secondaryAuthRate = 0.0

        public init() {}
    }

    public let options: Options
    private let channels = Locked<[String: GCCSChannel]>([:])
    private let random: Locked<SplitMix64>
    /// `{auth}/exist`, where a client asks whether a channel is open.
    private let existPath: String
    /// Bounds the channel table: devices that vanish mid-authentication must not grow it without end.
    static let channelCapacity = 1_000_000

    public init(options: Options, seed: UInt64 = 11) {
        self.options = options
        random = Locked(SplitMix64(seed: seed))
        existPath = options.paths.auth + "/exist"
    }

    /// Channels not yet finished or cleaned up.
    public var openChannels: Int { channels.withLock { $0.count } }

    // MARK: REST

    /// Answers the request if it is for this service, nil otherwise.
    ///
    /// - Parameter path: the request's path, which the server has found already.
    func respond(to request: HTTPRequest, path: Substring) -> ServiceReply? {
        guard let endpoint = endpoint(of: path) else { return nil }
        let latency = random.withLock { options.latency.sample(using: &$0) }
        let parameters =
            request.method == "GET"
            ? GCCSRequestParameters(query: Self.queryPairs(of: request.target) ?? []) : GCCSRequestParameters(body: request.body)
        guard let deviceID = parameters.deviceID, !deviceID.isEmpty else {
            return reply(GCCSEnvelope(rtCode: GCCSResultCode.requestParameterError, rtMsg: "deviceId is required"), after: latency)
        }
        if let expected = options.clientKey, parameters.clientKey != expected {
            return reply(GCCSEnvelope(rtCode: GCCSResultCode.invalidClientKey, rtMsg: "invalid client key"), after: latency)
        }
        let envelope: GCCSEnvelope
        switch (request.method, endpoint) {
        case ("POST", .auth): envelope = requestAuth(deviceID: deviceID, userKey: parameters.userKey ?? "")
        case ("POST", .nodes): envelope = startVerification(deviceID: deviceID, fields: parameters)
        case ("POST", .complete):
            envelope = complete(deviceID: deviceID, secondary: parameters.secondaryCertification, after: latency)
        case ("GET", .auth): envelope = token(deviceID: deviceID, channelKey: parameters.channelKey ?? "")
        case ("DELETE", .auth): envelope = cancel(deviceID: deviceID)
        case ("GET", .exist): envelope = exists(deviceID: deviceID)
        default:
            return ServiceReply(
                .methodNotAllowed(endpoint == .auth ? "POST, GET, DELETE" : path.hasSuffix("/exist") ? "GET" : "POST"), after: latency)
        }
        return reply(envelope, after: latency)
    }

    /// The REST endpoints, by path.
    private enum Endpoint {
        case auth, nodes, complete, exist
    }

    /// Which endpoint `path` is, nil when none: every request the server answers for another service but FCSDK comes
    /// through here, and the exist path is built once.
    private func endpoint(of path: Substring) -> Endpoint? {
        let paths = options.paths
        if path == paths.auth { return .auth }
        if path == paths.nodes { return .nodes }
        if path == paths.complete { return .complete }
        if path == existPath { return .exist }
        return nil
    }

    private func reply(_ envelope: GCCSEnvelope, after latency: Duration) -> ServiceReply {
        ServiceReply(HTTPResponse(status: 200, headers: HTTPResponse.jsonHeaders, body: envelope.serialized()), after: latency)
    }

    private func requestAuth(deviceID: String, userKey: String) -> GCCSEnvelope {
        let (busy, channelKey, blockKey) = random.withLock { random in
            (random.chance(options.busyRate), random.hex(32), random.hex(16))
        }
        let created = channels.withLock { channels -> Bool in
            if busy || channels[deviceID]?.isInProgress == true { return false }
            if channels.count >= Self.channelCapacity { channels.removeAll() }
            channels[deviceID] = GCCSChannel(userKey: userKey, channelKey: channelKey, blockKey: blockKey)
            return true
        }
        guard created else {
            return GCCSEnvelope(rtCode: GCCSResultCode.authenticationInProgress, rtMsg: "authentication already in progress")
        }
        return GCCSEnvelope(rtCode: 0, rtMsg: "success", data: ["channelKey": .string(channelKey), "blockKey": .string(blockKey)])
    }

    private func startVerification(deviceID: String, fields: GCCSRequestParameters) -> GCCSEnvelope {
        let secondary = options.secondaryAuthRate > 0 && random.withLock { $0.chance(options.secondaryAuthRate) }
        let authType = secondary ? GCCSAuthType.secondary : GCCSAuthType.nodesOnly
        let fault = random.withLock { random -> GCCSChannel.Fault? in
            // One draw per fault, in a fixed order, so the shares are independent of each other's settings.
            let draws = [
                (options.failureRate, GCCSChannel.Fault.authFailed), (options.timeoutRate, .neverVerified),
                (options.stompErrorRate, .stompError), (options.socketDropRate, .socketDrop)
            ]
            return draws.reduce(nil) { chosen, draw in random.chance(draw.0) && chosen == nil ? draw.1 : chosen }
        }
        // A refusal, or the user key and the socket to stream to.
        let (refusal, userKey, peer): (GCCSEnvelope?, String, (any WebSocketPeer)?) = channels.withLock { channels in
            Self.update(&channels, deviceID) { channel in
                if options.verifyEncodedFields, !channel.encodes(deviceID: deviceID, in: fields) {
                    return (GCCSEnvelope(rtCode: GCCSResultCode.dataDecryptFailure, rtMsg: "data decrypt fail"), "", nil)
                }
                guard channel.phase == .requested else {
                    return (GCCSEnvelope(rtCode: GCCSResultCode.authenticationInProgress, rtMsg: "verification already started"), "", nil)
                }
                channel.phase = .verifying(sent: 0)
                channel.authType = authType
                channel.fault = fault
                return (nil, channel.userKey, channel.peer)
            } ?? (Self.noChannel, "", nil)
        }
        if let refusal { return refusal }
        if let peer { scheduleNextStatus(deviceID: deviceID, peer: peer) }
        return GCCSEnvelope(
            rtCode: 0, rtMsg: "success",
            data: [
                "authType": .number(Double(authType)), "connectIp": "127.0.0.1", "userKey": .string(userKey),
                "authTimeRemaining": .number(Double(options.authTimeRemaining.microseconds / 1000))
            ])
    }

    /// - Parameter secondary: the request's `isSecondaryCertification`; it must say what the channel's `authType` asked.
    private func complete(deviceID: String, secondary: Bool?, after latency: Duration) -> GCCSEnvelope {
        let token = random.withLock { $0.hex(48) }
        let (refusal, peer): (GCCSEnvelope?, (any WebSocketPeer)?) = channels.withLock { channels in
            Self.update(&channels, deviceID) { channel in
                guard channel.phase == .verified else { return (GCCSEnvelope(rtCode: channel.refusal, rtMsg: "not verified"), nil) }
                guard secondary == GCCSAuthType.asksSecondaryCertification(channel.authType) else {
                    let message =
                        "isSecondaryCertification must be \(GCCSAuthType.asksSecondaryCertification(channel.authType)) for authType \(channel.authType)"
                    return (GCCSEnvelope(rtCode: GCCSResultCode.requestParameterError, rtMsg: message), nil)
                }
                channel.phase = .completed(token: token)
                return (nil, channel.peer)
            } ?? (Self.noChannel, nil)
        }
        if let refusal { return refusal }
        // AuthCompleted follows the REST answer, as a server that completes after answering would.
        peer?.schedule(after: latency) { [weak self] in self?.push(.authCompleted, deviceID: deviceID) }
        return GCCSEnvelope(rtCode: 0, rtMsg: "success")
    }

    private func token(deviceID: String, channelKey: String) -> GCCSEnvelope {
        channels.withLock { channels in
            guard let index = channels.index(forKey: deviceID), channels.values[index].channelKey == channelKey else {
                return Self.noChannel
            }
            guard case .completed(let token) = channels.values[index].phase else {
                return GCCSEnvelope(rtCode: channels.values[index].refusal, rtMsg: "not completed")
            }
            // The token is handed out once; the channel is done.
            channels.remove(at: index)
            return GCCSEnvelope(rtCode: 0, rtMsg: "success", data: .string(token))
        }
    }

    private func cancel(deviceID: String) -> GCCSEnvelope {
        let race = random.withLock { $0.chance(options.cancelRaceRate) }
        let token = random.withLock { $0.hex(48) }
        let nothingInProgress = GCCSEnvelope(rtCode: GCCSResultCode.noAuthenticationInProgress, rtMsg: "no authentication in progress")
        let outcome: (GCCSEnvelope, GCCSStatus?, (any WebSocketPeer)?) = channels.withLock { channels in
            Self.update(&channels, deviceID) { channel in
                let status: GCCSStatus
                switch channel.phase {
                case .verified where race:
                    channel.phase = .completed(token: token)
                    status = .authCompleted
                case .requested, .verifying, .verified:
                    channel.phase = .canceled
                    status = .authCanceled
                case .completed, .failed, .timedOut, .canceled:
                    return (nothingInProgress, nil, nil)
                }
                let code = status == .authCanceled ? 0 : GCCSResultCode.noAuthenticationInProgress
                return (GCCSEnvelope(rtCode: code, rtMsg: code == 0 ? "success" : "no authentication in progress"), status, channel.peer)
            } ?? (nothingInProgress, nil, nil)
        }
        if let status = outcome.1 { outcome.2?.schedule(after: .zero) { [weak self] in self?.push(status, deviceID: deviceID) } }
        return outcome.0
    }

    private func exists(deviceID: String) -> GCCSEnvelope {
        let exists = channels.withLock { $0[deviceID]?.isInProgress ?? false }
        return GCCSEnvelope(
            rtCode: 0, rtMsg: "success",
            data: [
                "isExist": .bool(exists), "clientKey": .string(options.clientKey ?? ""), "siteURL": "",
                "timeout": .number(Double(options.authTimeRemaining.microseconds / 1000))
            ])
    }

    static let noChannel = GCCSEnvelope(rtCode: GCCSResultCode.channelDoesNotExist, rtMsg: "channel does not exist")

    // MARK: Status stream

    private func scheduleNextStatus(deviceID: String, peer: any WebSocketPeer) {
        let delay = random.withLock { options.nodeDelay.sample(using: &$0) }
        peer.schedule(after: delay) { [weak self] in self?.streamNextStatus(deviceID: deviceID) }
    }

    private func streamNextStatus(deviceID: String) {
        let (step, message, peer): (GCCSChannel.StreamStep, WebSocketMessage?, (any WebSocketPeer)?) = channels.withLock { channels in
            Self.update(&channels, deviceID) { channel in
                let step = channel.advanceStream()
                var message: WebSocketMessage?
                switch step {
                case .push(let status, _) where options.skipStatuses.contains(status): break
                case .push(let status, _), .fail(let status): message = channel.message(status, queue: options.paths.queue)
                case .breakSocket, .stop: break
                }
                return (step, message, channel.peer)
            } ?? (.stop, nil, nil)
        }
        guard let peer else { return }
        if let message { send(message, to: peer) }
        switch step {
        case .push(_, more: true): scheduleNextStatus(deviceID: deviceID, peer: peer)
        case .breakSocket(.stompError):
            let error = StompFrame.error(message: "internal server error", body: Array("node verification aborted".utf8))
            peer.send(.text(String(decoding: StompFrameEncoder.encode(error), as: UTF8.self)))
            peer.close(code: 1000, reason: "")
        case .breakSocket: peer.close(code: 1011, reason: "internal error")
        case .push, .fail, .stop: break
        }
    }

    /// Sends `status` to the device's subscription, if it still has one.
    func push(_ status: GCCSStatus, deviceID: String) {
        let (message, peer) = channels.withLock { channels -> (WebSocketMessage?, (any WebSocketPeer)?) in
            Self.update(&channels, deviceID) { channel in (channel.message(status, queue: options.paths.queue), channel.peer) }
                ?? (nil, nil)
        }
        if let message, let peer { send(message, to: peer) }
    }

    /// Applies `body` to the device's channel where the table holds it, nil when there is none: a copy taken out and
    /// put back retained and released every field of the channel, and looked the device up twice, at every status pushed
    /// and every call.
    private static func update<T>(_ channels: inout [String: GCCSChannel], _ deviceID: String, _ body: (inout GCCSChannel) -> T) -> T? {
        guard let index = channels.index(forKey: deviceID) else { return nil }
        return body(&channels.values[index])
    }

    private func send(_ message: WebSocketMessage, to peer: any WebSocketPeer) {
        peer.send(message)
        if options.repeatStatuses { peer.send(message) }
    }

    // MARK: Socket

    /// Attaches an upgrade to the device's channel; nil refuses it (no channel, wrong key, injected 503).
    func attach(deviceID: String, channelKey: String, peer: any WebSocketPeer) -> HTTPResponse? {
        if random.withLock({ $0.chance(options.rejectRate) }) {
            return .json(status: 503, ["error": "service unavailable"])
        }
        return channels.withLock { channels in
            Self.update(&channels, deviceID) { channel -> HTTPResponse? in
                guard channel.channelKey == channelKey else { return .json(status: 403, ["error": "unknown channel"]) }
                channel.peer = peer
                return nil
            } ?? .json(status: 403, ["error": "unknown channel"])
        }
    }

    func subscribe(deviceID: String, id: String?) {
        _ = channels.withLock { channels in Self.update(&channels, deviceID) { $0.subscription = id } }
    }

    /// The device's socket closed: the channel goes with it unless only its token is left to fetch.
    func detach(deviceID: String) {
        channels.withLock { channels in
            guard let index = channels.index(forKey: deviceID) else { return }
            if case .completed = channels.values[index].phase {
                channels.values[index].peer = nil
                channels.values[index].subscription = nil
            } else {
                channels.remove(at: index)
            }
        }
    }

    /// The pairs of the query after the first `?` of `target`, nil when it has none.
    ///
    /// The `?` is looked for among the bytes when every byte is ASCII, where a byte is a character: among the
    /// characters, every GET and every socket upgrade took a grapheme breaker's walk over its target. A target with
    /// other bytes is read among its characters, as ever (there a `?` that a combining mark follows is no `?`).
    static func queryPairs(of target: String) -> [(String, String)]? {
        var target = target
        let ascii = target.withUTF8 { bytes -> [(String, String)]?? in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
            guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return .some(nil) }
            return FormURLEncoding.decode(UnsafeBufferPointer(rebasing: bytes[(mark + 1)...]))
        }
        if let ascii { return ascii }
        return target.firstIndex(of: "?").map { FormURLEncoding.decode(target[target.index(after: $0)...]) }
    }
}

extension SplitMix64 {
    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { p > 0 && Double.random(in: 0..<1, using: &self) < p }

    /// `count` random lowercase hex digits, for keys and tokens: each draw's digits without leading zeros, as
    /// `String(_:radix:)` writes them, until there are enough (the same digits from the same draws as ever, written
    /// as bytes: this runs for every handle and token a soak's services issue). Written straight into the string's
    /// storage, with room for a last draw's digits past `count`: through an array first, each cost two allocations.
    mutating func hex(_ count: Int) -> String {
        guard count > 0 else { return "" }
        let alphabet: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: count + 15) { digits in
            var written = 0
            while written < count {
                let value = next()
                var shift = (63 - value.leadingZeroBitCount) / 4 * 4
                while shift >= 0 {
                    digits[written] = alphabet.utf8Start[Int((value >> UInt64(shift)) & 0xF)]
                    written += 1
                    shift -= 4
                }
            }
            return count
        }
    }
}
