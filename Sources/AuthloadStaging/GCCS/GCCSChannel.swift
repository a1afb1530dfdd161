import AuthloadCore
import AuthloadWire

/// One device's GCCS authentication on the staging server, from `POST /auth` to its token or cancel.
///
/// Transitions are pure: the service applies them under its lock and performs what they return
/// (pushing a status, closing a socket) outside it.
struct GCCSChannel: Sendable {
    enum Phase: Sendable, Equatable {
        /// `POST /auth` answered; waiting for `auth/nodes`.
        case requested
        /// Statuses are being pushed; `sent` of ``GCCSStatus/verification`` are out.
        case verifying(sent: Int)
        /// `CompleteVerificationOfNodes` is out; waiting for `auth/complete`.
        case verified
        case completed(token: String)
        case failed
        case timedOut
        case canceled
    }

    /// What will go wrong with this authentication, decided when verification starts.
    enum Fault: Sendable, Equatable {
        /// `AuthFailed` instead of `CompleteVerificationOfNodes`; later calls answer 5022.
        case authFailed
        /// Verification never completes; later calls answer 5001.
        case neverVerified
        /// A STOMP ERROR, then the socket closes, midway through the stream.
        case stompError
        /// The socket closes with 1011 midway through the stream.
        case socketDrop
    }

    let userKey: String
    let channelKey: String
    let blockKey: String

    /// Whether `fields` (an `auth/nodes` body) carries this channel's keys and `deviceID` encrypted as the SDK
    /// encrypts them (docs/protocols.md, GCCS): a client that sends them any other way is refused.
    func encodes(deviceID: String, in fields: GCCSRequestParameters) -> Bool {
        // Keyed once for the three fields, each opened only when the ones before it matched.
        let cipher = GCCSFieldCipher.Keyed(channelKey: channelKey, encrypting: false)
        let expected = [(fields.encodedChannelKey, channelKey), (fields.encodedBlockKey, blockKey), (fields.encodedDeviceID, deviceID)]
        return expected.allSatisfy { field, value in field.flatMap { cipher.decrypt($0) } == value }
    }
    var phase = Phase.requested
    /// What `auth/nodes` told the app to do before completing; completion must report it.
    var authType = GCCSAuthType.nodesOnly
    var fault: Fault?
    var peer: (any WebSocketPeer)?
    /// The `id` of the client's SUBSCRIBE to the status queue; nil while it has none.
    var subscription: String?
    var nextMessageID = 0

    init(userKey: String, channelKey: String, blockKey: String) {
        self.userKey = userKey
        self.channelKey = channelKey
        self.blockKey = blockKey
    }

    /// An authentication that a second `POST /auth` for the device would collide with (rtCode 2010).
    var isInProgress: Bool {
        switch phase {
        case .verifying, .verified: peer != nil
        case .requested, .completed, .failed, .timedOut, .canceled: false
        }
    }

    /// What pushing the next status of the verification stream does.
    enum StreamStep: Sendable, Equatable {
        case push(GCCSStatus, more: Bool)
        case fail(GCCSStatus)
        case breakSocket(Fault)
        case stop
    }

    /// Moves the stream one status on, applying the fault at its point: a broken socket halfway, a
    /// failure or silence in place of the last status.
    mutating func advanceStream() -> StreamStep {
        guard case .verifying(let sent) = phase else { return .stop }
        let statuses = GCCSStatus.verification
        let isLast = sent == statuses.count - 1
        switch fault {
        case .stompError?, .socketDrop?:
            if sent == statuses.count / 2 {
                phase = .failed
                return .breakSocket(fault!)
            }
        case .authFailed? where isLast:
            phase = .failed
            return .fail(.authFailed)
        case .neverVerified? where isLast:
            phase = .timedOut
            return .stop
        default:
            break
        }
        phase = isLast ? .verified : .verifying(sent: sent + 1)
        return .push(statuses[sent], more: !isLast)
    }

    /// The rtCode for a call that needs the authentication in `phase` but found it elsewhere.
    var refusal: Int {
        switch phase {
        case .timedOut: GCCSResultCode.authenticationTimeout
        case .failed: GCCSResultCode.nodeVerificationFailure
        case .canceled: GCCSResultCode.authenticationCanceled
        case .requested, .verifying, .verified, .completed: GCCSResultCode.authenticationFailure
        }
    }

    /// A STOMP MESSAGE carrying `status` to the client's subscription, or nil when it has none
    /// (a status the client did not subscribe for in time is lost, as on a real broker).
    mutating func message(_ status: GCCSStatus, queue: String) -> WebSocketMessage? {
        guard let subscription else { return nil }
        nextMessageID += 1
        let frame = StompFrameEncoder.encodeMessage(
            destination: queue, subscription: subscription, messageID: "\(channelKey.prefix(8))-\(nextMessageID)",
            contentType: "application/json", body: status.messageBody)
        return .text(String(decoding: frame, as: UTF8.self))
    }
}
